/*
 * k8s_bridge/http.h - the API server client: every request of the daemon
 * goes through one curl multi handle.
 *
 * HTTP/1.1 with keep-alive (the multi handle's connection cache), TLS
 * verified against the configured CA (or --insecure), a bearer token
 * re-read from its file at most a minute old and again on any 401 (the
 * request is then retried once), client certificates from a kubeconfig.
 *
 * Requests are asynchronous.  A request submitted with a done callback
 * belongs to the client: the callback runs once when it completes, and
 * the request is freed after it returns.  A request submitted without
 * one stays the caller's: br_http_wait() drives the loop until it is
 * done, then the caller reads it and frees it with br_req_free().
 *
 * Streams (watches): with a data callback, the bytes of a 2xx body go to
 * it as they arrive instead of into r->resp; an error body is still
 * collected in r->resp.  A stream with low_speed_s set is cut when it
 * delivers nothing (no event, no bookmark) for that long (curl's
 * low-speed limit: a half-open connection is noticed), done with status
 * 0, timed_out and streaming set.
 *
 * As client-go's rest client:
 *  - Retry-After: a 429 or 5xx answer carrying a Retry-After header (in
 *    seconds) is sent again after that delay (at most
 *    BR_HTTP_RETRY_AFTER_MAX_S), up to BR_HTTP_RETRY_AFTER_TRIES times;
 *    only then is it done.  Requests with no_retry_after set (the Lease,
 *    evictions: their callers have their own timing) are done at once.
 *  - a client-side rate limit: a token bucket of cfg->qps requests a
 *    second with bursts of cfg->burst (client-go's flowcontrol; the
 *    defaults are kube-scheduler's 50 and 100); a request over the
 *    limit waits in a FIFO queue, not in flight on the wire.  Events
 *    have a bucket of their own (kube-scheduler's event client is a
 *    separate client), the Lease none (kube-scheduler's leader-election
 *    client is separate too): r->limiter.  qps 0 = no limit.
 */
#ifndef BR_HTTP_H
#define BR_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "bconfig.h"
#include "util.h"

/* Bounds: connections to the server, a token file's size. */
#define BR_HTTP_MAX_CONNS	64
#define BR_HTTP_TOKEN_MAX	16384
#define BR_HTTP_TOKEN_TTL_MS	60000
/* Retry-After: tries (client-go's maxRetries) and the longest wait. */
#define BR_HTTP_RETRY_AFTER_TRIES	10
#define BR_HTTP_RETRY_AFTER_MAX_S	60

/* Which client-side rate limit a request counts against. */
enum { BR_RL_MAIN = 0, BR_RL_EVENTS, BR_RL_NONE, BR_RL_N = BR_RL_NONE };

typedef struct br_http br_http;
typedef struct br_req br_req;

typedef void (*br_req_done_fn)(br_req *r, void *ud);
/* Stream bytes; nonzero aborts the transfer (status then 0, aborted). */
typedef int (*br_req_data_fn)(br_req *r, const char *p, size_t n, void *ud);

struct br_req {
	/* set by the caller (br_req_create, br_req_set_*) */
	char *method;
	char *path;		/* "/api/v1/pods?limit=500", escaped */
	char *body;
	size_t body_len;
	char *ctype;
	long timeout_ms;	/* whole transfer; 0 = BR_HTTP default */
	long low_speed_s;	/* streams: cut after this long without a
				 * byte; 0 = never */
	int limiter;		/* BR_RL_*; default BR_RL_MAIN */
	bool no_retry_after;	/* done at once on 429/5xx */
	/* results, valid once done */
	long status;		/* HTTP status; 0 = no response */
	char error[CURL_ERROR_SIZE + 64];	/* transport error */
	tg_buf resp;		/* the body (error bodies of streams too) */
	int64_t retry_after_s;	/* Retry-After header, -1 = none */
	bool done, cancelled, aborted;
	bool timed_out;		/* the time or low-speed limit cut it */
	unsigned ra_tries;	/* sent again after a Retry-After */
	int64_t started_ms, elapsed_ms;
	/* private */
	br_http *h;
	CURL *easy;
	struct curl_slist *hdrs;
	br_req_done_fn done_fn;
	br_req_data_fn data_fn;
	void *ud;
	unsigned auth_retries;
	bool streaming;
	bool queued;		/* waiting (rate limit, Retry-After) */
	int64_t due_ms;		/* not before (Retry-After) */
	br_req *prev, *next;
	br_req *qnext;		/* the wait queue */
};

/*
 * Creates the client for \p cfg (which must outlive it).  NULL with
 * \p err filled when curl cannot start or a credential file is unreadable.
 * \note Destroy with br_http_destroy(): it cancels what is in flight.
 */
br_http *br_http_create(const br_config *cfg, char *err, size_t errlen);
void br_http_destroy(br_http *h);

/* A request for \p path (relative to the server).  Never NULL. */
br_req *br_req_create(const char *method, const char *path);
/* Copies \p body; \p ctype e.g. "application/json". */
void br_req_set_body(br_req *r, const char *ctype, const char *body);
void br_req_free(br_req *r);

/* Submits; see above for ownership.  0, or -1 (curl refused). */
int br_http_submit(br_http *h, br_req *r, br_req_done_fn done,
		   br_req_data_fn data, void *ud);
/* Stops an in-flight request: done (cancelled), callback called. */
void br_http_cancel(br_http *h, br_req *r);
unsigned br_http_inflight(const br_http *h);

/*
 * One turn of the loop: waits up to \p wait_ms for the transfers or one
 * of \p extra (the HTTP endpoint's sockets; revents filled), then runs
 * transfers and completion callbacks.
 */
void br_http_poll(br_http *h, long wait_ms, struct curl_waitfd *extra,
		  unsigned nextra);

/*
 * The loop turn that br_http_wait() calls: the daemon's main loop body
 * (timers, endpoint, informers), so that everything keeps running while
 * the scheduler waits.  Default: br_http_poll(h, 50, NULL, 0).
 */
void br_http_set_loop(br_http *h, void (*turn)(void *ud), void *ud);
/* One loop turn (the registered one, else a 50 ms poll). */
void br_http_turn(br_http *h);
/*
 * Ends the wait of a br_http_poll() in progress (or the next one) at
 * once: the one call here that another thread may make (a scheduling
 * cycle's worker or the reaper, done; curl_multi_wakeup()).
 */
void br_http_wakeup(br_http *h);
/* Drives the loop until every request in \p reqs is done. */
void br_http_wait(br_http *h, br_req *const *reqs, size_t n);

/*
 * Observer of every finished request (metrics: errors by code).
 */
void br_http_set_observer(br_http *h, void (*fn)(const br_req *r, void *ud),
			  void *ud);

/* "code=409 reason=Conflict message=..." from a Status body, for logs. */
const char *br_req_reason(const br_req *r, char *buf, size_t n);
/* The Status body's "reason" ("Expired", "Gone"), or "". */
const char *br_req_status_reason(const br_req *r, char *buf, size_t n);
/*
 * Whether the body is a Status with a cause of type \p cause_type in
 * details.causes (e.g. "ResourceVersionTooLarge"), or, for older
 * servers, a 504 Timeout whose cause or message says "Too large
 * resource version" (client-go's isTooLargeResourceVersionError).
 */
bool br_status_too_large_rv(const cJSON *status);

/* Requests waiting for the rate limit or a Retry-After (/metrics). */
unsigned br_http_queued(const br_http *h);

#endif /* BR_HTTP_H */
