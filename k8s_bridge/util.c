/*
 * k8s_bridge/util.c - small helpers of topogang-bridge.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <topogang/util.h>

#include "util.h"

/* ---- memory ------------------------------------------------------------ */

static void oom(void)
{
	fputs("topogang-bridge: out of memory\n", stderr);
	abort();
}

void *br_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *br_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *br_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom();
	return q;
}

char *br_xstrdup(const char *s)
{
	return br_xstrndup(s, strlen(s));
}

char *br_xstrndup(const char *s, size_t n)
{
	char *d = br_xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *br_xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	s = br_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* ---- time -------------------------------------------------------------- */

int64_t br_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t br_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Days since 1970-01-01 of a civil date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

const char *br_rfc3339(char *buf, size_t n, int64_t wall_us, bool micro)
{
	time_t s = (time_t)(wall_us / 1000000);
	struct tm tm;

	gmtime_r(&s, &tm);
	if (micro)
		snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (int)(wall_us % 1000000));
	else
		snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
	return buf;
}

static bool digits(const char *s, unsigned n, unsigned *out)
{
	unsigned v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return true;
}

bool br_parse_rfc3339(const char *s, int64_t *wall_us)
{
	unsigned y, mo, d, h, mi, se, frac = 0, fd = 0;
	int64_t t, off = 0;
	const char *p;

	if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' ||
	    !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' ||
	    !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &se))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60)
		return false;
	p = s + 19;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fd++)
			if (fd < 6)
				frac = frac * 10 + (unsigned)(*p - '0');
		if (!fd)
			return false;
		for (; fd < 6; fd++)
			frac *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		unsigned oh, om;

		if (!digits(p + 1, 2, &oh) || p[3] != ':' ||
		    !digits(p + 4, 2, &om))
			return false;
		off = ((int64_t)oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return false;
	}
	if (*p)
		return false;
	t = days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 +
	    (int64_t)mi * 60 + se - off;
	*wall_us = t * 1000000 + frac;
	return true;
}

/* ---- files, numbers ---------------------------------------------------- */

char *br_read_file(const char *path, size_t max, size_t *len, char *err,
		   size_t errlen)
{
	tg_errinfo ei = { "" };
	char *buf;

	if (tg_file_read(path, max, &buf, len, &ei)) {
		snprintf(err, errlen, "%s", ei.msg);
		return NULL;
	}
	return buf;
}

/* ---- JSON -------------------------------------------------------------- */

int br_jnum(const cJSON *v, double lo, double hi, double *out, char *why,
	    size_t whylen)
{
	double d;

	if (cJSON_IsNumber(v))
		d = v->valuedouble;
	else if (!cJSON_IsString(v) ||
		 !tg_f64_parse(v->valuestring, -DBL_MAX, DBL_MAX, &d)) {
		snprintf(why, whylen, "must be a number");
		return -1;
	}
	if (d < lo || d > hi) {
		snprintf(why, whylen, "%g is outside %g..%g", d, lo, hi);
		return -1;
	}
	*out = d;
	return 0;
}

const cJSON *br_jget(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const char *br_jstr(const cJSON *obj, const char *key)
{
	const cJSON *v = br_jget(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *br_jpath(const cJSON *obj, const char *path)
{
	char key[256];
	const char *dot;

	while (obj && *path) {
		size_t n;

		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		obj = br_jget(obj, key);
		path += n + (dot ? 1 : 0);
	}
	return obj;
}

const char *br_jpath_str(const cJSON *obj, const char *path)
{
	const cJSON *v = br_jpath(obj, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

char *br_urlencode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), i, j = 0;
	char *d = br_xmalloc(n * 3 + 1);

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			d[j++] = (char)c;
		} else {
			d[j++] = '%';
			d[j++] = hex[c >> 4];
			d[j++] = hex[c & 15];
		}
	}
	d[j] = '\0';
	return d;
}

const char *br_trunc(char *buf, size_t n, const char *s)
{
	size_t l = strlen(s);

	if (l < n) {
		memcpy(buf, s, l + 1);
	} else if (n > 4) {
		memcpy(buf, s, n - 4);
		memcpy(buf + n - 4, "...", 4);
	} else if (n) {
		buf[0] = '\0';
	}
	return buf;
}
