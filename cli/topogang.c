/*
 * cli/topogang.c - "where would this gang go, and why".
 *
 *   topogang place --cluster FILE [--levels K1,K2,...]
 *                  [--scheduler-name NAME] [--output json|text]
 *   topogang place --topology-conf FILE --node RES --gang SPEC
 *                  [--podset SPEC]... [--gather LAYER:must|prefer,...]
 *                  [--slice LAYER:N] [--spread LAYER[:SKEW][:hard|:soft]]
 *                  [--busy HOSTLIST] [--running HOSTLIST[:SPEC]]...
 *                  [--output json|text]
 *   topogang check --cluster FILE | --topology-conf FILE
 *   topogang check --topology-conf FILE --cluster FILE [--levels K,...]
 *   topogang draw  --cluster FILE | --topology-conf FILE [--busy ...]
 *                  [--svg FILE] [--html FILE] [--title TEXT]
 *   topogang draw  --slurm --topology-conf FILE --sinfo FILE
 *                  [--squeue FILE] [--svg FILE] [--html FILE]
 *   (place takes --svg FILE, --html FILE too: the picture of its decisions)
 *   topogang bench [--output json] ...
 *
 * Exit status: 0 when every gang was placed (place) or no problem was
 * found (check); 1 when some gang is unschedulable (an object of a gang
 * that cannot be read makes that gang unschedulable: every other gang is
 * still decided), check found an error, or (given both files)
 * topology.conf and the cluster's labels disagree; 2 for bad usage or a
 * file that cannot be read or parsed.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

#define MAX_RUNNING 256		/* --running options */

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("topogang: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * The value of option \p name at argv[*i]: "--name=v", or "--name v"
 * (then *i moves to v).  *matched says whether argv[*i] is the option;
 * matched with NULL: the value is missing.
 */
static const char *opt_value(int argc, char **argv, int *i, const char *name,
			     bool *matched)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	*matched = false;
	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=') {
		*matched = true;
		return a + n + 1;
	}
	if (a[n])
		return NULL;
	*matched = true;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/* Whether argv[*i] is \p name (NULL: never) taking \p takes; a value
 * goes to *v (NULL: missing), "--name=v" only when \p eq. */
static bool opt_is(int argc, char **argv, int *i, const char *name,
		   cli_takes takes, bool eq, const char **v)
{
	bool m;

	if (!name || ((takes == CLI_FLAG || !eq) && strcmp(argv[*i], name)))
		return false;
	if (takes == CLI_FLAG)
		return true;
	*v = opt_value(argc, argv, i, name, &m);
	return m;
}

int cli_opts_parse(int argc, char **argv, const cli_opts *o)
{
	int i, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		const cli_opt *op;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->usage(stdout);
			return 1;
		}
		for (op = o->opts; op->name; op++)
			if (opt_is(argc, argv, &i, op->name, op->takes,
				   !o->classic, &v) ||
			    opt_is(argc, argv, &i, op->alias, op->takes,
				   !o->classic, &v))
				break;
		if (!op->name) {
			if (o->classic)
				cli_err("%s: unknown option '%s'", o->cmd, a);
			else
				cli_err("%s: unknown option '%s' (see topogang "
					"%s --help)", o->cmd, a, o->cmd);
			return 2;
		}
		if (op->takes != CLI_FLAG && !v) {
			cli_err("%s: %s%s needs %s", o->cmd,
				o->classic ? "option " : "", a,
				op->takes == CLI_FILE ? "a file" : "a value");
			return 2;
		}
		if ((rc = o->set(o, (unsigned)(op - o->opts), v)))
			return rc;
	}
	return 0;
}

void cli_opt_store(void *opts, const cli_opt *op, const char *v)
{
	*(const char **)((char *)opts + op->off) = v;
}

static void usage(FILE *f)
{
	fputs("usage: topogang place --cluster FILE [--levels K1,K2,...] "
	      "[--scheduler-name NAME]\n"
	      "                      [--output json|text]\n"
	      "       topogang place --topology-conf FILE --node RES "
	      "--gang SPEC\n"
	      "                      [--podset SPEC]... "
	      "[--gather LAYER:must|prefer,...] [--slice LAYER:N]\n"
	      "                      [--spread LAYER[:SKEW][:hard|:soft]] "
	      "[--busy HOSTLIST]\n"
	      "                      [--running HOSTLIST[:SPEC]]...\n"
	      "                      [--output json|text]\n"
	      "       topogang check --cluster FILE | --topology-conf FILE\n"
	      "       topogang check --topology-conf FILE --cluster FILE "
	      "[--levels K1,...]\n"
	      "       topogang draw  --cluster FILE | --topology-conf FILE "
	      "[--node RES --busy ...]\n"
	      "                      [--svg FILE] [--html FILE] "
	      "[--title TEXT]\n"
	      "       topogang draw  --slurm --topology-conf FILE "
	      "--sinfo FILE [--squeue FILE]\n"
	      "                      [--svg FILE] [--html FILE]\n"
	      "       (place also takes --svg FILE and --html FILE: the "
	      "picture of its decisions)\n"
	      "       topogang bench [--output text|json] [--quick] "
	      "[--preempt] ...\n"
	      "       topogang sim --trace CSV --fabric SPEC|FILE "
	      "[--policy P,...] ...\n"
	      "       topogang discover node|fabric ... ; topogang export "
	      "...\n"
	      "\n"
	      "FILE is `kubectl get nodes,pods,podgroups,... -o json|yaml`"
	      " output.\n"
	      "RES is e.g. cpu=64,memory=512Gi,nvidia.com/gpu=8 (every "
	      "node of the topology.conf).\n"
	      "SPEC is e.g. name=train,members=4,nvidia.com/gpu=8,cpu=8,"
	      "priority=10.\n", f);
}

/* ---- options ---- */

typedef struct opts {
	const char *cluster;
	const char *topoconf;
	const char *levels;
	const char *scheduler;
	const char *output;
	const char *node_res;
	const char *gang;
	const char *gather;
	const char *slice;
	const char *spread;
	const char *busy;
	const char *svg;	/* pictures (draw, place) */
	const char *html;
	const char *title;
	const char *scontrol;	/* draw --slurm: --sinfo (--scontrol) */
	const char *squeue;
	bool slurm;
	const char *running[MAX_RUNNING];	/* repeatable */
	unsigned nrunning;
	const char *podset[TG_MAX_PODSETS];	/* repeatable */
	unsigned npodset;
} opts;

static const cli_opt place_opts[] = {
	CLI_OPT_FIELD("--cluster", opts, cluster),
	CLI_OPT_FIELD("--topology-conf", opts, topoconf),
	CLI_OPT_FIELD("--levels", opts, levels),
	CLI_OPT_FIELD("--scheduler-name", opts, scheduler),
	{ "--output", "-o", CLI_VALUE, offsetof(opts, output) },
	CLI_OPT_FIELD("--node", opts, node_res),
	CLI_OPT_FIELD("--gang", opts, gang),
	CLI_OPT_FIELD("--gather", opts, gather),
	CLI_OPT_FIELD("--slice", opts, slice),
	CLI_OPT_FIELD("--spread", opts, spread),
	CLI_OPT_FIELD("--busy", opts, busy),
	CLI_OPT_FIELD("--svg", opts, svg),
	CLI_OPT_FIELD("--html", opts, html),
	CLI_OPT_FIELD("--title", opts, title),
	{ "--sinfo", "--scontrol", CLI_VALUE, offsetof(opts, scontrol) },
	CLI_OPT_FIELD("--squeue", opts, squeue),
	/* set by place_set() itself */
	CLI_OPT_FLAG("--slurm"),
	CLI_OPT_VALUE("--running"),	/* repeatable */
	CLI_OPT_VALUE("--podset"),	/* repeatable */
	CLI_OPT_END
};

static int place_set(const cli_opts *co, unsigned k, const char *v)
{
	opts *o = co->arg;
	const char *name = place_opts[k].name;
	bool run = !strcmp(name, "--running");
	unsigned *n, max;

	if (!strcmp(name, "--slurm")) {
		o->slurm = true;
		return 0;
	}
	if (!run && strcmp(name, "--podset")) {
		cli_opt_store(o, &place_opts[k], v);
		return 0;
	}
	n = run ? &o->nrunning : &o->npodset;
	max = run ? MAX_RUNNING : TG_MAX_PODSETS - 1;
	if (*n == max) {
		cli_err("%s: more than %u %s options", co->cmd, max, name);
		return 2;
	}
	(run ? o->running : o->podset)[(*n)++] = v;
	return 0;
}

/* 0 ok, 1 help printed, 2 bad usage (reported). */
static int parse_opts(int argc, char **argv, opts *o)
{
	const cli_opts co = { argv[0], place_opts, usage, place_set, o, true };
	int rc;

	memset(o, 0, sizeof(*o));
	o->output = "text";
	if ((rc = cli_opts_parse(argc, argv, &co)))
		return rc;
	if (strcmp(o->output, "text") && strcmp(o->output, "json")) {
		cli_err("--output must be text or json, not '%s'", o->output);
		return 2;
	}
	if (!o->cluster == !o->topoconf) {
		cli_err("%s: give exactly one of --cluster and "
			"--topology-conf", argv[0]);
		return 2;
	}
	return 0;
}

/* Splits "a,b,c" into at most \p max pieces in \p out (modifies s). */
static unsigned split(char *s, char sep, char **out, unsigned max)
{
	unsigned n = 0;

	while (s && *s && n < max) {
		char *c = strchr(s, sep);

		if (c)
			*c = '\0';
		if (*s)
			out[n++] = s;
		s = c ? c + 1 : NULL;
	}
	return s && *s ? max + 1 : n;
}

/* Keys of a --gang, --podset or --running SPEC that are not resources;
 * a NULL pointer means the key is not accepted there. */
typedef struct spec_keys {
	const char **name;
	unsigned *members;
	int64_t *prio;
	unsigned *per_node;	/* max-per-node=N */
	bool *preemptible;	/* preemptible=yes|no */
} spec_keys;

/* "cpu=8,memory=32Gi,nvidia.com/gpu=8" into a shape; the other keys of
 * \p kx (NULL: none) are returned through its pointers. */
static int parse_res(tg_topology *t, const char *what, const char *spec,
		     tg_shape *sh, const spec_keys *kx)
{
	const char **name = kx ? kx->name : NULL;
	unsigned *members = kx ? kx->members : NULL;
	int64_t *prio = kx ? kx->prio : NULL;
	char *dup = strdup(spec), *kv[TG_MAX_RESOURCES + 8];
	unsigned n, i;
	int rc = -1;

	memset(sh, 0, sizeof(*sh));
	if (!dup)
		return -1;
	n = split(dup, ',', kv, TG_MAX_RESOURCES + 8);
	if (n > TG_MAX_RESOURCES + 8) {
		cli_err("%s '%s': too many entries", what, spec);
		goto out;
	}
	for (i = 0; i < n; i++) {
		char *eq = strchr(kv[i], '=');
		unsigned id;
		int64_t v;
		bool milli;

		if (!eq || eq == kv[i] || !eq[1]) {
			cli_err("%s '%s': expected key=value, got '%s'", what,
				spec, kv[i]);
			goto out;
		}
		*eq++ = '\0';
		if (name && !strcmp(kv[i], "name")) {
			*name = spec + (eq - dup);
			continue;
		}
		if (members && !strcmp(kv[i], "members")) {
			char *end;
			long m = strtol(eq, &end, 10);

			if (*end || m < 1 || m > (long)TG_MAX_MEMBERS) {
				cli_err("%s '%s': bad member count '%s'",
					what, spec, eq);
				goto out;
			}
			*members = (unsigned)m;
			continue;
		}
		if (kx && kx->per_node && !strcmp(kv[i], "max-per-node")) {
			char *end;
			long m = strtol(eq, &end, 10);

			if (*end || m < 0 || m > (long)TG_MAX_MEMBERS) {
				cli_err("%s '%s': bad max-per-node '%s'",
					what, spec, eq);
				goto out;
			}
			*kx->per_node = (unsigned)m;
			continue;
		}
		if (kx && kx->preemptible && !strcmp(kv[i], "preemptible")) {
			if (strcmp(eq, "yes") && strcmp(eq, "no")) {
				cli_err("%s '%s': preemptible must be yes or "
					"no, not '%s'", what, spec, eq);
				goto out;
			}
			*kx->preemptible = !strcmp(eq, "yes");
			continue;
		}
		if (prio && !strcmp(kv[i], "priority")) {
			char *end;
			long long p = strtoll(eq, &end, 10);

			if (*end || !*eq) {
				cli_err("%s '%s': bad priority '%s'", what,
					spec, eq);
				goto out;
			}
			*prio = p;
			continue;
		}
		if (tg_topology_resource(t, kv[i], &id)) {
			cli_err("%s '%s': bad resource '%s'", what, spec,
				kv[i]);
			goto out;
		}
		milli = id == TG_RES_CPU;
		if (tg_k8s_quantity(eq, milli, &v)) {
			cli_err("%s '%s': bad quantity '%s' for %s", what,
				spec, eq, kv[i]);
			goto out;
		}
		sh->v[id] = v;
	}
	rc = 0;
out:
	free(dup);
	return rc;
}

/* ---- loading ---- */

typedef struct input {
	tg_k8s *k8s;
	tg_topology *t;
	tg_gang *own;		/* the --gang of topology.conf mode */
	char **warn;
	unsigned nwarn;
} input;

static void input_free(input *in)
{
	unsigned i;

	tg_topology_destroy(in->t);
	tg_k8s_destroy(in->k8s);
	tg_gang_destroy(in->own);
	for (i = 0; i < in->nwarn; i++)
		free(in->warn[i]);
	free(in->warn);
}

static unsigned input_ngangs(const input *in)
{
	if (in->k8s)
		return tg_k8s_ngangs(in->k8s);
	return in->own ? 1 : 0;
}

static tg_gang *input_gang(const input *in, unsigned i)
{
	return in->k8s ? tg_k8s_gang(in->k8s, i) : in->own;
}

static int load_k8s(const opts *o, input *in)
{
	tg_errinfo ei = { "" };
	unsigned i;

	in->k8s = tg_k8s_create();
	if (!in->k8s) {
		cli_err("out of memory");
		return 2;
	}
	if (o->levels) {
		char *dup = strdup(o->levels), *keys[TG_MAX_LAYERS + 1];
		unsigned n;

		if (!dup)
			return 2;
		n = split(dup, ',', keys, TG_MAX_LAYERS);
		if (n == 0 || n > TG_MAX_LAYERS ||
		    tg_k8s_set_levels(in->k8s, (const char *const *)keys,
				      n)) {
			cli_err("--levels '%s': expected 1 to %u label keys",
				o->levels, TG_MAX_LAYERS);
			free(dup);
			return 2;
		}
		free(dup);
	}
	if (o->scheduler && tg_k8s_set_scheduler_name(in->k8s, o->scheduler)) {
		cli_err("--scheduler-name '%s': invalid", o->scheduler);
		return 2;
	}
	if (tg_k8s_add_file(in->k8s, o->cluster, &ei) ||
	    tg_k8s_build(in->k8s, &in->t, &ei)) {
		cli_err("%s", ei.msg[0] ? ei.msg : "cannot load the cluster");
		return 2;
	}
	in->nwarn = tg_k8s_nwarnings(in->k8s);
	in->warn = calloc(in->nwarn + 1, sizeof(char *));
	if (!in->warn)
		return 2;
	for (i = 0; i < in->nwarn; i++)
		in->warn[i] = strdup(tg_k8s_warning(in->k8s, i));
	return 0;
}

/*
 * --running HOSTLIST[:SPEC]: one running gang with an allocation on every
 * node of HOSTLIST; SPEC: name=NAME, priority=N, preemptible=yes|no and
 * the resources of each allocation (default the whole node, \p node).
 * GPU indices: the lowest ones no earlier allocation holds.
 */
static int add_running(tg_topology *t, const opts *o, const tg_shape *node,
		       unsigned k)
{
	const char *arg = o->running[k], *colon = strchr(arg, ':');
	const char *gname = NULL;
	char *hl, gang[TG_MAX_NAME + 1], pod[2 * TG_MAX_NAME + 2], **names;
	tg_errinfo ei = { "" };
	tg_shape sh = *node;
	int64_t prio = 0;
	bool pre = true;
	unsigned nn = 0, i, r;
	int rc = -1;

	hl = strndup(arg, colon ? (size_t)(colon - arg) : strlen(arg));
	if (!hl)
		return -1;
	if (colon) {
		spec_keys kx = { &gname, NULL, &prio, NULL, &pre };
		bool any = false;

		if (parse_res(t, "--running", colon + 1, &sh, &kx)) {
			free(hl);
			return -1;
		}
		for (r = 0; r < TG_MAX_RESOURCES; r++)
			any = any || sh.v[r];
		if (!any)
			sh = *node;
	}
	if (gname) {
		size_t len = strcspn(gname, ",");

		snprintf(gang, sizeof(gang), "%.*s",
			 (int)(len > TG_MAX_NAME ? TG_MAX_NAME : len), gname);
	} else {
		snprintf(gang, sizeof(gang), "running-%u", k + 1);
	}
	if (tg_hostlist_expand(hl, &names, &nn, &ei)) {
		cli_err("--running '%s': %s", arg, ei.msg);
		free(hl);
		return -1;
	}
	for (i = 0; i < nn; i++) {
		tg_node_id id;
		tg_alloc_spec a;
		uint64_t fr;
		int64_t want = sh.v[TG_RES_GPU];
		unsigned g;

		if (tg_topology_node_find(t, names[i], &id)) {
			cli_err("--running '%s': no node '%s' in %s", arg,
				names[i], o->topoconf);
			goto out;
		}
		memset(&a, 0, sizeof(a));
		fr = tg_topology_node_free_gpus(t, id);
		for (g = 0; g < 64 && want > 0; g++)
			if (fr & (UINT64_C(1) << g)) {
				a.gpus |= UINT64_C(1) << g;
				want--;
			}
		snprintf(pod, sizeof(pod), "%s/%s", gang, names[i]);
		a.pod = pod;
		a.gang = gang;
		a.node = id;
		a.shape = &sh;
		a.priority = prio;
		a.preemptible = pre;
		if (tg_topology_add_alloc(t, &a)) {
			cli_err("--running '%s': cannot add %s (twice?)", arg,
				pod);
			goto out;
		}
	}
	rc = 0;
out:
	tg_hostlist_free(names, nn);
	free(hl);
	return rc;
}

/* The topology of --topology-conf, every node given --node's resources. */
static int topoconf_topology(const opts *o, input *in, tg_shape *node)
{
	tg_errinfo ei = { "" };
	unsigned n, i;

	in->t = tg_topology_create();
	if (!in->t)
		return 2;
	if (tg_topoconf_load_file(in->t, o->topoconf, &ei)) {
		cli_err("%s", ei.msg);
		return 2;
	}
	if (!o->node_res) {
		cli_err("--topology-conf needs --node RES (the resources of "
			"every node), e.g. --node cpu=64,nvidia.com/gpu=8");
		return 2;
	}
	if (parse_res(in->t, "--node", o->node_res, node, NULL))
		return 2;
	n = tg_topology_nnodes(in->t);
	for (i = 0; i < n; i++) {
		unsigned r;

		for (r = 0; r < tg_topology_nresources(in->t); r++)
			if (node->v[r] &&
			    tg_topology_node_set_resource(in->t, i, r,
							  node->v[r])) {
				cli_err("--node: bad amount for %s",
					tg_topology_resource_name(in->t, r));
				return 2;
			}
	}
	if (tg_topology_build(in->t, &ei)) {
		cli_err("%s: %s", o->topoconf, ei.msg);
		return 2;
	}
	for (i = 0; i < tg_topology_nwarnings(in->t); i++) {
		char **w = realloc(in->warn, (in->nwarn + 1) * sizeof(char *));

		if (!w)
			return 2;
		in->warn = w;
		in->warn[in->nwarn++] = strdup(tg_topology_warning(in->t, i));
	}
	return 0;
}

/* --busy HOSTLIST: each node taken whole by a preemptible pod. */
static int add_busy(const opts *o, input *in, const tg_shape *node)
{
	tg_errinfo ei = { "" };
	char **names;
	unsigned nn, i;

	if (tg_hostlist_expand(o->busy, &names, &nn, &ei)) {
		cli_err("--busy: %s", ei.msg);
		return 2;
	}
	for (i = 0; i < nn; i++) {
		tg_node_id id;
		tg_alloc_spec a;
		char pod[300];

		if (tg_topology_node_find(in->t, names[i], &id)) {
			cli_err("--busy: no node '%s' in %s", names[i],
				o->topoconf);
			tg_hostlist_free(names, nn);
			return 2;
		}
		memset(&a, 0, sizeof(a));
		snprintf(pod, sizeof(pod), "busy/%s", names[i]);
		a.pod = pod;
		a.node = id;
		a.shape = node;
		a.preemptible = true;
		if (tg_topology_add_alloc(in->t, &a)) {
			tg_hostlist_free(names, nn);
			return 2;
		}
	}
	tg_hostlist_free(names, nn);
	return 0;
}

/* The gang of --gang and its further pod sets (--podset). */
static int topoconf_gang(const opts *o, input *in)
{
	tg_shape gs;
	unsigned i, members = 1, ps, per_node = 0;
	const char *gname = NULL;
	int64_t prio = 0;
	spec_keys kx = { &gname, &members, &prio, &per_node, NULL };
	char nm[TG_MAX_NAME + 1];
	size_t len = 0;

	if (parse_res(in->t, "--gang", o->gang, &gs, &kx))
		return 2;
	if (gname) {
		while (gname[len] && gname[len] != ',' && len < TG_MAX_NAME)
			len++;
		memcpy(nm, gname, len);
	}
	nm[len] = '\0';
	in->own = tg_gang_create(len ? nm : "gang");
	if (!in->own ||
	    tg_gang_add_podset(in->own, "task", &gs, members, &ps) ||
	    (per_node && tg_gang_podset_set_max_per_node(in->own, ps,
							  per_node)))
		return 2;
	for (i = 0; i < o->npodset; i++) {
		/* more pod sets of the same gang: "task-2", "task-3", ... */
		spec_keys kp = { NULL, &members, NULL, &per_node, NULL };
		char psname[32];

		members = 1;
		per_node = 0;
		if (parse_res(in->t, "--podset", o->podset[i], &gs, &kp))
			return 2;
		snprintf(psname, sizeof(psname), "task-%u", i + 2);
		if (tg_gang_add_podset(in->own, psname, &gs, members, &ps) ||
		    (per_node &&
		     tg_gang_podset_set_max_per_node(in->own, ps, per_node))) {
			cli_err("--podset '%s': cannot add the pod set",
				o->podset[i]);
			return 2;
		}
	}
	tg_gang_set_priority(in->own, prio);
	return 0;
}

/* --gather, --slice or --spread \p text (the core's request grammar,
 * topogang/request.h) added to the gang. */
static int add_request(tg_gang *g, const char *opt, tg_request_kind kind,
		       const char *text)
{
	tg_errinfo ei = { "" };
	tg_request r;

	if (!text)
		return 0;
	if (tg_request_parse(&r, kind, text, &ei) ||
	    tg_request_apply(&r, g, NULL, NULL, &ei)) {
		cli_err("%s %s", opt, ei.msg);
		return 2;
	}
	return 0;
}

static int load_topoconf(const opts *o, input *in)
{
	tg_shape node;
	unsigned i;

	if (topoconf_topology(o, in, &node))
		return 2;
	if (o->busy && add_busy(o, in, &node))
		return 2;
	for (i = 0; i < o->nrunning; i++)
		if (add_running(in->t, o, &node, i))
			return 2;
	if (!o->gang)
		return 0;
	if (topoconf_gang(o, in) ||
	    add_request(in->own, "--gather", TG_REQUEST_GATHER, o->gather) ||
	    add_request(in->own, "--slice", TG_REQUEST_SLICE, o->slice) ||
	    add_request(in->own, "--spread", TG_REQUEST_SPREAD, o->spread))
		return 2;
	return 0;
}

static int load_input(const opts *o, input *in)
{
	memset(in, 0, sizeof(*in));
	return o->cluster ? load_k8s(o, in) : load_topoconf(o, in);
}

/* ---- output ---- */

static void gpu_list(uint64_t m, char *buf, size_t len)
{
	size_t off = 0;
	unsigned b = 0;

	buf[0] = '\0';
	while (b < 64 && off + 8 < len) {
		unsigned e;

		if (!(m >> b & 1)) {
			b++;
			continue;
		}
		for (e = b; e + 1 < 64 && (m >> (e + 1) & 1); e++)
			;
		off += (size_t)snprintf(buf + off, len - off, "%s%u",
					off ? "," : "", b);
		if (e > b)
			off += (size_t)snprintf(buf + off, len - off, "-%u", e);
		b = e + 1;
	}
}

static void text_decision(const tg_topology *t, const tg_decision *d,
			  bool picture)
{
	unsigned i;
	tg_status st = tg_decision_status(d);

	printf("gang %s: %s", tg_decision_gang(d), tg_status_name(st));
	if (st != TG_STATUS_UNSCHEDULABLE)
		printf(" in %s, est. all-reduce bandwidth %g Gbit/s",
		       tg_decision_domain(d), tg_decision_bandwidth_gbps(d));
	printf("\n");
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);
		char g[200];

		gpu_list(p->gpus, g, sizeof(g));
		printf("  rank %-4u %-32s -> %s%s%s\n", p->rank, p->pod,
		       tg_topology_node_name(t, p->node), g[0] ? "  gpus " : "",
		       g);
	}
	for (i = 0; i < tg_decision_nvictims(d); i++) {
		const tg_victim *v = tg_decision_victim(d, i);

		printf("  victim %s on %s\n", v->pod,
		       tg_topology_node_name(t, v->node));
	}
	printf("  why: %s\n", tg_decision_message(d));
	if (picture && st != TG_STATUS_UNSCHEDULABLE) {
		char *pic = tg_draw(t, d);

		if (pic) {
			printf("\n%s\n", pic);
			tg_free(pic);
		}
	}
}

/*
 * A gang with no decision: one of its objects cannot be read (\p k8s,
 * which lists its pods), it waits for its group object (the same list:
 * tg_k8s_failed_waits()), or the core refuses it.  Written as an
 * unschedulable decision (status "waiting" for one that waits) with
 * \p why: into \p gangs (JSON) when given, else as text.  Returns 2 when
 * out of memory.
 */
static int failed_gang(cJSON *gangs, const char *name, const char *why,
		       const tg_k8s *k8s)
{
	unsigned i, j, n = 0;
	const char *status = tg_status_name(TG_STATUS_UNSCHEDULABLE);
	cJSON *g, *pods;

	for (i = 0; k8s && i < tg_k8s_nfailed(k8s); i++)
		if (!strcmp(tg_k8s_failed(k8s, i, NULL), name))
			break;
	if (k8s && i < tg_k8s_nfailed(k8s)) {
		n = tg_k8s_failed_npods(k8s, i);
		if (tg_k8s_failed_waits(k8s, i))
			status = "waiting";
	}
	if (!gangs) {
		printf("gang %s: %s\n", name, status);
		for (j = 0; j < n; j++)
			printf("  pod %s\n", tg_k8s_failed_pod(k8s, i, j));
		printf("  why: %s\n", why);
		return 0;
	}
	g = cJSON_CreateObject();
	if (!g)
		return 2;
	cJSON_AddItemToArray(gangs, g);
	cJSON_AddStringToObject(g, "name", name);
	cJSON_AddStringToObject(g, "status", status);
	cJSON_AddStringToObject(g, "domain", "");
	cJSON_AddArrayToObject(g, "placements");
	cJSON_AddArrayToObject(g, "victims");
	cJSON_AddNumberToObject(g, "bandwidth_gbps", 0);
	cJSON_AddStringToObject(g, "message", why);
	pods = cJSON_AddArrayToObject(g, "pods");
	for (j = 0; pods && j < n; j++)
		cJSON_AddItemToArray(pods, cJSON_CreateString(
			tg_k8s_failed_pod(k8s, i, j)));
	return cJSON_GetObjectItem(g, "message") && pods ? 0 : 2;
}

/* One `place` run: the input, where results go, what is kept. */
typedef struct placing {
	const opts *o;
	input *in;
	cJSON *gangs;		/* JSON output, else NULL */
	unsigned n;		/* gangs to place */
	unsigned failed;	/* unschedulable or refused */
	const tg_decision **kept;	/* for --svg / --html */
	unsigned nkept;
} placing;

/* Places gang \p i, prints its decision; 0, or 2 on a hard error. */
static int place_one(placing *pl, unsigned i)
{
	tg_gang *g = input_gang(pl->in, i);
	tg_decision *d = NULL;
	tg_errinfo ei = { "" };
	int rc;

	rc = tg_place(pl->in->t, g, &d, &ei);
	if (rc == TG_ENOMEM) {
		cli_err("%s", ei.msg);
		return 2;
	}
	if (rc) {
		/* a gang the core refuses: its decision, not the end */
		pl->failed++;
		rc = failed_gang(pl->gangs, tg_gang_name(g), ei.msg, NULL);
		if (!rc && !pl->gangs && i + 1 < pl->n)
			printf("\n");
		return rc;
	}
	if (tg_decision_status(d) != TG_STATUS_UNSCHEDULABLE &&
	    tg_decision_apply(pl->in->t, g, d)) {
		cli_err("gang %s: cannot apply the decision", tg_gang_name(g));
		tg_decision_free(d);
		return 2;
	}
	if (tg_decision_status(d) == TG_STATUS_UNSCHEDULABLE)
		pl->failed++;
	if (pl->gangs) {
		if (cli_json_decision(pl->gangs, pl->in->t, d)) {
			tg_decision_free(d);
			return 2;
		}
	} else {
		text_decision(pl->in->t, d, pl->n <= 4);
		if (i + 1 < pl->n)
			printf("\n");
	}
	if (pl->kept)
		pl->kept[pl->nkept++] = d;
	else
		tg_decision_free(d);
	return 0;
}

/* --svg / --html: the kept decisions, and the gangs the bridge bound. */
static int place_pictures(placing *pl)
{
	tg_draw_opts dopt;
	cli_bound *b = NULL;
	unsigned i;
	int rc;

	memset(&dopt, 0, sizeof(dopt));
	dopt.title = pl->o->title;
	dopt.decisions = pl->kept;
	dopt.ndecisions = pl->nkept;
	/* and the gangs the bridge bound (their ranks) */
	rc = pl->o->cluster ? cli_bound_load(pl->o->cluster, pl->in->t, &b) :
	     0;
	for (i = 0; i < pl->nkept; i++)
		cli_bound_skip(b, tg_decision_gang(pl->kept[i]));
	dopt.gangs = cli_bound_gangs(b, &dopt.ngangs);
	if (rc || cli_picture_write(pl->in->t, &dopt, pl->o->svg,
				    pl->o->html))
		rc = 2;
	cli_bound_free(b);
	return rc;
}

/* The end: gangs whose objects could not be read (fault isolation), the
 * warnings, and the JSON document. */
static int place_finish(placing *pl, cJSON *root)
{
	const tg_k8s *k8s = pl->in->k8s;
	unsigned i;
	int rc;

	for (i = 0; i < tg_k8s_nfailed(k8s); i++) {
		const char *why = NULL, *name = tg_k8s_failed(k8s, i, &why);

		pl->failed++;
		if (!root && (pl->n || i))
			printf("\n");
		rc = failed_gang(pl->gangs, name, why, k8s);
		if (rc)
			return rc;
	}
	if (root) {
		cJSON *warns = cJSON_AddArrayToObject(root, "warnings");
		char *s;

		for (i = 0; warns && i < pl->in->nwarn; i++)
			cJSON_AddItemToArray(warns, cJSON_CreateString(
							     pl->in->warn[i]));
		s = cJSON_Print(root);
		if (!s)
			return 2;
		printf("%s\n", s);
		cJSON_free(s);
	} else {
		if (!pl->n && !tg_k8s_nfailed(k8s))
			printf("no pending gangs\n");
		for (i = 0; i < pl->in->nwarn; i++)
			printf("warning: %s\n", pl->in->warn[i]);
	}
	return 0;
}

int cli_place(int argc, char **argv)
{
	opts o;
	input in;
	cJSON *root = NULL;
	placing pl;
	unsigned i;
	int rc;

	if ((rc = parse_opts(argc, argv, &o)))
		return rc == 1 ? 0 : rc;
	memset(&pl, 0, sizeof(pl));
	pl.o = &o;
	pl.in = &in;
	if ((rc = load_input(&o, &in)))
		goto out;
	if (o.topoconf && !in.own) {
		cli_err("place --topology-conf needs --gang SPEC");
		rc = 2;
		goto out;
	}
	if (!strcmp(o.output, "json")) {
		root = cJSON_CreateObject();
		pl.gangs = cJSON_AddArrayToObject(root, "gangs");
		if (!pl.gangs) {
			rc = 2;
			goto out;
		}
	}
	pl.n = input_ngangs(&in);
	if ((o.svg || o.html) &&
	    !(pl.kept = calloc(pl.n + 1, sizeof(*pl.kept)))) {
		rc = 2;
		goto out;
	}
	for (i = 0; i < pl.n; i++)
		if ((rc = place_one(&pl, i)))
			goto out;
	if ((pl.kept && (rc = place_pictures(&pl))) ||
	    (rc = place_finish(&pl, root)))
		goto out;
	rc = pl.failed ? 1 : 0;
out:
	for (i = 0; i < pl.nkept; i++)
		tg_decision_free((tg_decision *)pl.kept[i]);
	free(pl.kept);
	cJSON_Delete(root);
	input_free(&in);
	return rc;
}

int cli_check(int argc, char **argv)
{
	opts o;
	input in;
	unsigned i, errors = 0, nw;
	int rc;
	bool tc = false, cl = false;

	/* both sides given: compare them (discover compare) */
	for (i = 1; i < (unsigned)argc; i++)
		if (!strcmp(argv[i], "--topology-conf"))
			tc = true;
		else if (!strcmp(argv[i], "--cluster"))
			cl = true;
	if (tc && cl)
		return cli_compare(argc, argv);
	if ((rc = parse_opts(argc, argv, &o)))
		return rc == 1 ? 0 : rc;
	if ((rc = load_input(&o, &in))) {
		input_free(&in);
		return rc;
	}
	nw = tg_topology_nwarnings(in.t);
	/* label problems are errors: they silently misplace gangs */
	for (i = 0; i < nw; i++) {
		printf("error: %s\n", tg_topology_warning(in.t, i));
		errors++;
	}
	for (i = 0; i < input_ngangs(&in); i++) {
		tg_errinfo ei = { "" };

		if (tg_gang_check(in.t, input_gang(&in, i), &ei)) {
			printf("error: %s\n", ei.msg);
			errors++;
		}
	}
	/* gangs whose objects cannot be read; those waiting for their
	 * group object are no error of the input */
	for (i = 0; i < tg_k8s_nfailed(in.k8s); i++) {
		const char *why = NULL, *name = tg_k8s_failed(in.k8s, i, &why);

		if (tg_k8s_failed_waits(in.k8s, i)) {
			printf("warning: gang %s: %s\n", name, why);
			continue;
		}
		printf("error: gang %s: %s\n", name, why);
		errors++;
	}
	for (i = 0; i < in.nwarn; i++) {
		unsigned j;
		bool dup = false;

		for (j = 0; j < nw && !dup; j++)
			dup = !strcmp(in.warn[i], tg_topology_warning(in.t, j));
		if (!dup)
			printf("warning: %s\n", in.warn[i]);
	}
	printf("%u node%s, %u layer%s", tg_topology_nnodes(in.t),
	       tg_topology_nnodes(in.t) == 1 ? "" : "s",
	       tg_topology_nlayers(in.t),
	       tg_topology_nlayers(in.t) == 1 ? "" : "s");
	for (i = 0; i < tg_topology_nlayers(in.t); i++)
		printf("%s%s", i ? " > " : " (",
		       tg_topology_layer_name(in.t, i));
	printf("%s, %u pending gang%s: %u error%s\n",
	       tg_topology_nlayers(in.t) ? ")" : "", input_ngangs(&in),
	       input_ngangs(&in) == 1 ? "" : "s", errors,
	       errors == 1 ? "" : "s");
	input_free(&in);
	return errors ? 1 : 0;
}

int cli_draw(int argc, char **argv)
{
	opts o;
	input in;
	char *pic;
	int rc;

	if ((rc = parse_opts(argc, argv, &o)))
		return rc == 1 ? 0 : rc;
	if (o.slurm)
		return cli_draw_slurm(o.topoconf, o.scontrol, o.squeue, o.title,
				      o.svg, o.html);
	if ((rc = load_input(&o, &in))) {
		input_free(&in);
		return rc;
	}
	if (o.svg || o.html) {
		tg_draw_opts dopt;
		cli_bound *b = NULL;

		memset(&dopt, 0, sizeof(dopt));
		dopt.title = o.title;
		rc = o.cluster ? cli_bound_load(o.cluster, in.t, &b) : 0;
		dopt.gangs = cli_bound_gangs(b, &dopt.ngangs);
		if (!rc)
			rc = cli_picture_write(in.t, &dopt, o.svg, o.html);
		cli_bound_free(b);
		input_free(&in);
		return rc;
	}
	pic = tg_draw(in.t, NULL);
	if (pic)
		fputs(pic, stdout);
	tg_free(pic);
	input_free(&in);
	return pic ? 0 : 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "place"))
		return cli_place(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return cli_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "draw"))
		return cli_draw(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cli_bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "discover"))
		return cli_discover(argc - 1, argv + 1);
	if (!strcmp(argv[1], "export"))
		return cli_export(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sim"))
		return cli_sim(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("topogang %s\n", TOPOGANG_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	cli_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
