/*
 * k8s_bridge/util.h - small helpers of topogang-bridge: time, files, JSON
 * field access, URL escaping.  The growable buffer, the number parses
 * and the file read are libtopogang's (topogang/util.h: tg_buf,
 * tg_i64_parse, tg_f64_parse, tg_file_read); main() pins the library's
 * allocator to malloc's family, so what tg_buf_take() and tg_file_read()
 * hand over is freed with free().
 *
 * Everything filled from outside has a named bound; hitting it is an
 * error that says so (the buffer's err), never silent truncation.
 */
#ifndef BR_UTIL_H
#define BR_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "topogang/util.h"

#define BR_UNUSED(x) ((void)(x))
#define BR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BR_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Bounds on what the bridge reads from outside. */
#define BR_MAX_FILE		(4u << 20)	/* config, kubeconfig, token */
#define BR_MAX_BODY		(256u << 20)	/* one HTTP response body */
#define BR_MAX_OBJECT		(16u << 20)	/* one watch event */
#define BR_MAX_URL		8192

/* Aborts the process on out of memory: the daemon cannot go on. */
void *br_xmalloc(size_t n);
void *br_xcalloc(size_t n, size_t size);
void *br_xrealloc(void *p, size_t n);
char *br_xstrdup(const char *s);
char *br_xstrndup(const char *s, size_t n);
/* A formatted string; caller frees. */
char *br_xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Monotonic milliseconds (for timers), wall-clock microseconds. */
int64_t br_now_ms(void);
int64_t br_wall_us(void);
/*
 * RFC 3339 time with 6 fractional digits, UTC ("2026-08-01T00:20:05.
 * 123456Z", a Kubernetes MicroTime); \p buf holds at least 32 bytes.
 * With \p micro false the seconds form ("...:05Z", a metav1.Time).
 */
const char *br_rfc3339(char *buf, size_t n, int64_t wall_us, bool micro);
/* Parses RFC 3339 into wall-clock microseconds; false when malformed. */
bool br_parse_rfc3339(const char *s, int64_t *wall_us);

/*
 * Reads a whole file into a NUL-terminated buffer (caller frees): the
 * library's tg_file_read() with the bridge's err-buffer convention.  NULL
 * with \p err filled ("FILE: No such file...", "FILE: larger than N
 * bytes") on failure.
 */
char *br_read_file(const char *path, size_t max, size_t *len, char *err,
		   size_t errlen);


/* JSON access that tolerates missing or mistyped fields: NULL. */
const cJSON *br_jget(const cJSON *obj, const char *key);
const char *br_jstr(const cJSON *obj, const char *key);
/* A dotted path of object keys ("metadata.name"); NULL when absent. */
const cJSON *br_jpath(const cJSON *obj, const char *path);
const char *br_jpath_str(const cJSON *obj, const char *path);
/*
 * A configuration number: a JSON number or a string that parses as one
 * (YAML's "0.5" quoted), within [lo, hi].  0, or -1 with \p why (what is
 * wrong, without the key: the caller names the file and key).
 */
int br_jnum(const cJSON *v, double lo, double hi, double *out, char *why,
	    size_t whylen);

/* Percent-encodes everything outside RFC 3986 unreserved; caller frees. */
char *br_urlencode(const char *s);

/* Strings that must not be logged whole: the first n bytes plus "...". */
const char *br_trunc(char *buf, size_t n, const char *s);

#endif /* BR_UTIL_H */
