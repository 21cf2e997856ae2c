/*
 * cli/sim.c - the simulation engine: traces, fabrics, the world the
 * policies see, and the event loop with its metrics (see sim.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sim.h"

void sim_seterr(tg_errinfo *ei, const char *fmt, ...)
{
	va_list ap;

	if (!ei)
		return;
	va_start(ap, fmt);
	vsnprintf(ei->msg, sizeof(ei->msg), fmt, ap);
	va_end(ap);
}

static char *dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

uint64_t sim_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sim_gang_name(unsigned job, char buf[SIM_GANG_MAX])
{
	snprintf(buf, SIM_GANG_MAX, "job-%u", job);
}

bool sim_gang_job(const char *gang, unsigned *job)
{
	uint64_t v;

	if (!gang || strncmp(gang, "job-", 4) ||
	    !isdigit((unsigned char)gang[4]))
		return false;
	if (!tg_u64_parse(gang + 4, UINT32_MAX, &v))
		return false;
	*job = (unsigned)v;
	return true;
}

double sim_stretch(double comm_fraction, double best_gbps, double gbps)
{
	if (!(gbps > 0) || !(best_gbps > 0))
		return 1;
	return (1 - comm_fraction) + comm_fraction * best_gbps / gbps;
}

/* ---- numbers ---- */

/* ---- trace ---- */

enum { COL_ID, COL_SUBMIT, COL_DURATION, COL_GPUS, COL_NODES, COL_PRIO,
       NCOLS };
static const char *const col_name[NCOLS] = {
	"job_id", "submit_s", "duration_s", "gpus", "nodes", "priority"
};

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Splits \p line in place at commas; NULL-safe bounded. */
static int split(char *line, char **f, unsigned max)
{
	unsigned n = 0;
	char *p = line;

	for (;;) {
		char *c = strchr(p, ',');

		if (n == max)
			return -1;
		if (c)
			*c = '\0';
		f[n++] = trim(p);
		if (!c)
			return (int)n;
		p = c + 1;
	}
}

static int job_cmp(const void *pa, const void *pb)
{
	const sim_job *a = pa, *b = pb;

	if (a->submit != b->submit)
		return a->submit < b->submit ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

void sim_trace_free(sim_trace *tr)
{
	if (!tr)
		return;
	free(tr->source);
	free(tr->jobs);
	memset(tr, 0, sizeof(*tr));
}

static tg_err trace_row(sim_trace *tr, char **f, const int *col,
			const char *src, unsigned line, tg_errinfo *ei)
{
	sim_job *j = &tr->jobs[tr->njobs];
	uint64_t u;
	const char *s;

	memset(j, 0, sizeof(*j));
	j->line = line;
	s = f[col[COL_ID]];
	if (!*s || strlen(s) > SIM_MAX_ID) {
		sim_seterr(ei, "%s:%u: job_id '%.40s' is empty or longer than "
		       "%d bytes", src, line, s, SIM_MAX_ID);
		return TG_EPARSE;
	}
	memcpy(j->id, s, strlen(s) + 1);
	if (!tg_f64_parse(f[col[COL_SUBMIT]], 0, 1e12, &j->submit)) {
		sim_seterr(ei, "%s:%u: submit_s '%.40s' is not a number of "
		       "seconds >= 0", src, line, f[col[COL_SUBMIT]]);
		return TG_EPARSE;
	}
	if (!tg_f64_parse(f[col[COL_DURATION]], 0, SIM_MAX_DURATION,
			&j->duration)) {
		sim_seterr(ei, "%s:%u: duration_s '%.40s' is not a number of "
		       "seconds in 0..%.0f", src, line, f[col[COL_DURATION]],
		       SIM_MAX_DURATION);
		return TG_EPARSE;
	}
	if (!tg_u64_parse(f[col[COL_GPUS]], SIM_MAX_JOB_GPUS, &u) || !u) {
		sim_seterr(ei, "%s:%u: gpus '%.40s' is not a count in 1..%u",
		       src, line, f[col[COL_GPUS]], SIM_MAX_JOB_GPUS);
		return TG_EPARSE;
	}
	j->gpus = (unsigned)u;
	if (col[COL_NODES] >= 0 && *f[col[COL_NODES]]) {
		if (!tg_u64_parse(f[col[COL_NODES]], j->gpus, &u) || !u) {
			sim_seterr(ei, "%s:%u: nodes '%.40s' is not a count in "
			       "1..gpus (%u)", src, line, f[col[COL_NODES]],
			       j->gpus);
			return TG_EPARSE;
		}
		if (j->gpus % u) {
			sim_seterr(ei, "%s:%u: %u GPUs do not split evenly over "
			       "%llu nodes", src, line, j->gpus,
			       (unsigned long long)u);
			return TG_EINVAL;
		}
		j->nodes = (unsigned)u;
	}
	if (col[COL_PRIO] >= 0 && *f[col[COL_PRIO]] &&
	    !tg_i64_parse(f[col[COL_PRIO]], &j->priority)) {
		sim_seterr(ei, "%s:%u: priority '%.40s' is not an integer", src,
		       line, f[col[COL_PRIO]]);
		return TG_EPARSE;
	}
	tr->njobs++;
	return TG_OK;
}

tg_err sim_trace_parse(sim_trace *tr, const char *buf, size_t len,
		       const char *source, tg_errinfo *ei)
{
	char line[SIM_MAX_LINE + 2], *f[SIM_MAX_FIELDS];
	const char *src = source ? source : "trace";
	int col[NCOLS], nf = 0, k, c;
	size_t pos = 0, cap = 0;
	unsigned lineno = 0;
	bool header = false;
	tg_err err;

	memset(tr, 0, sizeof(*tr));
	if (!(tr->source = dupstr(src)))
		return TG_ENOMEM;
	if (memchr(buf, '\0', len)) {
		sim_seterr(ei, "%s: a NUL byte: not a CSV text file", src);
		return TG_EPARSE;
	}
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		char *p;

		lineno++;
		if (n > SIM_MAX_LINE) {
			sim_seterr(ei, "%s:%u: line longer than %d bytes", src,
			       lineno, SIM_MAX_LINE);
			return TG_ELIMIT;
		}
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		pos += n + 1;
		p = trim(line);
		if (!*p || *p == '#')
			continue;
		if (strchr(p, '"')) {
			sim_seterr(ei, "%s:%u: quoted fields are not supported",
			       src, lineno);
			return TG_EPARSE;
		}
		if ((k = split(p, f, SIM_MAX_FIELDS)) < 0) {
			sim_seterr(ei, "%s:%u: more than %d columns", src, lineno,
			       SIM_MAX_FIELDS);
			return TG_ELIMIT;
		}
		if (!header) {
			header = true;
			nf = k;
			for (c = 0; c < NCOLS; c++)
				col[c] = -1;
			for (c = 0; c < k; c++)
				for (int m = 0; m < NCOLS; m++) {
					if (strcmp(f[c], col_name[m]))
						continue;
					if (col[m] >= 0) {
						sim_seterr(ei, "%s:%u: column %s "
						       "given twice", src,
						       lineno, col_name[m]);
						return TG_EPARSE;
					}
					col[m] = c;
				}
			for (c = 0; c <= COL_GPUS; c++)
				if (col[c] < 0) {
					sim_seterr(ei, "%s:%u: no %s column (the "
					       "header needs job_id, submit_s, "
					       "duration_s, gpus)", src, lineno,
					       col_name[c]);
					return TG_EPARSE;
				}
			tr->has_nodes = col[COL_NODES] >= 0;
			tr->has_priority = col[COL_PRIO] >= 0;
			continue;
		}
		if (k != nf) {
			sim_seterr(ei, "%s:%u: %d fields, the header has %d", src,
			       lineno, k, nf);
			return TG_EPARSE;
		}
		if (tr->njobs == SIM_MAX_JOBS) {
			sim_seterr(ei, "%s:%u: more than %u jobs", src, lineno,
			       SIM_MAX_JOBS);
			return TG_ELIMIT;
		}
		if (tr->njobs == cap) {
			size_t nc = cap ? cap * 2 : 256;
			sim_job *nj = realloc(tr->jobs, nc * sizeof(*nj));

			if (!nj)
				return TG_ENOMEM;
			tr->jobs = nj;
			cap = nc;
		}
		if ((err = trace_row(tr, f, col, src, lineno, ei)))
			return err;
	}
	if (!header) {
		sim_seterr(ei, "%s: empty: no header line", src);
		return TG_EPARSE;
	}
	if (tr->njobs)
		qsort(tr->jobs, tr->njobs, sizeof(*tr->jobs), job_cmp);
	return TG_OK;
}

tg_err sim_trace_load(sim_trace *tr, const char *path, tg_errinfo *ei)
{
	char *buf;
	size_t len;
	tg_err err;

	memset(tr, 0, sizeof(*tr));
	if ((err = tg_file_read(path, TG_MAX_FILE, &buf, &len, ei)))
		return err;
	err = sim_trace_parse(tr, buf, len, path, ei);
	tg_free(buf);
	return err;
}

/* ---- fabric ---- */

struct sim_fabric {
	unsigned nlayers;
	char *lname[TG_MAX_LAYERS];
	char *lkey[TG_MAX_LAYERS];
	double bw[TG_MAX_LAYERS + 1];	/* 0 = the core's default;
					 * [nlayers] = inside a node */
	unsigned nnodes;
	char **name;		/* nnodes */
	uint32_t *path;		/* [n * nlayers + l] into vals, TG_NONE
				 * = missing */
	char **vals;
	unsigned nvals;
	uint8_t *ngpus;
	char desc[384];
};

void sim_fabric_destroy(sim_fabric *f)
{
	unsigned i;

	if (!f)
		return;
	for (i = 0; i < TG_MAX_LAYERS; i++) {
		free(f->lname[i]);
		free(f->lkey[i]);
	}
	for (i = 0; f->name && i < f->nnodes; i++)
		free(f->name[i]);
	for (i = 0; f->vals && i < f->nvals; i++)
		free(f->vals[i]);
	free(f->name);
	free(f->vals);
	free(f->path);
	free(f->ngpus);
	free(f);
}

/* Appends to the description; a long one is cut with "..." (it is only
 * ever printed). */
static void desc_add(sim_fabric *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void desc_add(sim_fabric *f, const char *fmt, ...)
{
	size_t n = strlen(f->desc), cap = sizeof(f->desc);
	va_list ap;
	int k;

	if (n + 4 >= cap)
		return;
	va_start(ap, fmt);
	k = vsnprintf(f->desc + n, cap - n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= cap - n)
		memcpy(f->desc + cap - 4, "...", 4);
}

/* Allocates the per-node arrays of \p f (nnodes, nlayers, nvals set). */
static tg_err fabric_alloc(sim_fabric *f)
{
	size_t nl = f->nlayers ? f->nlayers : 1;

	f->name = calloc(f->nnodes ? f->nnodes : 1, sizeof(*f->name));
	f->path = malloc((f->nnodes ? f->nnodes : 1) * nl *
			 sizeof(*f->path));
	f->vals = calloc(f->nvals ? f->nvals : 1, sizeof(*f->vals));
	f->ngpus = calloc(f->nnodes ? f->nnodes : 1, 1);
	if (!f->name || !f->path || !f->vals || !f->ngpus)
		return TG_ENOMEM;
	return TG_OK;
}

static bool layer_name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > 63)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

/* A fabric spec being read: the layers' counts, nodes a leaf, GPUs. */
typedef struct spec_ctx {
	const char *spec;
	unsigned long long cnt[TG_MAX_LAYERS], per_leaf, gpus;
	unsigned nl;
	bool seen_node, seen_gpu;
	tg_errinfo *ei;
} spec_ctx;

/* One layer NAME:COUNT of a spec (not node: or gpu:) into \p f. */
static tg_err spec_layer(sim_fabric *f, spec_ctx *sc, const char *name,
			 uint64_t x)
{
	char key[128];
	unsigned l;

	if (sc->nl == TG_MAX_LAYERS) {
		sim_seterr(sc->ei, "fabric spec '%s': more than %d layers",
			   sc->spec, TG_MAX_LAYERS);
		return TG_ELIMIT;
	}
	for (l = 0; l < sc->nl; l++)
		if (!strcmp(f->lname[l], name)) {
			sim_seterr(sc->ei, "fabric spec '%s': layer '%s' "
				   "twice", sc->spec, name);
			return TG_EINVAL;
		}
	snprintf(key, sizeof(key), "topogang.io/%s", name);
	if (!(f->lname[sc->nl] = dupstr(name)) ||
	    !(f->lkey[sc->nl] = dupstr(key)))
		return TG_ENOMEM;
	sc->cnt[sc->nl++] = x;
	return TG_OK;
}

/* One item NAME:COUNT of a spec. */
static tg_err spec_item(sim_fabric *f, spec_ctx *sc, char *item, int at)
{
	char *c = strchr(item, ':');
	uint64_t x;

	if (!c || !layer_name_ok(item, (size_t)(c - item)) ||
	    !tg_u64_parse(c + 1, SIM_MAX_SPEC_NODES, &x) || !x) {
		sim_seterr(sc->ei, "fabric spec '%s': item %d '%s' is not "
			   "NAME:COUNT (e.g. spine:4, node:18, gpu:8)",
			   sc->spec, at + 1, item);
		return TG_EINVAL;
	}
	*c = '\0';
	if (sc->seen_gpu || (sc->seen_node && strcmp(item, "gpu"))) {
		sim_seterr(sc->ei, "fabric spec '%s': '%s' after node:/gpu: "
			   "(order: layers farthest first, node:N, gpu:G)",
			   sc->spec, item);
		return TG_EINVAL;
	}
	if (!strcmp(item, "node")) {
		sc->seen_node = true;
		sc->per_leaf = x;
		return TG_OK;
	}
	if (strcmp(item, "gpu"))
		return spec_layer(f, sc, item, x);
	if (!sc->seen_node || x > TG_MAX_GPUS) {
		sim_seterr(sc->ei, "fabric spec '%s': gpu:G comes after "
			   "node:N, G in 1..%d", sc->spec, TG_MAX_GPUS);
		return TG_EINVAL;
	}
	sc->seen_gpu = true;
	sc->gpus = x;
	return TG_OK;
}

/* The fabric of a read spec: counts (bounded), values "<layer>-<k>",
 * nodes "node-<n>" and their paths, the description. */
static tg_err spec_fill(sim_fabric *f, const spec_ctx *sc)
{
	unsigned long long ndom = 1, nodes;
	unsigned nl = sc->nl, i, l, v, n;
	tg_err err;

	f->nvals = 0;
	for (l = 0; l < nl; l++) {
		ndom *= sc->cnt[l];
		if (ndom > SIM_MAX_SPEC_NODES)
			break;
		f->nvals += (unsigned)ndom;
	}
	nodes = ndom * sc->per_leaf;
	if (ndom > SIM_MAX_SPEC_NODES || nodes > SIM_MAX_SPEC_NODES) {
		sim_seterr(sc->ei, "fabric spec '%s': more than %u nodes",
			   sc->spec, SIM_MAX_SPEC_NODES);
		return TG_ELIMIT;
	}
	f->nlayers = nl;
	f->nnodes = (unsigned)nodes;
	if ((err = fabric_alloc(f)))
		return err;
	ndom = 1;
	for (l = 0, v = 0; l < nl; l++) {
		ndom *= sc->cnt[l];
		for (i = 0; i < ndom; i++, v++) {
			char s[96];

			snprintf(s, sizeof(s), "%s-%u", f->lname[l], i);
			if (!(f->vals[v] = dupstr(s)))
				return TG_ENOMEM;
		}
	}
	for (n = 0; n < f->nnodes; n++) {
		char s[32];
		unsigned long long base = 0, dl = 1;

		snprintf(s, sizeof(s), "node-%u", n);
		if (!(f->name[n] = dupstr(s)))
			return TG_ENOMEM;
		f->ngpus[n] = (uint8_t)sc->gpus;
		for (l = 0; l < nl; l++) {
			unsigned long long under = sc->per_leaf;
			unsigned m;

			for (m = l + 1; m < nl; m++)
				under *= sc->cnt[m];
			dl *= sc->cnt[l];
			f->path[(size_t)n * nl + l] =
				(uint32_t)(base + n / under);
			base += dl;
		}
	}
	for (l = 0; l < nl; l++)
		desc_add(f, "%llu %s x ", sc->cnt[l], f->lname[l]);
	desc_add(f, "%llu nodes x %llu GPUs = %u nodes, %llu GPUs",
		 sc->per_leaf, sc->gpus, f->nnodes,
		 (unsigned long long)f->nnodes * sc->gpus);
	return TG_OK;
}

tg_err sim_fabric_spec(const char *spec, sim_fabric **out, tg_errinfo *ei)
{
	char buf[SIM_MAX_SPEC + 1], *items[TG_MAX_LAYERS + 3];
	spec_ctx sc;
	int k, at;
	sim_fabric *f = NULL;
	tg_err err = TG_OK;

	*out = NULL;
	if (strlen(spec) > SIM_MAX_SPEC) {
		sim_seterr(ei, "fabric spec longer than %d bytes",
			   SIM_MAX_SPEC);
		return TG_ELIMIT;
	}
	memcpy(buf, spec, strlen(spec) + 1);
	if ((k = split(buf, items, TG_MAX_LAYERS + 2)) < 0) {
		sim_seterr(ei, "fabric spec '%s': more than %d layers", spec,
		       TG_MAX_LAYERS);
		return TG_ELIMIT;
	}
	if (!(f = calloc(1, sizeof(*f))))
		return TG_ENOMEM;
	memset(&sc, 0, sizeof(sc));
	sc.spec = spec;
	sc.gpus = 8;
	sc.ei = ei;
	for (at = 0; at < k && !err; at++)
		err = spec_item(f, &sc, items[at], at);
	if (!err && !sc.seen_node) {
		sim_seterr(ei, "fabric spec '%s': no node:N (nodes in each "
		       "lowest domain)", spec);
		err = TG_EINVAL;
	}
	if (!err)
		err = spec_fill(f, &sc);
	if (err) {
		sim_fabric_destroy(f);
		return err;
	}
	*out = f;
	return TG_OK;
}

tg_err sim_fabric_topology(const tg_topology *t, const char *what,
			   sim_fabric **out, tg_errinfo *ei)
{
	unsigned nl = tg_topology_nlayers(t), l, n, d;
	sim_fabric *f;
	uint64_t g = 0;

	*out = NULL;
	if (!(f = calloc(1, sizeof(*f))))
		return TG_ENOMEM;
	f->nlayers = nl;
	f->nnodes = tg_topology_nnodes(t);
	f->nvals = tg_topology_ndomains(t);
	if (!f->nnodes) {
		sim_seterr(ei, "%s: no nodes", what);
		sim_fabric_destroy(f);
		return TG_EINVAL;
	}
	if (fabric_alloc(f))
		goto nomem;
	for (l = 0; l < nl; l++) {
		const char *k = tg_topology_layer_key(t, l);

		if (!(f->lname[l] = dupstr(tg_topology_layer_name(t, l))))
			goto nomem;
		if (k && !(f->lkey[l] = dupstr(k)))
			goto nomem;
		f->bw[l] = tg_topology_layer_bandwidth(t, l);
	}
	f->bw[nl] = tg_topology_layer_bandwidth(t, nl);
	for (d = 0; d < f->nvals; d++)
		if (!(f->vals[d] = dupstr(tg_topology_domain_value(t, d))))
			goto nomem;
	for (n = 0; n < f->nnodes; n++) {
		tg_domain_id dd = tg_topology_node_domain(t, n);

		if (!(f->name[n] = dupstr(tg_topology_node_name(t, n))))
			goto nomem;
		f->ngpus[n] = (uint8_t)tg_topology_node_ngpus(t, n);
		g += f->ngpus[n];
		for (l = nl; l-- > 0;) {
			f->path[(size_t)n * nl + l] = dd;
			if (dd != TG_NONE)
				dd = tg_topology_domain_parent(t, dd);
		}
	}
	desc_add(f, "%s: %u nodes, %llu GPUs; layers ", what, f->nnodes,
		 (unsigned long long)g);
	for (l = 0; l < nl; l++)
		desc_add(f, "%s%s", l ? " > " : "", f->lname[l]);
	if (!nl)
		desc_add(f, "none");
	*out = f;
	return TG_OK;
nomem:
	sim_fabric_destroy(f);
	return TG_ENOMEM;
}

static bool looks_k8s(const char *buf, size_t len)
{
	size_t i = 0;

	/* skip blank and comment lines (both formats have # comments) */
	for (;;) {
		while (i < len && isspace((unsigned char)buf[i]))
			i++;
		if (i >= len || buf[i] != '#')
			break;
		while (i < len && buf[i] != '\n')
			i++;
	}
	if (i < len && (buf[i] == '{' || buf[i] == '['))
		return true;
	return (len - i >= 10 && !strncmp(buf + i, "apiVersion", 10)) ||
	       (len - i >= 4 && !strncmp(buf + i, "kind", 4)) ||
	       (len - i >= 5 && !strncmp(buf + i, "items", 5)) ||
	       (len - i >= 3 && !strncmp(buf + i, "---", 3));
}

tg_err sim_fabric_load(const char *arg, unsigned gpus_per_node,
		       sim_fabric **out, tg_errinfo *ei)
{
	tg_topology *t = NULL;
	tg_k8s *k = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len;
	unsigned n;
	tg_err err;

	*out = NULL;
	if (stat(arg, &st) || !S_ISREG(st.st_mode)) {
		if (strchr(arg, ':'))
			return sim_fabric_spec(arg, out, ei);
		sim_seterr(ei, "%s: no such file, and not a fabric spec (e.g. "
		       "zone:2,spine:4,block:8,node:18,gpu:8)", arg);
		return TG_EINVAL;
	}
	if (gpus_per_node < 1 || gpus_per_node > TG_MAX_GPUS) {
		sim_seterr(ei, "GPUs per node %u: not in 1..%d", gpus_per_node,
		       TG_MAX_GPUS);
		return TG_EINVAL;
	}
	if ((err = tg_file_read(arg, TG_MAX_FILE, &buf, &len, ei)))
		return err;
	if (looks_k8s(buf, len)) {
		err = TG_ENOMEM;
		if (!(k = tg_k8s_create()))
			goto out;
		if ((err = tg_k8s_add(k, buf, len, arg, ei)) ||
		    (err = tg_k8s_build(k, &t, ei)))
			goto out;
	} else {
		err = TG_ENOMEM;
		if (!(t = tg_topology_create()))
			goto out;
		if ((err = tg_topoconf_load(t, buf, len, arg, ei)))
			goto out;
		for (n = 0; n < tg_topology_nnodes(t); n++)
			if ((err = tg_topology_node_set_gpus(t, n,
							    gpus_per_node,
							    NULL)))
				goto out;
		if ((err = tg_topology_build(t, ei)))
			goto out;
	}
	err = sim_fabric_topology(t, arg, out, ei);
out:
	tg_topology_destroy(t);
	tg_k8s_destroy(k);
	tg_free(buf);
	return err;
}

tg_err sim_fabric_set_bandwidth(sim_fabric *f, const char *list,
				tg_errinfo *ei)
{
	char buf[SIM_MAX_SPEC + 1], *items[TG_MAX_LAYERS + 2];
	int k, i;
	unsigned l;

	if (strlen(list) > SIM_MAX_SPEC) {
		sim_seterr(ei, "bandwidth list longer than %d bytes",
		       SIM_MAX_SPEC);
		return TG_ELIMIT;
	}
	memcpy(buf, list, strlen(list) + 1);
	if ((k = split(buf, items, TG_MAX_LAYERS + 1)) < 0) {
		sim_seterr(ei, "bandwidth list '%s': more than %d items", list,
		       TG_MAX_LAYERS + 1);
		return TG_ELIMIT;
	}
	for (i = 0; i < k; i++) {
		char *eq = strchr(items[i], '=');
		double v;

		if (!eq || !tg_f64_parse(trim(eq + 1), 1e-3, 1e9, &v)) {
			sim_seterr(ei, "bandwidth '%s': not LAYER=GBPS (Gbit/s "
			       "> 0)", items[i]);
			return TG_EINVAL;
		}
		*eq = '\0';
		if (!strcmp(trim(items[i]), "node")) {
			f->bw[f->nlayers] = v;
			continue;
		}
		for (l = 0; l < f->nlayers; l++)
			if (!strcmp(f->lname[l], items[i]) ||
			    (f->lkey[l] && !strcmp(f->lkey[l], items[i])))
				break;
		if (l == f->nlayers) {
			sim_seterr(ei, "bandwidth: no layer '%s' in the fabric "
			       "(%s)", items[i], f->desc);
			return TG_ENOENT;
		}
		f->bw[l] = v;
	}
	return TG_OK;
}

tg_err sim_fabric_instantiate(const sim_fabric *f, tg_topology **out,
			      tg_errinfo *ei)
{
	const char *path[TG_MAX_LAYERS];
	tg_topology *t;
	unsigned l, n;
	tg_err err = TG_ENOMEM;

	*out = NULL;
	if (!(t = tg_topology_create()))
		return TG_ENOMEM;
	for (l = 0; l < f->nlayers; l++)
		if ((err = tg_topology_add_layer(t, f->lname[l], f->lkey[l])))
			goto fail;
	for (n = 0; n < f->nnodes; n++) {
		tg_node_id id;

		for (l = 0; l < f->nlayers; l++) {
			uint32_t v = f->path[(size_t)n * f->nlayers + l];

			path[l] = v == TG_NONE ? NULL : f->vals[v];
		}
		if ((err = tg_topology_add_node(t, f->name[n],
						f->nlayers ? path : NULL,
						&id)) ||
		    (err = tg_topology_node_set_gpus(t, id, f->ngpus[n],
						     NULL)))
			goto fail;
	}
	if ((err = tg_topology_build(t, ei)))
		goto fail;
	for (l = 0; l < f->nlayers; l++)
		if (f->bw[l] > 0 &&
		    (err = tg_topology_set_layer_bandwidth(t, l, f->bw[l])))
			goto fail;
	if (f->bw[f->nlayers] > 0 &&
	    (err = tg_topology_set_node_bandwidth(t, f->bw[f->nlayers])))
		goto fail;
	*out = t;
	return TG_OK;
fail:
	if (err != TG_OK && ei && !ei->msg[0])
		sim_seterr(ei, "fabric: %s", tg_strerror(err));
	tg_topology_destroy(t);
	return err;
}

unsigned sim_fabric_nnodes(const sim_fabric *f)
{
	return f ? f->nnodes : 0;
}

uint64_t sim_fabric_ngpus(const sim_fabric *f)
{
	uint64_t g = 0;
	unsigned n;

	for (n = 0; f && n < f->nnodes; n++)
		g += f->ngpus[n];
	return g;
}

const char *sim_fabric_describe(const sim_fabric *f)
{
	return f ? f->desc : "";
}

/* ---- world ---- */

tg_err sim_world_init(sim_world *w, tg_topology *t)
{
	unsigned n, l, nl;

	memset(w, 0, sizeof(*w));
	w->t = t;
	w->nnodes = tg_topology_nnodes(t);
	w->nlayers = nl = tg_topology_nlayers(t);
	w->ndomains = tg_topology_ndomains(t);
	w->ndom = malloc(((size_t)w->nnodes * (nl ? nl : 1) + 1) *
			 sizeof(*w->ndom));
	w->free = malloc(((size_t)w->nnodes + 1) * sizeof(*w->free));
	w->ngpus = malloc((size_t)w->nnodes + 1);
	if (!w->ndom || !w->free || !w->ngpus) {
		sim_world_fini(w);
		return TG_ENOMEM;
	}
	for (n = 0; n < w->nnodes; n++) {
		tg_domain_id d = tg_topology_node_domain(t, n);

		for (l = nl; l-- > 0;) {
			w->ndom[(size_t)n * nl + l] = d;
			if (d != TG_NONE)
				d = tg_topology_domain_parent(t, d);
		}
		w->ngpus[n] = (uint8_t)tg_topology_node_ngpus(t, n);
	}
	sim_world_refresh(w);
	return TG_OK;
}

void sim_world_refresh(sim_world *w)
{
	unsigned n;

	for (n = 0; n < w->nnodes; n++)
		w->free[n] = (int32_t)tg_topology_node_free(w->t, n,
							    TG_RES_GPU);
}

void sim_world_fini(sim_world *w)
{
	if (!w)
		return;
	free(w->ndom);
	free(w->free);
	free(w->ngpus);
	memset(w, 0, sizeof(*w));
}

unsigned sim_world_level(const sim_world *w, const tg_node_id *nodes,
			 unsigned n)
{
	unsigned i, l, nl = w->nlayers;

	for (i = 1; i < n && nodes[i] == nodes[0]; i++)
		;
	if (i >= n)
		return nl;
	for (l = nl; l-- > 0;) {
		uint32_t d = w->ndom[(size_t)nodes[0] * nl + l];

		if (d == TG_NONE)
			continue;
		for (i = 1; i < n; i++)
			if (w->ndom[(size_t)nodes[i] * nl + l] != d)
				break;
		if (i == n)
			return l;
	}
	return TG_NONE;
}

double sim_world_level_bw(const sim_world *w, unsigned level)
{
	return tg_topology_layer_bandwidth(w->t, level);
}

/* ---- the engine ---- */

void sim_config_default(sim_config *c)
{
	memset(c, 0, sizeof(*c));
	c->comm_fraction = SIM_DEFAULT_COMM;
	c->seed = 1;
	c->high_fraction = -1;
	c->time_scale = 1;
	c->preempt = true;
}

enum { J_FUTURE, J_PENDING, J_RUNNING, J_DONE, J_REJECTED };

typedef struct ejob {
	unsigned members, gpus;
	int64_t prio;
	double submit, dur;
	unsigned best_level;
	double best_bw;
	int state;
	bool tried;
	unsigned seq;		/* run number: stale heap entries differ */
	double runs;		/* seconds run over all runs */
	double end;
} ejob;

typedef struct hent {
	double t;
	unsigned job, seq;
} hent;

typedef struct eng {
	const sim_config *cfg;
	sim_world w;
	sim_policy *pol;
	bool preempts;
	unsigned nj;
	ejob *j;
	sim_live *live;
	sim_jobres *res;
	unsigned *order;	/* arrival order */
	hent *heap;
	unsigned nheap, capheap;
	unsigned *pend, npend, *snap;
	unsigned *run, nrun;
	bool dirty;
	/* choice buffers */
	sim_choice ch;
	unsigned maxm;
	/* level capacity caches, per GPU size */
	unsigned *maxcap[TG_MAX_GPUS + 1];	/* [nlayers + 1]: per layer,
						 * then the whole fabric */
	uint32_t *cnt;		/* per domain scratch */
	uint32_t *stamp;	/* per domain scratch */
	uint32_t stampv;
	/* state metrics */
	uint32_t hist[TG_MAX_GPUS + 1];
	int64_t total_free, unusable, busy;
	uint64_t ngpus;
	double now, t0;
	double busy_gs, frag_num, frag_den;
	unsigned preemptions;
	double lost_gs;
	uint64_t digest;
	char gang[SIM_GANG_MAX];
	tg_errinfo *ei;
} eng;

static void digest_add(eng *e, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		e->digest ^= b[i];
		e->digest *= 0x100000001b3ull;
	}
}

static void digest_event(eng *e, unsigned kind, unsigned job,
			 const tg_node_id *nodes, unsigned n)
{
	uint64_t tb;

	memcpy(&tb, &e->now, sizeof(tb));
	digest_add(e, &kind, sizeof(kind));
	digest_add(e, &job, sizeof(job));
	digest_add(e, &tb, sizeof(tb));
	if (nodes)
		digest_add(e, nodes, n * sizeof(*nodes));
}

static void node_change(eng *e, tg_node_id n, int32_t delta)
{
	int32_t *f = &e->w.free[n];

	e->hist[*f < 0 ? 0 : *f]--;
	e->unusable -= *f > 0 ? *f % 8 : 0;
	*f += delta;
	e->hist[*f < 0 ? 0 : *f]++;
	e->unusable += *f > 0 ? *f % 8 : 0;
	e->total_free += delta;
	e->busy -= delta;
}

/* Nodes with at least \p g free GPUs. */
static uint32_t avail_nodes(const eng *e, unsigned g)
{
	uint32_t s = 0;
	unsigned f;

	for (f = g; f <= TG_MAX_GPUS; f++)
		s += e->hist[f];
	return s;
}

/* heap of completions by (time, job) */
static bool hless(const hent *a, const hent *b)
{
	return a->t < b->t || (a->t == b->t && a->job < b->job);
}

static tg_err heap_push(eng *e, hent h)
{
	unsigned i;

	if (e->nheap == e->capheap) {
		unsigned nc = e->capheap ? e->capheap * 2 : 256;
		hent *nh = realloc(e->heap, nc * sizeof(*nh));

		if (!nh)
			return TG_ENOMEM;
		e->heap = nh;
		e->capheap = nc;
	}
	i = e->nheap++;
	while (i && hless(&h, &e->heap[(i - 1) / 2])) {
		e->heap[i] = e->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	e->heap[i] = h;
	return TG_OK;
}

static void heap_pop(eng *e)
{
	hent last = e->heap[--e->nheap];
	unsigned i = 0, c;

	while ((c = 2 * i + 1) < e->nheap) {
		if (c + 1 < e->nheap && hless(&e->heap[c + 1], &e->heap[c]))
			c++;
		if (!hless(&e->heap[c], &last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (e->nheap)
		e->heap[i] = last;
}

/* drops completions of runs that were killed */
static void heap_clean(eng *e)
{
	while (e->nheap && e->heap[0].seq != e->j[e->heap[0].job].seq)
		heap_pop(e);
}

/* pending order: priority (higher first), submit, trace order */
static int pend_cmp(const eng *e, unsigned a, unsigned b)
{
	if (e->j[a].prio != e->j[b].prio)
		return e->j[a].prio > e->j[b].prio ? -1 : 1;
	if (e->j[a].submit != e->j[b].submit)
		return e->j[a].submit < e->j[b].submit ? -1 : 1;
	return a < b ? -1 : a > b;
}

static void pend_insert(eng *e, unsigned job)
{
	unsigned lo = 0, hi = e->npend;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (pend_cmp(e, e->pend[mid], job) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&e->pend[lo + 1], &e->pend[lo],
		(e->npend - lo) * sizeof(*e->pend));
	e->pend[lo] = job;
	e->npend++;
	e->j[job].state = J_PENDING;
	e->j[job].tried = false;
}

static void run_remove(eng *e, unsigned job)
{
	unsigned i;

	for (i = 0; i < e->nrun && e->run[i] != job; i++)
		;
	if (i < e->nrun) {
		memmove(&e->run[i], &e->run[i + 1],
			(e->nrun - i - 1) * sizeof(*e->run));
		e->nrun--;
	}
	e->w.nrun = e->nrun;
}

/* advances the clock, integrating the state metrics */
static void advance(eng *e, double t)
{
	double dt = t - e->now;

	if (dt > 0) {
		e->busy_gs += (double)e->busy * dt;
		if (e->total_free > 0) {
			e->frag_num += (double)e->unusable /
				       (double)e->total_free * dt;
			e->frag_den += dt;
		}
		e->now = t;
	}
}

static tg_err check_state(eng *e)
{
	tg_errinfo ei;
	unsigned n;

	if (!e->cfg->check)
		return TG_OK;
	if (tg_topology_check(e->w.t, &ei)) {
		sim_seterr(e->ei, "sim: model broken at t=%.0f: %s", e->now,
		       ei.msg);
		return TG_ESTATE;
	}
	for (n = 0; n < e->w.nnodes; n++)
		if (e->w.free[n] != tg_topology_node_free(e->w.t, n,
							  TG_RES_GPU) ||
		    e->w.free[n] < 0) {
			sim_seterr(e->ei, "sim: node %s: free GPUs %d, topology "
			       "says %lld", tg_topology_node_name(e->w.t, n),
			       e->w.free[n],
			       (long long)tg_topology_node_free(e->w.t, n,
								TG_RES_GPU));
			return TG_ESTATE;
		}
	return TG_OK;
}

/* Ends or kills the current run of \p job and gives its GPUs back. */
static void stop_job(eng *e, unsigned job, bool killed)
{
	ejob *j = &e->j[job];
	sim_live *lv = &e->live[job];
	double ran = e->now - lv->start;
	unsigned i;

	sim_gang_name(job, e->gang);
	tg_topology_remove_gang(e->w.t, e->gang);
	for (i = 0; i < lv->nmembers; i++)
		node_change(e, lv->nodes[i], (int32_t)j->gpus);
	lv->running = false;
	j->runs += ran;
	j->seq++;
	run_remove(e, job);
	e->dirty = true;
	if (killed) {
		e->preemptions++;
		e->lost_gs += ran * j->gpus * j->members;
		e->res[job].preempted++;
		digest_event(e, 2, job, NULL, 0);
		pend_insert(e, job);
	} else {
		j->state = J_DONE;
		j->end = e->now;
		e->res[job].end = e->now;
	}
}

/* Layer capacities of the empty fabric for members of \p g GPUs. */
static tg_err level_caps(eng *e, unsigned g, const unsigned **out)
{
	unsigned nl = e->w.nlayers, n, l, *mc;

	if (!e->maxcap[g]) {
		if (!(mc = calloc(nl + 1, sizeof(*mc))))
			return TG_ENOMEM;
		memset(e->cnt, 0, e->w.ndomains * sizeof(*e->cnt));
		for (n = 0; n < e->w.nnodes; n++) {
			if (e->w.ngpus[n] < g)
				continue;
			mc[nl]++;
			for (l = 0; l < nl; l++) {
				uint32_t d = e->w.ndom[(size_t)n * nl + l];

				if (d != TG_NONE && ++e->cnt[d] > mc[l])
					mc[l] = e->cnt[d];
			}
		}
		e->maxcap[g] = mc;
	}
	*out = e->maxcap[g];
	return TG_OK;
}

/* The lowest level a job of \p m members of \p g GPUs fits in, given
 * per-layer maxima \p mc ([nlayers] = all nodes), \p anynode whether one
 * node takes a member; TG_NONE - 1 when it never fits. */
#define NOFIT (TG_NONE - 1)
static unsigned lowest_level(unsigned nl, const unsigned *mc, unsigned m,
			     bool anynode)
{
	unsigned l;

	if (m <= 1)
		return anynode ? nl : NOFIT;
	for (l = nl; l-- > 0;)
		if (mc[l] >= m)
			return l;
	return mc[nl] >= m ? TG_NONE : NOFIT;
}

/* The same on the current free GPUs (before the job is added). */
static unsigned lowest_level_now(eng *e, unsigned m, unsigned g)
{
	unsigned nl = e->w.nlayers, n, l, mc[TG_MAX_LAYERS + 1];

	memset(mc, 0, sizeof(mc));
	if (++e->stampv == 0) {
		memset(e->stamp, 0, e->w.ndomains * sizeof(*e->stamp));
		e->stampv = 1;
	}
	for (n = 0; n < e->w.nnodes; n++) {
		if (e->w.free[n] < (int32_t)g)
			continue;
		mc[nl]++;
		for (l = 0; l < nl; l++) {
			uint32_t d = e->w.ndom[(size_t)n * nl + l];

			if (d == TG_NONE)
				continue;
			if (e->stamp[d] != e->stampv) {
				e->stamp[d] = e->stampv;
				e->cnt[d] = 0;
			}
			if (++e->cnt[d] > mc[l])
				mc[l] = e->cnt[d];
		}
	}
	return lowest_level(nl, mc, m, mc[nl] > 0);
}

static uint64_t low_bits(uint64_t mask, unsigned g)
{
	uint64_t out = 0;

	while (g-- && mask) {
		uint64_t b = mask & (~mask + 1);

		out |= b;
		mask &= ~b;
	}
	return out;
}

static unsigned popcount64(uint64_t x)
{
	unsigned c = 0;

	for (; x; x &= x - 1)
		c++;
	return c;
}

/* Starts \p job where the policy chose, killing its victims first. */
static tg_err start_job(eng *e, unsigned job)
{
	ejob *j = &e->j[job];
	sim_live *lv = &e->live[job];
	sim_jobres *r = &e->res[job];
	sim_choice *c = &e->ch;
	unsigned i, k, nl = e->w.nlayers;
	char pod[SIM_GANG_MAX + 16];
	double gbps, run;
	tg_shape shape;
	tg_err err;

	for (i = 0; i < c->nvictims; i++) {
		unsigned v = c->victims[i];

		if (v >= e->nj || !e->live[v].running ||
		    e->live[v].priority >= j->prio) {
			sim_seterr(e->ei, "sim: policy chose job-%u as a victim "
			       "of job-%u: not a running job of lower "
			       "priority", v, job);
			return TG_ESTATE;
		}
		stop_job(e, v, true);
	}
	for (i = 0; i < j->members; i++) {
		tg_node_id n = c->node[i];
		uint64_t fm;

		if (n >= e->w.nnodes || e->w.free[n] < (int32_t)j->gpus) {
			sim_seterr(e->ei, "sim: policy put member %u of job-%u "
			       "on a node without %u free GPUs", i, job,
			       j->gpus);
			return TG_ESTATE;
		}
		for (k = 0; k < i; k++)
			if (c->node[k] == n) {
				sim_seterr(e->ei, "sim: policy put two members "
				       "of job-%u on node %s", job,
				       tg_topology_node_name(e->w.t, n));
				return TG_ESTATE;
			}
		fm = tg_topology_node_free_gpus(e->w.t, n);
		if (!c->gpus[i])
			c->gpus[i] = low_bits(fm, j->gpus);
		if ((c->gpus[i] & ~fm) || popcount64(c->gpus[i]) != j->gpus) {
			sim_seterr(e->ei, "sim: policy gave member %u of job-%u "
			       "GPUs that are not free on %s", i, job,
			       tg_topology_node_name(e->w.t, n));
			return TG_ESTATE;
		}
	}
	r->smallest = j->members > 1 ? lowest_level_now(e, j->members,
							 j->gpus) : nl;
	memset(&shape, 0, sizeof(shape));
	shape.v[TG_RES_GPU] = j->gpus;
	sim_gang_name(job, e->gang);
	for (i = 0; i < j->members; i++) {
		tg_alloc_spec as;

		snprintf(pod, sizeof(pod), "%s-%u", e->gang, i);
		memset(&as, 0, sizeof(as));
		as.pod = pod;
		as.gang = e->gang;
		as.node = c->node[i];
		as.shape = &shape;
		as.gpus = c->gpus[i];
		as.priority = j->prio;
		as.preemptible = true;
		if ((err = tg_topology_add_alloc(e->w.t, &as))) {
			sim_seterr(e->ei, "sim: job-%u: recording member %u: %s",
			       job, i, tg_strerror(err));
			return err;
		}
		node_change(e, c->node[i], -(int32_t)j->gpus);
		lv->nodes[i] = c->node[i];
	}
	r->level = sim_world_level(&e->w, c->node, j->members);
	gbps = c->bw > 0 ? c->bw : sim_world_level_bw(&e->w, r->level);
	r->gbps = gbps;
	r->best_gbps = j->best_bw;
	r->stretch = sim_stretch(e->cfg->comm_fraction, j->best_bw, gbps);
	run = j->dur * r->stretch;
	r->start = e->now;
	r->end = e->now + run;
	memcpy(r->nodes, c->node, j->members * sizeof(*r->nodes));
	lv->running = true;
	lv->start = e->now;
	j->state = J_RUNNING;
	/* a pending job of higher priority that failed before may now
	 * preempt this one: try it again at the next event */
	if (e->preempts && e->cfg->preempt)
		for (i = 0; i < e->npend; i++)
			if (e->j[e->pend[i]].prio > j->prio)
				e->j[e->pend[i]].tried = false;
	e->run[e->nrun++] = job;
	e->w.nrun = e->nrun;
	digest_event(e, 1, job, c->node, j->members);
	if ((err = heap_push(e, (hent){ e->now + run, job, j->seq })))
		return err;
	return check_state(e);
}

/* Whether some running job has a lower priority than \p prio. */
static bool lower_runs(const eng *e, int64_t prio)
{
	unsigned i;

	for (i = 0; i < e->nrun; i++)
		if (e->live[e->run[i]].priority < prio)
			return true;
	return false;
}

static tg_err try_job(eng *e, unsigned job)
{
	ejob *j = &e->j[job];
	sim_req rq;
	bool placed = false;
	tg_err err;

	memset(&rq, 0, sizeof(rq));
	rq.job = job;
	sim_gang_name(job, e->gang);
	rq.name = e->gang;
	rq.members = j->members;
	rq.gpus = j->gpus;
	rq.priority = j->prio;
	rq.may_preempt = e->preempts && e->cfg->preempt &&
			 lower_runs(e, j->prio);
	if (!rq.may_preempt && avail_nodes(e, j->gpus) < j->members)
		return TG_OK;
	e->ch.nvictims = 0;
	e->ch.bw = 0;
	memset(e->ch.gpus, 0, j->members * sizeof(*e->ch.gpus));
	if ((err = sim_policy_place(e->pol, &rq, &e->ch, &placed, e->ei)))
		return err;
	if (!placed)
		return TG_OK;
	if (!rq.may_preempt && e->ch.nvictims) {
		sim_seterr(e->ei, "sim: policy preempted for job-%u without "
		       "being allowed to", job);
		return TG_ESTATE;
	}
	return start_job(e, job);
}

static tg_err schedule(eng *e)
{
	unsigned round, i, n, k;
	tg_err err;

	for (round = 0; round <= e->nj + 1; round++) {
		unsigned p0 = e->preemptions;

		n = e->npend;
		memcpy(e->snap, e->pend, n * sizeof(*e->snap));
		for (i = 0; i < n; i++) {
			unsigned job = e->snap[i];

			if (e->j[job].state != J_PENDING ||
			    (!e->dirty && e->j[job].tried))
				continue;
			e->j[job].tried = true;
			if ((err = try_job(e, job)))
				return err;
		}
		for (i = k = 0; i < e->npend; i++)
			if (e->j[e->pend[i]].state == J_PENDING)
				e->pend[k++] = e->pend[i];
		e->npend = k;
		e->dirty = e->preemptions != p0;
		if (!e->dirty)
			return TG_OK;
	}
	return TG_OK;
}

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static double nearest_rank(const double *v, unsigned n, double q)
{
	unsigned k;

	if (!n)
		return 0;
	k = (unsigned)ceil(q * n);
	if (k < 1)
		k = 1;
	return v[k - 1];
}

static const ejob *sort_jobs;

static int arrival_cmp(const void *pa, const void *pb)
{
	unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;

	if (sort_jobs[a].submit != sort_jobs[b].submit)
		return sort_jobs[a].submit < sort_jobs[b].submit ? -1 : 1;
	return a < b ? -1 : a > b;
}

static tg_err summarize(eng *e, const char *policy, sim_result *res)
{
	unsigned i, l, nl = e->w.nlayers, nmulti = 0, nsmall = 0;
	double *waits, ssum = 0, smsum = 0, last = e->t0;
	uint32_t *mark;

	snprintf(res->policy, sizeof(res->policy), "%s", policy);
	res->njobs = e->nj;
	res->nlayers = nl;
	for (l = 0; l < nl; l++)
		snprintf(res->layer[l], sizeof(res->layer[l]), "%s",
			 tg_topology_layer_name(e->w.t, l));
	if (!(waits = malloc((e->nj + 1) * sizeof(*waits))) ||
	    !(mark = calloc(e->w.ndomains + 1, sizeof(*mark)))) {
		free(waits);
		return TG_ENOMEM;
	}
	for (i = 0; i < e->nj; i++) {
		const ejob *j = &e->j[i];
		sim_jobres *r = &e->res[i];

		if (j->state == J_REJECTED) {
			res->rejected++;
			continue;
		}
		r->wait = j->end - j->submit - j->runs;
		if (r->wait < 0)
			r->wait = 0;
		waits[res->completed++] = r->wait;
		ssum += r->stretch;
		if (j->end > last)
			last = j->end;
		if (j->members < 2)
			continue;
		nmulti++;
		smsum += r->stretch;
		nsmall += r->level == r->smallest;
		for (l = 0; l < nl; l++) {
			unsigned m, cnt = 0;

			for (m = 0; m < j->members; m++) {
				uint32_t d = e->w.ndom[(size_t)r->nodes[m] *
						       nl + l];

				if (d == TG_NONE)
					cnt++;	/* outside: its own */
				else if (mark[d] != nmulti * (nl + 1) + l + 1) {
					mark[d] = nmulti * (nl + 1) + l + 1;
					cnt++;
				}
			}
			res->span[l] += cnt;
		}
	}
	res->multinode = nmulti;
	if (res->completed) {
		double s = 0;

		for (i = 0; i < res->completed; i++)
			s += waits[i];
		res->wait_mean = s / res->completed;
		qsort(waits, res->completed, sizeof(*waits), dbl_cmp);
		res->wait_median = nearest_rank(waits, res->completed, 0.5);
		res->wait_p95 = nearest_rank(waits, res->completed, 0.95);
		res->stretch_mean = ssum / res->completed;
	}
	if (nmulti) {
		res->stretch_multi = smsum / nmulti;
		res->smallest_frac = (double)nsmall / nmulti;
		for (l = 0; l < nl; l++)
			res->span[l] /= nmulti;
	}
	res->makespan = last - e->t0;
	res->util = res->makespan > 0 && e->ngpus ?
		    e->busy_gs / ((double)e->ngpus * res->makespan) : 0;
	res->frag = e->frag_den > 0 ? e->frag_num / e->frag_den : 0;
	res->preemptions = e->preemptions;
	res->gpuh_lost = e->lost_gs / 3600;
	res->digest = e->digest;
	free(waits);
	free(mark);
	return TG_OK;
}

static void eng_fini(eng *e)
{
	unsigned i;

	sim_policy_destroy(e->pol);
	for (i = 0; e->live && i < e->nj; i++)
		free(e->live[i].nodes);
	for (i = 0; i <= TG_MAX_GPUS; i++)
		free(e->maxcap[i]);
	tg_topology_destroy(e->w.t);
	sim_world_fini(&e->w);
	free(e->j);
	free(e->live);
	free(e->order);
	free(e->heap);
	free(e->pend);
	free(e->snap);
	free(e->run);
	free(e->ch.node);
	free(e->ch.gpus);
	free(e->ch.victims);
	free(e->cnt);
	free(e->stamp);
}

void sim_result_free(sim_result *res)
{
	unsigned i;

	if (!res)
		return;
	for (i = 0; res->jobs && i < res->njobs; i++)
		free(res->jobs[i].nodes);
	free(res->jobs);
	res->jobs = NULL;
}

/* Shapes every job and finds its best level; errors name the line. */
static tg_err eng_jobs(eng *e, const sim_trace *tr, uint64_t seed)
{
	unsigned i, gmax = 0, n, nl = e->w.nlayers;
	tg_err err;

	for (n = 0; n < e->w.nnodes; n++)
		if (e->w.ngpus[n] > gmax)
			gmax = e->w.ngpus[n];
	for (i = 0; i < e->nj; i++) {
		const sim_job *sj = &tr->jobs[i];
		ejob *j = &e->j[i];
		const unsigned *mc;
		unsigned lvl;

		if (sj->nodes) {
			j->members = sj->nodes;
			j->gpus = sj->gpus / sj->nodes;
		} else if (sj->gpus <= gmax) {
			j->members = 1;
			j->gpus = sj->gpus;
		} else if (gmax && sj->gpus % gmax == 0) {
			j->members = sj->gpus / gmax;
			j->gpus = gmax;
		} else {
			sim_seterr(e->ei, "%s:%u: job %s: %u GPUs do not split "
			       "into whole %u-GPU nodes; give a nodes column",
			       tr->source, sj->line, sj->id, sj->gpus, gmax);
			return TG_EINVAL;
		}
		j->submit = sj->submit / e->cfg->time_scale;
		j->dur = sj->duration;
		if (e->cfg->high_fraction >= 0) {
			uint64_t s = seed ^ (0x9e3779b97f4a7c15ull * (i + 1));
			double u = (double)(sim_rand(&s) >> 11) * 0x1p-53;

			j->prio = u < e->cfg->high_fraction ? SIM_PRIO_HIGH
							    : SIM_PRIO_LOW;
		} else {
			j->prio = sj->priority;
		}
		e->live[i].priority = j->prio;
		e->live[i].gpus = j->gpus;
		e->live[i].nmembers = j->members;
		if (j->members > e->maxm)
			e->maxm = j->members;
		e->res[i].start = -1;
		e->res[i].end = -1;
		e->res[i].nmembers = j->members;
		e->res[i].gpus = j->gpus;
		e->res[i].priority = j->prio;
		e->res[i].level = TG_NONE;
		if (j->gpus > TG_MAX_GPUS) {
			lvl = NOFIT;
		} else {
			if ((err = level_caps(e, j->gpus, &mc)))
				return err;
			lvl = lowest_level(nl, mc, j->members, mc[nl] > 0);
		}
		if (lvl == NOFIT) {
			j->state = J_REJECTED;
			e->res[i].rejected = true;
			continue;
		}
		j->best_level = lvl;
		j->best_bw = sim_world_level_bw(&e->w, lvl);
		if (!(e->live[i].nodes = malloc(j->members *
						sizeof(tg_node_id))) ||
		    !(e->res[i].nodes = malloc(j->members *
					       sizeof(tg_node_id))))
			return TG_ENOMEM;
	}
	return TG_OK;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The engine's arrays, jobs, policy and the fabric's first figures; the
 * result's job array is res->jobs (freed with the result) from here on. */
static tg_err eng_setup(eng *e, const sim_trace *tr, const char *policy,
			sim_result *res)
{
	const sim_config *cfg = e->cfg;
	unsigned i, n;
	tg_err err;

	e->nj = tr->njobs;
	e->preempts = sim_policy_preempts(policy);
	n = e->nj + 1;
	e->j = calloc(n, sizeof(*e->j));
	e->live = calloc(n, sizeof(*e->live));
	e->res = calloc(n, sizeof(*e->res));
	e->order = malloc(n * sizeof(*e->order));
	e->pend = malloc(n * sizeof(*e->pend));
	e->snap = malloc(n * sizeof(*e->snap));
	e->run = malloc(n * sizeof(*e->run));
	e->ch.victims = malloc(n * sizeof(*e->ch.victims));
	e->cnt = calloc(e->w.ndomains + 1, sizeof(*e->cnt));
	e->stamp = calloc(e->w.ndomains + 1, sizeof(*e->stamp));
	if (!e->j || !e->live || !e->res || !e->order || !e->pend ||
	    !e->snap || !e->run || !e->ch.victims || !e->cnt || !e->stamp)
		return TG_ENOMEM;
	res->jobs = e->res;	/* freed with the result from here on */
	res->njobs = e->nj;
	if ((err = eng_jobs(e, tr, cfg->seed)))
		return err;
	e->ch.node = malloc((e->maxm + 1) * sizeof(*e->ch.node));
	e->ch.gpus = malloc((e->maxm + 1) * sizeof(*e->ch.gpus));
	if (!e->ch.node || !e->ch.gpus)
		return TG_ENOMEM;
	e->w.live = e->live;
	e->w.njobs = e->nj;
	e->w.run = e->run;
	if ((err = sim_policy_create(policy, &e->w, cfg->seed, &e->pol,
				     e->ei)))
		return err;
	for (n = 0; n < e->w.nnodes; n++) {
		int32_t fr = e->w.free[n];

		e->hist[fr < 0 ? 0 : fr > TG_MAX_GPUS ? TG_MAX_GPUS : fr]++;
		e->unusable += fr > 0 ? fr % 8 : 0;
		e->total_free += fr;
		e->ngpus += e->w.ngpus[n];
	}
	for (i = 0; i < e->nj; i++)
		e->order[i] = i;
	sort_jobs = e->j;
	qsort(e->order, e->nj, sizeof(*e->order), arrival_cmp);
	e->t0 = e->now = e->nj ? e->j[e->order[0]].submit : 0;
	return TG_OK;
}

/* The events in time order: ends, arrivals, then a scheduling pass. */
static tg_err eng_loop(eng *e)
{
	unsigned ai = 0;
	tg_err err;

	for (;;) {
		double tn = INFINITY;

		heap_clean(e);
		if (ai < e->nj)
			tn = e->j[e->order[ai]].submit;
		if (e->nheap && e->heap[0].t < tn)
			tn = e->heap[0].t;
		if (tn == INFINITY)
			return TG_OK;
		advance(e, tn);
		while ((heap_clean(e), e->nheap) && e->heap[0].t <= e->now) {
			unsigned job = e->heap[0].job;

			heap_pop(e);
			stop_job(e, job, false);
			digest_event(e, 3, job, NULL, 0);
		}
		while (ai < e->nj && e->j[e->order[ai]].submit <= e->now) {
			unsigned job = e->order[ai++];

			if (e->j[job].state != J_REJECTED)
				pend_insert(e, job);
		}
		if ((err = check_state(e)) || (err = schedule(e)))
			return err;
	}
}

tg_err sim_run(const sim_fabric *f, const sim_trace *tr,
	       const char *policy, const sim_config *cfg, sim_result *res,
	       tg_errinfo *ei)
{
	tg_topology *t = NULL;
	double w0 = now_s();
	eng e;
	tg_err err;

	memset(res, 0, sizeof(*res));
	memset(&e, 0, sizeof(e));
	e.cfg = cfg;
	e.ei = ei;
	if (ei)
		ei->msg[0] = '\0';
	e.digest = 0xcbf29ce484222325ull;
	if (!sim_policy_known(policy)) {
		sim_seterr(ei, "unknown policy '%s'", policy);
		return TG_EINVAL;
	}
	if (!(cfg->comm_fraction >= 0 && cfg->comm_fraction <= 1) ||
	    !(cfg->time_scale > 0) || !(cfg->high_fraction <= 1)) {
		sim_seterr(ei, "sim: communication fraction must be in 0..1, "
		       "time scale > 0, high-priority share <= 1");
		return TG_EINVAL;
	}
	if ((err = sim_fabric_instantiate(f, &t, ei)))
		return err;
	if ((err = sim_world_init(&e.w, t))) {
		tg_topology_destroy(t);
		return err;
	}
	if ((err = eng_setup(&e, tr, policy, res)) || (err = eng_loop(&e)))
		goto fail;
	if (e.npend) {
		sim_seterr(ei, "sim: policy %s left %u jobs pending on an idle "
		       "fabric (first: job-%u, %u x %u GPUs)", policy, e.npend,
		       e.pend[0], e.j[e.pend[0]].members,
		       e.j[e.pend[0]].gpus);
		err = TG_ESTATE;
		goto fail;
	}
	if ((err = summarize(&e, policy, res)))
		goto fail;
	res->wall_s = now_s() - w0;
	if (!cfg->keep_jobs) {
		sim_result_free(res);
		res->njobs = e.nj;
	}
	e.res = NULL;
	eng_fini(&e);
	return TG_OK;
fail:
	if (ei && !ei->msg[0])
		sim_seterr(ei, "sim: %s", tg_strerror(err));
	if (res->jobs != e.res)
		free(e.res);
	e.res = NULL;
	sim_result_free(res);
	eng_fini(&e);
	return err;
}
