/*
 * cli/sim_cli.c - "topogang sim": replay a job trace on a fabric under
 * several placement policies and report the metrics side by side.
 *
 *   topogang sim --trace CSV --fabric SPEC|topology.conf|nodes.json
 *                [--policy P[,P...]] [--seed N] [--priority-mix F]
 *                [--comm-fraction F] [--time-scale F] [--gpus-per-node N]
 *                [--bandwidth LAYER=GBPS,...] [--no-preempt]
 *                [--output text|json] [--svg FILE] [--jobs-csv FILE]
 *   topogang sim --calibrate EVENTS --fabric topology.conf
 *                [--policy P[,P...]] [--output text|json]
 *
 * The engine and the policies are sim.c and sim_policy.c (see sim.h for
 * the model); this file is options, output and the SVG chart.
 *
 * Exit status: 0 done, 1 a simulation failed, 2 bad usage or input.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "sim.h"

#define MAX_RUN	16	/* policies in one invocation */

typedef struct opts {
	const char *trace, *fabric, *bandwidth, *svg, *calibrate, *jobs_csv;
	const char *policy[MAX_RUN];
	unsigned npolicy;
	bool policy_set;
	char polbuf[512];
	bool json;
	unsigned gpus_per_node;
	sim_config cfg;
} opts;

static void usage(FILE *f)
{
	fputs(
"usage: topogang sim --trace CSV --fabric SPEC|topology.conf|nodes.json\n"
"                    [--policy P[,P...]] [--seed N] [--priority-mix F]\n"
"                    [--comm-fraction F] [--time-scale F]\n"
"                    [--gpus-per-node N] [--bandwidth LAYER=GBPS,...]\n"
"                    [--no-preempt] [--output text|json] [--svg FILE]\n"
"                    [--jobs-csv FILE]\n"
"       topogang sim --calibrate EVENTS --fabric topology.conf\n"
"                    [--policy P[,P...]] [--output text|json]\n"
"\n"
"  --trace CSV          job_id,submit_s,duration_s,gpus[,nodes,priority]\n"
"  --fabric SPEC|FILE   zone:2,spine:4,block:8,node:18,gpu:8 (layers\n"
"                       farthest first, nodes per lowest domain, GPUs per\n"
"                       node), a topology.conf, or kubectl nodes JSON/YAML\n"
"  --policy P,...       topogang, k8s-default, pod-affinity, slurm-tree,\n"
"                       koordinator, random (default: all)\n"
"  --seed N             random choices and the priority mix (default 1)\n"
"  --priority-mix F     share F of jobs high priority (100), the rest 0;\n"
"                       default: the trace's priority column, else all 0\n"
"  --comm-fraction F    communication share of a job's time (default 0.5)\n"
"  --time-scale F       submit times divided by F (F > 1: more load)\n"
"  --gpus-per-node N    GPUs of each topology.conf node (default 8)\n"
"  --bandwidth L=G,...  Gbit/s inside one domain of layer L (or 'node')\n"
"  --no-preempt         no preemption for any policy\n"
"  --output text|json   a table (default) or JSON\n"
"  --svg FILE           bar charts of the main metrics\n"
"  --jobs-csv FILE      one row per policy and job: priority, size,\n"
"                       submit, start, end, wait, stretch, preemptions,\n"
"                       level and nodes of its last run\n"
"  --calibrate EVENTS   compare the policy (default slurm-tree) with a\n"
"                       real scheduler's recorded decisions, one by one\n"
"                       on the same state (tests/slurm/slurm-replay.py)\n", f);
}

static int set_policies(opts *o, const char *list)
{
	char *p, *c;

	if (strlen(list) >= sizeof(o->polbuf)) {
		cli_err("sim: --policy list longer than %zu bytes",
			sizeof(o->polbuf) - 1);
		return 2;
	}
	memcpy(o->polbuf, list, strlen(list) + 1);
	o->npolicy = 0;
	for (p = o->polbuf; p; p = c) {
		if ((c = strchr(p, ',')))
			*c++ = '\0';
		if (!sim_policy_known(p)) {
			cli_err("sim: unknown policy '%s' (topogang, "
				"k8s-default, pod-affinity, slurm-tree, "
				"koordinator, random)", p);
			return 2;
		}
		if (o->npolicy == MAX_RUN) {
			cli_err("sim: more than %d policies", MAX_RUN);
			return 2;
		}
		o->policy[o->npolicy++] = p;
	}
	return 0;
}

/* A real option value in lo..hi into *out; 2 with a message if not. */
static int real_opt(const char *name, const char *v, double lo, double hi,
		    const char *what, double *out)
{
	if (tg_f64_parse(v, lo, hi, out))
		return 0;
	cli_err("sim: %s '%s': not %s", name, v, what);
	return 2;
}

/* Sets the option \p name (one of sim_opts' values) to \p v; 0, or 2. */
static int set_value(opts *o, const char *name, const char *v)
{
	uint64_t u;
	int rc;

	if (!strcmp(name, "--trace")) {
		o->trace = v;
	} else if (!strcmp(name, "--fabric")) {
		o->fabric = v;
	} else if (!strcmp(name, "--policy")) {
		if ((rc = set_policies(o, v)))
			return rc;
		o->policy_set = true;
	} else if (!strcmp(name, "--seed")) {
		if (!tg_u64_parse(v, UINT64_MAX, &u)) {
			cli_err("sim: --seed '%s': not a number", v);
			return 2;
		}
		o->cfg.seed = u;
	} else if (!strcmp(name, "--priority-mix")) {
		return real_opt(name, v, 0, 1, "a share in 0..1",
				&o->cfg.high_fraction);
	} else if (!strcmp(name, "--comm-fraction")) {
		return real_opt(name, v, 0, 1, "a share in 0..1",
				&o->cfg.comm_fraction);
	} else if (!strcmp(name, "--time-scale")) {
		return real_opt(name, v, 1e-6, 1e6, "a factor in 1e-6..1e6",
				&o->cfg.time_scale);
	} else if (!strcmp(name, "--gpus-per-node")) {
		if (!tg_u64_parse(v, TG_MAX_GPUS, &u) || !u) {
			cli_err("sim: --gpus-per-node '%s': not in 1..%d", v,
				TG_MAX_GPUS);
			return 2;
		}
		o->gpus_per_node = (unsigned)u;
	} else if (!strcmp(name, "--bandwidth")) {
		o->bandwidth = v;
	} else if (!strcmp(name, "--output")) {
		if (strcmp(v, "json") && strcmp(v, "text")) {
			cli_err("sim: --output '%s': text or json", v);
			return 2;
		}
		o->json = !strcmp(v, "json");
	} else if (!strcmp(name, "--jobs-csv")) {
		o->jobs_csv = v;
		o->cfg.keep_jobs = true;
	} else if (!strcmp(name, "--calibrate")) {
		o->calibrate = v;
	} else if (!strcmp(name, "--svg")) {
		o->svg = v;
	}
	return 0;
}

/* What the options need of each other. */
static int check_opts(opts *o)
{
	if (o->calibrate) {
		if (!o->fabric || o->trace || o->svg) {
			cli_err("sim: --calibrate takes --fabric, and no "
				"--trace or --svg");
			usage(stderr);
			return 2;
		}
		if (!o->policy_set) {
			o->policy[0] = "slurm-tree";
			o->npolicy = 1;
		}
		return 0;
	}
	if (!o->trace || !o->fabric) {
		cli_err("sim: --trace and --fabric are required");
		usage(stderr);
		return 2;
	}
	return 0;
}

static const cli_opt sim_opts[] = {
	CLI_OPT_FLAG("--no-preempt"), CLI_OPT_VALUE("--trace"),
	CLI_OPT_VALUE("--fabric"), CLI_OPT_VALUE("--policy"),
	CLI_OPT_VALUE("--seed"), CLI_OPT_VALUE("--priority-mix"),
	CLI_OPT_VALUE("--comm-fraction"), CLI_OPT_VALUE("--time-scale"),
	CLI_OPT_VALUE("--gpus-per-node"), CLI_OPT_VALUE("--bandwidth"),
	CLI_OPT_VALUE("--output"), CLI_OPT_VALUE("--jobs-csv"),
	CLI_OPT_VALUE("--calibrate"), CLI_OPT_VALUE("--svg"), CLI_OPT_END
};

static int on_set(const cli_opts *co, unsigned k, const char *v)
{
	opts *o = co->arg;

	if (v)
		return set_value(o, sim_opts[k].name, v);
	o->cfg.preempt = false;	/* the one flag: --no-preempt */
	return 0;
}

/* 0 ok, 1 help printed, 2 bad usage (reported). */
static int parse_opts(int argc, char **argv, opts *o)
{
	const cli_opts co = { "sim", sim_opts, usage, on_set, o, false };
	int i, rc;

	memset(o, 0, sizeof(*o));
	sim_config_default(&o->cfg);
	o->gpus_per_node = 8;
	for (i = 0; sim_policy_names[i]; i++)
		o->policy[o->npolicy++] = sim_policy_names[i];
	if ((rc = cli_opts_parse(argc, argv, &co)))
		return rc;
	return check_opts(o);
}

/* ---- text ---- */

static const char *dur(double s, char *buf, size_t n)
{
	if (s < 0.05)
		snprintf(buf, n, "0s");
	else if (s < 100)
		snprintf(buf, n, "%.1fs", s);
	else if (s < 6000)
		snprintf(buf, n, "%.1fm", s / 60);
	else if (s < 3 * 86400)
		snprintf(buf, n, "%.1fh", s / 3600);
	else
		snprintf(buf, n, "%.1fd", s / 86400);
	return buf;
}

static void print_text(const opts *o, const sim_trace *tr,
		       const sim_fabric *f, const sim_result *r, unsigned nr)
{
	char a[32], b[32], c[32];
	unsigned i, l;

	printf("trace: %s, %u jobs (%u multi-node, %u never fit)\n",
	       tr->source, r[0].njobs, r[0].multinode, r[0].rejected);
	printf("fabric: %s\n", sim_fabric_describe(f));
	printf("model: communication fraction %.2f, time scale %g, "
	       "seed %llu, ", o->cfg.comm_fraction, o->cfg.time_scale,
	       (unsigned long long)o->cfg.seed);
	if (o->cfg.high_fraction >= 0)
		printf("priorities: %.0f%% high (%d), the rest %d",
		       o->cfg.high_fraction * 100, SIM_PRIO_HIGH,
		       SIM_PRIO_LOW);
	else
		printf("priorities: %s",
		       tr->has_priority ? "from the trace" : "all equal");
	printf(", preemption %s\n\n", o->cfg.preempt ? "on" : "off");
	printf("| policy | wait mean | wait p50 | wait p95 | stretch | "
	       "stretch multi-node | smallest domain | domains spanned (");
	for (l = 0; l < r[0].nlayers; l++)
		printf("%s%s", l ? "/" : "", r[0].layer[l]);
	printf(") | GPU util | frag | preempted | GPU-h lost | replay |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	       "---:|---:|\n");
	for (i = 0; i < nr; i++) {
		printf("| %s | %s | %s | %s | %.3f | %.3f | %.1f%% | ",
		       r[i].policy, dur(r[i].wait_mean, a, sizeof(a)),
		       dur(r[i].wait_median, b, sizeof(b)),
		       dur(r[i].wait_p95, c, sizeof(c)), r[i].stretch_mean,
		       r[i].stretch_multi, 100 * r[i].smallest_frac);
		for (l = 0; l < r[i].nlayers; l++)
			printf("%s%.2f", l ? "/" : "", r[i].span[l]);
		if (!r[i].nlayers)
			printf("-");
		printf(" | %.2f%% | %.2f%% | %u | %.1f | %.2fs |\n",
		       100 * r[i].util, 100 * r[i].frag, r[i].preemptions,
		       r[i].gpuh_lost, r[i].wall_s);
	}
}

/* ---- JSON ---- */

static int print_json(const opts *o, const sim_trace *tr,
		      const sim_fabric *f, const sim_result *r, unsigned nr)
{
	cJSON *root = cJSON_CreateObject(), *x, *arr, *p, *w, *s;
	char hex[32], *out;
	unsigned i, l;
	int rc = 1;

	if (!root)
		return 1;
	if (!(x = cJSON_AddObjectToObject(root, "trace")))
		goto out;
	cJSON_AddStringToObject(x, "source", tr->source);
	cJSON_AddNumberToObject(x, "jobs", r[0].njobs);
	cJSON_AddNumberToObject(x, "multinode", r[0].multinode);
	cJSON_AddNumberToObject(x, "never_fit", r[0].rejected);
	if (!(x = cJSON_AddObjectToObject(root, "fabric")))
		goto out;
	cJSON_AddStringToObject(x, "description", sim_fabric_describe(f));
	cJSON_AddNumberToObject(x, "nodes", sim_fabric_nnodes(f));
	cJSON_AddNumberToObject(x, "gpus", (double)sim_fabric_ngpus(f));
	if (!(x = cJSON_AddObjectToObject(root, "config")))
		goto out;
	cJSON_AddNumberToObject(x, "comm_fraction", o->cfg.comm_fraction);
	cJSON_AddNumberToObject(x, "seed", (double)o->cfg.seed);
	cJSON_AddNumberToObject(x, "time_scale", o->cfg.time_scale);
	if (o->cfg.high_fraction >= 0)
		cJSON_AddNumberToObject(x, "priority_mix",
					o->cfg.high_fraction);
	else
		cJSON_AddNullToObject(x, "priority_mix");
	cJSON_AddBoolToObject(x, "preempt", o->cfg.preempt);
	if (!(arr = cJSON_AddArrayToObject(root, "policies")))
		goto out;
	for (i = 0; i < nr; i++) {
		if (!(p = cJSON_CreateObject()))
			goto out;
		cJSON_AddItemToArray(arr, p);
		cJSON_AddStringToObject(p, "policy", r[i].policy);
		cJSON_AddNumberToObject(p, "completed", r[i].completed);
		if (!(w = cJSON_AddObjectToObject(p, "wait_s")))
			goto out;
		cJSON_AddNumberToObject(w, "mean", r[i].wait_mean);
		cJSON_AddNumberToObject(w, "median", r[i].wait_median);
		cJSON_AddNumberToObject(w, "p95", r[i].wait_p95);
		cJSON_AddNumberToObject(p, "stretch_mean", r[i].stretch_mean);
		cJSON_AddNumberToObject(p, "stretch_multinode_mean",
					r[i].stretch_multi);
		cJSON_AddNumberToObject(p, "smallest_domain_fraction",
					r[i].smallest_frac);
		if (!(s = cJSON_AddObjectToObject(p, "domains_spanned")))
			goto out;
		for (l = 0; l < r[i].nlayers; l++)
			cJSON_AddNumberToObject(s, r[i].layer[l],
						r[i].span[l]);
		cJSON_AddNumberToObject(p, "gpu_utilisation", r[i].util);
		cJSON_AddNumberToObject(p, "makespan_s", r[i].makespan);
		cJSON_AddNumberToObject(p, "fragmentation", r[i].frag);
		cJSON_AddNumberToObject(p, "preemptions", r[i].preemptions);
		cJSON_AddNumberToObject(p, "gpu_hours_lost", r[i].gpuh_lost);
		snprintf(hex, sizeof(hex), "%016llx",
			 (unsigned long long)r[i].digest);
		cJSON_AddStringToObject(p, "digest", hex);
		cJSON_AddNumberToObject(p, "replay_s", r[i].wall_s);
	}
	if (!(out = cJSON_Print(root)))
		goto out;
	puts(out);
	cJSON_free(out);
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

/* ---- SVG ---- */

static void xml_text(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default: fputc(*s, fp);
		}
	}
}

static const char *policy_color(const char *p)
{
	static const struct { const char *n, *c; } tab[] = {
		{ "topogang", "#2b6cb0" }, { "k8s-default", "#a0aec0" },
		{ "pod-affinity", "#ed8936" }, { "slurm-tree", "#38a169" },
		{ "koordinator", "#805ad5" }, { "random", "#e53e3e" },
	};
	unsigned i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(tab[i].n, p))
			return tab[i].c;
	return "#718096";
}

enum { M_WAIT, M_P95, M_STRETCH, M_SMALL, M_SPAN, M_UTIL, M_FRAG,
       M_PREEMPT, M_LOST, M_N };

static double metric(const sim_result *r, int m)
{
	switch (m) {
	case M_WAIT: return r->wait_mean / 3600;
	case M_P95: return r->wait_p95 / 3600;
	case M_STRETCH: return r->stretch_multi;
	case M_SMALL: return 100 * r->smallest_frac;
	case M_SPAN: return r->nlayers ? r->span[r->nlayers - 1] : 1;
	case M_UTIL: return 100 * r->util;
	case M_FRAG: return 100 * r->frag;
	case M_PREEMPT: return r->preemptions;
	default: return r->gpuh_lost;
	}
}

static int write_svg(const char *path, const opts *o, const sim_trace *tr,
		     const sim_fabric *f, const sim_result *r, unsigned nr)
{
	static const char *const title[M_N] = {
		"mean queueing delay (h)", "p95 queueing delay (h)",
		"mean stretch, multi-node jobs", "in the smallest domain (%)",
		"lowest-layer domains spanned", "GPU utilisation (%)",
		"fragmentation (% of free GPUs)", "jobs preempted",
		"GPU-hours lost to preemption"
	};
	const int cols = 3, pw = 320, ph = 210, top = 86, bars_h = 130;
	const int W = cols * pw, H = top + 3 * ph + 40;
	const char *tname;
	char lowest[80];
	FILE *fp;
	int m, i;

	if (!(fp = fopen(path, "w"))) {
		cli_err("sim: %s: %s", path, strerror(errno));
		return 2;
	}
	snprintf(lowest, sizeof(lowest), "%s domains spanned (mean)",
		 r[0].nlayers ? r[0].layer[r[0].nlayers - 1] : "node");
	fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica,"
		"Arial,sans-serif\">\n", W, H, W, H);
	fprintf(fp, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		W, H);
	tname = strrchr(tr->source, '/');
	fputs("<text x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\">"
	      "topogang sim: ", fp);
	xml_text(fp, tname ? tname + 1 : tr->source);
	fprintf(fp, " (%u jobs)</text>\n", r[0].njobs);
	fputs("<text x=\"16\" y=\"46\" font-size=\"12\" fill=\"#4a5568\">",
	      fp);
	xml_text(fp, sim_fabric_describe(f));
	fputs("</text>\n<text x=\"16\" y=\"62\" font-size=\"12\" "
	      "fill=\"#4a5568\">", fp);
	fprintf(fp, "communication fraction %.2f, time scale %g, seed %llu",
		o->cfg.comm_fraction, o->cfg.time_scale,
		(unsigned long long)o->cfg.seed);
	if (o->cfg.high_fraction >= 0)
		fprintf(fp, ", %.0f%% high priority",
			100 * o->cfg.high_fraction);
	fprintf(fp, ", preemption %s</text>\n",
		o->cfg.preempt ? "on" : "off");
	for (m = 0; m < M_N; m++) {
		int x0 = (m % cols) * pw, y0 = top + (m / cols) * ph;
		int bw = (pw - 60) / (int)nr, base = y0 + 30 + bars_h;
		double mx = 0;

		for (i = 0; i < (int)nr; i++)
			if (metric(&r[i], m) > mx)
				mx = metric(&r[i], m);
		fprintf(fp, "<text x=\"%d\" y=\"%d\" font-size=\"13\" "
			"font-weight=\"bold\">", x0 + 20, y0 + 14);
		xml_text(fp, m == M_SPAN ? lowest : title[m]);
		fputs("</text>\n", fp);
		fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"#2d3748\"/>\n", x0 + 20, base,
			x0 + pw - 20, base);
		for (i = 0; i < (int)nr; i++) {
			double v = metric(&r[i], m);
			double h = mx > 0 ? v / mx * (bars_h - 18) : 0;
			int x = x0 + 30 + i * bw;
			int prec = v >= 100 || m == M_PREEMPT ||
				   m == M_LOST ? 0 : v >= 10 ? 1 : 2;

			fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" "
				"height=\"%.1f\" fill=\"%s\"/>\n", x,
				base - h, bw - 8, h,
				policy_color(r[i].policy));
			fprintf(fp, "<text x=\"%d\" y=\"%.1f\" "
				"font-size=\"10\" text-anchor=\"middle\">"
				"%.*f</text>\n", x + (bw - 8) / 2,
				base - h - 3, prec, v);
		}
	}
	/* legend */
	for (i = 0; i < (int)nr; i++) {
		int x = 20 + i * (W - 40) / (int)nr, y = H - 22;

		fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"12\" "
			"height=\"12\" fill=\"%s\"/>\n", x, y - 10,
			policy_color(r[i].policy));
		fprintf(fp, "<text x=\"%d\" y=\"%d\" font-size=\"12\">", x + 16,
			y);
		xml_text(fp, r[i].policy);
		fputs("</text>\n", fp);
	}
	fputs("</svg>\n", fp);
	if (ferror(fp) | fclose(fp)) {
		cli_err("sim: %s: write error", path);
		return 2;
	}
	return 0;
}

/* ---- per-job rows ---- */

static int write_jobs_csv(const opts *o, const sim_trace *tr,
			  const sim_fabric *f, const sim_result *r,
			  unsigned nr)
{
	FILE *fp = fopen(o->jobs_csv, "w");
	unsigned i, k, m;
	tg_topology *t = NULL;
	tg_errinfo ei;

	if (!fp) {
		cli_err("sim: --jobs-csv %s: %s", o->jobs_csv,
			strerror(errno));
		return 2;
	}
	if (sim_fabric_instantiate(f, &t, &ei)) {
		cli_err("%s", ei.msg);
		fclose(fp);
		return 1;
	}
	fputs("policy,job_id,priority,members,gpus_per_member,submit_s,"
	      "start_s,end_s,wait_s,stretch,preempted,level,nodes\n", fp);
	for (i = 0; i < nr; i++)
		for (k = 0; k < r[i].njobs && r[i].jobs; k++) {
			const sim_jobres *j = &r[i].jobs[k];

			fprintf(fp, "%s,%s,%lld,%u,%u,%.3f,%.3f,%.3f,%.3f,"
				"%.4f,%u,", r[i].policy, tr->jobs[k].id,
				(long long)j->priority, j->nmembers, j->gpus,
				tr->jobs[k].submit / o->cfg.time_scale,
				j->start, j->end, j->wait, j->stretch,
				j->preempted);
			if (j->start < 0)
				fputs("-,", fp);
			else if (j->level == TG_NONE)
				fputs("root,", fp);
			else if (j->level >= tg_topology_nlayers(t))
				fputs("node,", fp);
			else
				fprintf(fp, "%s,", tg_topology_layer_name(
					t, j->level));
			for (m = 0; j->start >= 0 && m < j->nmembers; m++)
				fprintf(fp, "%s%s", m ? " " : "",
					tg_topology_node_name(t, j->nodes[m]));
			fputc('\n', fp);
		}
	tg_topology_destroy(t);
	if (fclose(fp)) {
		cli_err("sim: --jobs-csv %s: write error", o->jobs_csv);
		return 1;
	}
	return 0;
}

/* ---- calibration ---- */

static int print_calib(const opts *o, const sim_fabric *f,
		       const sim_calib *c, unsigned nc)
{
	unsigned i, k;

	if (!o->json) {
		printf("calibration against %s on %s\n", o->calibrate,
		       sim_fabric_describe(f));
		for (i = 0; i < nc; i++) {
			printf("%s: %u decisions, %u the same (%.1f%%), %u "
			       "left pending by the scheduler\n",
			       c[i].policy, c[i].decisions, c[i].matches,
			       c[i].decisions ? 100.0 * c[i].matches /
			       c[i].decisions : 0.0, c[i].sched_pending);
			for (k = 0; k < c[i].nmiss; k++) {
				const sim_calib_miss *m = &c[i].miss[k];

				printf("  job %s (line %u): scheduler %s [%s]"
				       ", %s %s [%s]\n", m->job, m->line,
				       m->sched, m->sched_leaves,
				       c[i].policy, m->policy,
				       m->policy_leaves);
			}
		}
		return 0;
	}
	{
		cJSON *root = cJSON_CreateObject(), *arr, *o1, *mm, *x;
		char *txt;

		if (!root)
			return 1;
		cJSON_AddStringToObject(root, "events", o->calibrate);
		cJSON_AddStringToObject(root, "fabric",
					sim_fabric_describe(f));
		arr = cJSON_AddArrayToObject(root, "policies");
		for (i = 0; arr && i < nc; i++) {
			if (!(o1 = cJSON_CreateObject()) ||
			    !cJSON_AddItemToArray(arr, o1))
				break;
			cJSON_AddStringToObject(o1, "policy", c[i].policy);
			cJSON_AddNumberToObject(o1, "decisions",
						c[i].decisions);
			cJSON_AddNumberToObject(o1, "matches", c[i].matches);
			cJSON_AddNumberToObject(o1, "scheduler_pending",
						c[i].sched_pending);
			mm = cJSON_AddArrayToObject(o1, "mismatches");
			for (k = 0; mm && k < c[i].nmiss; k++) {
				const sim_calib_miss *m = &c[i].miss[k];

				if (!(x = cJSON_CreateObject()) ||
				    !cJSON_AddItemToArray(mm, x))
					break;
				cJSON_AddStringToObject(x, "job", m->job);
				cJSON_AddNumberToObject(x, "line", m->line);
				cJSON_AddStringToObject(x, "scheduler",
							m->sched);
				cJSON_AddStringToObject(x, "scheduler_leaves",
							m->sched_leaves);
				cJSON_AddStringToObject(x, "policy",
							m->policy);
				cJSON_AddStringToObject(x, "policy_leaves",
							m->policy_leaves);
			}
		}
		txt = cJSON_Print(root);
		cJSON_Delete(root);
		if (!txt)
			return 1;
		puts(txt);
		free(txt);
	}
	return 0;
}

static int run_calibrate(const opts *o, const sim_fabric *f)
{
	sim_calib c[MAX_RUN];
	unsigned i, nc = 0;
	tg_errinfo ei;
	char *buf = NULL;
	size_t len;
	int rc = 2;

	ei.msg[0] = '\0';
	memset(c, 0, sizeof(c));
	if (tg_file_read(o->calibrate, TG_MAX_FILE, &buf, &len, &ei)) {
		cli_err("%s", ei.msg);
		return 2;
	}
	for (i = 0; i < o->npolicy; i++) {
		tg_err err = sim_calibrate(f, buf, len, o->calibrate,
					   o->policy[i], &c[nc], &ei);

		if (err) {
			cli_err("%s", ei.msg[0] ? ei.msg : tg_strerror(err));
			rc = err == TG_EINVAL ? 2 : 1;
			goto out;
		}
		nc++;
	}
	if (print_calib(o, f, c, nc)) {
		cli_err("sim: out of memory writing JSON");
		rc = 1;
		goto out;
	}
	rc = fflush(stdout) ? 1 : 0;
out:
	for (i = 0; i < nc; i++)
		sim_calib_free(&c[i]);
	tg_free(buf);
	return rc;
}

int cli_sim(int argc, char **argv)
{
	sim_result res[MAX_RUN];
	sim_fabric *f = NULL;
	sim_trace tr;
	tg_errinfo ei;
	opts o;
	unsigned i, nr = 0;
	int rc;

	memset(&tr, 0, sizeof(tr));
	memset(res, 0, sizeof(res));
	ei.msg[0] = '\0';
	if ((rc = parse_opts(argc, argv, &o)))
		return rc == 1 ? 0 : rc;
	rc = 2;
	if (o.calibrate) {
		if (sim_fabric_load(o.fabric, o.gpus_per_node, &f, &ei)) {
			cli_err("%s", ei.msg);
			goto out;
		}
		rc = run_calibrate(&o, f);
		goto out;
	}
	if (sim_trace_load(&tr, o.trace, &ei)) {
		cli_err("%s", ei.msg);
		goto out;
	}
	if (!tr.njobs) {
		cli_err("%s: no jobs", o.trace);
		goto out;
	}
	if (sim_fabric_load(o.fabric, o.gpus_per_node, &f, &ei)) {
		cli_err("%s", ei.msg);
		goto out;
	}
	if (!sim_fabric_ngpus(f)) {
		cli_err("%s: the fabric has no GPUs (%s)", o.fabric,
			sim_fabric_describe(f));
		goto out;
	}
	if (o.bandwidth && sim_fabric_set_bandwidth(f, o.bandwidth, &ei)) {
		cli_err("%s", ei.msg);
		goto out;
	}
	for (i = 0; i < o.npolicy; i++) {
		tg_err err = sim_run(f, &tr, o.policy[i], &o.cfg, &res[nr],
				     &ei);

		if (err) {
			cli_err("%s", ei.msg);
			rc = err == TG_EINVAL ? 2 : 1;
			goto out;
		}
		nr++;
	}
	if (o.json) {
		if (print_json(&o, &tr, f, res, nr)) {
			cli_err("sim: out of memory writing JSON");
			rc = 1;
			goto out;
		}
	} else {
		print_text(&o, &tr, f, res, nr);
	}
	if (o.svg && (rc = write_svg(o.svg, &o, &tr, f, res, nr)))
		goto out;
	if (o.jobs_csv && (rc = write_jobs_csv(&o, &tr, f, res, nr)))
		goto out;
	rc = fflush(stdout) ? 1 : 0;
out:
	for (i = 0; i < nr; i++)
		sim_result_free(&res[i]);
	sim_fabric_destroy(f);
	sim_trace_free(&tr);
	return rc;
}
