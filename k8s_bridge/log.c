/*
 * k8s_bridge/log.c - logfmt lines on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define LOG_MAX_LINE	16384

static int min_level = BR_LOG_INFO;

void br_log_set_level(int level)
{
	min_level = level;
}

int br_log_level(void)
{
	return min_level;
}

int br_log_parse_level(const char *s)
{
	static const char *const names[] = { "debug", "info", "warn",
					     "error" };
	int i;

	for (i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static bool needs_quotes(const char *v)
{
	if (!*v)
		return true;
	for (; *v; v++)
		if ((unsigned char)*v <= ' ' || *v == '"' || *v == '=' ||
		    *v == '\\' || (unsigned char)*v == 0x7f)
			return true;
	return false;
}

static void add_value(tg_buf *b, const char *v)
{
	if (!needs_quotes(v)) {
		tg_buf_adds(b, v);
		return;
	}
	tg_buf_add_json(b, v);
}

void br_log(int level, const char *msg, ...)
{
	static const char *const names[] = { "debug", "info", "warn",
					     "error" };
	char ts[40];
	tg_buf b;
	va_list ap;
	const char *k;

	if (level < min_level)
		return;
	tg_buf_init(&b, LOG_MAX_LINE);
	tg_buf_addf(&b, "ts=%s level=%s msg=",
		    br_rfc3339(ts, sizeof(ts), br_wall_us(), true),
		    names[level < 0 ? 0 : level > 3 ? 3 : level]);
	add_value(&b, msg);
	va_start(ap, msg);
	while ((k = va_arg(ap, const char *)) != NULL) {
		const char *v = va_arg(ap, const char *);

		tg_buf_addf(&b, " %s=", k);
		add_value(&b, v ? v : "");
	}
	va_end(ap);
	if (b.err) {
		/* over the bound: say so rather than cut the line silently */
		tg_buf_free(&b);
		tg_buf_init(&b, LOG_MAX_LINE);
		tg_buf_addf(&b, "ts=%s level=%s msg=", ts,
			    names[level < 0 ? 0 : level > 3 ? 3 : level]);
		add_value(&b, msg);
		tg_buf_addf(&b, " log_error=\"line longer than %d bytes\"",
			    LOG_MAX_LINE);
	}
	tg_buf_add(&b, "\n", 1);
	if (b.s) {
		size_t off = 0;

		while (off < b.len) {
			ssize_t w = write(STDERR_FILENO, b.s + off,
					  b.len - off);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
	}
	tg_buf_free(&b);
}
