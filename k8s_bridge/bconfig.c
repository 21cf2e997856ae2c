/*
 * k8s_bridge/bconfig.c - command line, config file, kubeconfig and
 * in-cluster configuration.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdarg.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bconfig.h"
#include "log.h"
#include "mixed.h"
#include "util.h"

#include "topogang/doc.h"

static int errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Fills \p err; returns -1. */
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

#define ERR(...) errf(err, errlen, __VA_ARGS__)

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? br_xstrdup(v) : NULL;
}

void br_config_init(br_config *c)
{
	memset(c, 0, sizeof(*c));
	c->scheduler_name = br_xstrdup("topogang");
	c->eviction_grace_s = -1;	/* the victim's own grace period */
	c->nomination_timeout_s = 300;
	c->repair_grace_s = 30;
	c->volume_bind_timeout_s = BR_VOLUME_BIND_TIMEOUT_S;
	c->backoff_initial_ms = 1000;
	c->backoff_max_ms = 10000;
	c->unschedulable_flush_s = 60;
	c->page_size = 500;
	c->watch_timeout_s = 300;
	c->watch_idle_s = BR_WATCH_IDLE_S;
	c->qps = BR_QPS;
	c->burst = BR_BURST;
	c->reprobe_s = 60;
	c->leader_elect = true;
	c->lease_name = br_xstrdup("topogang-bridge");
	c->lease_duration_s = 15;
	c->renew_deadline_s = 10;
	c->retry_period_s = 2;
	c->listen = br_xstrdup("0.0.0.0:8080");
	c->log_level = BR_LOG_INFO;
}

static void clear_conn(br_config *c)
{
	set_str(&c->server, NULL);
	set_str(&c->token_file, NULL);
	set_str(&c->token, NULL);
	set_str(&c->ca_file, NULL);
	set_str(&c->ca_data, NULL);
	set_str(&c->cert_file, NULL);
	set_str(&c->key_file, NULL);
	set_str(&c->cert_data, NULL);
	set_str(&c->key_data, NULL);
	c->ca_data_len = c->cert_data_len = c->key_data_len = 0;
	c->insecure = false;
}

void br_config_free(br_config *c)
{
	unsigned i;

	clear_conn(c);
	free(c->conn_source);
	free(c->kubeconfig);
	free(c->context);
	free(c->config_file);
	free(c->scheduler_name);
	for (i = 0; i < c->nlevels; i++)
		free(c->levels[i]);
	for (i = 0; i < c->nbw; i++)
		free(c->bw[i].layer);
	free(c->lease_name);
	free(c->lease_namespace);
	free(c->identity);
	free(c->listen);
	br_mixed_conf_free(c->mixed);
	free(c->slurm_user);
	memset(c, 0, sizeof(*c));
}

/* ---- base64 ------------------------------------------------------------ */

static int b64val(int ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+' || ch == '-')
		return 62;
	if (ch == '/' || ch == '_')
		return 63;
	return -1;
}

char *br_base64_decode(const char *s, size_t *len)
{
	size_t n = strlen(s), o = 0;
	char *out = br_xmalloc(n / 4 * 3 + 4);
	unsigned acc = 0, bits = 0;

	for (; *s; s++) {
		int v;

		if (*s == '=' || *s == '\n' || *s == '\r' || *s == ' ' ||
		    *s == '\t')
			continue;
		v = b64val((unsigned char)*s);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}

/* ---- the config file --------------------------------------------------- */

typedef struct fctx {
	br_config *c;
	const char *src;
	char *err;
	size_t errlen;
} fctx;

static int ferr(fctx *f, const char *path, const char *what)
{
	snprintf(f->err, f->errlen, "%s: %s: %s", f->src, path, what);
	return -1;
}

static int want_obj(fctx *f, const cJSON *v, const char *path)
{
	if (!cJSON_IsObject(v))
		return ferr(f, path, "must be a mapping");
	return 0;
}

static int get_str(fctx *f, const cJSON *v, const char *path, char **dst)
{
	if (!cJSON_IsString(v))
		return ferr(f, path, "must be a string");
	if (strlen(v->valuestring) > 1024)
		return ferr(f, path, "longer than 1024 bytes");
	set_str(dst, v->valuestring);
	return 0;
}

static int get_num(fctx *f, const cJSON *v, const char *path, double lo,
		   double hi, double *out)
{
	char why[128];

	return br_jnum(v, lo, hi, out, why, sizeof(why)) ?
		ferr(f, path, why) : 0;
}

static int get_int(fctx *f, const cJSON *v, const char *path, double lo,
		   double hi, int64_t *out)
{
	double d;

	if (get_num(f, v, path, lo, hi, &d))
		return -1;
	if (d != (double)(int64_t)d)
		return ferr(f, path, "must be a whole number");
	*out = (int64_t)d;
	return 0;
}

static int get_bool(fctx *f, const cJSON *v, const char *path, bool *out)
{
	if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v);
		return 0;
	}
	if (cJSON_IsString(v) && (strcmp(v->valuestring, "true") == 0 ||
				  strcmp(v->valuestring, "false") == 0)) {
		*out = strcmp(v->valuestring, "true") == 0;
		return 0;
	}
	return ferr(f, path, "must be true or false");
}

static int set_levels(br_config *c, const char *const *keys, unsigned n,
		      char *err, size_t errlen)
{
	unsigned i;

	if (n > BR_MAX_LEVELS)
		return ERR("more than %d topology levels", BR_MAX_LEVELS);
	for (i = 0; i < n; i++)
		if (!*keys[i] || strlen(keys[i]) > 253)
			return ERR("topology level %u: empty or longer than "
				   "253 bytes", i + 1);
	for (i = 0; i < c->nlevels; i++)
		free(c->levels[i]);
	for (i = 0; i < n; i++)
		c->levels[i] = br_xstrdup(keys[i]);
	c->nlevels = n;
	return 0;
}

static int file_topology(fctx *f, const cJSON *t)
{
	const cJSON *v;

	if (cJSON_IsNull(t))
		return 0;	/* a section with every key commented out */
	if (want_obj(f, t, "topology"))
		return -1;
	cJSON_ArrayForEach(v, t) {
		if (strcmp(v->string, "levels") == 0) {
			const char *keys[BR_MAX_LEVELS];
			const cJSON *e;
			unsigned n = 0;

			if (!cJSON_IsArray(v))
				return ferr(f, "topology.levels",
					    "must be a list of node label "
					    "keys");
			cJSON_ArrayForEach(e, v) {
				if (!cJSON_IsString(e))
					return ferr(f, "topology.levels",
						    "must be a list of "
						    "strings");
				if (n == BR_MAX_LEVELS)
					return ferr(f, "topology.levels",
						    "more than 16 levels");
				keys[n++] = e->valuestring;
			}
			if (set_levels(f->c, keys, n, f->err, f->errlen))
				return -1;
		} else if (strcmp(v->string, "bandwidthGbps") == 0) {
			const cJSON *e;
			unsigned i;

			if (want_obj(f, v, "topology.bandwidthGbps"))
				return -1;
			for (i = 0; i < f->c->nbw; i++)
				free(f->c->bw[i].layer);
			f->c->nbw = 0;
			cJSON_ArrayForEach(e, v) {
				double d;

				if (f->c->nbw == BR_MAX_BANDWIDTHS)
					return ferr(f, "topology.bandwidthGbps",
						    "more than 16 layers");
				if (get_num(f, e, "topology.bandwidthGbps",
					    0.001, 1e7, &d))
					return -1;
				f->c->bw[f->c->nbw].layer =
					br_xstrdup(e->string);
				f->c->bw[f->c->nbw++].gbps = d;
			}
		} else if (strcmp(v->string, "nodeBandwidthGbps") == 0) {
			if (get_num(f, v, "topology.nodeBandwidthGbps", 0.001,
				    1e7, &f->c->node_bw))
				return -1;
		} else {
			char p[300];

			snprintf(p, sizeof(p), "topology.%.200s", v->string);
			return ferr(f, p, "unknown key");
		}
	}
	return 0;
}

static int file_section(fctx *f, const char *sec, const cJSON *o)
{
	br_config *c = f->c;
	const cJSON *v;
	char p[300];

	if (cJSON_IsNull(o))
		return 0;	/* a section with every key commented out */
	if (want_obj(f, o, sec))
		return -1;
	cJSON_ArrayForEach(v, o) {
		const char *k = v->string;
		int r = 0;

		snprintf(p, sizeof(p), "%s.%.200s", sec, k);
		if (strcmp(sec, "preemption") == 0) {
			if (strcmp(k, "mode") == 0) {
				const char *m = cJSON_IsString(v) ?
					v->valuestring : "";

				if (strcmp(m, "evict") != 0 &&
				    strcmp(m, "delete") != 0)
					return ferr(f, p, "must be evict or "
						    "delete");
				c->preempt_delete = strcmp(m, "delete") == 0;
			} else if (strcmp(k, "evictionGracePeriodSeconds") ==
				   0) {
				r = get_int(f, v, p, -1, 86400,
					    &c->eviction_grace_s);
			} else if (strcmp(k, "nominationTimeoutSeconds") == 0) {
				r = get_int(f, v, p, 1, 86400,
					    &c->nomination_timeout_s);
			} else {
				return ferr(f, p, "unknown key");
			}
		} else if (strcmp(sec, "binding") == 0) {
			if (strcmp(k, "repairGraceSeconds") == 0)
				r = get_int(f, v, p, 0, 86400,
					    &c->repair_grace_s);
			else if (strcmp(k, "volumeBindTimeoutSeconds") == 0)
				r = get_int(f, v, p, 1, 86400,
					    &c->volume_bind_timeout_s);
			else
				return ferr(f, p, "unknown key");
		} else if (strcmp(sec, "queue") == 0) {
			double d;

			if (strcmp(k, "initialBackoffSeconds") == 0) {
				r = get_num(f, v, p, 0.001, 3600, &d);
				c->backoff_initial_ms = (int64_t)(d * 1000);
			} else if (strcmp(k, "maxBackoffSeconds") == 0) {
				r = get_num(f, v, p, 0.001, 86400, &d);
				c->backoff_max_ms = (int64_t)(d * 1000);
			} else if (strcmp(k, "unschedulableFlushSeconds") ==
				   0) {
				r = get_int(f, v, p, 1, 86400,
					    &c->unschedulable_flush_s);
			} else {
				return ferr(f, p, "unknown key");
			}
		} else if (strcmp(sec, "informers") == 0) {
			int64_t i;

			if (strcmp(k, "pageSize") == 0) {
				r = get_int(f, v, p, 1, 10000, &i);
				c->page_size = (unsigned)i;
			} else if (strcmp(k, "watchTimeoutSeconds") == 0) {
				r = get_int(f, v, p, 1, 3600,
					    &c->watch_timeout_s);
			} else if (strcmp(k, "watchIdleSeconds") == 0) {
				r = get_int(f, v, p, 0, 3600, &c->watch_idle_s);
			} else if (strcmp(k, "reprobeSeconds") == 0) {
				r = get_int(f, v, p, 1, 86400, &c->reprobe_s);
			} else {
				return ferr(f, p, "unknown key");
			}
		} else if (strcmp(sec, "leaderElection") == 0) {
			if (strcmp(k, "leaderElect") == 0)
				r = get_bool(f, v, p, &c->leader_elect);
			else if (strcmp(k, "leaseName") == 0)
				r = get_str(f, v, p, &c->lease_name);
			else if (strcmp(k, "leaseNamespace") == 0)
				r = get_str(f, v, p, &c->lease_namespace);
			else if (strcmp(k, "leaseDurationSeconds") == 0)
				r = get_num(f, v, p, 0.1, 3600,
					    &c->lease_duration_s);
			else if (strcmp(k, "renewDeadlineSeconds") == 0)
				r = get_num(f, v, p, 0.1, 3600,
					    &c->renew_deadline_s);
			else if (strcmp(k, "retryPeriodSeconds") == 0)
				r = get_num(f, v, p, 0.05, 3600,
					    &c->retry_period_s);
			else
				return ferr(f, p, "unknown key");
		} else if (strcmp(sec, "clientConnection") == 0) {
			if (strcmp(k, "qps") == 0)
				r = get_num(f, v, p, 0, 1e6, &c->qps);
			else if (strcmp(k, "burst") == 0)
				r = get_num(f, v, p, 1, 1e6, &c->burst);
			else
				return ferr(f, p, "unknown key");
		} else if (strcmp(sec, "server") == 0) {
			if (strcmp(k, "listen") == 0)
				r = get_str(f, v, p, &c->listen);
			else if (strcmp(k, "ui") == 0)
				r = get_bool(f, v, p, &c->ui);
			else
				return ferr(f, p, "unknown key");
		}
		if (r)
			return -1;
	}
	return 0;
}

cJSON *br_config_yaml(const char *text, size_t len, const char *source,
		      char *err, size_t errlen)
{
	tg_errinfo ei = { "" };
	cJSON *docs, *d;

	if (tg_doc_parse_yaml(text, len, source, &docs, &ei)) {
		snprintf(err, errlen, "%s", ei.msg);
		return NULL;
	}
	d = cJSON_DetachItemFromArray(docs, 0);
	cJSON_Delete(docs);
	if (!d)
		d = cJSON_CreateObject();
	if (!d)
		snprintf(err, errlen, "%s: out of memory", source);
	return d;
}

int br_config_load_text(br_config *c, const char *text, size_t len,
			const char *source, char *err, size_t errlen)
{
	cJSON *root;
	const cJSON *v;
	fctx f = { c, source, err, errlen };
	int r = 0;

	root = br_config_yaml(text, len, source, err, errlen);
	if (!root)
		return -1;
	if (cJSON_IsNull(root)) {
		cJSON_Delete(root);
		return 0;
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return ERR("%s: the document must be a mapping", source);
	}
	cJSON_ArrayForEach(v, root) {
		const char *k = v->string;

		if (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0) {
			continue;	/* allowed for kubectl-style files */
		} else if (strcmp(k, "schedulerName") == 0) {
			r = get_str(&f, v, k, &c->scheduler_name);
			if (!r && !*c->scheduler_name)
				r = ferr(&f, k, "must not be empty");
		} else if (strcmp(k, "topology") == 0) {
			r = file_topology(&f, v);
		} else if (strcmp(k, "preemption") == 0 ||
			   strcmp(k, "binding") == 0 ||
			   strcmp(k, "queue") == 0 ||
			   strcmp(k, "informers") == 0 ||
			   strcmp(k, "leaderElection") == 0 ||
			   strcmp(k, "clientConnection") == 0 ||
			   strcmp(k, "server") == 0) {
			r = file_section(&f, k, v);
		} else if (strcmp(k, "mixed") == 0) {
			r = br_mixed_conf_load(&c->mixed, v, source, err,
					       errlen);
		} else if (strcmp(k, "logLevel") == 0) {
			int l = cJSON_IsString(v) ?
				br_log_parse_level(v->valuestring) : -1;

			if (l < 0)
				r = ferr(&f, k, "must be debug, info, warn or "
					 "error");
			else
				c->log_level = l;
		} else {
			r = ferr(&f, k, "unknown key");
		}
		if (r)
			break;
	}
	cJSON_Delete(root);
	return r;
}

int br_config_load_file(br_config *c, const char *path, char *err,
			size_t errlen)
{
	size_t len;
	char *text = br_read_file(path, BR_MAX_FILE, &len, err, errlen);
	int r;

	if (!text)
		return -1;
	r = br_config_load_text(c, text, len, path, err, errlen);
	free(text);
	return r;
}

/* ---- kubeconfig -------------------------------------------------------- */

/* The entry of \p list (clusters, users, contexts) named \p name. */
static const cJSON *named(const cJSON *list, const char *name,
			  const char *field)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, list)
		if (br_jstr(e, "name") && strcmp(br_jstr(e, "name"), name) == 0)
			return br_jget(e, field);
	return NULL;
}

/* A path relative to the kubeconfig's directory. */
static char *relpath(const char *kc, const char *p)
{
	const char *slash = strrchr(kc, '/');

	if (p[0] == '/' || !slash)
		return br_xstrdup(p);
	return br_xasprintf("%.*s/%s", (int)(slash - kc), kc, p);
}

static int kc_data(const cJSON *o, const char *key, char **dst, size_t *len,
		   const char *path, char *err, size_t errlen)
{
	const char *v = br_jstr(o, key);

	if (!v)
		return 0;
	free(*dst);
	*dst = br_base64_decode(v, len);
	if (!*dst)
		return ERR("%s: %s: not base64", path, key);
	return 0;
}

int br_config_load_kubeconfig(br_config *c, const char *path,
			      const char *context, char *err, size_t errlen)
{
	size_t len;
	char *text;
	cJSON *root;
	const cJSON *ctx, *cl, *us;
	const char *cname, *v;
	int r = -1;

	text = br_read_file(path, BR_MAX_FILE, &len, err, errlen);
	if (!text)
		return -1;
	root = br_config_yaml(text, len, path, err, errlen);
	free(text);
	if (!root)
		return -1;
	cname = context ? context : br_jstr(root, "current-context");
	if (!cname || !*cname) {
		ERR("%s: no current-context (pass --context)", path);
		goto out;
	}
	ctx = named(br_jget(root, "contexts"), cname, "context");
	if (!ctx) {
		ERR("%s: no context named '%.100s'", path, cname);
		goto out;
	}
	v = br_jstr(ctx, "cluster");
	cl = v ? named(br_jget(root, "clusters"), v, "cluster") : NULL;
	if (!cl) {
		ERR("%s: context '%.100s': no cluster '%.100s'", path, cname,
		    v ? v : "");
		goto out;
	}
	v = br_jstr(ctx, "user");
	us = v ? named(br_jget(root, "users"), v, "user") : NULL;
	if (v && !us) {
		ERR("%s: context '%.100s': no user '%.100s'", path, cname, v);
		goto out;
	}
	clear_conn(c);
	v = br_jstr(cl, "server");
	if (!v || !*v) {
		ERR("%s: cluster of context '%.100s' has no server", path,
		    cname);
		goto out;
	}
	set_str(&c->server, v);
	if ((v = br_jstr(cl, "certificate-authority")) != NULL) {
		free(c->ca_file);
		c->ca_file = relpath(path, v);
	}
	if (kc_data(cl, "certificate-authority-data", &c->ca_data,
		    &c->ca_data_len, path, err, errlen))
		goto out;
	if (cJSON_IsTrue(br_jget(cl, "insecure-skip-tls-verify")))
		c->insecure = true;
	if (us) {
		if ((v = br_jstr(us, "token")) != NULL)
			set_str(&c->token, v);
		if ((v = br_jstr(us, "tokenFile")) != NULL) {
			free(c->token_file);
			c->token_file = relpath(path, v);
		}
		if ((v = br_jstr(us, "client-certificate")) != NULL) {
			free(c->cert_file);
			c->cert_file = relpath(path, v);
		}
		if ((v = br_jstr(us, "client-key")) != NULL) {
			free(c->key_file);
			c->key_file = relpath(path, v);
		}
		if (kc_data(us, "client-certificate-data", &c->cert_data,
			    &c->cert_data_len, path, err, errlen) ||
		    kc_data(us, "client-key-data", &c->key_data,
			    &c->key_data_len, path, err, errlen))
			goto out;
		if (br_jget(us, "exec") || br_jget(us, "auth-provider")) {
			ERR("%s: user of context '%.100s': exec and "
			    "auth-provider credentials are not supported "
			    "(use a token or client certificate)", path,
			    cname);
			goto out;
		}
	}
	if (!c->lease_namespace && (v = br_jstr(ctx, "namespace")) != NULL)
		set_str(&c->lease_namespace, v);
	free(c->conn_source);
	c->conn_source = br_xasprintf("kubeconfig %s context %s", path,
				      cname);
	r = 0;
out:
	cJSON_Delete(root);
	return r;
}

/* ---- in-cluster -------------------------------------------------------- */

int br_config_in_cluster(br_config *c, const char *sa_dir, char *err,
			 size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char *ns, *p;
	size_t len;

	if (!host || !*host || !port || !*port)
		return 1;
	clear_conn(c);
	if (strchr(host, ':'))
		c->server = br_xasprintf("https://[%s]:%s", host, port);
	else
		c->server = br_xasprintf("https://%s:%s", host, port);
	c->token_file = br_xasprintf("%s/token", sa_dir);
	c->ca_file = br_xasprintf("%s/ca.crt", sa_dir);
	if (access(c->token_file, R_OK) != 0)
		return ERR("in-cluster: cannot read %s", c->token_file);
	p = br_xasprintf("%s/namespace", sa_dir);
	ns = br_read_file(p, 256, &len, err, errlen);
	free(p);
	if (ns) {
		while (len && (ns[len - 1] == '\n' || ns[len - 1] == ' '))
			ns[--len] = '\0';
		if (!c->lease_namespace && *ns)
			c->lease_namespace = br_xstrdup(ns);
		free(ns);
	}
	err[0] = '\0';
	free(c->conn_source);
	c->conn_source = br_xstrdup("in-cluster service account");
	return 0;
}

/* ---- command line ------------------------------------------------------ */

static void usage(FILE *f)
{
	fputs("usage: topogang-bridge [options]\n"
"Connection (first match wins):\n"
"  --server URL [--token-file F] [--ca-file F] [--insecure]\n"
"    (a token over http:// is refused without --insecure)\n"
"  --kubeconfig FILE [--context NAME]\n"
"  in-cluster service account (KUBERNETES_SERVICE_HOST/PORT), $KUBECONFIG\n"
"Scheduling:\n"
"  --config FILE          YAML settings (see config/bridge.yaml)\n"
"  --scheduler-name NAME  pods with this spec.schedulerName (topogang)\n"
"  --levels K1,K2,...     topology levels, farthest first\n"
"  --preemption evict|delete\n"
"  --kube-api-qps Q --kube-api-burst B  the client-side rate limit (50, 100;\n"
"                         qps 0 = none); clientConnection in the file\n"
"Leader election:\n"
"  --leader-elect=true|false  --lease-name N  --lease-namespace NS\n"
"  --lease-duration S  --renew-deadline S  --retry-period S\n"
"  --identity ID\n"
"Other:\n"
"  --listen HOST:PORT     /healthz /readyz /metrics (\"\" = off)\n"
"  --ui[=true|false]      the live fabric picture at /ui, its JSON at\n"
"                         /ui/state, on the --listen port (false)\n"
"  --log-level debug|info|warn|error\n"
"  --help  --version\n"
"Node labeller (instead of scheduling; k8s_bridge/README.md):\n"
"  --label-nodes [--node-name N (else $NODE_NAME)] [--once]\n"
"  [--xml FILE] [--nvidia-smi FILE] [--topology-conf FILE]\n"
"  [--interval S (300)] [--drift report|correct]\n", f);
}

/* "--name=value" or "--name value"; NULL when argv[i] is not --name. */
static const char *opt(int argc, char **argv, int *i, const char *name,
		       bool *missing)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	*missing = false;
	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

/*
 * Whether argv[*i] is --name (value in *v); a missing value sets *bad,
 * fills \p err and still returns true (the caller then fails).
 */
static bool flag(int argc, char **argv, int *i, const char *name,
		 const char **v, bool *bad, char *err, size_t errlen)
{
	bool missing;

	*v = opt(argc, argv, i, name, &missing);
	if (missing) {
		snprintf(err, errlen, "%s: needs a value", name);
		*bad = true;
		return true;
	}
	return *v != NULL;
}

static int parse_secs(const char *flag, const char *v, double *out,
		      char *err, size_t errlen)
{
	double d;

	if (!tg_f64_parse(v, 0, 3600, &d) || d <= 0)
		return ERR("%s: '%.40s' is not a number of seconds (0..3600)",
			   flag, v);
	*out = d;
	return 0;
}

static int split_levels(br_config *c, const char *v, char *err,
			size_t errlen)
{
	char *copy = br_xstrdup(v), *p = copy, *comma;
	const char *keys[BR_MAX_LEVELS + 1];
	unsigned n = 0;
	int r;

	for (;;) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (n == BR_MAX_LEVELS + 1)
			break;
		keys[n++] = p;
		if (!comma)
			break;
		p = comma + 1;
	}
	r = set_levels(c, keys, n, err, errlen);
	free(copy);
	return r;
}

static char *default_identity(void)
{
	char host[256] = "";
	unsigned r;
	FILE *f;

	if (gethostname(host, sizeof(host) - 1) != 0 || !*host)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	r = (unsigned)br_wall_us() ^ ((unsigned)getpid() << 16);
	f = fopen("/dev/urandom", "rb");
	if (f) {
		if (fread(&r, sizeof(r), 1, f) != 1)
			r ^= 0x5bd1e995u;
		fclose(f);
	}
	return br_xasprintf("%.200s_%08x", host, r);
}

/* What the command line says about the connection. */
typedef struct conn_args {
	const char *server, *token_file, *ca_file;
	bool insecure;
} conn_args;

static int parse_qps(const char *flag, const char *v, double lo,
		     double *out, char *err, size_t errlen)
{
	double d;

	if (!tg_f64_parse(v, lo, 1e6, &d))
		return ERR("%s: '%.40s' is not a number (%g..1e6)", flag, v,
			   lo);
	*out = d;
	return 0;
}

/* Connection and scheduling flags: 0, or -1 (not one of them: err "";
 * a bad value: err filled). */
static int flag_conn(br_config *c, int argc, char **argv, int *i,
		     conn_args *ca, char *err, size_t errlen)
{
	const char *v = NULL;
	bool bad = false;

#define FLAG(name) (flag(argc, argv, i, name, &v, &bad, err, errlen))
	if (FLAG("--config")) {
		/* read in the first pass */
	} else if (FLAG("--server")) {
		ca->server = v;
	} else if (FLAG("--token-file")) {
		ca->token_file = v;
	} else if (FLAG("--ca-file")) {
		ca->ca_file = v;
	} else if (FLAG("--kubeconfig")) {
		set_str(&c->kubeconfig, v);
	} else if (FLAG("--context")) {
		set_str(&c->context, v);
	} else if (FLAG("--scheduler-name")) {
		if (v && !*v)
			return ERR("--scheduler-name: empty");
		set_str(&c->scheduler_name, v);
	} else if (FLAG("--levels")) {
		if (v && split_levels(c, v, err, errlen))
			return -1;
	} else if (FLAG("--preemption")) {
		if (v && strcmp(v, "evict") != 0 && strcmp(v, "delete") != 0)
			return ERR("--preemption: evict or delete, not '%.40s'",
				   v);
		c->preempt_delete = v && strcmp(v, "delete") == 0;
	} else if (FLAG("--kube-api-qps")) {
		if (v && parse_qps("--kube-api-qps", v, 0, &c->qps, err,
				   errlen))
			return -1;
	} else if (FLAG("--kube-api-burst")) {
		if (v && parse_qps("--kube-api-burst", v, 1, &c->burst, err,
				   errlen))
			return -1;
	} else {
		err[0] = '\0';
		return -1;
	}
#undef FLAG
	return v ? 0 : -1;	/* no value: err says so */
}

/* Leader election, endpoint and log flags: as flag_conn(). */
static int flag_other(br_config *c, int argc, char **argv, int *i,
		      char *err, size_t errlen)
{
	const char *v = NULL;
	bool bad = false;

#define FLAG(name) (flag(argc, argv, i, name, &v, &bad, err, errlen))
	if (FLAG("--leader-elect")) {
		if (v && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			return ERR("--leader-elect: true or false");
		c->leader_elect = v && strcmp(v, "true") == 0;
	} else if (FLAG("--lease-name")) {
		set_str(&c->lease_name, v);
	} else if (FLAG("--lease-namespace")) {
		set_str(&c->lease_namespace, v);
	} else if (FLAG("--identity")) {
		set_str(&c->identity, v);
	} else if (FLAG("--lease-duration")) {
		if (v && parse_secs("--lease-duration", v,
				    &c->lease_duration_s, err, errlen))
			return -1;
	} else if (FLAG("--renew-deadline")) {
		if (v && parse_secs("--renew-deadline", v,
				    &c->renew_deadline_s, err, errlen))
			return -1;
	} else if (FLAG("--retry-period")) {
		if (v && parse_secs("--retry-period", v, &c->retry_period_s,
				    err, errlen))
			return -1;
	} else if (strcmp(argv[*i], "--ui") == 0) {
		c->ui = true;
		return 0;
	} else if (FLAG("--ui")) {
		if (v && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			return ERR("--ui: true or false");
		c->ui = v && strcmp(v, "true") == 0;
	} else if (FLAG("--listen")) {
		set_str(&c->listen, v);
	} else if (FLAG("--log-level")) {
		int l = v ? br_log_parse_level(v) : 0;

		if (l < 0)
			return ERR("--log-level: debug, info, warn or error");
		c->log_level = l;
	} else {
		err[0] = '\0';
		return -1;
	}
#undef FLAG
	return v ? 0 : -1;
}

/* The API server: --server, --kubeconfig, in-cluster, $KUBECONFIG. */
static int find_server(br_config *c, const conn_args *ca, char *err,
		       size_t errlen)
{
	if (ca->server) {
		clear_conn(c);
		if (strncmp(ca->server, "http://", 7) != 0 &&
		    strncmp(ca->server, "https://", 8) != 0)
			return ERR("--server: '%.80s' is not an http:// or "
				   "https:// URL", ca->server);
		set_str(&c->server, ca->server);
		set_str(&c->token_file, ca->token_file);
		set_str(&c->ca_file, ca->ca_file);
		c->insecure = ca->insecure;
		free(c->conn_source);
		c->conn_source = br_xstrdup("--server");
	} else if (ca->token_file || ca->ca_file || ca->insecure) {
		return ERR("--token-file, --ca-file and --insecure go with "
			   "--server");
	} else if (c->kubeconfig) {
		if (br_config_load_kubeconfig(c, c->kubeconfig, c->context,
					      err, errlen))
			return -1;
	} else {
		int r = br_config_in_cluster(c, BR_SA_DIR, err, errlen);
		const char *kc = getenv("KUBECONFIG");

		if (r < 0)
			return -1;
		if (r == 1 && kc && *kc) {
			if (br_config_load_kubeconfig(c, kc, c->context, err,
						      errlen))
				return -1;
		} else if (r == 1) {
			return ERR("no API server: pass --server URL or "
				   "--kubeconfig FILE, or run in a cluster");
		}
	}
	while (c->server[0] && c->server[strlen(c->server) - 1] == '/')
		c->server[strlen(c->server) - 1] = '\0';
	/* a bearer token (or a client key) in clear text: only when told */
	if (strncmp(c->server, "http://", 7) == 0 && !c->insecure &&
	    (c->token || c->token_file || c->cert_file || c->cert_data))
		return ERR("%s: the credentials (%s) would go in clear text "
			   "over http://; use https://, or allow it with "
			   "--insecure (kubeconfig: insecure-skip-tls-verify: "
			   "true)", c->server,
			   c->token || c->token_file ? "a bearer token" :
			   "a client certificate");
	return 0;
}

int br_config_from_args(br_config *c, int argc, char **argv, char *err,
			size_t errlen)
{
	conn_args ca = { NULL, NULL, NULL, false };
	bool missing;
	int i;

	/* first pass: --config, so that flags override the file */
	for (i = 1; i < argc; i++) {
		const char *v = opt(argc, argv, &i, "--config", &missing);

		if (missing)
			return ERR("--config: needs a file");
		if (v) {
			set_str(&c->config_file, v);
			if (br_config_load_file(c, v, err, errlen))
				return -1;
		}
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 1;
		}
		if (strcmp(a, "--version") == 0) {
			printf("topogang-bridge %s\n", PACKAGE_VERSION);
			return 1;
		}
		if (strcmp(a, "--insecure") == 0) {
			ca.insecure = true;
			continue;
		}
		if (strcmp(a, "--no-leader-elect") == 0) {
			c->leader_elect = false;
			continue;
		}
		if (flag_conn(c, argc, argv, &i, &ca, err, errlen) == 0)
			continue;
		if (err[0])
			return -1;
		if (flag_other(c, argc, argv, &i, err, errlen) == 0)
			continue;
		if (err[0])
			return -1;
		return ERR("unknown option '%.80s' (try --help)", a);
	}
	if (c->renew_deadline_s >= c->lease_duration_s)
		return ERR("the renew deadline (%gs) must be shorter than the "
			   "lease duration (%gs)", c->renew_deadline_s,
			   c->lease_duration_s);
	if (c->retry_period_s >= c->renew_deadline_s)
		return ERR("the retry period (%gs) must be shorter than the "
			   "renew deadline (%gs)", c->retry_period_s,
			   c->renew_deadline_s);
	if (c->ui && !*c->listen)
		return ERR("--ui (server.ui) needs the HTTP endpoint: "
			   "--listen HOST:PORT is \"\"");
	if (!c->identity)
		c->identity = default_identity();
	if (find_server(c, &ca, err, errlen))
		return -1;
	if (!c->lease_namespace)
		c->lease_namespace = br_xstrdup("kube-system");
	return 0;
}
