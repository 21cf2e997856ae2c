/*
 * tests/tap.h - a tiny TAP producer for the unit tests.
 *
 * ok(cond, fmt, ...) prints "ok N - ..." or "not ok N - ..."; the is_*
 * forms print both operands on failure.  done_testing() prints the plan
 * and returns the exit status.
 */
#ifndef TG_TAP_H
#define TG_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line,
			 const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   Failed at %s line %d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	if (!ok(g_ == w_, __VA_ARGS__))					\
		printf("#   got: %lld\n#   expected: %lld\n", g_, w_);	\
} while (0)

#define is_str(got, want, ...) do {					\
	const char *g_ = (got), *w_ = (want);				\
	int same_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_;	\
	if (!ok(same_, __VA_ARGS__))					\
		printf("#   got: '%s'\n#   expected: '%s'\n",		\
		       g_ ? g_ : "(null)", w_ ? w_ : "(null)");		\
} while (0)

#define like(got, needle, ...) do {					\
	const char *g_ = (got), *n_ = (needle);				\
	if (!ok(g_ && strstr(g_, n_), __VA_ARGS__))			\
		printf("#   got: '%s'\n#   expected to contain: '%s'\n",\
		       g_ ? g_ : "(null)", n_);				\
} while (0)

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Reads a whole file, NUL-terminated; NULL on any error.  The caller
 * frees it. */
static inline char *tap_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* TG_TAP_H */
