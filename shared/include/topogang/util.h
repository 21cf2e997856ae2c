/*
 * topogang/util.h - the small helpers the library and its hosts (the
 * CLI, the plugins, the bridge) share, written once: a growable string
 * with a hard limit, checked integer parses, a whole-file read.
 *
 * Memory comes from the allocator of tg_set_allocator() (malloc by
 * default): free what these functions hand over with tg_free().  A host
 * that frees with free() must keep the allocator malloc's (the bridge
 * pins it so in main()).
 */
#ifndef TOPOGANG_UTIL_H
#define TOPOGANG_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topogang/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A growable string with a hard limit (curl's dynbuf): an append past
 * \p max bytes fails with TG_ELIMIT and leaves the buffer as it was; the
 * first error (TG_ELIMIT, TG_ENOMEM) stays in err and makes every later
 * append a no-op returning it.  s is NUL-terminated once anything was
 * added (NULL before).  Set up with tg_buf_init(); the fields are read
 * directly, written only through these functions.
 */
typedef struct tg_buf {
	char *s;
	size_t len, cap, max;
	tg_err err;	/* first error; later appends are no-ops */
} tg_buf;

/* Makes \p b empty, holding at most \p max bytes; nothing to free yet. */
void tg_buf_init(tg_buf *b, size_t max);
/* Appends \p n bytes of \p p (NULL allowed when n is 0). */
tg_err tg_buf_add(tg_buf *b, const void *p, size_t n);
/* Appends the string \p s. */
tg_err tg_buf_adds(tg_buf *b, const char *s);
/* Appends printf-formatted text. */
tg_err tg_buf_addf(tg_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends \p s as a JSON string literal: quotes, \" and \\, \n \r \t,
 * every other byte below 0x20 as \u00XX (as cJSON prints them). */
tg_err tg_buf_add_json(tg_buf *b, const char *s);
/* Drops the first \p n bytes (all of them when n >= len). */
void tg_buf_consume(tg_buf *b, size_t n);
/* Empties the buffer and clears err; keeps the memory. */
void tg_buf_reset(tg_buf *b);
/*
 * The string, handed to the caller (free with tg_free()), and the buffer
 * reset to empty; NULL when err is set (the memory is freed and err
 * cleared) or out of memory.  A buffer nothing was added to gives "".
 */
char *tg_buf_take(tg_buf *b);
/*
 * For messages: as tg_buf_take(), but a buffer that hit its limit gives
 * what it held then, ended with " [message cut at N bytes]" (never a
 * silent cut, never an error); NULL only on ENOMEM.
 */
char *tg_buf_take_cut(tg_buf *b);
/* Frees the memory and resets the buffer (max kept); accepts NULL. */
void tg_buf_free(tg_buf *b);

/*
 * Checked decimal parses of the whole string: no leading space, no
 * trailing bytes, no overflow.  false (and *out untouched) when \p s is
 * not such a number or is out of range.  This one: a signed 64-bit
 * integer.
 */
bool tg_i64_parse(const char *s, int64_t *out);
/* As tg_i64_parse(), 0 to UINT_MAX. */
bool tg_u32_parse(const char *s, unsigned *out);
/* As tg_i64_parse(), digits only (no sign), 0 to \p max. */
bool tg_u64_parse(const char *s, uint64_t max, uint64_t *out);
/* A finite decimal (strtod's syntax, whole string, no leading space) in
 * lo..hi; -DBL_MAX..DBL_MAX takes any finite number. */
bool tg_f64_parse(const char *s, double lo, double hi, double *out);

/*
 * Reads the whole file \p path (at most \p max bytes) into *buf,
 * NUL-terminated, its length in *len.  TG_EIO when it cannot be opened
 * (errno is then fopen()'s: ENOENT for a missing file) or read,
 * TG_ELIMIT past \p max bytes, TG_ENOMEM; the message names the file:
 * "bridge.yaml: No such file or directory", "bridge.yaml: larger than
 * 4194304 bytes".
 * \note The caller frees *buf with tg_free(); NULL on error.
 */
tg_err tg_file_read(const char *path, size_t max, char **buf, size_t *len,
		    tg_errinfo *ei);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_UTIL_H */
