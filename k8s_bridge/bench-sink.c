/*
 * k8s_bridge/bench-sink.c - a minimal API server for the bridge's
 * throughput benchmark (k8s_bridge/bench-bridge sink), in C so that the
 * server does not cap what is measured: the single-threaded Python test
 * server (tests/k8s/apiserver.py) answers 1,300-2,000 requests a second,
 * which is the ceiling the daemon met there.
 *
 * It serves exactly what the daemon does in that benchmark, and nothing
 * is checked: N nodes (spine/block labels, 8 GPUs), pods created on
 * request (POST /_create?n=M: M pending pods of one cpu for scheduler
 * "topogang", delivered as ADDED watch events), bindings (201, then a
 * MODIFIED watch event with spec.nodeName), events (201), empty lists for
 * PriorityClasses and PodDisruptionBudgets, 404 for every CRD.  GET
 * /_stats answers {"created","bound","seconds"}: seconds from the create
 * to the last binding.  Lists page with limit/continue; watches are
 * chunked.  HTTP/1.1 keep-alive, one thread, poll().
 *
 *   bench-sink NODES PORTFILE
 *
 * Not a test server: use tests/k8s/apiserver.py for anything that checks
 * behaviour.
 */
#define _GNU_SOURCE	/* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS	256
#define MAX_REQ		(1u << 20)	/* bytes of one request */
#define MAX_PODS	1000000

typedef struct buf {
	char *s;
	size_t len, cap, off;	/* off: bytes already written (out) */
} buf;

typedef struct conn {
	int fd;
	buf in, out;
	bool watch_pods;	/* a pods watch: gets the events */
	bool watch;		/* any watch: chunked, never ends */
} conn;

static conn conns[MAX_CONNS];
static unsigned nnodes;
static unsigned npods, nbound;
static char **pod_node;		/* node of pod i, NULL = pending */
static unsigned long long rv = 1;
static double t_create, t_last;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void badd(buf *b, const char *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->s = realloc(b->s, cap);
		if (!b->s)
			die("realloc");
		b->cap = cap;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void baddf(buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void baddf(buf *b, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		badd(b, tmp, (size_t)n);
		return;
	}
	{
		char *big = malloc((size_t)n + 1);

		if (!big)
			die("malloc");
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		badd(b, big, (size_t)n);
		free(big);
	}
}

static void respond(conn *c, int code, const char *body)
{
	const char *reason = code == 200 ? "OK" : code == 201 ? "Created" :
			     "Not Found";

	baddf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
	      "Content-Length: %zu\r\n\r\n%s", code, reason, strlen(body),
	      body);
}

static void node_json(buf *b, unsigned i)
{
	unsigned per_block = nnodes / 50 ? nnodes / 50 : 1;
	unsigned blk = i / per_block, sp = blk / 5;

	baddf(b, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
	      "{\"name\":\"n%05u\",\"uid\":\"node-%u\",\"resourceVersion\":"
	      "\"1\",\"labels\":{\"kubernetes.io/hostname\":\"n%05u\","
	      "\"network.topology.nvidia.com/spine\":\"s%u\","
	      "\"network.topology.nvidia.com/block\":\"b%u\"}},\"status\":"
	      "{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\","
	      "\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"}}}", i, i, i, sp,
	      blk);
}

static void pod_json(buf *b, unsigned i)
{
	baddf(b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
	      "{\"name\":\"one-%05u\",\"namespace\":\"default\",\"uid\":"
	      "\"pod-%u\",\"resourceVersion\":\"%llu\",\"creationTimestamp\":"
	      "\"2026-11-22T00:00:00Z\"},\"spec\":{\"schedulerName\":"
	      "\"topogang\",%s%s%s\"containers\":[{\"name\":\"c\",\"image\":"
	      "\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"1\","
	      "\"memory\":\"1Gi\"}}}]},\"status\":{\"phase\":\"Pending\"}}", i,
	      i, rv, pod_node[i] ? "\"nodeName\":\"" : "",
	      pod_node[i] ? pod_node[i] : "", pod_node[i] ? "\"," : "");
}

/* A watch event to every pods watch, one chunk each. */
static void broadcast(const char *type, unsigned pod)
{
	buf ev = { 0 };
	unsigned k;

	baddf(&ev, "{\"type\":\"%s\",\"object\":", type);
	pod_json(&ev, pod);
	badd(&ev, "}\n", 2);
	for (k = 0; k < MAX_CONNS; k++)
		if (conns[k].fd >= 0 && conns[k].watch_pods)
			baddf(&conns[k].out, "%zx\r\n%s\r\n", ev.len, ev.s);
	free(ev.s);
}

static const char *query(const char *path, const char *key, char *out,
			 size_t n)
{
	const char *q = strchr(path, '?');
	size_t kl = strlen(key);

	while (q) {
		q++;
		if (strncmp(q, key, kl) == 0 && q[kl] == '=') {
			size_t i = 0;

			q += kl + 1;
			while (q[i] && q[i] != '&' && i + 1 < n) {
				out[i] = q[i];
				i++;
			}
			out[i] = '\0';
			return out;
		}
		q = strchr(q, '&');
	}
	return NULL;
}

static void list(conn *c, const char *path, unsigned total, bool pods)
{
	char lim[32], cont[32];
	unsigned from = 0, limit = 500, i, to;
	buf b = { 0 };

	if (query(path, "limit", lim, sizeof(lim)))
		limit = (unsigned)strtoul(lim, NULL, 10);
	if (query(path, "continue", cont, sizeof(cont)))
		from = (unsigned)strtoul(cont, NULL, 10);
	if (!limit)
		limit = total;
	to = from + limit < total ? from + limit : total;
	baddf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":"
	      "{\"resourceVersion\":\"%llu\"", rv);
	if (to < total)
		baddf(&b, ",\"continue\":\"%u\"", to);
	badd(&b, "},\"items\":[", 11);
	for (i = from; i < to; i++) {
		if (i > from)
			badd(&b, ",", 1);
		if (pods)
			pod_json(&b, i);
		else
			node_json(&b, i);
	}
	badd(&b, "]}", 2);
	respond(c, 200, b.s);
	free(b.s);
}

static void empty_list(conn *c)
{
	char body[128];

	snprintf(body, sizeof(body), "{\"apiVersion\":\"v1\",\"kind\":"
		 "\"List\",\"metadata\":{\"resourceVersion\":\"%llu\"},"
		 "\"items\":[]}", rv);
	respond(c, 200, body);
}

static void binding(conn *c, const char *path, const char *body)
{
	const char *p = strstr(path, "/pods/one-"), *t;
	char node[64];
	size_t i = 0;
	unsigned pod;

	t = body ? strstr(body, "\"target\"") : NULL;
	t = t ? strstr(t, "\"name\":\"") : NULL;
	if (!p || !t) {
		respond(c, 404, "{}");
		return;
	}
	pod = (unsigned)strtoul(p + 10, NULL, 10);
	for (t += 8; *t && *t != '"' && i + 1 < sizeof(node); t++)
		node[i++] = *t;
	node[i] = '\0';
	if (pod >= npods || pod_node[pod]) {
		respond(c, 404, "{}");	/* not the benchmark's request */
		return;
	}
	pod_node[pod] = strdup(node);
	rv++;
	nbound++;
	t_last = now_s();
	respond(c, 201, "{\"apiVersion\":\"v1\",\"kind\":\"Status\","
		"\"status\":\"Success\",\"code\":201}");
	broadcast("MODIFIED", pod);
}

static void create(conn *c, const char *path)
{
	char n[32];
	unsigned m = query(path, "n", n, sizeof(n)) ?
		     (unsigned)strtoul(n, NULL, 10) : 0, i;

	if (m > MAX_PODS || npods) {
		respond(c, 404, "{}");
		return;
	}
	pod_node = calloc(m ? m : 1, sizeof(char *));
	if (!pod_node)
		die("calloc");
	npods = m;
	t_create = now_s();
	for (i = 0; i < m; i++) {
		rv++;
		broadcast("ADDED", i);
	}
	respond(c, 201, "{}");
}

static void handle(conn *c, const char *method, const char *path,
		   const char *body)
{
	bool watch = strstr(path, "watch=1") != NULL;
	char stats[256];

	if (strcmp(method, "POST") == 0 && strncmp(path, "/_create", 8) == 0) {
		create(c, path);
	} else if (strncmp(path, "/_stats", 7) == 0) {
		snprintf(stats, sizeof(stats), "{\"created\":%u,\"bound\":%u,"
			 "\"seconds\":%.6f}", npods, nbound,
			 nbound ? t_last - t_create : 0.0);
		respond(c, 200, stats);
	} else if (strcmp(method, "POST") == 0 &&
		   strstr(path, "/binding")) {
		binding(c, path, body);
	} else if (strcmp(method, "POST") == 0 && strstr(path, "/events")) {
		respond(c, 201, "{}");
	} else if (strcmp(method, "GET") != 0) {
		respond(c, 404, "{}");
	} else if (watch && (strncmp(path, "/api/v1/pods?", 13) == 0 ||
			     strncmp(path, "/api/v1/nodes?", 14) == 0 ||
			     strstr(path, "/priorityclasses?") ||
			     strstr(path, "/poddisruptionbudgets?"))) {
		/* held open; pods get the events */
		baddf(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: "
		      "application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
		c->watch = true;
		c->watch_pods = strncmp(path, "/api/v1/pods?", 13) == 0;
	} else if (strncmp(path, "/api/v1/nodes?", 14) == 0) {
		list(c, path, nnodes, false);
	} else if (strncmp(path, "/api/v1/pods?", 13) == 0) {
		list(c, path, npods, true);
	} else if (strstr(path, "/priorityclasses?") ||
		   strstr(path, "/poddisruptionbudgets?")) {
		empty_list(c);
	} else {
		respond(c, 404, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			"\"status\":\"Failure\",\"reason\":\"NotFound\","
			"\"code\":404}");
	}
}

/* Parses whole requests out of c->in; false to close. */
static bool serve(conn *c)
{
	for (;;) {
		char *end = c->in.s ? strstr(c->in.s, "\r\n\r\n") : NULL;
		char method[16], path[2048], *cl, *body;
		size_t head, blen = 0, total;

		if (!end)
			return c->in.len < MAX_REQ;
		head = (size_t)(end - c->in.s) + 4;
		if (sscanf(c->in.s, "%15s %2047s", method, path) != 2)
			return false;
		cl = strcasestr(c->in.s, "\r\nContent-Length:");
		if (cl && cl < end)
			blen = strtoul(cl + 17, NULL, 10);
		total = head + blen;
		if (total > MAX_REQ)
			return false;
		if (c->in.len < total)
			return true;
		body = malloc(blen + 1);
		if (!body)
			die("malloc");
		memcpy(body, c->in.s + head, blen);
		body[blen] = '\0';
		handle(c, method, path, body);
		free(body);
		memmove(c->in.s, c->in.s + total, c->in.len - total + 1);
		c->in.len -= total;
	}
}

static void drop(conn *c)
{
	close(c->fd);
	free(c->in.s);
	free(c->out.s);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	struct pollfd pf[MAX_CONNS + 1];
	int ls, one = 1;
	unsigned k;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-sink NODES PORTFILE\n");
		return 2;
	}
	nnodes = (unsigned)strtoul(argv[1], NULL, 10);
	signal(SIGPIPE, SIG_IGN);
	for (k = 0; k < MAX_CONNS; k++)
		conns[k].fd = -1;
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 128) ||
	    getsockname(ls, (struct sockaddr *)&a, &al))
		die("bind");
	f = fopen(argv[2], "w");
	if (!f)
		die(argv[2]);
	fprintf(f, "%u\n", ntohs(a.sin_port));
	fclose(f);
	for (;;) {
		unsigned n = 0, map[MAX_CONNS + 1];

		pf[n].fd = ls;
		pf[n].events = POLLIN;
		map[n++] = MAX_CONNS;
		for (k = 0; k < MAX_CONNS; k++) {
			conn *c = &conns[k];

			if (c->fd < 0)
				continue;
			pf[n].fd = c->fd;
			pf[n].events = POLLIN |
				(c->out.len > c->out.off ? POLLOUT : 0);
			map[n++] = k;
		}
		if (poll(pf, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pf[0].revents & POLLIN) {
			int fd = accept(ls, NULL, NULL);

			for (k = 0; fd >= 0 && k < MAX_CONNS; k++)
				if (conns[k].fd < 0)
					break;
			if (fd >= 0 && k == MAX_CONNS) {
				close(fd);
			} else if (fd >= 0) {
				fcntl(fd, F_SETFL, O_NONBLOCK);
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				conns[k].fd = fd;
			}
		}
		for (k = 1; k < n; k++) {
			conn *c = &conns[map[k]];
			char rb[65536];
			ssize_t r;

			if (c->fd < 0)
				continue;
			if (pf[k].revents & (POLLIN | POLLHUP | POLLERR)) {
				r = read(c->fd, rb, sizeof(rb));
				if (r <= 0 && !(r < 0 && errno == EAGAIN)) {
					drop(c);
					continue;
				}
				if (r > 0) {
					badd(&c->in, rb, (size_t)r);
					if (!serve(c)) {
						drop(c);
						continue;
					}
				}
			}
			/* write what is pending (events land on any conn) */
		}
		for (k = 0; k < MAX_CONNS; k++) {
			conn *c = &conns[k];
			ssize_t w;

			if (c->fd < 0 || c->out.len <= c->out.off)
				continue;
			w = write(c->fd, c->out.s + c->out.off,
				  c->out.len - c->out.off);
			if (w < 0 && errno != EAGAIN) {
				drop(c);
				continue;
			}
			if (w > 0)
				c->out.off += (size_t)w;
			if (c->out.off == c->out.len)
				c->out.off = c->out.len = 0;
		}
	}
}
