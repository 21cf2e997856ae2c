/*
 * k8s_bridge/httpd.h - a minimal HTTP/1.0 endpoint for /healthz, /readyz
 * and /metrics, served from the daemon's one loop (no threads).
 *
 * GET and HEAD only; one request per connection (Connection: close).
 * At most BR_HTTPD_MAX_CONNS connections; a request line and headers
 * over BR_HTTPD_MAX_REQ bytes get 431; a client idle for 5 s is dropped.
 */
#ifndef BR_HTTPD_H
#define BR_HTTPD_H

#include <curl/curl.h>

#include "util.h"

#define BR_HTTPD_MAX_CONNS	32
#define BR_HTTPD_MAX_REQ	8192

typedef struct br_httpd br_httpd;

/* Fills \p body and *ctype for \p path; returns the HTTP status. */
typedef int (*br_httpd_fn)(void *ud, const char *path, tg_buf *body,
			   const char **ctype);

/*
 * Listens on "HOST:PORT" (PORT 0 = any; see br_httpd_port()).
 * \note Destroy with br_httpd_destroy(); NULL with \p err filled.
 */
br_httpd *br_httpd_create(const char *listen, br_httpd_fn fn, void *ud,
			  char *err, size_t errlen);
void br_httpd_destroy(br_httpd *d);
int br_httpd_port(const br_httpd *d);

/* The sockets to wait on (for curl_multi_poll); returns how many. */
unsigned br_httpd_fds(br_httpd *d, struct curl_waitfd *fds, unsigned max);
/* Serves whatever \p fds (as filled by br_httpd_fds, revents set) say. */
void br_httpd_process(br_httpd *d, const struct curl_waitfd *fds,
		      unsigned n);

#endif /* BR_HTTPD_H */
