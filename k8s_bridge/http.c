/*
 * k8s_bridge/http.c - the API server client on one curl multi handle.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"
#include "log.h"

#define HTTP_DEFAULT_TIMEOUT_MS	30000
#define HTTP_CONNECT_TIMEOUT_MS	10000

/* A token bucket (client-go's flowcontrol.NewTokenBucketRateLimiter). */
typedef struct bucket {
	double tokens;
	int64_t last_ms;
} bucket;

struct br_http {
	const br_config *cfg;
	CURLM *multi;
	br_req *head;		/* in flight or queued */
	unsigned ninflight;
	br_req *qhead, *qtail;	/* waiting: rate limit, Retry-After */
	unsigned nqueued;
	bucket rl[BR_RL_N];
	char *token;		/* current bearer token, NULL = none */
	int64_t token_read_ms;
	char *ua;
	void (*turn)(void *);
	void *turn_ud;
	void (*observer)(const br_req *, void *);
	void *observer_ud;
};

/* ---- token ------------------------------------------------------------- */

/* Re-reads the token file; keeps the old token when it cannot. */
static void token_load(br_http *h, bool force)
{
	char err[256];
	size_t len;
	char *t;

	if (!h->cfg->token_file) {
		if (!h->token && h->cfg->token)
			h->token = br_xstrdup(h->cfg->token);
		return;
	}
	if (!force && h->token &&
	    br_now_ms() - h->token_read_ms < BR_HTTP_TOKEN_TTL_MS)
		return;
	h->token_read_ms = br_now_ms();
	t = br_read_file(h->cfg->token_file, BR_HTTP_TOKEN_MAX, &len, err,
			 sizeof(err));
	if (!t) {
		br_log(BR_LOG_WARN, "cannot read the token file", "error", err,
		       NULL);
		return;
	}
	while (len && isspace((unsigned char)t[len - 1]))
		t[--len] = '\0';
	if (h->token && strcmp(h->token, t) != 0)
		br_log(BR_LOG_INFO, "token rotated", "file",
		       h->cfg->token_file, NULL);
	free(h->token);
	h->token = t;
}

/* ---- create / destroy -------------------------------------------------- */

br_http *br_http_create(const br_config *cfg, char *err, size_t errlen)
{
	br_http *h;
	unsigned i;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "curl_global_init failed");
		return NULL;
	}
#if LIBCURL_VERSION_NUM < 0x074d00
	if (cfg->ca_data) {
		snprintf(err, errlen, "certificate-authority-data needs libcurl "
			 ">= 7.77; use certificate-authority (a file)");
		curl_global_cleanup();
		return NULL;
	}
#endif
	h = br_xcalloc(1, sizeof(*h));
	h->cfg = cfg;
	h->multi = curl_multi_init();
	if (!h->multi) {
		snprintf(err, errlen, "curl_multi_init failed");
		goto fail_multi;
	}
	curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
	curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
			  (long)BR_HTTP_MAX_CONNS);
	curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS,
			  (long)BR_HTTP_MAX_CONNS);
	if (cfg->token_file) {
		token_load(h, true);
		if (!h->token) {
			snprintf(err, errlen, "cannot read the token file %s",
				 cfg->token_file);
			goto fail_token;
		}
	} else if (cfg->token) {
		h->token = br_xstrdup(cfg->token);
	}
	h->ua = br_xasprintf("topogang-bridge/%s", PACKAGE_VERSION);
	for (i = 0; i < BR_RL_N; i++) {
		h->rl[i].tokens = cfg->burst;
		h->rl[i].last_ms = br_now_ms();
	}
	return h;

fail_token:
	curl_multi_cleanup(h->multi);
fail_multi:
	free(h);
	curl_global_cleanup();
	return NULL;
}

void br_http_destroy(br_http *h)
{
	if (!h)
		return;
	while (h->head)
		br_http_cancel(h, h->head);
	curl_multi_cleanup(h->multi);
	free(h->token);
	free(h->ua);
	free(h);
	curl_global_cleanup();
}

/* ---- requests ---------------------------------------------------------- */

br_req *br_req_create(const char *method, const char *path)
{
	br_req *r = br_xcalloc(1, sizeof(*r));

	r->method = br_xstrdup(method);
	r->path = br_xstrdup(path);
	r->retry_after_s = -1;
	tg_buf_init(&r->resp, BR_MAX_BODY);
	return r;
}

void br_req_set_body(br_req *r, const char *ctype, const char *body)
{
	free(r->body);
	free(r->ctype);
	r->body = br_xstrdup(body);
	r->body_len = strlen(body);
	r->ctype = br_xstrdup(ctype);
}

void br_req_free(br_req *r)
{
	if (!r)
		return;
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->hdrs);
	free(r->method);
	free(r->path);
	free(r->body);
	free(r->ctype);
	tg_buf_free(&r->resp);
	free(r);
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
	br_req *r = ud;
	size_t len = size * n;
	long code = 0;

	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	if (r->data_fn && code >= 200 && code < 300) {
		r->streaming = true;
		if (r->data_fn(r, p, len, r->ud)) {
			r->aborted = true;
			return 0;
		}
		return len;
	}
	if (tg_buf_add(&r->resp, p, len))
		return 0;	/* over BR_MAX_BODY: curl fails the transfer */
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	br_req *r = ud;
	size_t len = size * n;
	static const char key[] = "retry-after:";

	if (len > sizeof(key) && strncasecmp(p, key, sizeof(key) - 1) == 0) {
		char v[32];
		size_t i = sizeof(key) - 1, j = 0;
		int64_t s;

		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < len && j < sizeof(v) - 1 && p[i] >= '0' &&
		       p[i] <= '9')
			v[j++] = p[i++];
		v[j] = '\0';
		if (tg_i64_parse(v, &s))
			r->retry_after_s = s;
	}
	return len;
}

static void set_headers(br_http *h, br_req *r)
{
	char *line;

	curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
	r->hdrs = curl_slist_append(r->hdrs, "Accept: application/json");
	r->hdrs = curl_slist_append(r->hdrs, "Expect:");
	if (r->ctype) {
		line = br_xasprintf("Content-Type: %s", r->ctype);
		r->hdrs = curl_slist_append(r->hdrs, line);
		free(line);
	}
	token_load(h, false);
	if (h->cfg->slurm_user) {
		/* slurmrestd (rest_auth/jwt): the file is what `scontrol
		 * token` prints, "SLURM_JWT=<token>", or the bare token */
		const char *t = h->token ? h->token : "";

		if (strncmp(t, "SLURM_JWT=", 10) == 0)
			t += 10;
		line = br_xasprintf("X-SLURM-USER-NAME: %s",
				    h->cfg->slurm_user);
		r->hdrs = curl_slist_append(r->hdrs, line);
		free(line);
		line = br_xasprintf("X-SLURM-USER-TOKEN: %s", t);
		r->hdrs = curl_slist_append(r->hdrs, line);
		free(line);
	} else if (h->token && *h->token) {
		line = br_xasprintf("Authorization: Bearer %s", h->token);
		r->hdrs = curl_slist_append(r->hdrs, line);
		free(line);
	}
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->hdrs);
}

static int setup_easy(br_http *h, br_req *r)
{
	const br_config *c = h->cfg;
	CURL *e;
	char *url;

	if (strlen(c->server) + strlen(r->path) + 1 > BR_MAX_URL) {
		snprintf(r->error, sizeof(r->error), "URL longer than %d",
			 BR_MAX_URL);
		return -1;
	}
	e = r->easy ? r->easy : curl_easy_init();
	if (!e)
		return -1;
	url = br_xasprintf("%s%s", c->server, r->path);
	r->easy = e;
	curl_easy_reset(e);
	curl_easy_setopt(e, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
			 (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)HTTP_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
			 r->timeout_ms ? r->timeout_ms :
			 (long)HTTP_DEFAULT_TIMEOUT_MS);
	if (r->low_speed_s > 0) {
		/* a watch that delivers nothing (a real server sends a
		 * bookmark about once a minute) is half-open: cut it */
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, r->low_speed_s);
	}
	curl_easy_setopt(e, CURLOPT_USERAGENT, h->ua);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->error);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS,
			 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	if (c->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
#if LIBCURL_VERSION_NUM >= 0x074d00
	if (c->ca_data) {
		struct curl_blob b = { c->ca_data, c->ca_data_len,
				       CURL_BLOB_NOCOPY };

		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	}
#endif
	if (c->cert_file)
		curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
	if (c->key_file)
		curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
	if (c->cert_data) {
		struct curl_blob b = { c->cert_data, c->cert_data_len,
				       CURL_BLOB_NOCOPY };

		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (c->key_data) {
		struct curl_blob b = { c->key_data, c->key_data_len,
				       CURL_BLOB_NOCOPY };

		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (strcmp(r->method, "GET") == 0) {
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	} else {
		if (strcmp(r->method, "POST") != 0)
			curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
		if (r->body) {
			curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
			curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
					 (curl_off_t)r->body_len);
		} else if (strcmp(r->method, "DELETE") != 0) {
			curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
			curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
		}
	}
	set_headers(h, r);
	return 0;
}

static void link_req(br_http *h, br_req *r)
{
	r->prev = NULL;
	r->next = h->head;
	if (h->head)
		h->head->prev = r;
	h->head = r;
	h->ninflight++;
}

static void unlink_req(br_http *h, br_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		h->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
	h->ninflight--;
}

static int start(br_http *h, br_req *r)
{
	r->status = 0;
	r->error[0] = '\0';
	r->streaming = false;
	r->aborted = false;
	r->timed_out = false;
	r->retry_after_s = -1;
	tg_buf_reset(&r->resp);
	if (setup_easy(h, r))
		return -1;
	if (curl_multi_add_handle(h->multi, r->easy) != CURLM_OK) {
		snprintf(r->error, sizeof(r->error),
			 "curl_multi_add_handle failed");
		return -1;
	}
	return 0;
}

static void finish(br_http *h, br_req *r)
{
	r->done = true;
	r->elapsed_ms = br_now_ms() - r->started_ms;
	if (h->observer)
		h->observer(r, h->observer_ud);
	if (r->done_fn) {
		r->done_fn(r, r->ud);
		br_req_free(r);
	}
}

/* ---- the rate limit and the wait queue --------------------------------- */

static bool limited(const br_http *h, const br_req *r)
{
	return h->cfg->qps > 0 && !h->cfg->slurm_user &&
	       r->limiter >= 0 && r->limiter < BR_RL_N;
}

/* Takes a token of \p r's bucket; false when there is none yet. */
static bool take_token(br_http *h, const br_req *r, int64_t now)
{
	bucket *b;

	if (!limited(h, r))
		return true;
	b = &h->rl[r->limiter];
	b->tokens += (double)(now - b->last_ms) * h->cfg->qps / 1000.0;
	if (b->tokens > h->cfg->burst)
		b->tokens = h->cfg->burst;
	b->last_ms = now;
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}

/* When \p r's bucket has a token again (ms from now). */
static int64_t token_wait_ms(const br_http *h, const br_req *r)
{
	const bucket *b = &h->rl[r->limiter];
	double need = 1.0 - b->tokens;

	return need <= 0 ? 0 : (int64_t)(need * 1000.0 / h->cfg->qps) + 1;
}

static void enqueue(br_http *h, br_req *r, int64_t due_ms)
{
	r->queued = true;
	r->due_ms = due_ms;
	r->qnext = NULL;
	if (h->qtail)
		h->qtail->qnext = r;
	else
		h->qhead = r;
	h->qtail = r;
	h->nqueued++;
}

static void dequeue(br_http *h, br_req *r)
{
	br_req **pp = &h->qhead, *prev = NULL;

	while (*pp && *pp != r) {
		prev = *pp;
		pp = &(*pp)->qnext;
	}
	if (!*pp)
		return;
	*pp = r->qnext;
	if (h->qtail == r)
		h->qtail = prev;
	r->qnext = NULL;
	r->queued = false;
	h->nqueued--;
}

static void unlink_done(br_http *h, br_req *r);

/* Starts what may start: due, and a token in its bucket (FIFO per
 * bucket: a request never overtakes an older one of its bucket). */
static void pump_queue(br_http *h)
{
	bool blocked[BR_RL_N + 1] = { false };
	int64_t now = br_now_ms();
	br_req *r = h->qhead, *next;

	for (; r; r = next) {
		int lim = limited(h, r) ? r->limiter : BR_RL_N;

		next = r->qnext;
		if (now < r->due_ms || (lim < BR_RL_N && blocked[lim]))
			continue;
		if (!take_token(h, r, now)) {
			blocked[lim] = true;
			continue;
		}
		dequeue(h, r);
		if (start(h, r)) {
			unlink_done(h, r);
			finish(h, r);
		}
	}
}

/* How long the loop may sleep before the queue needs it (ms). */
static long queue_wait_ms(const br_http *h, long wait_ms)
{
	int64_t now = br_now_ms();
	const br_req *r;

	for (r = h->qhead; r; r = r->qnext) {
		int64_t w = r->due_ms - now;

		if (w <= 0 && limited(h, r))
			w = token_wait_ms(h, r);
		if (w < 0)
			w = 0;
		if (w < wait_ms)
			wait_ms = (long)w;
	}
	return wait_ms;
}

unsigned br_http_queued(const br_http *h)
{
	return h->nqueued;
}

/* ---- submit, cancel, complete ------------------------------------------ */

static void unlink_done(br_http *h, br_req *r)
{
	unlink_req(h, r);
	if (!r->error[0])
		snprintf(r->error, sizeof(r->error),
			 "cannot start the request");
}

int br_http_submit(br_http *h, br_req *r, br_req_done_fn done,
		   br_req_data_fn data, void *ud)
{
	int64_t now = br_now_ms();

	r->h = h;
	r->done_fn = done;
	r->data_fn = data;
	r->ud = ud;
	r->done = r->cancelled = false;
	r->auth_retries = 0;
	r->ra_tries = 0;
	r->started_ms = now;
	link_req(h, r);
	if ((h->qhead && limited(h, r)) || !take_token(h, r, now)) {
		enqueue(h, r, 0);	/* over the rate limit: waits */
		return 0;
	}
	if (start(h, r)) {
		unlink_done(h, r);
		finish(h, r);
		return -1;
	}
	return 0;
}

void br_http_cancel(br_http *h, br_req *r)
{
	if (r->done)
		return;
	if (r->queued)
		dequeue(h, r);
	else if (r->easy)
		curl_multi_remove_handle(h->multi, r->easy);
	unlink_req(h, r);
	r->cancelled = true;
	r->status = 0;
	snprintf(r->error, sizeof(r->error), "cancelled");
	finish(h, r);
}

unsigned br_http_inflight(const br_http *h)
{
	return h->ninflight;
}

/* A 429 or 5xx with Retry-After: sent again after it (client-go). */
static bool retry_after(br_http *h, br_req *r)
{
	int64_t s = r->retry_after_s;
	char why[32];

	if (r->no_retry_after || r->streaming || s < 0 ||
	    (r->status != 429 && r->status < 500) ||
	    r->ra_tries >= BR_HTTP_RETRY_AFTER_TRIES)
		return false;
	r->ra_tries++;
	if (s > BR_HTTP_RETRY_AFTER_MAX_S)
		s = BR_HTTP_RETRY_AFTER_MAX_S;
	snprintf(why, sizeof(why), "%lld", (long long)s);
	br_log(BR_LOG_DEBUG, "Retry-After: the request waits", "path",
	       r->path, "retry_after_s", why, NULL);
	if (h->observer)
		h->observer(r, h->observer_ud);	/* this answer counts */
	enqueue(h, r, br_now_ms() + s * 1000);
	return true;
}

static void complete(br_http *h, br_req *r, CURLcode rc)
{
	long code = 0;

	curl_multi_remove_handle(h->multi, r->easy);
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	if (rc == CURLE_OK) {
		r->status = code;
	} else {
		r->status = 0;
		/* a stream that began (2xx) and was cut */
		if (r->data_fn && code >= 200 && code < 300)
			r->streaming = true;
		r->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
		if (!r->error[0])
			snprintf(r->error, sizeof(r->error), "%s",
				 curl_easy_strerror(rc));
		if (r->resp.err)
			snprintf(r->error, sizeof(r->error),
				 "response body larger than %u bytes",
				 BR_MAX_BODY);
	}
	/* a 401: the token may have rotated; re-read it and retry once */
	if (r->status == 401 && r->auth_retries == 0 && !r->streaming) {
		r->auth_retries++;
		token_load(h, true);
		br_log(BR_LOG_INFO, "401 from the API server; token re-read, "
		       "retrying", "path", r->path, NULL);
		if (start(h, r) == 0)
			return;
	}
	if (retry_after(h, r))
		return;
	unlink_req(h, r);
	finish(h, r);
}

void br_http_poll(br_http *h, long wait_ms, struct curl_waitfd *extra,
		  unsigned nextra)
{
	int running, nfds, left;
	CURLMsg *m;

	if (h->qhead)
		wait_ms = queue_wait_ms(h, wait_ms);
	curl_multi_poll(h->multi, extra, nextra, (int)wait_ms, &nfds);
	curl_multi_perform(h->multi, &running);
	while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
		br_req *r = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
				  (char **)&r);
		if (r)
			complete(h, r, m->data.result);
	}
	if (h->qhead)
		pump_queue(h);
}

void br_http_set_loop(br_http *h, void (*turn)(void *ud), void *ud)
{
	h->turn = turn;
	h->turn_ud = ud;
}

void br_http_turn(br_http *h)
{
	if (h->turn)
		h->turn(h->turn_ud);
	else
		br_http_poll(h, 50, NULL, 0);
}

void br_http_wakeup(br_http *h)
{
	curl_multi_wakeup(h->multi);
}

void br_http_wait(br_http *h, br_req *const *reqs, size_t n)
{
	for (;;) {
		size_t i;

		for (i = 0; i < n; i++)
			if (reqs[i] && !reqs[i]->done)
				break;
		if (i == n)
			return;
		if (h->turn)
			h->turn(h->turn_ud);
		else
			br_http_poll(h, 50, NULL, 0);
	}
}

void br_http_set_observer(br_http *h, void (*fn)(const br_req *r, void *ud),
			  void *ud)
{
	h->observer = fn;
	h->observer_ud = ud;
}

const char *br_req_status_reason(const br_req *r, char *buf, size_t n)
{
	cJSON *j;
	const char *v;

	buf[0] = '\0';
	if (!r->resp.len)
		return buf;
	j = cJSON_ParseWithLength(r->resp.s, r->resp.len);
	v = br_jstr(j, "reason");
	if (v)
		snprintf(buf, n, "%s", v);
	cJSON_Delete(j);
	return buf;
}

const char *br_req_reason(const br_req *r, char *buf, size_t n)
{
	cJSON *j;
	const char *reason, *msg;

	if (r->status == 0) {
		snprintf(buf, n, "transport error: %s", r->error);
		return buf;
	}
	j = r->resp.len ? cJSON_ParseWithLength(r->resp.s, r->resp.len) :
			  NULL;
	reason = br_jstr(j, "reason");
	msg = br_jstr(j, "message");
	snprintf(buf, n, "HTTP %ld%s%s%s%.300s", r->status,
		 reason ? " " : "", reason ? reason : "", msg ? ": " : "",
		 msg ? msg : "");
	cJSON_Delete(j);
	return buf;
}

bool br_status_too_large_rv(const cJSON *st)
{
	const cJSON *code = br_jget(st, "code"), *c;
	const char *reason = br_jstr(st, "reason");
	const char *msg = br_jstr(st, "message");
	bool timeout = cJSON_IsNumber(code) && code->valueint == 504 &&
		       reason && strcmp(reason, "Timeout") == 0;

	cJSON_ArrayForEach(c, br_jget(br_jget(st, "details"), "causes")) {
		const char *t = br_jstr(c, "reason");
		const char *m = br_jstr(c, "message");

		if (t && strcmp(t, "ResourceVersionTooLarge") == 0)
			return true;
		if (timeout && m && strcmp(m, "Too large resource version") ==
		    0)
			return true;
	}
	return timeout && msg && strstr(msg, "Too large resource version");
}
