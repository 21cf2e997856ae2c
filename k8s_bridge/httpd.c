/*
 * k8s_bridge/httpd.c - /healthz, /readyz and /metrics.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd.h"

#define HTTPD_IDLE_MS	5000

typedef struct conn {
	int fd;
	tg_buf in;
	tg_buf out;
	size_t off;		/* bytes of out written */
	bool writing;
	int64_t deadline;
} conn;

struct br_httpd {
	int lfd;
	int port;
	br_httpd_fn fn;
	void *ud;
	conn conns[BR_HTTPD_MAX_CONNS];
	unsigned nconns;
};

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL, 0);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

br_httpd *br_httpd_create(const char *listen_on, br_httpd_fn fn, void *ud,
			  char *err, size_t errlen)
{
	struct addrinfo hints, *ai = NULL, *a;
	char host[256], *colon;
	const char *port;
	br_httpd *d;
	int one = 1, rc, fd = -1;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (strlen(listen_on) >= sizeof(host)) {
		snprintf(err, errlen, "--listen: address too long");
		return NULL;
	}
	snprintf(host, sizeof(host), "%s", listen_on);
	colon = strrchr(host, ':');
	if (!colon) {
		snprintf(err, errlen, "--listen: '%s' is not HOST:PORT",
			 listen_on);
		return NULL;
	}
	*colon = '\0';
	port = colon + 1;
	if (host[0] == '[' && colon > host + 1 && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	rc = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
	if (rc != 0) {
		snprintf(err, errlen, "--listen %s: %s", listen_on,
			 gai_strerror(rc));
		return NULL;
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
		    listen(fd, 16) == 0)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "--listen %s: %s", listen_on,
			 strerror(errno));
		freeaddrinfo(ai);
		return NULL;
	}
	freeaddrinfo(ai);
	if (nonblock(fd) != 0) {
		snprintf(err, errlen, "--listen %s: %s", listen_on,
			 strerror(errno));
		close(fd);
		return NULL;
	}
	d = br_xcalloc(1, sizeof(*d));
	d->lfd = fd;
	d->fn = fn;
	d->ud = ud;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			d->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			d->port = ntohs(((struct sockaddr_in6 *)&ss)->
					sin6_port);
	}
	return d;
}

static void drop(br_httpd *d, unsigned i)
{
	close(d->conns[i].fd);
	tg_buf_free(&d->conns[i].in);
	tg_buf_free(&d->conns[i].out);
	d->conns[i] = d->conns[--d->nconns];
}

void br_httpd_destroy(br_httpd *d)
{
	if (!d)
		return;
	while (d->nconns)
		drop(d, 0);
	close(d->lfd);
	free(d);
}

int br_httpd_port(const br_httpd *d)
{
	return d->port;
}

unsigned br_httpd_fds(br_httpd *d, struct curl_waitfd *fds, unsigned max)
{
	unsigned n = 0, i;

	if (!max)
		return 0;
	fds[n].fd = d->lfd;
	fds[n].events = CURL_WAIT_POLLIN;
	fds[n++].revents = 0;
	for (i = 0; i < d->nconns && n < max; i++) {
		fds[n].fd = d->conns[i].fd;
		fds[n].events = d->conns[i].writing ? CURL_WAIT_POLLOUT :
						      CURL_WAIT_POLLIN;
		fds[n++].revents = 0;
	}
	return n;
}

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "OK";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

static void respond(br_httpd *d, conn *c, int code, const char *ctype,
		    const tg_buf *body, bool head)
{
	BR_UNUSED(d);
	tg_buf_init(&c->out, (64u << 20));
	tg_buf_addf(&c->out, "HTTP/1.0 %d %s\r\nContent-Type: %s\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n\r\n", code,
		    status_text(code), ctype, body ? body->len : 0);
	if (body && body->len && !head)
		tg_buf_add(&c->out, body->s, body->len);
	c->off = 0;
	c->writing = true;
}

static void handle(br_httpd *d, conn *c)
{
	char method[16], path[1024];
	const char *ctype = "text/plain; charset=utf-8";
	tg_buf body;
	int code;
	char *sp, *sp2, *q;
	bool head;

	sp = memchr(c->in.s, ' ', c->in.len);
	sp2 = sp ? memchr(sp + 1, ' ', c->in.len - (size_t)(sp + 1 - c->in.s))
		 : NULL;
	tg_buf_init(&body, (32u << 20));
	if (!sp || !sp2 || (size_t)(sp - c->in.s) >= sizeof(method) ||
	    (size_t)(sp2 - sp - 1) >= sizeof(path)) {
		tg_buf_adds(&body, "bad request\n");
		respond(d, c, 404, ctype, &body, false);
		tg_buf_free(&body);
		return;
	}
	memcpy(method, c->in.s, (size_t)(sp - c->in.s));
	method[sp - c->in.s] = '\0';
	memcpy(path, sp + 1, (size_t)(sp2 - sp - 1));
	path[sp2 - sp - 1] = '\0';
	q = strchr(path, '?');
	if (q)
		*q = '\0';
	head = strcmp(method, "HEAD") == 0;
	if (strcmp(method, "GET") != 0 && !head) {
		tg_buf_adds(&body, "method not allowed\n");
		respond(d, c, 405, ctype, &body, false);
		tg_buf_free(&body);
		return;
	}
	code = d->fn(d->ud, path, &body, &ctype);
	if (body.err) {
		tg_buf_reset(&body);
		tg_buf_adds(&body, "response too large\n");
		code = 500;
	}
	respond(d, c, code, ctype, &body, head);
	tg_buf_free(&body);
}

static void accept_all(br_httpd *d)
{
	for (;;) {
		int fd = accept(d->lfd, NULL, NULL);
		conn *c;

		if (fd < 0)
			return;
		if (d->nconns == BR_HTTPD_MAX_CONNS || nonblock(fd) != 0) {
			close(fd);
			continue;
		}
		c = &d->conns[d->nconns++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		tg_buf_init(&c->in, BR_HTTPD_MAX_REQ);
		c->deadline = br_now_ms() + HTTPD_IDLE_MS;
	}
}

/* Returns false when the connection is finished. */
static bool serve(br_httpd *d, conn *c)
{
	if (!c->writing) {
		char tmp[2048];
		ssize_t n = read(c->fd, tmp, sizeof(tmp));

		if (n == 0)
			return false;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ||
			       errno == EINTR;
		if (tg_buf_add(&c->in, tmp, (size_t)n)) {
			respond(d, c, 431, "text/plain", NULL, false);
			return true;
		}
		if (strstr(c->in.s, "\r\n\r\n") || strstr(c->in.s, "\n\n"))
			handle(d, c);
		return true;
	}
	while (c->off < c->out.len) {
		ssize_t n = write(c->fd, c->out.s + c->off,
				  c->out.len - c->off);

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ||
			       errno == EINTR;
		c->off += (size_t)n;
	}
	return false;
}

void br_httpd_process(br_httpd *d, const struct curl_waitfd *fds,
		      unsigned n)
{
	unsigned i, j;
	int64_t now = br_now_ms();

	for (i = 0; i < n; i++) {
		if (fds[i].fd == d->lfd) {
			if (fds[i].revents)
				accept_all(d);
			continue;
		}
		for (j = 0; j < d->nconns; j++) {
			if (d->conns[j].fd != fds[i].fd)
				continue;
			if (fds[i].revents && !serve(d, &d->conns[j]))
				drop(d, j);
			break;
		}
	}
	for (j = d->nconns; j > 0; j--)
		if (now > d->conns[j - 1].deadline)
			drop(d, j - 1);
}
