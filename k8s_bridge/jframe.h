/*
 * k8s_bridge/jframe.h - splits a byte stream (a watch body) into complete
 * top-level JSON values.
 *
 * Chunk boundaries are not event boundaries: bytes are accumulated and a
 * value is handed over only once its closing brace arrived, whatever the
 * framing (one per line, several per line, one split over many chunks).
 * The scanner knows strings and escapes, so braces inside strings do not
 * count.  One value larger than the framer's bound, or anything but
 * whitespace between values, is an error: the stream must be dropped.
 */
#ifndef BR_JFRAME_H
#define BR_JFRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

typedef struct br_jframe {
	tg_buf buf;		/* bytes of the value being read */
	size_t scan;		/* bytes of buf already scanned */
	unsigned depth;
	bool in_str, esc;
	size_t max;
	char err[128];
} br_jframe;

/* Called once per complete value; nonzero stops the feed (returned). */
typedef int (*br_jframe_fn)(void *ud, const char *text, size_t len);

void br_jframe_init(br_jframe *f, size_t max);
void br_jframe_free(br_jframe *f);
/* Forgets a partial value (a new stream). */
void br_jframe_reset(br_jframe *f);

/*
 * Feeds bytes.  Returns 0, the callback's nonzero value, or -1 with
 * f->err set (value over the bound, stray bytes between values).
 */
int br_jframe_feed(br_jframe *f, const char *p, size_t n, br_jframe_fn fn,
		   void *ud);

/* Whether a partial value is buffered (a stream cut in the middle). */
bool br_jframe_partial(const br_jframe *f);

#endif /* BR_JFRAME_H */
