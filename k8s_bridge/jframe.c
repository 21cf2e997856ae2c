/*
 * k8s_bridge/jframe.c - JSON value framing for watch streams.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "jframe.h"

void br_jframe_init(br_jframe *f, size_t max)
{
	memset(f, 0, sizeof(*f));
	f->max = max;
	tg_buf_init(&f->buf, max);
}

void br_jframe_free(br_jframe *f)
{
	tg_buf_free(&f->buf);
}

void br_jframe_reset(br_jframe *f)
{
	tg_buf_reset(&f->buf);
	f->scan = 0;
	f->depth = 0;
	f->in_str = f->esc = false;
	f->err[0] = '\0';
}

bool br_jframe_partial(const br_jframe *f)
{
	return f->buf.len > 0;
}

static bool ws(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int br_jframe_feed(br_jframe *f, const char *p, size_t n, br_jframe_fn fn,
		   void *ud)
{
	size_t i = 0;

	while (i < n) {
		size_t start = i;
		bool done = false;

		/* between values: skip whitespace, expect '{' or '[' */
		if (f->buf.len == 0) {
			while (i < n && ws(p[i]))
				i++;
			if (i == n)
				break;
			if (p[i] != '{' && p[i] != '[') {
				snprintf(f->err, sizeof(f->err),
					 "unexpected byte 0x%02x between JSON "
					 "values", (unsigned char)p[i]);
				return -1;
			}
			start = i;
		}
		for (; i < n; i++) {
			char c = p[i];

			if (f->in_str) {
				if (f->esc)
					f->esc = false;
				else if (c == '\\')
					f->esc = true;
				else if (c == '"')
					f->in_str = false;
				continue;
			}
			if (c == '"') {
				f->in_str = true;
			} else if (c == '{' || c == '[') {
				f->depth++;
			} else if (c == '}' || c == ']') {
				if (f->depth == 0) {
					snprintf(f->err, sizeof(f->err),
						 "unbalanced '%c'", c);
					return -1;
				}
				if (--f->depth == 0) {
					i++;
					done = true;
					break;
				}
			}
		}
		if (tg_buf_add(&f->buf, p + start, i - start)) {
			snprintf(f->err, sizeof(f->err),
				 "a JSON value longer than %zu bytes", f->max);
			return -1;
		}
		if (done) {
			int r = fn(ud, f->buf.s, f->buf.len);

			tg_buf_reset(&f->buf);
			f->in_str = f->esc = false;
			if (r)
				return r;
		}
	}
	return 0;
}
