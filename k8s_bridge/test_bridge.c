/*
 * k8s_bridge/test_bridge.c - unit tests of the bridge's modules that need
 * no API server: utilities, YAML, configuration (file, flags, kubeconfig,
 * in-cluster), the watch framer, the caches, the map, metrics, the
 * HTTP endpoint, and mixed mode's pieces (its config, slurmrestd bodies,
 * Slurm node lists).  TAP; run by tests/k8s/test-bridge-unit.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdarg.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#include "bconfig.h"
#include "event.h"
#include "http.h"
#include "httpd.h"
#include "feed.h"
#include "jframe.h"
#include "log.h"
#include "map.h"
#include "metrics.h"
#include "informer.h"
#include "mixed.h"
#include "sched.h"
#include "slurmrest.h"
#include "store.h"
#include "util.h"

static char tmpdir[256];

static const char *tmpfile_with(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* ---- util -------------------------------------------------------------- */

static void test_util(void)
{
	tg_buf b;
	char t[40];
	int64_t us;
	char *s;
	size_t n;

	tg_buf_init(&b, 8);
	ok(!tg_buf_adds(&b, "12345678"), "buf: fills to its bound");
	ok(tg_buf_adds(&b, "9") == TG_ELIMIT && b.err, "buf: one byte past "
	   "the bound is an error, not a silent cut");
	is_int(b.len, 8, "buf: content kept after the error");
	tg_buf_free(&b);
	tg_buf_init(&b, 100);
	tg_buf_add_json(&b, "a\"b\\c\n\x01");
	is_str(b.s, "\"a\\\"b\\\\c\\n\\u0001\"", "buf: JSON string escaping");
	tg_buf_free(&b);

	is_str(br_rfc3339(t, sizeof(t), 1785543605123456ll, true),
	       "2026-08-01T00:20:05.123456Z", "rfc3339: MicroTime");
	is_str(br_rfc3339(t, sizeof(t), 1785543605123456ll, false),
	       "2026-08-01T00:20:05Z", "rfc3339: seconds");
	ok(br_parse_rfc3339("2026-08-01T00:20:05.123456Z", &us) &&
	   us == 1785543605123456ll, "rfc3339: parses back");
	ok(br_parse_rfc3339("2026-08-01T02:20:05+02:00", &us) &&
	   us == 1785543605000000ll, "rfc3339: offset");
	ok(!br_parse_rfc3339("2026-08-01 junk", &us), "rfc3339: junk refused");

	s = br_base64_decode("aGVsbG8gd29ybGQ=", &n);
	ok(s && n == 11 && memcmp(s, "hello world", 11) == 0, "base64");
	free(s);
	ok(br_base64_decode("not*base64", &n) == NULL, "base64: bad input");

	s = br_urlencode("status.phase!=Succeeded,a b");
	is_str(s, "status.phase%21%3DSucceeded%2Ca%20b", "urlencode");
	free(s);
}

/* ---- YAML, config ------------------------------------------------------ */

static void test_yaml(void)
{
	char err[256];
	const char *y = "a: 1\nb: [x, \"2\", true, null]\nc: {d: 2.5}\n";
	cJSON *j = br_config_yaml(y, strlen(y), "t.yaml", err, sizeof(err));

	ok(j != NULL, "yaml: parses");
	ok(cJSON_IsNumber(br_jget(j, "a")) && br_jget(j, "a")->valuedouble == 1,
	   "yaml: plain integer is a number");
	ok(cJSON_IsString(cJSON_GetArrayItem(br_jget(j, "b"), 1)),
	   "yaml: quoted scalar stays a string");
	ok(cJSON_IsTrue(cJSON_GetArrayItem(br_jget(j, "b"), 2)),
	   "yaml: true");
	ok(cJSON_IsNull(cJSON_GetArrayItem(br_jget(j, "b"), 3)), "yaml: null");
	cJSON_Delete(j);
	y = "a: 1\na: 2\n";
	j = br_config_yaml(y, strlen(y), "t.yaml", err, sizeof(err));
	ok(!j, "yaml: duplicate key refused");
	like(err, "t.yaml:1: duplicate key 'a' in the mapping starting here",
	     "yaml: error names file and line");
	y = "a: [1\n";
	j = br_config_yaml(y, strlen(y), "bad.yaml", err, sizeof(err));
	ok(!j && strstr(err, "bad.yaml:"), "yaml: syntax error names the file");
	/* libtopogang's reader (topogang/doc.h): what the bridge keeps */
	j = br_config_yaml("", 0, "empty.yaml", err, sizeof(err));
	ok(cJSON_IsObject(j) && !j->child, "yaml: empty text, empty object");
	cJSON_Delete(j);
	y = "a: 1\n---\nb: 2\n";
	j = br_config_yaml(y, strlen(y), "two.yaml", err, sizeof(err));
	ok(br_jget(j, "a") && !br_jget(j, "b"), "yaml: the first document");
	cJSON_Delete(j);
	y = "a: &x {b: 1}\nc: *x\nd: !!str 12\n";
	j = br_config_yaml(y, strlen(y), "alias.yaml", err, sizeof(err));
	ok(cJSON_IsNumber(br_jpath(j, "c.b")) &&
	   cJSON_IsString(br_jget(j, "d")),
	   "yaml: aliases copied, !!str honoured");
	cJSON_Delete(j);
}

static void test_config_file(void)
{
	br_config c;
	char err[512];
	const char *txt =
		"schedulerName: gangs\n"
		"topology:\n"
		"  levels: [network.topology.nvidia.com/spine,"
		" network.topology.nvidia.com/block]\n"
		"  bandwidthGbps: {network.topology.nvidia.com/block: 400}\n"
		"preemption: {mode: delete, nominationTimeoutSeconds: 60}\n"
		"leaderElection: {leaseDurationSeconds: 15, leaseName: x}\n"
		"queue: {initialBackoffSeconds: 0.5}\n"
		"logLevel: debug\n";

	br_config_init(&c);
	is_str(c.scheduler_name, "topogang", "config: default scheduler name");
	ok(c.lease_duration_s == 15 && c.renew_deadline_s == 10 &&
	   c.retry_period_s == 2, "config: default lease 15 s / 10 s / 2 s");
	is_int(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
				   sizeof(err)), 0, "config: file loads");
	is_str(c.scheduler_name, "gangs", "config: schedulerName");
	is_int(c.nlevels, 2, "config: levels");
	is_str(c.levels[1], "network.topology.nvidia.com/block",
	       "config: level order kept");
	ok(c.nbw == 1 && c.bw[0].gbps == 400, "config: bandwidth per layer");
	ok(c.preempt_delete && c.nomination_timeout_s == 60,
	   "config: preemption section");
	is_int(c.backoff_initial_ms, 500, "config: backoff in seconds");
	is_int(c.log_level, BR_LOG_DEBUG, "config: log level");
	br_config_free(&c);

	br_config_init(&c);
	txt = "topology: {levls: [a]}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0, "config: unknown key refused");
	is_str(err, "b.yaml: topology.levls: unknown key",
	       "config: the message names the key");
	txt = "preemption: {mode: kill}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 && strstr(err, "evict or "
							  "delete"),
	   "config: bad enum refused");
	txt = "topology:\n  # levels: [a]\nqueue:\n";
	is_int(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
				   sizeof(err)), 0, "config: a section with every "
	       "key commented out is empty, not an error");
	txt = "clientConnection: {qps: 5, burst: 20}\n"
	      "informers: {watchIdleSeconds: 0}\n";
	is_int(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
				   sizeof(err)), 0, "config: clientConnection");
	ok(c.qps == 5 && c.burst == 20 && c.watch_idle_s == 0,
	   "config: qps, burst, watchIdleSeconds");
	txt = "clientConnection: {qsp: 5}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 && strstr(err, "clientConnection."
							  "qsp: unknown key"),
	   "config: clientConnection: unknown key refused");
	txt = "informers: {pageSize: 0}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 && strstr(err, "outside"),
	   "config: out-of-range number refused");
	br_config_free(&c);
}

static int args(br_config *c, char *err, size_t n, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "topogang-bridge";
	va_start(ap, n);
	while ((a = va_arg(ap, char *)) != NULL && argc < 31)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	br_config_init(c);
	return br_config_from_args(c, argc, argv, err, n);
}

static void test_config_args(void)
{
	br_config c;
	char err[512], cfgpath[512];
	const char *p;

	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBECONFIG");
	is_int(args(&c, err, sizeof(err), "--server",
		    "http://127.0.0.1:1/", "--no-leader-elect", "--levels",
		    "a,b,c", NULL), 0, "args: --server");
	is_str(c.server, "http://127.0.0.1:1", "args: trailing slash dropped");
	ok(!c.leader_elect && c.nlevels == 3, "args: flags applied");
	is_str(c.conn_source, "--server", "args: the source is named");
	ok(c.identity && strchr(c.identity, '_'), "args: identity "
	   "hostname_random");
	br_config_free(&c);

	is_int(args(&c, err, sizeof(err), NULL), -1, "args: no server "
	       "anywhere is an error");
	like(err, "no API server", "args: says so");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--server", "ftp://x", NULL), -1,
	       "args: non-http URL refused");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--bogus", NULL), -1,
	       "args: unknown flag refused");
	like(err, "unknown option '--bogus'", "args: names the flag");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--server", NULL), -1,
	       "args: flag without value");
	like(err, "--server: needs a value", "args: says which");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--server", "http://x",
		    "--lease-duration", "5", "--renew-deadline", "6", NULL),
	       -1, "args: renew deadline must be below the lease");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--token-file", "/x", NULL), -1,
	       "args: --token-file without --server");
	br_config_free(&c);
	/* a bearer token in clear text: only with --insecure */
	is_int(args(&c, err, sizeof(err), "--server", "http://x",
		    "--token-file", "/x", NULL), -1,
	       "args: a token over http:// is refused");
	like(err, "clear text over http://", "args: says why");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--server", "http://x",
		    "--token-file", "/x", "--insecure", NULL), 0,
	       "args: ... unless --insecure");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--server", "https://x",
		    "--token-file", "/x", NULL), 0,
	       "args: a token over https:// is fine");
	ok(c.eviction_grace_s == -1 && c.qps == BR_QPS &&
	   c.burst == BR_BURST && c.watch_idle_s == BR_WATCH_IDLE_S,
	   "args: defaults: victims' own grace, qps 50, burst 100, "
	   "watchIdleSeconds 90");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--server", "http://x",
		    "--kube-api-qps", "0", "--kube-api-burst", "7", NULL), 0,
	       "args: --kube-api-qps, --kube-api-burst");
	ok(c.qps == 0 && c.burst == 7, "args: the rate limit set");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--server", "http://x",
		    "--kube-api-burst", "0", NULL), -1,
	       "args: a burst of 0 refused");
	br_config_free(&c);

	p = tmpfile_with("bridge.yaml", "schedulerName: fromfile\n"
			 "server: {listen: \"127.0.0.1:9\"}\n");
	snprintf(cfgpath, sizeof(cfgpath), "%s", p);
	is_int(args(&c, err, sizeof(err), "--scheduler-name", "fromflag",
		    "--config", cfgpath, "--server", "http://x", NULL), 0,
	       "args: --config");
	is_str(c.scheduler_name, "fromflag", "args: a flag beats the file, "
	       "wherever it stands");
	is_str(c.listen, "127.0.0.1:9", "args: the file's other keys apply");
	ok(!c.ui, "args: /ui is off by default");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--ui", "--server", "http://x",
		    NULL), 0, "args: --ui");
	ok(c.ui, "args: --ui turns /ui on");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--ui=false", "--server",
		    "http://x", NULL), 0, "args: --ui=false");
	ok(!c.ui, "args: --ui=false leaves it off");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--ui=maybe", "--server",
		    "http://x", NULL), -1, "args: --ui=maybe refused");
	like(err, "--ui: true or false", "args: says what --ui takes");
	br_config_free(&c);
	is_int(args(&c, err, sizeof(err), "--ui", "--listen", "", "--server",
		    "http://x", NULL), -1, "args: --ui without a listener");
	like(err, "--ui (server.ui) needs the HTTP endpoint",
	     "args: says why");
	br_config_free(&c);
	p = tmpfile_with("ui.yaml", "server: {listen: \"127.0.0.1:9\", "
			 "ui: true}\n");
	snprintf(cfgpath, sizeof(cfgpath), "%s", p);
	is_int(args(&c, err, sizeof(err), "--config", cfgpath, "--server",
		    "http://x", NULL), 0, "args: server.ui in the file");
	ok(c.ui, "args: server.ui: true turns /ui on");
	br_config_free(&c);
	p = tmpfile_with("bad.yaml", "schedulerName: [x]\n");
	snprintf(cfgpath, sizeof(cfgpath), "%s", p);
	is_int(args(&c, err, sizeof(err), "--config", cfgpath, "--server",
		    "http://x", NULL), -1, "args: bad config file");
	like(err, "bad.yaml: schedulerName: must be a string",
	     "args: the file's error");
	br_config_free(&c);
}

static void test_kubeconfig(void)
{
	br_config c;
	char err[512], path[512];
	const char *p;

	tmpfile_with("ca.crt", "x");
	p = tmpfile_with("kc",
		"apiVersion: v1\nkind: Config\n"
		"current-context: b\n"
		"clusters:\n"
		"- name: ca\n  cluster: {server: 'https://a:6443', "
		"certificate-authority: ca.crt}\n"
		"- name: cb\n  cluster: {server: 'https://b:6443', "
		"certificate-authority-data: aGVsbG8=, "
		"insecure-skip-tls-verify: true}\n"
		"users:\n"
		"- name: ua\n  user: {tokenFile: tok}\n"
		"- name: ub\n  user: {token: t0k, client-certificate-data: "
		"Y2VydA==, client-key-data: a2V5}\n"
		"- name: ux\n  user: {exec: {command: x}}\n"
		"contexts:\n"
		"- name: a\n  context: {cluster: ca, user: ua, namespace: ns1}\n"
		"- name: b\n  context: {cluster: cb, user: ub}\n"
		"- name: x\n  context: {cluster: ca, user: ux}\n"
		"- name: y\n  context: {cluster: nope, user: ua}\n");
	snprintf(path, sizeof(path), "%s", p);
	br_config_init(&c);
	is_int(br_config_load_kubeconfig(&c, path, NULL, err, sizeof(err)), 0,
	       "kubeconfig: current context");
	is_str(c.server, "https://b:6443", "kubeconfig: server");
	ok(c.ca_data && c.ca_data_len == 5 && memcmp(c.ca_data, "hello", 5) ==
	   0, "kubeconfig: certificate-authority-data decoded");
	ok(c.insecure, "kubeconfig: insecure-skip-tls-verify");
	is_str(c.token, "t0k", "kubeconfig: token");
	ok(c.cert_data && c.key_data && c.key_data_len == 3,
	   "kubeconfig: client certificate and key data");
	is_int(br_config_load_kubeconfig(&c, path, "a", err, sizeof(err)), 0,
	       "kubeconfig: --context");
	ok(c.token_file && strstr(c.token_file, tmpdir) &&
	   strstr(c.token_file, "/tok"), "kubeconfig: tokenFile relative to "
	   "the kubeconfig");
	ok(c.ca_file && strstr(c.ca_file, "/ca.crt") && !c.ca_data &&
	   !c.insecure && !c.token, "kubeconfig: switching context resets "
	   "the credentials");
	is_str(c.lease_namespace, "ns1", "kubeconfig: the context's "
	       "namespace holds the lease");
	ok(br_config_load_kubeconfig(&c, path, "x", err, sizeof(err)) < 0 &&
	   strstr(err, "exec"), "kubeconfig: exec credentials refused with "
	   "a reason");
	ok(br_config_load_kubeconfig(&c, path, "y", err, sizeof(err)) < 0 &&
	   strstr(err, "no cluster 'nope'"), "kubeconfig: missing cluster");
	ok(br_config_load_kubeconfig(&c, path, "zz", err, sizeof(err)) < 0 &&
	   strstr(err, "no context named 'zz'"), "kubeconfig: missing "
	   "context");
	br_config_free(&c);
}

static void test_in_cluster(void)
{
	br_config c;
	char err[512], sa[512];

	snprintf(sa, sizeof(sa), "%s/sa", tmpdir);
	mkdir(sa, 0700);
	br_config_init(&c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	is_int(br_config_in_cluster(&c, sa, err, sizeof(err)), 1,
	       "in-cluster: not in a cluster without the env");
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	is_int(br_config_in_cluster(&c, sa, err, sizeof(err)), -1,
	       "in-cluster: no token file is an error");
	tmpfile_with("sa/token", "tok\n");
	tmpfile_with("sa/namespace", "kube-system\n");
	is_int(br_config_in_cluster(&c, sa, err, sizeof(err)), 0,
	       "in-cluster: configured");
	is_str(c.server, "https://10.0.0.1:443", "in-cluster: server");
	ok(c.ca_file && strstr(c.ca_file, "sa/ca.crt"), "in-cluster: CA");
	is_str(c.lease_namespace, "kube-system", "in-cluster: namespace");
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	br_config_in_cluster(&c, sa, err, sizeof(err));
	is_str(c.server, "https://[fd00::1]:443", "in-cluster: IPv6 host");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	br_config_free(&c);
}

/* ---- the framer -------------------------------------------------------- */

typedef struct got {
	char v[8][256];
	int n;
} got;

static int collect(void *ud, const char *text, size_t len)
{
	got *g = ud;

	if (g->n < 8)
		snprintf(g->v[g->n++], sizeof(g->v[0]), "%.*s", (int)len,
			 text);
	return 0;
}

static void test_jframe(void)
{
	br_jframe f;
	got g;
	const char *s = "{\"type\":\"ADDED\",\"object\":{\"a\":\"}{\\\"\"}}\n"
			"{\"type\":\"BOOKMARK\"} {\"x\":[1,{\"y\":2}]}\r\n";
	size_t i;

	memset(&g, 0, sizeof(g));
	br_jframe_init(&f, 1024);
	{
		int rc = 0;

		for (i = 0; i < strlen(s); i++)
			rc |= br_jframe_feed(&f, s + i, 1, collect, &g);
		is_int(rc, 0, "jframe: fed byte by byte");
	}
	is_int(g.n, 3, "jframe: three values from one-byte chunks");
	is_str(g.v[0], "{\"type\":\"ADDED\",\"object\":{\"a\":\"}{\\\"\"}}",
	       "jframe: braces and escaped quotes inside strings");
	is_str(g.v[2], "{\"x\":[1,{\"y\":2}]}", "jframe: two values on one "
	       "line");
	ok(!br_jframe_partial(&f), "jframe: nothing left over");
	br_jframe_feed(&f, "{\"half\":", 8, collect, &g);
	ok(br_jframe_partial(&f), "jframe: a cut value is partial");
	br_jframe_reset(&f);
	ok(!br_jframe_partial(&f), "jframe: reset drops it");
	is_int(br_jframe_feed(&f, "x{}", 3, collect, &g), -1,
	       "jframe: stray bytes between values are an error");
	like(f.err, "unexpected byte", "jframe: says what");
	br_jframe_reset(&f);
	br_jframe_free(&f);
	br_jframe_init(&f, 16);
	is_int(br_jframe_feed(&f, "{\"aaaaaaaaaaaaaaaaaaaa\":1}", 25, collect,
			      &g), -1, "jframe: value over the bound refused");
	like(f.err, "longer than 16", "jframe: names the bound");
	br_jframe_free(&f);
	/* a large value split at every possible point */
	{
		char big[600];
		int ok_all = 1;
		size_t cut;

		memset(big, 0, sizeof(big));
		memcpy(big, "{\"k\":\"", 6);
		memset(big + 6, 'v', 500);
		memcpy(big + 506, "\\\"}\"}", 6);
		for (cut = 1; cut < strlen(big); cut += 37) {
			memset(&g, 0, sizeof(g));
			br_jframe_init(&f, 4096);
			br_jframe_feed(&f, big, cut, collect, &g);
			br_jframe_feed(&f, big + cut, strlen(big) - cut,
				       collect, &g);
			if (g.n != 1)
				ok_all = 0;
			br_jframe_free(&f);
		}
		ok(ok_all, "jframe: any split point gives the one value");
	}
}

/* ---- store, map -------------------------------------------------------- */

static br_obj *mk(const char *json, bool pod)
{
	cJSON *j = cJSON_Parse(json);
	br_obj *o = br_obj_from_json(j, pod ? "Pod" : "Node", "v1", pod);

	cJSON_Delete(j);
	return o;
}

/* A real Node, \p beat its heartbeat time, \p var the rest that varies. */
static br_obj *mk_node(int beat, const char *label, const char *cpu,
		       const char *ready)
{
	char js[2048];

	snprintf(js, sizeof(js),
		 "{\"metadata\":{\"name\":\"gpu-1\",\"uid\":\"u1\","
		 "\"resourceVersion\":\"%d\",\"labels\":{\"pool\":\"%s\"},"
		 "\"managedFields\":[{\"manager\":\"kubelet\"}]},"
		 "\"spec\":{\"podCIDR\":\"10.0.0.0/24\",\"taints\":[{\"key\":"
		 "\"k\",\"effect\":\"NoSchedule\"}]},\"status\":{"
		 "\"capacity\":{\"cpu\":\"64\"},\"allocatable\":{\"cpu\":"
		 "\"%s\"},\"conditions\":[{\"type\":\"MemoryPressure\","
		 "\"status\":\"False\",\"lastHeartbeatTime\":\"t%d\"},"
		 "{\"type\":\"Ready\",\"status\":\"%s\",\"reason\":"
		 "\"KubeletReady\",\"message\":\"ok %d\","
		 "\"lastHeartbeatTime\":\"t%d\"}],\"images\":[{\"names\":"
		 "[\"img:%d\"],\"sizeBytes\":%d}],\"nodeInfo\":{\"bootID\":"
		 "\"b\"}}}", beat, label, cpu, beat, ready, beat, beat, beat,
		 beat);
	return mk(js, false);
}

/*
 * Nodes are slimmed to what placement reads; a heartbeat (times, images,
 * the Ready message) leaves the sig alone, a change of a label, of
 * allocatable or of readiness does not.
 */
static void test_store_node_slim(void)
{
	br_obj *a = mk_node(1, "a", "63", "True");
	br_obj *b = mk_node(2, "a", "63", "True");
	br_obj *l = mk_node(2, "b", "63", "True");
	br_obj *c = mk_node(2, "a", "62", "True");
	br_obj *r = mk_node(2, "a", "63", "False");
	cJSON *j = br_obj_parse(a);

	ok(a && b && l && c && r && j, "node slim: made");
	ok(j && !br_jpath(j, "status.images") &&
	   !br_jpath(j, "status.nodeInfo") && !br_jpath(j, "spec.podCIDR") &&
	   !br_jpath(j, "metadata.managedFields"),
	   "node slim: images, nodeInfo, podCIDR, managedFields dropped");
	ok(j && br_jpath(j, "metadata.labels.pool") &&
	   br_jpath(j, "spec.taints") && br_jpath(j, "status.allocatable.cpu")
	   && br_jpath(j, "status.capacity.cpu") && a &&
	   strcmp(a->rv, "1") == 0 && strcmp(a->uid, "u1") == 0,
	   "node slim: labels, taints, allocatable, capacity, uid, rv kept");
	ok(j && cJSON_GetArraySize(br_jpath(j, "status.conditions")) == 1 &&
	   br_jstr(cJSON_GetArrayItem(br_jpath(j, "status.conditions"), 0),
		   "status") &&
	   !br_jget(cJSON_GetArrayItem(br_jpath(j, "status.conditions"), 0),
		    "lastHeartbeatTime"),
	   "node slim: the Ready condition only, without its times");
	ok(a && a->len < 400, "node slim: %zu bytes", a ? a->len : 0);
	ok(a && b && a->sig == b->sig, "node sig: a heartbeat changes nothing");
	ok(a && l && a->sig != l->sig, "node sig: a label changes it");
	ok(a && c && a->sig != c->sig, "node sig: allocatable changes it");
	ok(a && r && a->sig != r->sig, "node sig: readiness changes it");
	cJSON_Delete(j);
	br_obj_free(a);
	br_obj_free(b);
	br_obj_free(l);
	br_obj_free(c);
	br_obj_free(r);
}

/* The gang annotation counts only in the pod's own namespace. */
static void test_store_gang_ns(void)
{
	br_obj *x = mk("{\"metadata\":{\"name\":\"q\",\"namespace\":"
		       "\"evil\",\"uid\":\"u9\",\"annotations\":{"
		       "\"topogang.io/gang\":\"default/g\"}},\"spec\":"
		       "{\"nodeName\":\"n\"}}", true);
	br_obj *y = mk("{\"metadata\":{\"name\":\"q\",\"namespace\":"
		       "\"team\",\"uid\":\"u8\",\"annotations\":{"
		       "\"topogang.io/gang\":\"team/g\"}},\"spec\":"
		       "{\"nodeName\":\"n\"}}", true);

	ok(x && !x->ann_gang, "store: a gang annotation naming "
	   "another namespace does not count");
	ok(y && y->ann_gang && strcmp(y->ann_gang, "team/g") == 0,
	   "store: one naming the pod's own namespace does");
	br_obj_free(x);
	br_obj_free(y);
}

/* A slimmed pod's volumes: names and claims only (k8s_volume.c). */
static void store_volumes(const cJSON *j)
{
	char *v = cJSON_PrintUnformatted(br_jpath(j, "spec.volumes"));

	is_str(v, "[{\"name\":\"cfg\"},{\"name\":\"d\","
	       "\"persistentVolumeClaim\":{\"claimName\":\"c\"}},"
	       "{\"name\":\"e\",\"ephemeral\":{}}]",
	       "store: volumes keep their names and claims only "
	       "(k8s_volume.c reads them)");
	cJSON_free(v);
}

/* volumes: a configMap (dropped but its name), a claim, an ephemeral one */
#define VOLS "[{\"name\":\"cfg\",\"configMap\":{\"name\":\"x\"}}," \
	"{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":\"c\"," \
	"\"readOnly\":true}},{\"name\":\"e\",\"ephemeral\":{" \
	"\"volumeClaimTemplate\":{\"spec\":{}}}}]"

static void test_store(void)
{
	br_store s;
	br_obj *o, *old;
	cJSON *j;
	char key[32];
	int i, all = 1;

	o = mk("{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\","
	       "\"resourceVersion\":\"7\",\"managedFields\":[{}],"
	       "\"annotations\":{\"kubectl.kubernetes.io/last-applied-"
	       "configuration\":\"{}\",\"topogang.io/gang\":\"default/g\"}},"
	       "\"spec\":{\"schedulerName\":\"topogang\",\"containers\":[{"
	       "\"name\":\"c\",\"image\":\"busybox\",\"env\":[{\"name\":\"A\"}],"
	       "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
	       "\"volumes\":" VOLS ",\"schedulingGates\":[{\"name\":\"g\"}]},"
	       "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":"
	       "\"PodScheduled\",\"status\":\"False\",\"message\":\"m\"}]}}",
	       true);
	ok(o != NULL, "store: a pod object");
	is_str(o->key, "default/p", "store: a pod without namespace is in "
	       "default");
	ok(o->gated && !o->node && !o->terminal, "store: pod fields");
	is_str(o->ann_gang, "default/g", "store: our gang annotation");
	is_str(o->cond_msg, "m", "store: the PodScheduled=False message");
	j = br_obj_parse(o);
	ok(j && br_jstr(j, "kind") && strcmp(br_jstr(j, "kind"), "Pod") == 0,
	   "store: kind filled in");
	ok(!br_jpath(j, "metadata.managedFields") &&
	   !br_jget(br_jpath(j, "metadata.annotations"),
		    "kubectl.kubernetes.io/last-applied-configuration"),
	   "store: managedFields and last-applied dropped");
	ok(!br_jget(cJSON_GetArrayItem(br_jpath(j, "spec.containers"), 0),
		    "env") &&
	   br_jpath_str(cJSON_GetArrayItem(br_jpath(j, "spec.containers"), 0),
			"resources.requests.cpu"),
	   "store: a pod keeps its resources, not its env");
	store_volumes(j);
	cJSON_Delete(j);
	old = mk("{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\","
		 "\"resourceVersion\":\"8\",\"annotations\":{"
		 "\"topogang.io/gang\":\"default/g\"}},\"spec\":{"
		 "\"schedulerName\":\"topogang\",\"containers\":[{"
		 "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
		 "\"volumes\":" VOLS ","
		 "\"schedulingGates\":[{\"name\":\"g\"}]},\"status\":{"
		 "\"phase\":\"Pending\"}}", true);
	ok(old->sig == o->sig, "store: a status-only change keeps the "
	   "signature");
	br_obj_free(old);
	old = mk("{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},"
		 "\"spec\":{}}", true);
	ok(old->sig != o->sig, "store: a label change changes it");
	br_obj_free(old);
	old = mk("{\"metadata\":{\"name\":\"q\",\"namespace\":\"n\"},\"spec\":"
		 "{\"schedulingGroup\":{\"podGroupName\":\"pg\"}}}", true);
	j = br_obj_parse(old);
	is_str(br_jstr(br_jpath(j, "metadata.labels"),
		       "pod-group.scheduling.sigs.k8s.io"), "pg",
	       "store: upstream schedulingGroup spoken as a Koordinator "
	       "PodGroup label");
	cJSON_Delete(j);
	br_obj_free(old);
	/* a pod that names its gang in a dialect (the keys are the core's:
	 * tg_k8s_dialect_key()) keeps it */
	old = mk("{\"metadata\":{\"name\":\"r\",\"namespace\":\"n\","
		 "\"annotations\":{\"pod-group-name\":\"kai\"}},\"spec\":"
		 "{\"schedulingGroup\":{\"podGroupName\":\"pg\"}}}", true);
	j = br_obj_parse(old);
	ok(!br_jstr(br_jpath(j, "metadata.labels"),
		    "pod-group.scheduling.sigs.k8s.io"),
	   "store: a pod with KAI's pod-group-name keeps its own gang");
	cJSON_Delete(j);
	br_obj_free(old);
	old = mk("{\"metadata\":{\"name\":\"t\"},\"status\":{\"phase\":"
		 "\"Succeeded\"}}", true);
	ok(old->terminal, "store: terminal pods recognised");
	br_obj_free(old);
	ok(mk("{\"metadata\":{}}", false) == NULL, "store: no name, no "
	   "object");

	br_store_init(&s);
	ok(br_store_put(&s, o) == NULL, "store: insert");
	ok(br_store_get(&s, "default/p") == o, "store: get");
	for (i = 0; i < 500; i++) {
		char js[128];

		snprintf(js, sizeof(js), "{\"metadata\":{\"name\":\"n%d\"}}",
			 i);
		br_store_put(&s, mk(js, false));
	}
	for (i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "n%d", i);
		if (!br_store_get(&s, key))
			all = 0;
	}
	ok(all && s.n == 501, "store: 500 more, all found after growth");
	for (i = 0; i < 500; i += 2) {
		snprintf(key, sizeof(key), "n%d", i);
		br_obj_free(br_store_take(&s, key));
	}
	all = 1;
	for (i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "n%d", i);
		if ((br_store_get(&s, key) != NULL) != (i % 2 == 1))
			all = 0;
	}
	ok(all && s.n == 251, "store: take half, the rest stay");
	for (i = 0; i < (int)s.n; i++)
		if (s.all[i]->idx != (size_t)i)
			all = 0;
	ok(all, "store: dense index consistent");
	old = mk("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"9\"}}",
		 false);
	o = br_store_put(&s, old);
	ok(o && br_store_get(&s, "n1") == old && s.n == 251,
	   "store: replace returns the old object");
	br_obj_free(o);
	br_store_free(&s);
}

/* client-go's isTooLargeResourceVersionError, on the bodies of the
 * servers that wrote each form. */
static void test_too_large_rv(void)
{
	static const struct {
		const char *body;
		bool want;
	} c[] = {
		{ "{\"kind\":\"Status\",\"code\":504,\"reason\":\"Timeout\","
		  "\"message\":\"Timeout: Too large resource version: 9, "
		  "current: 5\",\"details\":{\"causes\":[{\"reason\":"
		  "\"ResourceVersionTooLarge\",\"message\":\"Too large "
		  "resource version\"}],\"retryAfterSeconds\":1}}", true },
		{ "{\"code\":504,\"reason\":\"Timeout\",\"details\":{"
		  "\"causes\":[{\"message\":\"Too large resource version\"}]}}",
		  true },	/* 1.17.0-1.18.5 */
		{ "{\"code\":504,\"reason\":\"Timeout\",\"message\":"
		  "\"Too large resource version: 9\"}", true },	/* < 1.17 */
		{ "{\"code\":504,\"reason\":\"Timeout\",\"message\":"
		  "\"Timeout: request did not complete\"}", false },
		{ "{\"code\":410,\"reason\":\"Expired\",\"message\":"
		  "\"too old resource version: 1 (2)\"}", false },
		{ "{\"code\":500,\"reason\":\"InternalError\",\"message\":"
		  "\"Too large resource version\"}", false },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cJSON *j = cJSON_Parse(c[i].body);

		ok(br_status_too_large_rv(j) == c[i].want, "too large rv: "
		   "case %zu is %s", i, c[i].want ? "too large" : "not");
		cJSON_Delete(j);
	}
}

static void test_map(void)
{
	br_map m;
	br_map_ent *e;
	size_t slot, n = 0;
	char k[16];
	int i;

	br_map_init(&m, free);
	for (i = 0; i < 300; i++) {
		snprintf(k, sizeof(k), "k%d", i);
		br_map_put(&m, k, br_xstrdup(k));
	}
	ok(m.n == 300 && strcmp(br_map_get(&m, "k123"), "k123") == 0,
	   "map: put and get");
	br_map_put(&m, "k1", br_xstrdup("new"));
	is_str(br_map_get(&m, "k1"), "new", "map: replace");
	br_map_del(&m, "k2");
	ok(!br_map_get(&m, "k2") && m.n == 299, "map: delete");
	for (e = br_map_first(&m, &slot); e; e = br_map_next(&m, &slot, e))
		n++;
	is_int(n, 299, "map: iteration sees every entry");
	br_map_free(&m);
}

/* ---- metrics, endpoint ------------------------------------------------- */

static void test_metrics(void)
{
	br_metrics m;
	tg_buf b;

	memset(&m, 0, sizeof(m));
	m.gangs_scheduled = 3;
	m.api_errors[409] = 2;
	br_hist_observe(&m.decision, 0.0007);
	br_hist_observe(&m.decision, 20);
	tg_buf_init(&b, 1 << 20);
	br_metrics_render(&m, &b);
	like(b.s, "# TYPE topogang_gangs_scheduled_total counter\n"
	     "topogang_gangs_scheduled_total 3\n", "metrics: counter");
	like(b.s, "topogang_api_errors_total{code=\"409\"} 2",
	     "metrics: errors by code");
	like(b.s, "topogang_decision_duration_seconds_bucket{le=\"0.0005\"} 0"
	     "\ntopogang_decision_duration_seconds_bucket{le=\"0.001\"} 1",
	     "metrics: histogram buckets are cumulative");
	like(b.s, "topogang_decision_duration_seconds_bucket{le=\"+Inf\"} 2",
	     "metrics: +Inf bucket counts everything");
	like(b.s, "topogang_decision_duration_seconds_count 2",
	     "metrics: histogram count");
	tg_buf_free(&b);
}

static int ep(void *ud, const char *path, tg_buf *body, const char **ctype)
{
	BR_UNUSED(ud);
	BR_UNUSED(ctype);
	if (strcmp(path, "/healthz") == 0) {
		tg_buf_adds(body, "ok\n");
		return 200;
	}
	return 404;
}

static void http_get(br_httpd *d, int port, const char *req, char *out,
		     size_t n)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t nread = 0;
	int spins;
	struct timespec ms1 = { 0, 1000000 };

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	out[0] = '\0';
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return;
	}
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return;
	}
	/* turn the endpoint until the answer is complete */
	for (spins = 0; spins < 200; spins++) {
		struct curl_waitfd fds[BR_HTTPD_MAX_CONNS + 1];
		unsigned nf = br_httpd_fds(d, fds, BR_HTTPD_MAX_CONNS + 1), i;
		ssize_t r;

		for (i = 0; i < nf; i++)
			fds[i].revents = fds[i].events;
		br_httpd_process(d, fds, nf);
		r = recv(fd, out + nread, n - 1 - nread, MSG_DONTWAIT);
		if (r > 0)
			nread += (size_t)r;
		else if (r == 0)
			break;
		else
			nanosleep(&ms1, NULL);
	}
	out[nread] = '\0';
	close(fd);
}

static void test_httpd(void)
{
	char err[256], out[4096];
	br_httpd *d = br_httpd_create("127.0.0.1:0", ep, NULL, err,
				      sizeof(err));
	int port;

	ok(d != NULL, "httpd: listens on an ephemeral port");
	if (!d)
		return;
	port = br_httpd_port(d);
	ok(port > 0, "httpd: knows its port");
	http_get(d, port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", out,
		 sizeof(out));
	like(out, "HTTP/1.0 200 OK", "httpd: GET /healthz 200");
	like(out, "\r\n\r\nok\n", "httpd: body");
	http_get(d, port, "GET /nope HTTP/1.1\r\n\r\n", out, sizeof(out));
	like(out, "HTTP/1.0 404", "httpd: unknown path 404");
	http_get(d, port, "POST /healthz HTTP/1.1\r\n\r\n", out, sizeof(out));
	like(out, "HTTP/1.0 405", "httpd: POST refused");
	br_httpd_destroy(d);
	ok(br_httpd_create("nonsense", ep, NULL, err, sizeof(err)) == NULL &&
	   strstr(err, "HOST:PORT"), "httpd: bad address refused");
}

/* ---- mixed mode: config, slurmrestd bodies, node lists ----------------- */

/* Every hostlist form slurmctld prints, with what `scontrol show
 * hostnames` answers (Slurm 22.05.8); compared live with scontrol too
 * when it is installed. */
static const struct {
	const char *expr, *want;
} hostlists[] = {
	{ "node-[5-8]", "node-5,node-6,node-7,node-8" },
	{ "gpu[001-003,010]", "gpu001,gpu002,gpu003,gpu010" },
	{ "dgx[098-101]", "dgx098,dgx099,dgx100,dgx101" },
	{ "rack[1-2]-n[08-10]", "rack1-n08,rack1-n09,rack1-n10,rack2-n08,"
	  "rack2-n09,rack2-n10" },
	{ "a[1-2],b[03-04],c", "a1,a2,b03,b04,c" },
	{ "node-0,node-[3-4],node-10", "node-0,node-3,node-4,node-10" },
	{ "node-7", "node-7" },
};

static void join(char **names, unsigned n, char *out, size_t len)
{
	unsigned i;
	size_t off = 0;

	out[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%s",
					i ? "," : "", names[i]);
}

static void test_hostlists(void)
{
	const char *conf = tmpfile_with("slurm.conf", "ClusterName=t\n"
		"SlurmctldHost=localhost\nNodeName=a\nPartitionName=p "
		"Nodes=a\n");
	bool have = access("/usr/bin/scontrol", X_OK) == 0;
	size_t i;

	for (i = 0; i < sizeof(hostlists) / sizeof(hostlists[0]); i++) {
		char **names = NULL, joined[512], err[256], cmd[700], sc[512];
		unsigned n = 0;
		FILE *f;

		err[0] = '\0';
		ok(br_hosts_expand(hostlists[i].expr, &names, &n, err,
				   sizeof(err)) == 0, "hostlist %s expands",
		   hostlists[i].expr);
		join(names, n, joined, sizeof(joined));
		is_str(joined, hostlists[i].want, "hostlist %s",
		       hostlists[i].expr);
		br_hosts_free(names, n);
		if (!have)
			continue;
		snprintf(cmd, sizeof(cmd), "SLURM_CONF='%s' timeout 5 "
			 "/usr/bin/scontrol show hostnames '%s' 2>&1 | "
			 "paste -sd, -", conf, hostlists[i].expr);
		f = popen(cmd, "r");
		sc[0] = '\0';
		if (f) {
			if (!fgets(sc, sizeof(sc), f))
				sc[0] = '\0';
			pclose(f);
		}
		sc[strcspn(sc, "\n")] = '\0';
		is_str(joined, sc, "hostlist %s: as scontrol show hostnames",
		       hostlists[i].expr);
	}
	{
		char **names = NULL, err[256];
		unsigned n = 0;

		ok(br_hosts_expand("node-[3-", &names, &n, err,
				   sizeof(err)) < 0 && strstr(err, "node-[3-"),
		   "hostlist: a broken list is an error naming it");
		ok(br_hosts_expand("", &names, &n, err, sizeof(err)) == 0 &&
		   n == 0, "hostlist: empty (a pending job) is no node");
	}
}

static void test_event_body(void)
{
	char nm[320], ns[64], note[BR_EVENT_NOTE_MAX + 100], *body, *path;
	br_event ev;
	cJSON *j;

	memset(&ev, 0, sizeof(ev));
	ev.type = "Warning";
	ev.reason = "TopologyLabelDrift";
	ev.action = "Labeling";
	ev.kind = "Node";
	ev.ns = "";
	ev.name = "node-3";
	ev.controller = "topogang-labeller";
	ev.instance = "topogang-labeller-node-3";
	memset(note, 'x', sizeof(note) - 1);
	note[sizeof(note) - 1] = '\0';
	ev.note = note;
	body = br_event_body(&ev, 1700000000000000LL, 0x1005, nm, sizeof(nm),
			     ns, sizeof(ns));
	j = body ? cJSON_Parse(body) : NULL;
	is_str(ns, "default", "event: a cluster object's Event in default");
	is_str(nm, "node-3.17979cfe362a00005",
	       "event: named <object>.<ns time hex><counter hex>");
	is_str(br_jpath_str(j, "metadata.name"), nm, "event: metadata.name");
	ok(br_jpath_str(j, "note") &&
	   strlen(br_jpath_str(j, "note")) == BR_EVENT_NOTE_MAX &&
	   strcmp(br_jpath_str(j, "note") + BR_EVENT_NOTE_MAX - 4, " ...") == 0,
	   "event: a long note is cut to 1024 bytes, ending ' ...'");
	ok(!br_jget(br_jget(j, "regarding"), "namespace") &&
	   !br_jget(br_jget(j, "regarding"), "uid") &&
	   strcmp(br_jpath_str(j, "regarding.kind") ?
		  br_jpath_str(j, "regarding.kind") : "", "Node") == 0,
	   "event: regarding without namespace or uid when none");
	is_str(br_jpath_str(j, "eventTime"), "2023-11-14T22:13:20.000000Z",
	       "event: eventTime in microseconds");
	cJSON_Delete(j);
	free(body);
	path = br_event_path("ml", "p.1");
	is_str(path, "/apis/events.k8s.io/v1/namespaces/ml/events/p.1",
	       "event: an Event's path");
	free(path);
}

static void test_slurm_bodies(void)
{
	const char *jobs =
		"{\"meta\":{},\"errors\":[],\"jobs\":["
		"{\"job_id\":7,\"name\":\"default/train\",\"user_name\":"
		"\"root\",\"comment\":"
		"\"topogang-bridge/topogang gang=default/train\","
		"\"job_state\":\"RUNNING\",\"state_reason\":\"None\","
		"\"nodes\":\"node-[5-8]\",\"partition\":\"low\","
		"\"tasks\":6,\"cpus\":24,\"cpus_per_task\":null,"
		"\"job_resources\":{\"nodes\":\"node-[5-8]\","
		"\"allocated_nodes\":["
		"{\"nodename\":\"node-5\",\"sockets\":{\"0\":{\"cores\":"
		"{\"0\":\"allocated\",\"1\":\"allocated\","
		"\"2\":\"allocated\",\"3\":\"allocated\"}},\"1\":{"
		"\"cores\":{\"0\":\"allocated_and_in_use\","
		"\"1\":\"allocated\",\"2\":\"allocated\","
		"\"3\":\"allocated\"}}}},"
		"{\"nodename\":\"node-6\",\"sockets\":{\"0\":{\"cores\":"
		"{\"4\":\"allocated\",\"5\":\"allocated\","
		"\"6\":\"allocated\",\"7\":\"allocated\"}}}},"
		"{\"nodename\":\"node-8\",\"sockets\":{\"0\":{\"cores\":"
		"{\"0\":\"allocated\",\"1\":\"allocated\","
		"\"2\":\"allocated\",\"3\":\"allocated\"}}}},"
		"{\"nodename\":\"node-7\",\"sockets\":{\"0\":{\"cores\":"
		"{\"0\":\"allocated\",\"1\":\"allocated\","
		"\"2\":\"allocated\",\"3\":\"allocated\"}}}}]}},"
		"{\"job_id\":8,\"name\":\"default/big\",\"comment\":"
		"\"topogang-bridge/other gang=default/big\","
		"\"job_state\":\"PENDING\",\"state_reason\":\"Resources\","
		"\"nodes\":\"\",\"partition\":\"low\"},"
		"{\"job_id\":9,\"name\":\"wrap\",\"job_state\":\"COMPLETED\","
		"\"nodes\":\"node-0\"}]}";
	br_sjobs js;
	char err[512];

	is_int(br_sjobs_parse(jobs, 38, &js, err, sizeof(err)), 0,
	       "slurm jobs: parsed");
	is_int(js.n, 3, "slurm jobs: three");
	ok(js.n == 3 && js.v[0].id == 7 && js.v[0].nhosts == 4 &&
	   strcmp(js.v[0].hosts[3], "node-8") == 0,
	   "slurm jobs: id and expanded node list");
	ok(js.n == 3 && js.v[0].slots && js.v[0].slots[0] == 2 &&
	   js.v[0].slots[1] == 1 && js.v[0].slots[2] == 1 &&
	   js.v[0].slots[3] == 1 && js.v[0].tasks == 6 &&
	   js.v[0].cpus_per_task == 4,
	   "slurm jobs: task slots per host from job_resources (allocated "
	   "cores over cpus / tasks, as 22.05 writes cpus_per_task null)");
	ok(js.n == 3 && !js.v[1].slots && js.v[2].slots &&
	   js.v[2].slots[0] == 1,
	   "slurm jobs: no slots while pending; one a host without "
	   "allocation details");
	ok(js.n == 3 && br_sjob_running(&js.v[0]) && br_sjob_live(&js.v[1]) &&
	   !br_sjob_running(&js.v[1]) && !br_sjob_live(&js.v[2]),
	   "slurm jobs: RUNNING / PENDING / COMPLETED");
	ok(js.n == 3 && br_sjob_ours(&js.v[0], "topogang", "root", -1) &&
	   !br_sjob_ours(&js.v[1], "topogang", "root", -1) &&
	   !br_sjob_ours(&js.v[2], "topogang", "root", -1),
	   "slurm jobs: ours by the comment's mark and scheduler name");
	br_sjobs_free(&js);
	ok(br_sjobs_parse("{\"errors\":[{\"description\":\"no auth\","
			  "\"error_number\":1,\"source\":\"x\"}]}", 38, &js, err,
			  sizeof(err)) < 0 && strstr(err, "no auth"),
	   "slurm jobs: an errors answer is an error with its text");
	ok(br_sjobs_parse("{\"jobs\":[{\"job_id\":1,\"nodes\":\"n[1-\"}]}",
			  38, &js, err, sizeof(err)) < 0 &&
	   strstr(err, "job 1"), "slurm jobs: a bad node list names the job");
	/* exactly BR_SJOBS_MAX_NAMES names: taken */
	is_int(br_sjobs_parse("{\"jobs\":[{\"job_id\":1,\"nodes\":"
			      "\"a[000000-262143]\"}]}", 38, &js, err,
			      sizeof(err)), 0,
	       "slurm jobs: exactly BR_SJOBS_MAX_NAMES node names parse");
	ok(js.n == 1 && js.v[0].nhosts == BR_SJOBS_MAX_NAMES,
	   "slurm jobs: all of them kept");
	br_sjobs_free(&js);
	/* 2 x 150,000 names: past BR_SJOBS_MAX_NAMES in one answer */
	ok(br_sjobs_parse("{\"jobs\":[{\"job_id\":1,\"nodes\":"
			  "\"a[000000-149999]\"},{\"job_id\":2,\"nodes\":"
			  "\"b[000000-149999]\"}]}", 38, &js, err,
			  sizeof(err)) < 0 && js.n == 0 && !js.v &&
	   strstr(err, "job 2") && strstr(err, "262144 node names"),
	   "slurm jobs: node lists past BR_SJOBS_MAX_NAMES in one answer are "
	   "an error naming the job and the limit");

}

/* Submit bodies, v0.0.38 and v0.0.40+, and het jobs folded. */
static void test_slurm_submit(void)
{
	br_sjobs js;
	char err[512], *body;
	br_sjob_spec sp;
	cJSON *j;

	memset(&sp, 0, sizeof(sp));
	sp.name = "ml/train";
	sp.sched = "topogang";
	sp.gather = "spine:must";
	sp.spread = "";
	sp.partition = "high";
	sp.tasks = 8;
	sp.cpus_per_task = 4;
	sp.gpus_per_task = 4;
	sp.mem_per_cpu = 256;
	sp.gres_name = "gpu";
	sp.workdir = "/tmp";
	body = br_sjob_submit_body(&sp, 38);
	j = cJSON_Parse(body);
	is_str(br_jpath_str(j, "job.name"), "ml/train", "submit: name");
	is_str(br_jpath_str(j, "job.tasks"), "8", "submit: a task a member");
	is_str(br_jpath_str(j, "job.cpus_per_task"), "4",
	       "submit: cpus_per_task");
	is_str(br_jpath_str(j, "job.gpus_per_task"), "4",
	       "submit: gpus_per_task");
	is_str(br_jpath_str(j, "job.memory_per_cpu"), "256M",
	       "submit: memory_per_cpu");
	ok(!br_jget(br_jget(j, "job"), "exclusive") &&
	   !br_jget(br_jget(j, "job"), "nodes"),
	   "submit: neither exclusive nor a node count (members may share "
	   "a node)");
	is_str(br_jpath_str(j, "job.partition"), "high", "submit: partition");
	is_str(br_jpath_str(j, "job.comment"),
	       "topogang-bridge/topogang gang=ml/train topo-gather=spine:must",
	       "submit: the comment carries the topology request");
	ok(br_jpath_str(j, "job.environment.PATH") &&
	   strstr(br_jstr(j, "script"), "#!/bin/sh"),
	   "submit: environment and script (both required by v0.0.38)");
	ok(!br_jget(br_jget(j, "job"), "qos"), "submit: no qos unless set");
	cJSON_Delete(j);
	free(body);
	{
		br_sjob_task comps[2] = { { 2, 1, 8, 1024 }, { 4, 2, 2, 512 } };
		const cJSON *c0, *c1;
		const char *het =
			"{\"jobs\":["
			"{\"job_id\":22,\"name\":\"default/mix\","
			"\"job_state\":\"RUNNING\",\"nodes\":\"node-[2-3]\","
			"\"het_job_id\":20,\"het_job_offset\":2,\"tasks\":1,"
			"\"cpus\":1},"
			"{\"job_id\":20,\"name\":\"default/mix\","
			"\"job_state\":\"RUNNING\",\"nodes\":\"node-0\","
			"\"het_job_id\":20,\"het_job_offset\":0,\"tasks\":1,"
			"\"cpus\":1},"
			"{\"job_id\":21,\"name\":\"default/mix\","
			"\"job_state\":\"RUNNING\",\"nodes\":\"node-1\","
			"\"het_job_id\":20,\"het_job_offset\":1,\"tasks\":1,"
			"\"cpus\":1},"
			"{\"job_id\":30,\"name\":\"x\",\"job_state\":"
			"\"PENDING\",\"nodes\":\"\",\"het_job_id\":0}]}";

		sp.comps = comps;
		sp.ncomps = 2;
		body = br_sjob_submit_body(&sp, 38);
		j = cJSON_Parse(body);
		c0 = cJSON_GetArrayItem(br_jget(j, "jobs"), 0);
		c1 = cJSON_GetArrayItem(br_jget(j, "jobs"), 1);
		ok(!br_jget(j, "job") && cJSON_GetArraySize(br_jget(j, "jobs"))
		   == 2, "submit: pod sets that differ -> a jobs array (het)");
		is_str(br_jstr(c1, "tasks"), "4",
		       "submit: het component 1: its tasks");
		is_str(br_jstr(c0, "gpus_per_task"), "8",
		       "submit: het component 0: its GPUs");
		is_str(br_jstr(c1, "cpus_per_task"), "2",
		       "submit: het component 1: its CPUs");
		ok(br_jstr(c1, "comment") &&
		   strstr(br_jstr(c1, "comment"), "gang=ml/train")
		   && br_jstr(j, "script"),
		   "submit: every component named and marked, one script");
		cJSON_Delete(j);
		free(body);
		sp.comps = NULL;
		sp.ncomps = 0;
		is_int(br_sjobs_parse(het, 38, &js, err, sizeof(err)), 0,
		       "het jobs: parsed");
		ok(js.n == 2 && js.v[0].id == 20 && js.v[0].ncomp == 3 &&
		   js.v[0].nhosts == 4 && js.v[0].comp_start &&
		   js.v[0].comp_start[1] == 1 && js.v[0].comp_start[2] == 2 &&
		   js.v[0].comp_start[3] == 4 &&
		   strcmp(js.v[0].hosts[3], "node-3") == 0 &&
		   strcmp(js.v[0].nodes, "node-0,node-1,node-[2-3]") == 0 &&
		   js.v[1].id == 30 && js.v[1].ncomp == 1,
		   "het jobs: the components folded into the leader, in "
		   "offset order");
		br_sjobs_free(&js);
	}
	sp.gres_name = "gpu:a100";
	body = br_sjob_submit_body(&sp, 38);
	j = cJSON_Parse(body);
	is_str(br_jpath_str(j, "job.gpus_per_task"), "a100:4",
	       "submit: gresName gpu:TYPE -> gpus_per_task TYPE:N");
	cJSON_Delete(j);
	free(body);
}

/* What slurmrestd answers to a submit, and odd jobs answers. */
static void test_slurm_answers(void)
{
	br_sjobs js;
	char err[512];
	uint32_t id = 0;

	ok(br_sjob_submit_result("{\"job_id\":42,\"errors\":[]}", 200, &id,
				 err, sizeof(err)) == 0 && id == 42,
	   "submit answer: job id");
	ok(br_sjob_submit_result("{\"errors\":[{\"error\":\"Invalid "
				 "partition name specified\",\"error_number\":"
				 "2000}]}", 500, &id, err, sizeof(err)) < 0 &&
	   strstr(err, "Invalid partition"),
	   "submit answer: Slurm's error text");
	/* found by tests/fuzz/fuzz_slurmrest (UBSan: float cast overflow) */
	id = 0;
	ok(br_sjob_submit_result("{\"job_id\":1e10}", 200, &id, err,
				 sizeof(err)) < 0 && id == 0 &&
	   strstr(err, "not a Slurm job id"),
	   "submit answer: a job_id past 2^32 is an error, not a cast");
	ok(br_sjob_submit_result("{\"job_id\":4.5}", 200, &id, err,
				 sizeof(err)) < 0 && id == 0,
	   "submit answer: a fractional job_id is an error");
	ok(br_sjob_submit_result("{\"job_id\":null}", 200, &id, err,
				 sizeof(err)) < 0 &&
	   strstr(err, "no job_id"), "submit answer: a null job_id");
	is_int(br_sjobs_parse("{\"jobs\":[{\"job_id\":3,\"job_state\":"
			      "\"RUNNING\",\"nodes\":\"n1\",\"preempt_time\":"
			      "1e300},{\"job_id\":4,\"preempt_time\":-1e300},"
			      "{\"job_id\":1e10},{\"job_id\":5.5}]}", 38, &js, err,
			      sizeof(err)), 0,
	       "slurm jobs: times and ids out of range parsed");
	ok(js.n == 2 && js.v[0].id == 3 && js.v[0].preempt_time == INT64_MAX &&
	   br_sjob_preempting(&js.v[0]) && js.v[1].id == 4 &&
	   js.v[1].preempt_time == 0,
	   "slurm jobs: a preempt_time past int64 still preempts, a "
	   "negative one does not, ids past 2^32 or fractional are skipped");
	br_sjobs_free(&js);
	/* allocated_nodes in node order, then out of it, a node twice, an
	 * unknown one and one without a name (the hash lookup's path) */
	is_int(br_sjobs_parse("{\"jobs\":[{\"job_id\":5,\"job_state\":"
			      "\"RUNNING\",\"nodes\":\"n[1-3]\",\"job_resources\":"
			      "{\"allocated_nodes\":["
			      "{\"nodename\":\"n1\",\"sockets\":{\"0\":{\"cores\":"
			      "{\"0\":\"allocated\"}}}},"
			      "{\"nodename\":\"n3\",\"sockets\":{\"0\":{\"cores\":"
			      "{\"0\":\"allocated\",\"1\":\"allocated\"}}}},"
			      "{\"nodename\":\"zz\",\"sockets\":{\"0\":{\"cores\":"
			      "{\"0\":\"allocated\"}}}},{\"sockets\":{}},"
			      "{\"nodename\":\"n1\",\"sockets\":{\"0\":{\"cores\":"
			      "{\"0\":\"allocated\",\"1\":\"allocated\","
			      "\"2\":\"allocated\"}}}}]}}]}", 38, &js, err,
			      sizeof(err)), 0, "slurm jobs: odd allocated_nodes");
	ok(js.n == 1 && js.v[0].nhosts == 3 && js.v[0].slots &&
	   js.v[0].slots[0] == 3 && js.v[0].slots[1] == 0 &&
	   js.v[0].slots[2] == 2,
	   "slurm jobs: allocated_nodes matched by name in any order, a node "
	   "listed twice counts as its last entry, unknown names ignored");
	br_sjobs_free(&js);
	/* found by tests/fuzz/fuzz_slurmrest: 2 KB of answer made gigabytes
	 * of names; cpus of 4e9 made a host 4e9 slots (bind_gang summed
	 * them in 32 bits) */
	{
		tg_buf b;
		unsigned k;

		tg_buf_init(&b, 4096);
		tg_buf_adds(&b, "{\"jobs\":[");
		for (k = 1; k <= 5; k++)
			tg_buf_addf(&b, "%s{\"job_id\":%u,\"nodes\":"
				    "\"n[0-999999]\"}", k > 1 ? "," : "", k);
		tg_buf_adds(&b, "]}");
		ok(br_sjobs_parse(b.s, 38, &js, err, sizeof(err)) < 0 &&
		   js.n == 0 && !js.v && strstr(err, "job 1") &&
		   strstr(err, "262144 node names"),
		   "slurm jobs: a 1M-name node list (within the core's "
		   "hostlist bound) is an error naming the job and the limit");
		tg_buf_free(&b);
	}
	is_int(br_sjobs_parse("{\"jobs\":[{\"job_id\":6,\"nodes\":\"a,b\","
			      "\"cpus\":4000000000,\"tasks\":1,"
			      "\"cpus_per_task\":1,\"job_resources\":"
			      "{\"allocated_nodes\":[{\"nodename\":\"a\","
			      "\"sockets\":{\"0\":{\"cores\":{\"0\":"
			      "\"allocated\"}}}},{\"nodename\":\"b\","
			      "\"sockets\":{\"0\":{\"cores\":{\"0\":"
			      "\"allocated\"}}}}]}}]}", 38, &js, err,
			      sizeof(err)), 0, "slurm jobs: 4e9 CPUs parsed");
	ok(js.n == 1 && js.v[0].slots &&
	   js.v[0].slots[0] == BR_SJOB_MAX_SLOTS &&
	   js.v[0].slots[1] == BR_SJOB_MAX_SLOTS,
	   "slurm jobs: a host's slots stop at 65535 (22.05's CPUs a node)");
	br_sjobs_free(&js);
}

/* tests/fuzz/corpus/slurmrest/<name> (real slurmrestd answers), whole. */
static char *corpus(const char *name)
{
	const char *src = getenv("TG_SRCDIR");
	char path[1200];
	size_t len;

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/slurmrest/%s",
		 src && *src ? src : ".", name);
	return tap_slurp(path, &len);
}

/* The version negotiation: the newest both sides speak. */
static void test_slurm_version(void)
{
	char *spec = corpus("openapi-24.11-paths.json"), err[512];
	unsigned v = 0;

	ok(spec && br_slurm_pick_version(spec, &v, err, sizeof(err)) == 0 &&
	   v == 42, "slurm version: 24.11's real /openapi/v3 (v0.0.40, "
	   "v0.0.41, v0.0.42) -> v0.0.42");
	free(spec);
	ok(br_slurm_pick_version("{\"paths\":{\"/slurm/v0.0.36/job/submit\":"
				 "{},\"/slurm/v0.0.37/job/submit\":{},"
				 "\"/slurm/v0.0.38/job/submit\":{},"
				 "\"/slurm/v0.0.38/jobs\":{}}}", &v, err,
				 sizeof(err)) == 0 && v == 38,
	   "slurm version: 22.05's paths -> v0.0.38");
	ok(br_slurm_pick_version("{\"paths\":{\"/slurm/v0.0.40/job/submit/\":"
				 "{},\"/slurm/v0.0.41/jobs/\":{},"
				 "\"/slurm/v0.0.43/job/submit\":{}}}", &v, err,
				 sizeof(err)) == 0 && v == 40,
	   "slurm version: one the bridge does not speak (v0.0.43) and one "
	   "without a submit path (v0.0.41) are passed over -> v0.0.40");
	ok(br_slurm_pick_version("{\"paths\":{\"/slurm/v0.0.39/job/submit\":"
				 "{},\"/slurm/v0.0.43/job/submit\":{}}}", &v,
				 err, sizeof(err)) < 0 && v == 0 &&
	   strstr(err, "it serves v0.0.39 v0.0.43") &&
	   strstr(err, "the bridge v0.0.38"),
	   "slurm version: none in common is an error naming both sides' "
	   "(%s)", err);
	ok(br_slurm_pick_version("<html>", &v, err, sizeof(err)) < 0 &&
	   strstr(err, "not JSON") &&
	   br_slurm_pick_version("{}", &v, err, sizeof(err)) < 0 &&
	   strstr(err, "paths"), "slurm version: not a spec");
}

/* A 24.11 jobs answer (v0.0.40 or v0.0.42): run6 (6 tasks of 2 CPUs on
 * node-[5-6], 8 + 4 CPUs), a FAILED job, a pending het job, pend. */
static void check_2411_jobs(const char *file, unsigned ver)
{
	char *body = corpus(file), err[512];
	br_sjobs js;
	const br_sjob *r, *h, *p;

	is_int(br_sjobs_parse(body, ver, &js, err, sizeof(err)), 0,
	       "%s: parsed (%s)", file, err);
	is_int(js.n, 4, "%s: 4 records (the het job's 2 folded)", file);
	r = js.n == 4 ? &js.v[0] : NULL;
	h = js.n == 4 ? &js.v[2] : NULL;
	p = js.n == 4 ? &js.v[3] : NULL;
	ok(r && r->id == 1 && strcmp(r->state, "RUNNING") == 0 &&
	   br_sjob_running(r) && r->nhosts == 2 &&
	   strcmp(r->hosts[1], "node-6") == 0 && r->tasks == 6 &&
	   r->cpus_per_task == 2 && r->slots && r->slots[0] == 4 &&
	   r->slots[1] == 2 && !br_sjob_preempting(r) &&
	   br_sjob_ours(r, "topogang", "root", -1),
	   "%s: job_state array, numbers as {set, number}, slots from the "
	   "allocation (8 and 4 CPUs over 2)", file);
	ok(js.n == 4 && js.v[1].id == 2 && !br_sjob_live(&js.v[1]) &&
	   strcmp(js.v[1].reason, "BadConstraints") == 0,
	   "%s: a FAILED job is not live", file);
	ok(h && h->id == 3 && h->ncomp == 2 && h->het_id == 3 &&
	   br_sjob_live(h) && !br_sjob_running(h) && h->nhosts == 0,
	   "%s: het job 3+0/3+1 one record of 2 components, pending", file);
	ok(p && p->id == 5 && strcmp(p->state, "PENDING") == 0 &&
	   strcmp(p->reason, "Priority") == 0 && !p->slots,
	   "%s: pending job, its reason", file);
	br_sjobs_free(&js);
	free(body);
}

/* v0.0.40+ records of another shape: one error naming job and field. */
static void test_2411_bad_fields(void)
{
	static const char *const bad[][3] = {
		{ "\"job_state\":\"RUNNING\"", "job 9", "\"job_state\"" },
		{ "\"job_state\":[1]", "job 9", "\"job_state\"" },
		{ "\"tasks\":\"6\"", "job 9", "\"tasks\"" },
		{ "\"cpus\":{\"set\":true}", "job 9", "\"cpus\"" },
		{ "\"preempt_time\":{\"number\":1}", "job 9",
		  "\"preempt_time\"" },
	};
	char body[400], err[512];
	br_sjobs js;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(body, sizeof(body), "{\"jobs\":[{\"job_id\":9,%s%s}]}",
			 bad[i][0], strstr(bad[i][0], "job_state") ? "" :
			 ",\"job_state\":[\"PENDING\"]");
		err[0] = '\0';
		ok(br_sjobs_parse(body, 42, &js, err, sizeof(err)) < 0 &&
		   js.n == 0 && strstr(err, bad[i][1]) &&
		   strstr(err, bad[i][2]) && strstr(err, "v0.0.42"),
		   "v0.0.42 jobs: %s is an error naming the job and the field "
		   "(%s)", bad[i][0], err);
	}
	err[0] = '\0';
	is_int(br_sjobs_parse("{\"jobs\":[{\"job_id\":9,\"job_state\":"
			      "[\"RUNNING\",\"COMPLETING\"],\"nodes\":\"a\","
			      "\"preempt_time\":{\"set\":true,\"infinite\":"
			      "false,\"number\":1700000000},\"tasks\":"
			      "{\"set\":false,\"infinite\":false,\"number\":0}"
			      "},{\"job_id\":10,\"job_state\":[\"PENDING\","
			      "\"REQUEUED\"],\"cpus\":{\"set\":true,"
			      "\"infinite\":true,\"number\":0}}]}", 42, &js,
			      err, sizeof(err)), 0, "v0.0.42 jobs: flags, "
	       "unset and infinite numbers parsed (%s)", err);
	ok(js.n == 2 && strcmp(js.v[0].state, "COMPLETING") == 0 &&
	   js.v[0].preempt_time == 1700000000 && js.v[0].tasks == 0 &&
	   strcmp(js.v[1].state, "REQUEUED") == 0 && br_sjob_live(&js.v[1]),
	   "v0.0.42 jobs: a state flag names the state as 22.05 did "
	   "(COMPLETING, REQUEUED); set:false is unset");
	br_sjobs_free(&js);
}

/* The v0.0.40+ submit body (slurmrestd 24.11 read the same in
 * tests/slurm/test-mixed-2411). */
static void test_2411_submit(void)
{
	br_sjob_task comps[2] = { { 2, 8, 8, 0 }, { 2, 4, 4, 0 } };
	br_sjob_spec sp;
	cJSON *j, *job, *env;
	char *body;

	memset(&sp, 0, sizeof(sp));
	sp.name = "ml/train";
	sp.sched = "topogang";
	sp.gather = "spine:must";
	sp.spread = "";
	sp.tasks = 8;
	sp.cpus_per_task = 4;
	sp.gpus_per_task = 4;
	sp.mem_per_cpu = 2048;
	sp.gres_name = "gpu:h100";
	sp.time_limit = "1:30:00";
	sp.workdir = "/tmp";
	body = br_sjob_submit_body(&sp, 42);
	j = cJSON_Parse(body);
	job = cJSON_GetObjectItem(j, "job");
	env = cJSON_GetObjectItem(job, "environment");
	ok(cJSON_IsNumber(cJSON_GetObjectItem(job, "tasks")) &&
	   cJSON_GetObjectItem(job, "tasks")->valueint == 8 &&
	   cJSON_GetObjectItem(job, "cpus_per_task")->valueint == 4,
	   "v0.0.42 submit: tasks and cpus_per_task are numbers: %s", body);
	is_str(br_jstr(job, "tres_per_task"), "gres/gpu:h100:4",
	       "v0.0.42 submit: --gpus-per-task as tres_per_task");
	ok(cJSON_IsTrue(br_jget(br_jget(job, "memory_per_cpu"), "set")) &&
	   br_jget(br_jget(job, "memory_per_cpu"), "number")->valueint ==
	   2048 && br_jget(br_jget(job, "time_limit"), "number")->valueint ==
	   90, "v0.0.42 submit: memory_per_cpu and time_limit (1:30:00 -> "
	   "90 minutes) as {set, number}");
	ok(cJSON_IsArray(env) && cJSON_GetArraySize(env) == 2 &&
	   strcmp(cJSON_GetArrayItem(env, 1)->valuestring,
		  "TOPOGANG_GANG=ml/train") == 0 &&
	   br_jstr(job, "script") && !cJSON_GetObjectItem(j, "script"),
	   "v0.0.42 submit: environment [\"NAME=value\"], the script in "
	   "the job (deprecated beside it)");
	cJSON_Delete(j);
	free(body);
	sp.comps = comps;
	sp.ncomps = 2;
	body = br_sjob_submit_body(&sp, 40);
	j = cJSON_Parse(body);
	ok(cJSON_GetArraySize(cJSON_GetObjectItem(j, "jobs")) == 2 &&
	   br_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "jobs"), 0),
		   "script") &&
	   !br_jget(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "jobs"), 1),
		    "script") &&
	   !cJSON_GetObjectItem(j, "script") &&
	   strcmp(br_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "jobs"),
					     1), "tres_per_task"),
		  "gres/gpu:h100:4") == 0,
	   "v0.0.40 het submit: the script in the first component only, "
	   "each component its own shape: %s", body);
	cJSON_Delete(j);
	free(body);
	is_int(br_slurm_minutes("90"), 90, "minutes: M");
	is_int(br_slurm_minutes("1:30"), 2, "minutes: M:S rounds up");
	is_int(br_slurm_minutes("2:00:00"), 120, "minutes: H:M:S");
	is_int(br_slurm_minutes("1-0"), 1440, "minutes: D-H");
	is_int(br_slurm_minutes("1-2:3:4"), 1564, "minutes: D-H:M:S");
	ok(br_slurm_minutes("1h") < 0 && br_slurm_minutes("") < 0 &&
	   br_slurm_minutes("1:2:3:4") < 0 && br_slurm_minutes("a-1") < 0,
	   "minutes: not a Slurm time -> -1");
}

/* A 24.11 nodes answer (v0.0.40 or v0.0.42, the real slurmrestd's):
 * node-0 runs a job of 4 CPUs and 4000 MB, node-3 is drained, node-4
 * down. */
static void check_2411_nodes(const char *file, unsigned ver)
{
	char *body = corpus(file), err[512] = "";
	br_snodes ns;

	is_int(br_snodes_parse(body, ver, &ns, err, sizeof(err)), 0,
	       "%s: parsed (%s)", file, err);
	ok(ns.n == 12 && strcmp(ns.v[0].name, "node-0") == 0 &&
	   strcmp(ns.v[0].state, "MIXED") == 0 && !ns.v[0].unusable &&
	   ns.v[0].cpus == 8 && ns.v[0].alloc_cpus == 4 &&
	   ns.v[0].real_memory == 32000 && ns.v[0].alloc_memory == 4000,
	   "%s: 12 nodes; node-0 MIXED, 4 of 8 CPUs and 4000 of 32000 MB "
	   "allocated", file);
	ok(ns.n == 12 && strcmp(ns.v[3].state, "IDLE") == 0 &&
	   ns.v[3].unusable && strcmp(ns.v[3].reason, "maint") == 0 &&
	   strcmp(ns.v[4].state, "DOWN") == 0 && ns.v[4].unusable &&
	   !ns.v[2].unusable,
	   "%s: node-3 [IDLE, DRAIN] and node-4 DOWN unusable, node-2 not",
	   file);
	br_snodes_free(&ns);
	free(body);
}

/* The nodes fed into a pool's model: node-3 drained, node-0's Slurm job
 * beside a pod of ours. */
static void test_snodes_feed(void)
{
	static const char body[] =
		"{\"nodes\":[{\"name\":\"node-0\",\"state\":[\"MIXED\"],"
		"\"cpus\":8,\"alloc_cpus\":6,\"real_memory\":32000,"
		"\"alloc_memory\":6000},{\"name\":\"node-3\",\"state\":"
		"[\"IDLE\",\"DRAIN\"],\"cpus\":8,\"alloc_cpus\":0},"
		"{\"name\":\"gone\",\"state\":[\"DOWN\"]}]}";
	tg_topology *t = tg_topology_create();
	const char *names[] = { "node-0", "node-3" };
	tg_shape sh = { { 2000, INT64_C(2000) << 20, 0, 0 } };
	tg_alloc_spec a = { .pod = "default/p0", .gang = "default/g",
			    .shape = &sh };
	char err[512] = "", *json = NULL;
	tg_errinfo ei = { "" };
	br_snodes ns;
	br_map km;
	tg_node_id id[2];

	br_map_init(&km, free);
	for (unsigned i = 0; i < 2; i++) {
		ok(tg_topology_add_node(t, names[i], NULL, &id[i]) == TG_OK &&
		   tg_topology_node_set_resource(t, id[i], TG_RES_CPU,
						 8000) == TG_OK &&
		   tg_topology_node_set_resource(t, id[i], TG_RES_MEMORY,
						 INT64_C(32000) << 20) == TG_OK,
		   "feed: node %s", names[i]);
		br_map_put(&km, names[i], br_xstrdup(names[i]));
	}
	ok(tg_topology_build(t, &ei) == TG_OK, "feed: built (%s)", ei.msg);
	a.node = id[0];
	ok(tg_topology_add_alloc(t, &a) == TG_OK, "feed: a pod of ours "
	   "(2 CPUs, 2000 MiB) on node-0");
	is_int(br_snodes_parse(body, 42, &ns, err, sizeof(err)), 0,
	       "feed: parsed (%s)", err);
	is_int(br_mixed_feed_nodes(&ns, t, &km), 2, "feed: 2 nodes changed (the "
	       "one without a Kubernetes node skipped)");
	is_int(tg_topology_node_free(t, id[0], TG_RES_CPU), 2000,
	       "feed: node-0 has 2 CPUs free (6 Slurm holds, 2 of them "
	       "through our pod)");
	is_int(tg_topology_node_free(t, id[0], TG_RES_MEMORY),
	       INT64_C(26000) << 20, "feed: node-0 has 26000 MiB free");
	ok(tg_draw_render(t, TG_DRAW_JSON, NULL, &json, &ei) == TG_OK &&
	   json && strstr(json, "unschedulable"),
	   "feed: the pool's picture flags drained node-3 unschedulable");
	tg_free(json);
	br_snodes_free(&ns);
	br_map_free(&km);
	tg_topology_destroy(t);
}

/* nodes bodies of another shape, v0.0.38's: one error naming the node */
/*
 * A node's numbers out of bounds (BR_SNODE_MAX_CPUS, BR_SNODE_MAX_MEMORY_MB,
 * negative, fractional, not finite) are errors naming node and field; they
 * were read as 0 (an empty or full node) with no word.
 */
static void test_snodes_bounds(void)
{
	static const struct {
		const char *field, *value, *want;
	} bad[] = {
		{ "cpus", "65536", "0..65535 (BR_SNODE_MAX_CPUS)" },
		{ "cpus", "4294967296", "0..65535 (BR_SNODE_MAX_CPUS)" },
		{ "alloc_cpus", "-1", "is -1: not a whole number" },
		{ "alloc_cpus", "2.5", "is 2.5: not a whole number" },
		{ "real_memory", "1e16", "(BR_SNODE_MAX_MEMORY_MB)" },
		{ "alloc_memory", "1e400", "is inf" },
		{ "alloc_memory", "{\"set\":true,\"infinite\":false,"
		  "\"number\":-3}", "is -3" },
	};
	char body[300], err[512];
	br_snodes ns;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[100];

		snprintf(body, sizeof(body), "{\"nodes\":[{\"name\":\"ok\","
			 "\"state\":[\"IDLE\"],\"cpus\":4},{\"name\":"
			 "\"n7\",\"state\":[\"IDLE\"],\"%s\":%s}]}",
			 bad[i].field, bad[i].value);
		snprintf(want, sizeof(want), "node n7: field \"%s\"",
			 bad[i].field);
		*err = '\0';
		ok(br_snodes_parse(body, 42, &ns, err, sizeof(err)) < 0 &&
		   ns.n == 0 && strstr(err, want) && strstr(err, bad[i].want),
		   "nodes: %s %s is an error naming node, field and bound (%s)",
		   bad[i].field, bad[i].value, err);
	}
	snprintf(body, sizeof(body), "{\"nodes\":[{\"name\":\"n1\","
		 "\"state\":[\"IDLE\"],\"cpus\":65535,\"alloc_cpus\":0,"
		 "\"real_memory\":1099511627776,\"alloc_memory\":0}]}");
	is_int(br_snodes_parse(body, 42, &ns, err, sizeof(err)), 0,
	       "nodes: the bounds themselves are taken (%s)", err);
	ok(ns.n == 1 && ns.v[0].cpus == 65535 &&
	   ns.v[0].real_memory == BR_SNODE_MAX_MEMORY_MB,
	   "nodes: ... 65535 CPUs, 2^40 MB");
	br_snodes_free(&ns);
}

static void test_snodes_shapes(void)
{
	char err[512] = "", *body = corpus("nodes-22.05.json");
	br_snodes ns;

	/* a real slurmrestd 22.05 answer (v0.0.38) */
	is_int(br_snodes_parse(body, 38, &ns, err, sizeof(err)), 0,
	       "nodes-22.05.json: parsed (%s)", err);
	ok(ns.n == 2 && strcmp(ns.v[0].state, "IDLE") == 0 &&
	   !ns.v[0].unusable && strcmp(ns.v[1].name, "node-5") == 0 &&
	   strcmp(ns.v[1].state, "MIXED") == 0 && ns.v[1].alloc_cpus == 1 &&
	   ns.v[1].alloc_memory == 32000,
	   "nodes-22.05.json: node-0 idle, node-5 mixed with 1 CPU and "
	   "32000 MB allocated");
	br_snodes_free(&ns);
	free(body);

	is_int(br_snodes_parse("{\"nodes\":[{\"name\":\"n1\",\"state\":"
			       "\"idle\",\"state_flags\":[\"DRAIN\"],"
			       "\"cpus\":4}]}", 38, &ns, err, sizeof(err)), 0,
	       "nodes v0.0.38: parsed (%s)", err);
	ok(ns.n == 1 && strcmp(ns.v[0].state, "IDLE") == 0 &&
	   ns.v[0].unusable && ns.v[0].cpus == 4,
	   "nodes v0.0.38: \"idle\" with state_flags [DRAIN] is unusable");
	br_snodes_free(&ns);
	ok(br_snodes_parse("{\"nodes\":[{\"name\":\"n1\",\"state\":"
			   "\"IDLE\"}]}", 42, &ns, err, sizeof(err)) < 0 &&
	   ns.n == 0 && strstr(err, "node n1") && strstr(err, "\"state\"") &&
	   strstr(err, "v0.0.42"),
	   "nodes v0.0.42: a state string is an error naming node and field "
	   "(%s)", err);
	ok(br_snodes_parse("{\"nodes\":[{\"name\":\"n1\",\"state\":"
			   "[\"IDLE\"],\"alloc_cpus\":{\"set\":true}}]}",
			   42, &ns, err, sizeof(err)) < 0 &&
	   strstr(err, "node n1") && strstr(err, "\"alloc_cpus\""),
	   "nodes v0.0.42: a bad number object names node and field (%s)",
	   err);
	ok(br_snodes_parse("{\"nodes\":[{\"state\":[\"IDLE\"]}]}", 42,
			   &ns, err, sizeof(err)) < 0 && strstr(err, "no name"),
	   "nodes: an entry without a name (%s)", err);
	ok(br_snodes_parse("{\"errors\":[{\"description\":\"no auth\"}]}",
			   42, &ns, err, sizeof(err)) < 0 &&
	   strstr(err, "no nodes array") && strstr(err, "no auth"),
	   "nodes: no nodes array, slurmrestd's error named (%s)", err);
	ok(br_snodes_parse("<html>", 42, &ns, err, sizeof(err)) < 0 &&
	   strstr(err, "not JSON"), "nodes: not JSON");
	test_snodes_bounds();
}

static void test_slurm_2411(void)
{
	test_slurm_version();
	check_2411_jobs("jobs-24.11-v0.0.40.json", 40);
	check_2411_jobs("jobs-24.11-v0.0.42.json", 42);
	test_2411_bad_fields();
	test_2411_submit();
	check_2411_nodes("nodes-24.11-v0.0.40.json", 40);
	check_2411_nodes("nodes-24.11-v0.0.42.json", 42);
	test_snodes_shapes();
	test_snodes_feed();
}

static void test_mixed_conf(void)
{
	br_config c;
	char err[512];
	const char *txt =
		"mixed:\n"
		"  slurmrestd: http://127.0.0.1:6820/\n"
		"  jwtTokenFile: /etc/t\n"
		"  partition: low\n"
		"  tiers:\n"
		"  - {minPriority: 10, partition: mid}\n"
		"  - {minPriority: 1000, partition: high, qos: urgent}\n"
		"  nodeMap: label slurm.schedmd.com/node\n"
		"  layerMap: {SpineLayer: spine}\n"
		"  pollSeconds: 0.5\n";

	br_config_init(&c);
	ok(!c.mixed, "mixed: off by default");
	is_int(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
				   sizeof(err)), 0, "mixed: section loads");
	ok(c.mixed && strcmp(c.mixed->url, "http://127.0.0.1:6820") == 0,
	   "mixed: URL, trailing slash dropped");
	ok(c.mixed && c.mixed->ntiers == 2 &&
	   c.mixed->tiers[0].min_priority == 1000 &&
	   strcmp(c.mixed->tiers[0].qos, "urgent") == 0,
	   "mixed: tiers, highest first");
	ok(c.mixed && c.mixed->node_label &&
	   strcmp(c.mixed->node_label, "slurm.schedmd.com/node") == 0,
	   "mixed: nodeMap label KEY");
	ok(c.mixed && c.mixed->nlayers == 1 && c.mixed->poll_s == 0.5 &&
	   strcmp(c.mixed->user, "root") == 0, "mixed: layerMap, poll, user");
	ok(c.mixed && c.mixed->uid == 0,
	   "mixed: uid: mixed.user root resolved once at load (0)");
	br_config_free(&c);
	br_config_init(&c);
	txt = "mixed: {slurmrestd: http://x, jwtTokenFile: /t, user: "
	      "no-such-user-tg, uid: 4242}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) == 0 && c.mixed->uid == 4242,
	   "mixed: uid set by mixed.uid (%s)", err);
	br_config_free(&c);
	br_config_init(&c);
	txt = "mixed: {slurmrestd: http://x, jwtTokenFile: /t, user: "
	      "no-such-user-tg}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) == 0 && c.mixed->uid == -1,
	   "mixed: uid -1 when mixed.user is not a user here and no "
	   "mixed.uid");
	txt = "mixed: {slurmrestd: http://x, jwtTokenFile: /t, uid: 1.5}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 &&
	   strstr(err, "mixed.uid: must be a whole number"),
	   "mixed: a fractional uid is refused (%s)", err);
	br_config_free(&c);

	br_config_init(&c);
	txt = "mixed: {jwtTokenFile: /t}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 &&
	   strstr(err, "b.yaml: mixed.slurmrestd: required"),
	   "mixed: the URL is required");
	txt = "mixed: {slurmrestd: http://x, jwtTokenFile: /t, nodeMap: "
	      "hostname}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 && strstr(err, "mixed.nodeMap"),
	   "mixed: a bad nodeMap is refused");
	txt = "mixed: {slurmrestd: http://x, jwtTokenFile: /t, tiers: "
	      "[{partition: p}]}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 &&
	   strstr(err, "mixed.tiers[0]: minPriority is required"),
	   "mixed: a tier needs minPriority");
	txt = "mixed: {slurmrestd: http://x, jwtTokenFile: /t, qsos: a}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 &&
	   strstr(err, "mixed.qsos: unknown key"), "mixed: unknown key");
	txt = "mixed: {slurmrestd: http://x, jwtTokenFile: /t, gresName: "
	      "mps}\n";
	ok(br_config_load_text(&c, txt, strlen(txt), "b.yaml", err,
			       sizeof(err)) < 0 &&
	   strstr(err, "mixed.gresName: must be \"gpu\" or \"gpu:TYPE\""),
	   "mixed: gresName other than gpu[:TYPE] is refused");
	br_config_free(&c);
}


/* A random pod for test_sched_counts: pending or bound, ours or not, in
 * a gang or not, running, terminating. */
static br_obj *rand_pod(unsigned i, unsigned rv, unsigned *seed)
{
	char js[1024], gang[64] = "", del[80] = "", node[40] = "";
	unsigned r = (unsigned)rand_r(seed);

	if (r % 3)
		snprintf(gang, sizeof(gang), ",\"annotations\":{"
			 "\"topogang.io/gang\":\"ns/g%u\"}", (r >> 2) % 4);
	if ((r >> 4) % 5 == 0)
		snprintf(del, sizeof(del), ",\"deletionTimestamp\":"
			 "\"2026-01-01T00:00:00Z\"");
	if ((r >> 7) % 2)
		snprintf(node, sizeof(node), "\"nodeName\":\"n%u\",",
			 (r >> 8) % 3);
	snprintf(js, sizeof(js), "{\"metadata\":{\"name\":\"p%u\","
		 "\"namespace\":\"ns\",\"uid\":\"u%u\",\"resourceVersion\":"
		 "\"%u\"%s%s},\"spec\":{%s\"schedulerName\":\"%s\","
		 "\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":"
		 "\"%s\"}}", i, (r >> 10) % 2, rv, gang, del, node,
		 (r >> 11) % 4 ? "topogang" : "default-scheduler",
		 (r >> 13) % 2 ? "Running" : "Pending");
	return mk(js, true);
}

/* What a scheduler needs to run without a server: a configuration, an
 * HTTP handle, the informers' caches (PriorityClasses and budgets only
 * with \p all) and metrics. */
typedef struct sched_rig {
	br_config cfg;
	br_metrics m;
	br_sched_env env;
	br_http *h;
	br_informer *pods, *nodes, *pcs, *pdbs;
} sched_rig;

static bool rig_open(sched_rig *r, bool all, const char *what)
{
	static const br_resdef rp = { "pods", "", { "v1" }, "Pod", NULL,
				      false, true };
	static const br_resdef rn = { "nodes", "", { "v1" }, "Node", NULL,
				      false, false };
	static const br_resdef rc = { "priorityclasses", "scheduling.k8s.io",
				      { "v1" }, "PriorityClass", NULL, false,
				      false };
	static const br_resdef rb = { "poddisruptionbudgets", "policy",
				      { "v1" }, "PodDisruptionBudget", NULL,
				      false, false };
	char err[256] = "";

	memset(r, 0, sizeof(*r));
	br_config_init(&r->cfg);
	r->h = br_http_create(&r->cfg, err, sizeof(err));
	if (!r->h) {
		ok(0, "%s: an HTTP handle (%s)", what, err);
		br_config_free(&r->cfg);
		return false;
	}
	r->pods = br_informer_create(r->h, &r->cfg, &rp, NULL, NULL);
	r->nodes = br_informer_create(r->h, &r->cfg, &rn, NULL, NULL);
	if (all) {
		r->pcs = br_informer_create(r->h, &r->cfg, &rc, NULL, NULL);
		r->pdbs = br_informer_create(r->h, &r->cfg, &rb, NULL, NULL);
	}
	r->env.h = r->h;
	r->env.cfg = &r->cfg;
	r->env.m = &r->m;
	r->env.pods = r->pods;
	r->env.nodes = r->nodes;
	r->env.pcs = r->pcs;
	r->env.pdbs = r->pdbs;
	return true;
}

static void rig_close(sched_rig *r)
{
	br_informer_destroy(r->pods);
	br_informer_destroy(r->nodes);
	if (r->pcs)
		br_informer_destroy(r->pcs);
	if (r->pdbs)
		br_informer_destroy(r->pdbs);
	br_http_destroy(r->h);
	br_config_free(&r->cfg);
}

/*
 * The counts the scheduler keeps from pod events (pods pending for it,
 * bound members by gang: what lets a cycle with nothing to decide skip
 * the model) equal a walk of the cache after every step of random
 * add/update/delete sequences; and the check does catch a delta that was
 * not applied.
 */
static void test_sched_counts(void)
{
	sched_rig r;
	br_informer *pods;
	br_sched *s;
	char err[256] = "", first[256] = "";
	unsigned seed = 15, step, bad = 0;
	br_obj *o, *old;

	if (!rig_open(&r, false, "sched counts"))
		return;
	pods = r.pods;
	s = br_sched_create(&r.env);
	for (step = 0; step < 5000; step++) {
		unsigned i = (unsigned)rand_r(&seed) % 40;
		char key[32];

		snprintf(key, sizeof(key), "ns/p%u", i);
		if (rand_r(&seed) % 4 == 0) {
			old = br_store_take(br_informer_store_mut(pods), key);
			if (old)
				br_sched_on_event(s, pods, BR_EV_DELETED, old,
						  NULL);
		} else {
			o = rand_pod(i, step, &seed);
			old = br_store_put(br_informer_store_mut(pods), o);
			br_sched_on_event(s, pods, old ? BR_EV_MODIFIED :
					  BR_EV_ADDED, old, o);
		}
		br_obj_free(old);
		if (!br_sched_check(s, err, sizeof(err)) && !bad++)
			snprintf(first, sizeof(first), "step %u: %s", step,
				 err);
	}
	ok(bad == 0, "sched counts: kept from 5,000 random pod events, equal "
	   "to a walk of the cache after each (%u differ%s%s)", bad,
	   bad ? "; first: " : "", first);
	ok(br_informer_store(pods)->n > 0, "sched counts: pods left in the "
	   "cache at the end (%zu)", br_informer_store(pods)->n);
	/* a delta not applied: the check says so */
	o = mk("{\"metadata\":{\"name\":\"extra\",\"namespace\":\"ns\","
	       "\"uid\":\"x\",\"resourceVersion\":\"1\"},\"spec\":{"
	       "\"schedulerName\":\"topogang\",\"containers\":[{\"name\":"
	       "\"c\"}]}}", true);
	br_obj_free(br_store_put(br_informer_store_mut(pods), o));
	ok(!br_sched_check(s, err, sizeof(err)) &&
	   strstr(err, "pending for us"), "sched counts: a pod event not "
	   "applied is caught: %s", err);
	br_sched_destroy(s);
	rig_close(&r);
}

/* A Node with \p cpu cores, Ready. */
static br_obj *mk_cpu_node(const char *name, unsigned cpu, unsigned rv)
{
	char js[512];

	snprintf(js, sizeof(js), "{\"metadata\":{\"name\":\"%s\",\"uid\":"
		 "\"u-%s\",\"resourceVersion\":\"%u\",\"labels\":{"
		 "\"kubernetes.io/hostname\":\"%s\"}},\"spec\":{},\"status\":"
		 "{\"allocatable\":{\"cpu\":\"%u\",\"pods\":\"110\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":"
		 "\"True\"}]}}", name, name, rv, name, cpu);
	return mk(js, false);
}

/* A pod asking for \p cpu cores, bound to \p node (pending: NULL). */
static br_obj *mk_cpu_pod(const char *name, const char *node, unsigned cpu,
			  unsigned rv)
{
	char js[512], nn[64] = "";

	if (node)
		snprintf(nn, sizeof(nn), "\"nodeName\":\"%s\",", node);
	snprintf(js, sizeof(js), "{\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"ns\",\"uid\":\"u-%s\",\"resourceVersion\":"
		 "\"%u\"},\"spec\":{%s\"schedulerName\":\"topogang\","
		 "\"containers\":[{\"name\":\"c\",\"resources\":{"
		 "\"requests\":{\"cpu\":\"%u\"}}}]},\"status\":{\"phase\":"
		 "\"%s\"}}", name, name, rv, nn, cpu,
		 node ? "Running" : "Pending");
	return mk(js, true);
}

/* Each node's name, allocations and free amounts, the loader's warnings:
 * a cycle's model as text (br_sched_env.on_model). */
static void model_text(void *ud, const tg_topology *t, const tg_k8s *k,
		       const tg_decision *const *ds, size_t nd)
{
	char *buf = ud;
	size_t n = 8192, l;
	unsigned i, r;

	(void)ds;
	(void)nd;
	snprintf(buf, n, "allocs %u\n", tg_topology_nallocs(t));
	for (i = 0; i < tg_topology_nnodes(t); i++) {
		l = strlen(buf);
		snprintf(buf + l, n - l, "%s", tg_topology_node_name(t, i));
		for (r = 0; r < tg_topology_nresources(t); r++) {
			l = strlen(buf);
			snprintf(buf + l, n - l, " %lld", (long long)
				 tg_topology_node_free(t, i, r));
		}
		l = strlen(buf);
		snprintf(buf + l, n - l, "\n");
	}
	for (i = 0; i < tg_k8s_nwarnings(k); i++) {
		l = strlen(buf);
		snprintf(buf + l, n - l, "w %s\n", tg_k8s_warning(k, i));
	}
}

/* \p o into \p inf's store, both schedulers told. */
static void rig_put(br_sched *const *s, br_informer *inf, br_obj *o)
{
	br_obj *old = br_store_put(br_informer_store_mut(inf), o);
	unsigned i;

	for (i = 0; i < 2; i++)
		br_sched_on_event(s[i], inf, old ? BR_EV_MODIFIED :
				  BR_EV_ADDED, old, o);
	br_obj_free(old);
}

static void rig_take(br_sched *const *s, br_informer *inf, const char *key)
{
	br_obj *old = br_store_take(br_informer_store_mut(inf), key);
	unsigned i;

	for (i = 0; old && i < 2; i++)
		br_sched_on_event(s[i], inf, BR_EV_DELETED, old, NULL);
	br_obj_free(old);
}

/*
 * The core's cache fed deltas (the default) against a scheduler that
 * hands every model the whole cluster (TOPOGANG_BRIDGE_NO_DELTAS): the
 * same stores changed at random (Nodes and bound pods added, changed,
 * removed; a pending pod of ours that fits nowhere keeps a model built
 * every cycle) give the same model after every cycle.
 */
static void test_sched_deltas(void)
{
	static char md[8192], mw[8192];
	sched_rig r;
	br_sched_env ed, ew;
	br_sched *s[2];
	unsigned seed = 23, step, bad = 0, rv = 1, i;
	char name[32], key[40], first[200] = "";

	if (!rig_open(&r, true, "sched deltas"))
		return;
	free(r.cfg.server);
	r.cfg.server = br_xstrdup("http://127.0.0.1:1");
	ed = r.env;
	ed.on_model = model_text;
	ed.ud = md;
	ew = ed;
	ew.ud = mw;
	s[0] = br_sched_create(&ed);
	setenv("TOPOGANG_BRIDGE_NO_DELTAS", "1", 1);
	s[1] = br_sched_create(&ew);
	unsetenv("TOPOGANG_BRIDGE_NO_DELTAS");
	rig_put(s, r.pods, mk_cpu_pod("big", NULL, 100000, rv++));
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		rig_put(s, r.nodes, mk_cpu_node(name, 64, rv++));
	}
	for (step = 0; step < 40; step++) {
		unsigned op = (unsigned)rand_r(&seed) % 6, x;

		x = (unsigned)rand_r(&seed) % 6;
		snprintf(name, sizeof(name), "n%u", x);
		if (op == 0) {
			rig_put(s, r.nodes, mk_cpu_node(name, 32 + 16 * (x % 3) +
							step, rv++));
		} else if (op == 1) {
			rig_take(s, r.nodes, name);
		} else if (op == 5) {
			snprintf(key, sizeof(key), "ns/p%u",
				 (unsigned)rand_r(&seed) % 12);
			rig_take(s, r.pods, key);
		} else {
			char pn[16];

			snprintf(pn, sizeof(pn), "p%u",
				 (unsigned)rand_r(&seed) % 12);
			rig_put(s, r.pods, mk_cpu_pod(pn, name, 1 + step % 5,
						      rv++));
		}
		md[0] = mw[0] = '\0';
		br_sched_cycle(s[0]);
		br_sched_cycle(s[1]);
		if ((!*md || strcmp(md, mw) != 0) && !bad++)
			snprintf(first, sizeof(first), "step %u: '%.80s' / "
				 "'%.80s'", step, md, mw);
	}
	ok(bad == 0, "sched deltas: 40 models from the cache fed deltas "
	   "equal those handed the whole cluster (%u differ%s%s)", bad,
	   bad ? "; first: " : "", first);
	ok(br_sched_model_objects(s[0]) > 0 &&
	   br_sched_model_objects(s[1]) == 0,
	   "sched deltas: the first scheduler's cache holds the objects "
	   "(%zu), the other's none (%zu)", br_sched_model_objects(s[0]),
	   br_sched_model_objects(s[1]));
	br_sched_destroy(s[0]);
	br_sched_destroy(s[1]);
	rig_close(&r);
}

/* A pending pod of ours, \p name. */
static br_obj *mk_pending(const char *name)
{
	char js[512];

	snprintf(js, sizeof(js),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\","
		 "\"uid\":\"u-%s\",\"resourceVersion\":\"1\"},\"spec\":{"
		 "\"schedulerName\":\"topogang\",\"containers\":[{\"name\":"
		 "\"c\"}]}}", name, name);
	return mk(js, true);
}

/*
 * The quiet time before a cycle (br_sched_quiet_ms): short while only new
 * pending pods of ours came (a gang created: one burst), the full
 * debounce as soon as anything else changed, in either order.
 */
static void test_sched_quiet(void)
{
	sched_rig r;
	br_informer *pods, *nodes;
	br_sched *s;
	br_obj *a, *b, *n1, *n2;
	int64_t q1, q2, q3, q4;
	bool q0;

	if (!rig_open(&r, true, "sched quiet"))
		return;
	pods = r.pods;
	nodes = r.nodes;
	a = mk_pending("a");
	b = mk_pending("b");
	n1 = mk_node(1, "x", "64", "True");
	n2 = mk_node(2, "y", "64", "True");	/* a label changed */

	/* the first cycle (of an empty cluster) takes the start's changes */
	s = br_sched_create(&r.env);
	br_sched_cycle(s);
	q0 = br_sched_due(s, br_now_ms() + 20);
	br_sched_on_event(s, pods, BR_EV_ADDED, NULL, a);
	br_sched_on_event(s, pods, BR_EV_ADDED, NULL, b);
	q1 = br_sched_quiet_ms(s);
	br_sched_on_event(s, nodes, BR_EV_MODIFIED, n1, n2);
	q2 = br_sched_quiet_ms(s);
	br_sched_destroy(s);

	s = br_sched_create(&r.env);
	br_sched_cycle(s);
	br_sched_on_event(s, pods, BR_EV_DELETED, a, NULL);
	br_sched_on_event(s, pods, BR_EV_ADDED, NULL, b);
	q3 = br_sched_quiet_ms(s);
	br_sched_on_event(s, nodes, BR_EV_MODIFIED, n1, n2);
	br_sched_on_event(s, pods, BR_EV_ADDED, NULL, a);
	q4 = br_sched_quiet_ms(s);
	br_sched_destroy(s);

	ok(!q0, "sched quiet: no cycle due after the first with nothing "
	   "new");
	ok(q1 == 10, "sched quiet: only new pending pods wait 10 ms (%lld)",
	   (long long)q1);
	ok(q2 == 50 && q3 == 50 && q4 == 50, "sched quiet: anything else "
	   "before or after them, 50 ms (%lld, %lld, %lld)", (long long)q2,
	   (long long)q3, (long long)q4);
	br_obj_free(a);
	br_obj_free(b);
	br_obj_free(n1);
	br_obj_free(n2);
	rig_close(&r);
}

/* An object outlives its removal from the store while a cycle holds a
 * reference (the worker reads it; ASan would see a use after free). */
static void test_obj_refs(void)
{
	br_store st;
	br_obj *o = mk("{\"metadata\":{\"name\":\"r\",\"uid\":\"u\","
		       "\"resourceVersion\":\"1\"},\"spec\":{}}", true);
	br_obj *ref;

	br_store_init(&st);
	br_store_put(&st, o);
	ref = br_obj_ref(o);
	br_obj_free(br_store_take(&st, "default/r"));
	ok(ref == o && strstr(ref->text, "\"r\"") != NULL,
	   "store: a referenced object survives its removal");
	br_obj_free(ref);
	br_store_free(&st);
}

/*
 * br_obj.since: a Node's copies that differ only in what the slim text
 * leaves out or in resourceVersion (kubelet heartbeats) keep the first
 * one's serial, so the core's cache keeps its topology; a change that
 * placement reads, or the Node gone and back, starts a new run.
 */
static void test_store_since(void)
{
	br_store st;
	br_obj *o = mk_node(1, "x", "64", "True");
	uint64_t first = o->serial, since[4], serial[4];
	static const char *const cpu[4] = { "64", "63", "63", "63" };
	char key[64];
	unsigned i;

	br_store_init(&st);
	snprintf(key, sizeof(key), "%s", o->key);
	br_obj_free(br_store_put(&st, o));
	for (i = 0; i < 4; i++) {
		if (i == 3)	/* gone, then back */
			br_obj_free(br_store_take(&st, key));
		o = mk_node((int)i + 2, "x", cpu[i], "True");
		serial[i] = o->serial;
		br_obj_free(br_store_put(&st, o));
		since[i] = o->since;
	}
	ok(since[0] == first && serial[0] != first, "store: a heartbeat "
	   "keeps the Node's first serial (%llu, %llu)",
	   (unsigned long long)since[0], (unsigned long long)first);
	ok(since[1] == serial[1], "store: allocatable changed: a new run");
	ok(since[2] == serial[1], "store: a heartbeat after it keeps the "
	   "new run's serial");
	ok(since[3] == serial[3], "store: a Node deleted and back: a new "
	   "run");
	br_store_free(&st);
}

/* A Node named \p name, at resourceVersion \p rv. */
static br_obj *mk_named(const char *name, int rv)
{
	char js[256];

	snprintf(js, sizeof(js), "{\"metadata\":{\"name\":\"%s\","
		 "\"uid\":\"u\",\"resourceVersion\":\"%d\"}}", name, rv);
	return mk(js, false);
}

/* The keys of one br_store_changes(), sorted, joined by ' '. */
static bool changes_str(br_store *st, char *buf, size_t n)
{
	char **keys;
	size_t nk, i, j;
	bool fine = br_store_changes(st, &keys, &nk);

	for (i = 1; i < nk; i++)	/* insertion sort: a few keys */
		for (j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			char *t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	buf[0] = '\0';
	for (i = 0; i < nk; i++) {
		size_t l = strlen(buf);

		snprintf(buf + l, n - l, "%s%s", i ? " " : "", keys[i]);
		free(keys[i]);
	}
	free(keys);
	return fine;
}

/*
 * The change log the scheduler feeds the core's cache from: a tracked
 * store starts "take everything", then gives each changed key once
 * (puts, replacements, removals), and nothing when nothing changed; an
 * untracked store gives nothing.
 */
static void test_store_changes(void)
{
	br_store st, un;
	char seen[256];
	bool r0, r1, r2, r3;
	size_t i;

	br_store_init(&st);
	br_store_init(&un);
	br_obj_free(br_store_put(&un, mk_named("u", 1)));
	ok(!changes_str(&un, seen, sizeof(seen)) && !*seen,
	   "store changes: an untracked store gives none");
	br_store_track(&st);
	br_obj_free(br_store_put(&st, mk_named("a", 1)));
	r0 = changes_str(&st, seen, sizeof(seen));
	ok(!r0 && !*seen, "store changes: the first call says take every "
	   "object");
	br_obj_free(br_store_put(&st, mk_named("b", 2)));
	br_obj_free(br_store_put(&st, mk_named("a", 3)));
	br_obj_free(br_store_put(&st, mk_named("c", 4)));
	br_obj_free(br_store_take(&st, "c"));
	br_obj_free(br_store_put(&st, mk_named("b", 5)));
	br_obj_free(br_store_take(&st, "nosuch"));
	r1 = changes_str(&st, seen, sizeof(seen));
	ok(r1 && strcmp(seen, "a b c") == 0, "store changes: each key once, "
	   "removed ones too ('%s')", seen);
	r2 = changes_str(&st, seen, sizeof(seen));
	ok(r2 && !*seen, "store changes: none when nothing changed");
	br_obj_free(br_store_take(&st, "a"));
	r3 = changes_str(&st, seen, sizeof(seen));
	ok(r3 && strcmp(seen, "a") == 0, "store changes: a removal ('%s')",
	   seen);
	/* keys of objects gone since count in the log, not in the store:
	 * past BR_STORE_MAX_CHANGES more of them, the log is dropped and
	 * the consumer takes every object once */
	for (i = 0; i <= BR_STORE_MAX_CHANGES; i++) {
		char nm[32];

		snprintf(nm, sizeof(nm), "gone-%zu", i);
		br_obj_free(br_store_put(&st, mk_named(nm, 6)));
		br_obj_free(br_store_take(&st, nm));
	}
	br_obj_free(br_store_put(&st, mk_named("d", 7)));
	r3 = changes_str(&st, seen, sizeof(seen));
	ok(!r3 && !*seen, "store changes: past BR_STORE_MAX_CHANGES keys "
	   "more than objects, take every object");
	br_obj_free(br_store_put(&st, mk_named("d", 8)));
	r3 = changes_str(&st, seen, sizeof(seen));
	ok(r3 && strcmp(seen, "d") == 0, "store changes: then a log again "
	   "('%s')", seen);
	br_store_free(&st);
	br_store_free(&un);
}

/* Mixed mode: a job is the bridge's by its comment and its user. */
/*
 * slurmrestd sends no user_name when it cannot resolve the uid: the
 * user_id is compared with mixed.uid instead (they were all "foreign").
 */
static void test_slurm_uid(void)
{
	const char *jobs =
		"{\"jobs\":["
		"{\"job_id\":1,\"name\":\"team/g\",\"user_id\":1000,"
		"\"comment\":\"topogang-bridge/topogang gang=team/g\","
		"\"job_state\":\"PENDING\",\"nodes\":\"\"},"
		"{\"job_id\":2,\"name\":\"team/g\",\"user_id\":1001,"
		"\"comment\":\"topogang-bridge/topogang gang=team/g\","
		"\"job_state\":\"PENDING\",\"nodes\":\"\"},"
		"{\"job_id\":3,\"name\":\"team/g\",\"user_name\":\"eve\","
		"\"user_id\":1000,\"comment\":\"topogang-bridge/topogang "
		"gang=team/g\",\"job_state\":\"PENDING\",\"nodes\":\"\"},"
		"{\"job_id\":4,\"name\":\"team/g\",\"user_id\":-1,"
		"\"comment\":\"topogang-bridge/topogang gang=team/g\","
		"\"job_state\":\"PENDING\",\"nodes\":\"\"}]}";
	br_sjobs js;
	char err[512];

	is_int(br_sjobs_parse(jobs, 38, &js, err, sizeof(err)), 0,
	       "slurm uid: parsed (%s)", err);
	ok(js.n == 4 && js.v[0].uid == 1000 && js.v[1].uid == 1001 &&
	   js.v[3].uid == -1 && !*js.v[0].user,
	   "slurm uid: user_id read (-1 when not a uid)");
	ok(js.n == 4 && br_sjob_ours(&js.v[0], "topogang", "k8s", 1000) &&
	   !br_sjob_owner_unknown(&js.v[0], "topogang", 1000),
	   "slurm uid: no user_name, user_id = mixed.uid: the bridge's");
	ok(js.n == 4 && !br_sjob_ours(&js.v[1], "topogang", "k8s", 1000),
	   "slurm uid: no user_name, another user_id: not the bridge's");
	ok(js.n == 4 && !br_sjob_ours(&js.v[2], "topogang", "k8s", 1000),
	   "slurm uid: a user_name decides (another name, same uid)");
	ok(js.n == 4 && !br_sjob_ours(&js.v[0], "topogang", "k8s", -1) &&
	   br_sjob_owner_unknown(&js.v[0], "topogang", -1) &&
	   br_sjob_owner_unknown(&js.v[3], "topogang", 1000),
	   "slurm uid: no mixed.uid, or no user_id: the owner is unknown "
	   "(one error in mixed mode), not the bridge's");
	br_sjobs_free(&js);
}

static void test_slurm_user(void)
{
	const char *jobs =
		"{\"jobs\":["
		"{\"job_id\":1,\"name\":\"team/g\",\"user_name\":\"k8s\","
		"\"comment\":\"topogang-bridge/topogang gang=team/g\","
		"\"job_state\":\"PENDING\",\"nodes\":\"\"},"
		"{\"job_id\":2,\"name\":\"team/g\",\"user_name\":"
		"\"mallory\",\"comment\":\"topogang-bridge/topogang "
		"gang=team/g\",\"job_state\":\"PENDING\",\"nodes\":\"\"},"
		"{\"job_id\":3,\"name\":\"team/g\",\"comment\":"
		"\"topogang-bridge/topogang gang=team/g\","
		"\"job_state\":\"PENDING\",\"nodes\":\"\"}]}";
	br_sjobs js;
	char err[512];

	is_int(br_sjobs_parse(jobs, 38, &js, err, sizeof(err)), 0,
	       "slurm user: parsed");
	ok(js.n == 3 && strcmp(js.v[0].user, "k8s") == 0 &&
	   strcmp(js.v[1].user, "mallory") == 0 && !*js.v[2].user,
	   "slurm user: user_name read (\"\" when absent)");
	ok(js.n == 3 && br_sjob_ours(&js.v[0], "topogang", "k8s", -1),
	   "slurm user: marked and run as mixed.user: the bridge's");
	ok(js.n == 3 && br_sjob_marked(&js.v[1], "topogang") &&
	   !br_sjob_ours(&js.v[1], "topogang", "k8s", -1),
	   "slurm user: the same comment from another user: not the "
	   "bridge's");
	ok(js.n == 3 && !br_sjob_ours(&js.v[2], "topogang", "k8s", -1) &&
	   !br_sjob_ours(&js.v[0], "topogang", "root", -1),
	   "slurm user: a record without a user, or another mixed.user: "
	   "not the bridge's");
	ok(js.n == 3 && br_sjob_owner_unknown(&js.v[2], "topogang", 1000) &&
	   !br_sjob_owner_unknown(&js.v[0], "topogang", -1),
	   "slurm user: no user_name and no user_id: the owner is unknown");
	br_sjobs_free(&js);
	test_slurm_uid();
}

/* The feeds: the dialects' objects, then the fixed ones; the limit. */
static void test_feed(void)
{
	br_resdef f[BR_MAX_FEED];
	unsigned n = 0, i, pvc = 0, pv = 0, sc = 0;
	char err[512] = "";

	is_int(br_feed_init(f, BR_MAX_FEED, BR_MAX_DIALECT_FEEDS, &n, err,
			    sizeof(err)), 0, "feed: the daemon's feeds (%s)",
	       err);
	for (i = 0; i < n; i++) {
		pvc += strcmp(f[i].resource, "persistentvolumeclaims") == 0;
		pv += strcmp(f[i].resource, "persistentvolumes") == 0;
		sc += strcmp(f[i].resource, "storageclasses") == 0 &&
		      strcmp(f[i].group, "storage.k8s.io") == 0;
	}
	ok(n > BR_FEED_NMORE + 1 && pvc == 1 && pv == 1 && sc == 1,
	   "feed: %u feeds, PersistentVolumeClaims, PersistentVolumes and "
	   "StorageClasses among them", n);
	err[0] = '\0';
	is_int(br_feed_init(f, BR_MAX_FEED, 1, &n, err, sizeof(err)), -1,
	       "feed: more dialect objects than BR_MAX_DIALECT_FEEDS is an "
	       "error");
	ok(strstr(err, "more than BR_MAX_DIALECT_FEEDS (1) dialect group "
		  "objects") != NULL && !strchr(err, '\n'),
	   "feed: one line naming the limit: %s", err);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	char *p;

	tg_set_allocator(malloc, realloc, free);	/* as main.c */
	snprintf(tmpdir, sizeof(tmpdir), "%s/tg-bridge-XXXXXX", t ? t : "/tmp");
	p = mkdtemp(tmpdir);
	if (!p) {
		printf("1..0 # SKIP cannot make a temporary directory\n");
		return 0;
	}
	br_log_set_level(BR_LOG_ERROR + 1);
	test_util();
	test_yaml();
	test_config_file();
	test_config_args();
	test_kubeconfig();
	test_in_cluster();
	test_jframe();
	test_store();
	test_store_gang_ns();
	test_store_node_slim();
	test_obj_refs();
	test_store_since();
	test_store_changes();
	test_sched_deltas();
	test_sched_counts();
	test_sched_quiet();
	test_too_large_rv();
	test_map();
	test_metrics();
	test_httpd();
	test_hostlists();
	test_slurm_bodies();
	test_slurm_user();
	test_feed();
	test_slurm_submit();
	test_slurm_answers();
	test_slurm_2411();
	test_event_body();
	test_mixed_conf();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			diag("could not remove %s", tmpdir);
	}
	return done_testing();
}
