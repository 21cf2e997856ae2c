/*
 * cli/draw_pic.c - the pictures of `topogang draw` and `topogang place`
 * (--svg FILE, --html FILE: tg_draw_render()), and `topogang draw
 * --slurm`: the live Slurm cluster from its nodes' JSON and `squeue
 * --json` output over topology.conf.  The nodes' JSON is one list
 * "nodes" in the data_parser v0.0.38 form, which Slurm 22.05 writes for
 * `sinfo --json` and slurmrestd's GET /slurm/v0.0.38/nodes (22.05's
 * scontrol has no --json; 23.02's `scontrol show nodes --json` writes
 * the same list).
 *
 * Slurm mode, what is read:
 *   nodes[]: name, cpus, real_memory (MiB), gres ("gpu:8", "gpu:a100:8",
 *            "gpu:8(S:0-1)"), state and state_flags (DOWN, DRAIN, FAIL,
 *            MAINT, ...: the node is flagged with its reason), reason.
 *   jobs[]:  job_id, name, job_state, nodes (a hostlist: rank K is the
 *            K-th node, Slurm's SLURM_NODEID), cpus, gres_detail (per
 *            node, "gpu:4(IDX:0-3)"), tres_per_node ("gres:gpu:4"),
 *            tres_alloc_str (gres/gpu=N), state_reason,
 *            state_description.
 * Running (and completing, suspended) jobs hold their nodes' resources
 * (CPUs and GPUs split evenly over their nodes) and are drawn as gangs
 * with their ranks; pending jobs are listed with Slurm's reason.  Nodes
 * Slurm knows that topology.conf lacks are drawn outside the tree,
 * flagged "not in topology.conf"; nodes of topology.conf that Slurm does
 * not report are flagged too.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

#define SLURM_MAX_JOBS	100000	/* jobs read from squeue --json */

/* Writes \p s to \p path ("-": stdout); 0 or 2 with a message. */
static int write_file(const char *path, const char *s)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	size_t len = strlen(s);
	int rc = 0;

	if (!f) {
		cli_err("%s: cannot write: %m", path);
		return 2;
	}
	if (fwrite(s, 1, len, f) != len || fflush(f))
		rc = 2;
	if (f != stdout && fclose(f))
		rc = 2;
	if (rc)
		cli_err("%s: write failed", path);
	return rc;
}

int cli_picture_write(const tg_topology *t, const tg_draw_opts *o,
		      const char *svg, const char *html)
{
	const char *path[2] = { svg, html };
	tg_draw_format fmt[2] = { TG_DRAW_SVG, TG_DRAW_HTML };
	unsigned i;

	for (i = 0; i < 2; i++) {
		tg_errinfo ei = { "" };
		char *s = NULL;
		int rc;

		if (!path[i])
			continue;
		if (tg_draw_render(t, fmt[i], o, &s, &ei)) {
			cli_err("%s: %s", path[i], ei.msg);
			return 2;
		}
		rc = write_file(path[i], s);
		tg_free(s);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- Slurm ---- */

/* A file's JSON; NULL with a message (only for read errors when
 * \p quiet: the caller has another use for text that is not JSON). */
static cJSON *parse_file(const char *path, const char *what, bool quiet)
{
	tg_errinfo ei = { "" };
	char *buf;
	size_t len;
	cJSON *j;

	if (tg_file_read(path, TG_MAX_FILE, &buf, &len, &ei)) {
		cli_err("%s %s", what, ei.msg);
		return NULL;
	}
	j = cJSON_ParseWithLength(buf, len);
	tg_free(buf);
	if (!j && !quiet)
		cli_err("%s %s: not JSON", what, path);
	return j;
}

static cJSON *read_json(const char *path, const char *what, const char *key)
{
	cJSON *j = parse_file(path, what, true);

	if (!j || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, key))) {
		cli_err("%s %s: not %s JSON (no \"%s\" list)", what, path,
			strcmp(key, "nodes") ? "`squeue --json`" :
			"`sinfo --json` (nodes)", key);
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

static double jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* GPUs in a gres string: "gpu:8", "gpu:a100:4(S:0-1),nic:1" -> 8, 4. */
static long gres_gpus(const char *g)
{
	long total = 0;

	while (g && *g) {
		const char *end = strchr(g, ','), *p;
		size_t len;

		if (!strncmp(g, "gres:", 5) || !strncmp(g, "gres/", 5))
			g += 5;
		len = end ? (size_t)(end - g) : strlen(g);

		if (!strncmp(g, "gpu", 3) && (g[3] == ':' || g[3] == '(')) {
			/* the count is the last ":N" before any '(' */
			const char *paren = memchr(g, '(', len);
			const char *stop = paren ? paren : g + len;

			for (p = stop; p > g && p[-1] != ':'; p--)
				;
			if (p > g)
				total += strtol(p, NULL, 10);
		}
		g = end ? end + 1 : NULL;
	}
	return total;
}

/* A node's flag from its state: "DRAIN: reason" (malloc'd), or NULL
 * when its state is fine. */
static char *node_note(const cJSON *n)
{
	static const char *const bad[] = {
		"DOWN", "DRAIN", "FAIL", "MAINT", "NOT_RESPONDING",
		"POWERED_DOWN", "POWER_DOWN", "RESERVED", "FUTURE",
		"UNKNOWN", "INVALID_REG"
	};
	const cJSON *fl = cJSON_GetObjectItemCaseSensitive(n, "state_flags");
	const cJSON *f;
	char st[128], states[256];
	const char *why = jstr(n, "reason");
	size_t off = 0, i;
	char *out;

	/* states[] holds every name of bad[] once at most (< 128 bytes) */
	states[0] = '\0';
	snprintf(st, sizeof(st), "%s", jstr(n, "state"));
	for (i = 0; st[i]; i++)
		if (st[i] >= 'a' && st[i] <= 'z')
			st[i] = (char)(st[i] - 'a' + 'A');
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool set = strstr(st, bad[i]) != NULL;

		cJSON_ArrayForEach(f, fl)
			set = set || (cJSON_IsString(f) &&
				      !strcmp(f->valuestring, bad[i]));
		if (set)
			off += (size_t)snprintf(states + off,
						sizeof(states) - off, "%s%s",
						off ? "+" : "", bad[i]);
	}
	if (!off)
		return NULL;
	out = malloc(off + strlen(why) + 3);
	if (!out)
		return NULL;
	memcpy(out, states, off + 1);
	if (*why) {
		memcpy(out + off, ": ", 2);
		memcpy(out + off + 2, why, strlen(why) + 1);
	}
	return out;
}

typedef struct slurm_in {
	tg_topology *t;
	cJSON *nodes, *jobs;
	tg_draw_gang *g;
	unsigned ng;
	tg_draw_note *notes;
	char **notebuf;
	unsigned nnotes;
	char **strs;		/* gang names, reasons, domains */
	unsigned nstrs;
} slurm_in;

static const char *keep(slurm_in *s, char *str)
{
	if (!str)
		return "";
	s->strs[s->nstrs++] = str;
	return str;
}

static int add_note(slurm_in *s, tg_node_id id, const char *why)
{
	char *c = strdup(why);

	if (!c)
		return 2;
	s->notebuf[s->nnotes] = c;
	s->notes[s->nnotes].node = id;
	s->notes[s->nnotes++].reason = c;
	return 0;
}

/* Nodes: those topology.conf lacks added (outside the tree), resources
 * set, then the model built; notes for bad states. */
static int slurm_nodes(slurm_in *s, const char *conf)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(s->nodes, "nodes");
	const cJSON *n;
	unsigned nt = tg_topology_nnodes(s->t), i, cnt;
	char *seen = calloc(nt + 1, 1), *note;
	tg_errinfo ei = { "" };
	int rc = 2;

	if (!seen)
		return 2;
	cnt = (unsigned)cJSON_GetArraySize(arr);
	s->notes = calloc(cnt + nt + 1, sizeof(*s->notes));
	s->notebuf = calloc(cnt + nt + 1, sizeof(char *));
	if (!s->notes || !s->notebuf)
		goto out;
	cJSON_ArrayForEach(n, arr) {
		const char *name = jstr(n, "name");
		tg_node_id id;

		if (!*name)
			continue;
		if (tg_topology_node_find(s->t, name, &id)) {
			if (tg_topology_add_node(s->t, name, NULL, &id) ||
			    add_note(s, id, "not in topology.conf"))
				goto out;
		} else if (id < nt) {
			seen[id] = 1;
		}
		tg_topology_node_set_resource(s->t, id, TG_RES_CPU,
					      (int64_t)jnum(n, "cpus") * 1000);
		tg_topology_node_set_resource(s->t, id, TG_RES_MEMORY,
					      (int64_t)jnum(n, "real_memory") <<
					      20);
		if (gres_gpus(jstr(n, "gres")) > 0)
			tg_topology_node_set_gpus(s->t, id, (unsigned)
						  gres_gpus(jstr(n, "gres")),
						  NULL);
		note = node_note(n);
		if (note && add_note(s, id, note)) {
			free(note);
			goto out;
		}
		free(note);
	}
	for (i = 0; i < nt; i++)
		if (!seen[i] && add_note(s, i, "in topology.conf, not "
					 "reported by Slurm (sinfo)"))
			goto out;
	if (tg_topology_build(s->t, &ei)) {
		cli_err("%s: %s", conf, ei.msg);
		goto out;
	}
	rc = 0;
out:
	free(seen);
	return rc;
}

/* The smallest domain holding every member: "layer path" or "cluster". */
static char *gang_domain(const tg_topology *t, const tg_draw_member *m,
			 unsigned n)
{
	tg_domain_id d = n ? tg_topology_node_domain(t, m[0].node) : TG_NONE;
	unsigned k;

	while (d != TG_NONE && d != 0) {
		for (k = 1; k < n; k++) {
			tg_domain_id e = tg_topology_node_domain(t, m[k].node);

			while (e != TG_NONE && e != d)
				e = tg_topology_domain_parent(t, e);
			if (e != d)
				break;
		}
		if (k == n)
			break;
		d = tg_topology_domain_parent(t, d);
	}
	if (d == TG_NONE)
		return strdup(n ? "(outside the topology)" : "");
	return strdup(d ? tg_topology_domain_path(t, d) : "cluster");
}

/* The \p want lowest GPU indices of \p free (the job's GPUs: squeue
 * does not say which). */
static uint64_t low_gpus(uint64_t free, int64_t want)
{
	uint64_t m = 0;
	unsigned g;

	for (g = 0; g < 64 && want > 0; g++)
		if (free >> g & 1) {
			m |= UINT64_C(1) << g;
			want--;
		}
	return m;
}

/* GPU indices of "gpu:4(IDX:0-1,4-5)" (a job's gres_detail entry); 0
 * when it names none. */
static uint64_t gres_idx(const char *g)
{
	const char *p = strstr(g, "IDX:");
	uint64_t m = 0;

	if (!p)
		return 0;
	p += 4;
	while (*p >= '0' && *p <= '9') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo, i;

		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (i = lo; i <= hi && i < 64; i++)
			m |= UINT64_C(1) << i;
		if (*end != ',')
			break;
		p = end + 1;
	}
	return m;
}

/* One running job: allocations on its nodes and a gang with ranks. */
static int slurm_running(slurm_in *s, const cJSON *j, tg_draw_gang *g)
{
	char **names = NULL, pod[64], gang[64];
	unsigned nn = 0, k;
	tg_errinfo ei = { "" };
	const char *tres = jstr(j, "tres_alloc_str"), *gp;
	/* GPUs per node: gres_detail[k] ("gpu:4(IDX:0-3)", the K-th node's
	 * GPUs), else the request per node, else the total split evenly */
	long gpus = 0, jid = (long)jnum(j, "job_id");
	tg_draw_member *m;
	tg_shape sh;

	if (tg_hostlist_expand(jstr(j, "nodes"), &names, &nn, &ei)) {
		cli_err("squeue job %ld: nodes '%s': %s", jid,
			jstr(j, "nodes"), ei.msg);
		return 2;
	}
	/* GPUs per node: the job's request per node, else its total */
	gpus = gres_gpus(jstr(j, "tres_per_node"));
	gp = strstr(tres, "gres/gpu=");
	if (!gpus && gp && nn)
		gpus = strtol(gp + 9, NULL, 10) / (long)nn;
	m = calloc(nn + 1, sizeof(*m));
	if (!m) {
		tg_hostlist_free(names, nn);
		return 2;
	}
	snprintf(gang, sizeof(gang), "job %ld", jid);
	memset(&sh, 0, sizeof(sh));
	for (k = 0; k < nn; k++) {
		tg_alloc_spec a;
		tg_node_id id;
		const cJSON *det;

		if (tg_topology_node_find(s->t, names[k], &id)) {
			cli_err("squeue job %ld: node %s is not in sinfo's "
				"nodes", jid, names[k]);
			free(m);
			tg_hostlist_free(names, nn);
			return 2;
		}
		m[g->nmembers].node = id;
		m[g->nmembers++].rank = k;
		sh.v[TG_RES_CPU] = (int64_t)(jnum(j, "cpus") * 1000 / nn);
		sh.v[TG_RES_GPU] = gpus;
		memset(&a, 0, sizeof(a));
		snprintf(pod, sizeof(pod), "job %ld/%u", jid, k);
		a.pod = pod;
		a.gang = gang;
		a.node = id;
		a.shape = &sh;
		/* gres_detail[k]: this node's GPUs, "gpu:4(IDX:0-3)" */
		det = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j,
						"gres_detail"), (int)k);
		if (cJSON_IsString(det) && gres_gpus(det->valuestring) > 0) {
			sh.v[TG_RES_GPU] = gres_gpus(det->valuestring);
			a.gpus = gres_idx(det->valuestring);
		}
		if (!a.gpus)
			a.gpus = low_gpus(tg_topology_node_free_gpus(s->t, id),
					  sh.v[TG_RES_GPU]);
		if (tg_topology_add_alloc(s->t, &a)) {
			cli_err("squeue job %ld: cannot record it on %s", jid,
				names[k]);
			free(m);
			tg_hostlist_free(names, nn);
			return 2;
		}
	}
	tg_hostlist_free(names, nn);
	g->members = m;
	g->domain = keep(s, gang_domain(s->t, m, g->nmembers));
	return 0;
}

static int slurm_jobs(slurm_in *s)
{
	const cJSON *arr = s->jobs ?
		cJSON_GetObjectItemCaseSensitive(s->jobs, "jobs") : NULL;
	const cJSON *j;
	unsigned cnt = (unsigned)cJSON_GetArraySize(arr);

	if (cnt > SLURM_MAX_JOBS) {
		cli_err("squeue --json: %u jobs, more than SLURM_MAX_JOBS "
			"(%u)", cnt, SLURM_MAX_JOBS);
		return 2;
	}
	s->g = calloc(cnt + 1, sizeof(*s->g));
	s->strs = calloc(3 * cnt + 1, sizeof(char *));
	if (!s->g || !s->strs)
		return 2;
	cJSON_ArrayForEach(j, arr) {
		const char *st = jstr(j, "job_state");
		tg_draw_gang *g = &s->g[s->ng];
		bool run = !strcmp(st, "RUNNING") ||
			   !strcmp(st, "COMPLETING") ||
			   !strcmp(st, "SUSPENDED");
		const char *nm = jstr(j, "name");
		size_t len = strlen(nm) + 32;
		char *buf;

		if (!run && strcmp(st, "PENDING"))
			continue;	/* finished: holds nothing */
		buf = malloc(len);
		if (!buf)
			return 2;
		snprintf(buf, len, "job %ld (%s)", (long)jnum(j, "job_id"), nm);
		g->name = keep(s, buf);
		g->state = run ? "running" : "pending";
		if (!run) {
			const char *r = jstr(j, "state_reason");
			const char *dsc = jstr(j, "state_description");

			/* the description often repeats the reason */
			if (!strncmp(dsc, r, strlen(r)))
				r = "";
			len = strlen(r) + strlen(dsc) + 3;
			buf = malloc(len);
			if (!buf)
				return 2;
			snprintf(buf, len, "%s%s%s", r, *r && *dsc ? ": " : "",
				 dsc);
			g->reason = keep(s, buf);
		} else if (slurm_running(s, j, g)) {
			return 2;
		}
		s->ng++;
	}
	return 0;
}

int cli_draw_slurm(const char *conf, const char *nodes, const char *jobs,
		   const char *title, const char *svg, const char *html)
{
	slurm_in s;
	tg_errinfo ei = { "" };
	tg_draw_opts o;
	unsigned i;
	int rc = 2;

	memset(&s, 0, sizeof(s));
	if (!conf || !nodes) {
		cli_err("draw --slurm needs --topology-conf FILE and "
			"--sinfo FILE (`sinfo --json`)");
		return 2;
	}
	s.t = tg_topology_create();
	if (!s.t)
		return 2;
	if (tg_topoconf_load_file(s.t, conf, &ei)) {
		cli_err("%s", ei.msg);
		goto out;
	}
	s.nodes = read_json(nodes, "--sinfo", "nodes");
	if (!s.nodes || (jobs && !(s.jobs = read_json(jobs, "--squeue",
						      "jobs"))))
		goto out;
	if (slurm_nodes(&s, conf) || slurm_jobs(&s))
		goto out;
	memset(&o, 0, sizeof(o));
	o.title = title ? title : "Slurm cluster";
	o.gangs = s.g;
	o.ngangs = s.ng;
	o.notes = s.notes;
	o.nnotes = s.nnotes;
	if (svg || html) {
		rc = cli_picture_write(s.t, &o, svg, html);
	} else {
		char *pic = tg_draw(s.t, NULL);

		rc = pic ? 0 : 2;
		if (pic)
			fputs(pic, stdout);
		tg_free(pic);
	}
out:
	for (i = 0; i < s.ng; i++)
		free((void *)s.g[i].members);
	free(s.g);
	for (i = 0; i < s.nstrs; i++)
		free(s.strs[i]);
	free(s.strs);
	for (i = 0; i < s.nnotes; i++)
		free(s.notebuf[i]);
	free(s.notebuf);
	free(s.notes);
	cJSON_Delete(s.nodes);
	cJSON_Delete(s.jobs);
	tg_topology_destroy(s.t);
	return rc;
}

/* ---- gangs bound by topogang-bridge, from a kubectl dump ---- */

#define ANN_GANG	"topogang.io/gang"
#define ANN_DOMAIN	"topogang.io/domain"
#define ANN_RANK	"topogang.io/rank"

typedef struct bmark {
	const char *gang, *domain;	/* in the parsed dump */
	tg_draw_member m;
} bmark;

struct cli_bound {
	cJSON *root;
	bmark *marks;
	tg_draw_member *m;
	tg_draw_gang *g;
	unsigned ng;
};

static int bm_cmp(const void *a, const void *b)
{
	const bmark *x = a, *y = b;
	int c = strcmp(x->gang, y->gang);

	if (c)
		return c;
	return x->m.rank < y->m.rank ? -1 : x->m.rank > y->m.rank;
}

/* A bound pod's mark, false when it is not one (not bound by the
 * bridge, terminating, on a node the model lacks). */
static bool pod_mark(const cJSON *pod, const tg_topology *t, bmark *bm)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const char *node = jstr(spec, "nodeName"), *rank = jstr(ann, ANN_RANK);
	char *end;
	long r;

	if (strcmp(jstr(pod, "kind"), "Pod") || !*node ||
	    !*jstr(ann, ANN_GANG) ||
	    cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp") ||
	    tg_topology_node_find(t, node, &bm->m.node))
		return false;
	r = strtol(rank, &end, 10);
	bm->m.rank = *rank && !*end && r >= 0 && r <= (long)TG_MAX_MEMBERS ?
		     (unsigned)r : TG_MAX_MEMBERS;
	bm->gang = jstr(ann, ANN_GANG);
	bm->domain = jstr(ann, ANN_DOMAIN);
	return true;
}

int cli_bound_load(const char *path, const tg_topology *t, cli_bound **out)
{
	cli_bound *b = calloc(1, sizeof(*b));
	const cJSON *items, *it;
	unsigned n = 0, i, k;

	*out = b;
	if (!b)
		return 2;
	b->root = parse_file(path, "--cluster", true);
	if (!b->root)
		return 0;	/* YAML: the core read it; no ranks here */
	items = cJSON_GetObjectItemCaseSensitive(b->root, "items");
	if (!cJSON_IsArray(items))
		items = NULL;
	b->marks = calloc((size_t)cJSON_GetArraySize(items) + 1,
			  sizeof(*b->marks));
	if (!b->marks)
		return 2;
	cJSON_ArrayForEach(it, items)
		if (pod_mark(it, t, &b->marks[n]))
			n++;
	qsort(b->marks, n, sizeof(*b->marks), bm_cmp);
	b->m = calloc(n + 1, sizeof(*b->m));
	b->g = calloc(n + 1, sizeof(*b->g));
	if (!b->m || !b->g)
		return 2;
	for (i = 0; i < n; i = k) {
		tg_draw_gang *g = &b->g[b->ng++];

		g->name = b->marks[i].gang;
		g->state = "bound";
		g->members = &b->m[i];
		for (k = i; k < n && !strcmp(b->marks[k].gang, g->name); k++) {
			b->m[k] = b->marks[k].m;
			if (b->m[k].rank == TG_MAX_MEMBERS)
				b->m[k].rank = k - i;	/* no rank: order */
			if (*b->marks[k].domain)
				g->domain = b->marks[k].domain;
		}
		g->nmembers = k - i;
	}
	return 0;
}

void cli_bound_skip(cli_bound *b, const char *gang)
{
	unsigned i, k = 0;

	for (i = 0; b && i < b->ng; i++)
		if (strcmp(b->g[i].name, gang))
			b->g[k++] = b->g[i];
	if (b)
		b->ng = k;
}

const tg_draw_gang *cli_bound_gangs(const cli_bound *b, unsigned *n)
{
	*n = b ? b->ng : 0;
	return b ? b->g : NULL;
}

void cli_bound_free(cli_bound *b)
{
	if (!b)
		return;
	cJSON_Delete(b->root);
	free(b->marks);
	free(b->m);
	free(b->g);
	free(b);
}
