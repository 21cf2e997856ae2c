/*****************************************************************************\
 *  topogang_spank.c - per-job topology requests for select/topogang.
 *
 *  Adds --topo-gather=LAYER:must|prefer[,...],
 *  --topo-spread=LAYER[:SKEW][:hard|:soft][,...] and
 *  --topo-slice=LAYER:SIZE[,...] to srun, sbatch and salloc (also as
 *  #SBATCH lines).  The values are checked when the
 *  job is submitted and passed to slurmctld in the job's control
 *  environment (job_desc->spank_job_env, the channel SPANK has for
 *  telling slurmctld about a job), where select/topogang reads it.
 *
 *  Enable in plugstack.conf:
 *	optional /usr/lib/x86_64-linux-gnu/slurm-wlm/topogang_spank.so
 *  Arguments: conf=PATH names topogang.conf (default: beside slurm.conf);
 *  when it defines LayerName= aliases, layers not named there (nor as
 *  switch-lN / block...) are refused at submit time.
\*****************************************************************************/

#define _GNU_SOURCE

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "slurm/spank.h"

#include "tgconf.h"

SPANK_PLUGIN(topogang, 1);

static tg_request gather;
static bool gather_set = false;
static tg_request spread;
static bool spread_set = false;
static tg_request slice;
static bool slice_set = false;
static char conf_arg[PATH_MAX];

static int _opt_gather(int val, const char *optarg, int remote);
static int _opt_spread(int val, const char *optarg, int remote);
static int _opt_slice(int val, const char *optarg, int remote);

static struct spank_option gather_opt = {
	"topo-gather", "LAYER:must|prefer[,...]",
	"Topology gathering for the job's nodes, per layer of the fabric "
	"(layer names from topogang.conf, e.g. block:prefer,spine:must; "
	"\"none\" turns the partition default off).",
	1, 0, _opt_gather
};

static struct spank_option spread_opt = {
	"topo-spread", "LAYER[:SKEW][:hard|:soft][,...]",
	"Spread the job's nodes over the domains of a layer, member counts "
	"differing by at most SKEW (default 1); hard never exceeds it.",
	1, 0, _opt_spread
};

static struct spank_option slice_opt = {
	"topo-slice", "LAYER:SIZE[,...]",
	"Every SIZE consecutive nodes of the job share one domain of the "
	"layer (slices: e.g. block:2 puts the nodes two by two in blocks).",
	1, 0, _opt_slice
};

static bool _layer_generic(const char *l)
{
	size_t n;

	if (!strncasecmp(l, "switch-l", 8)) {
		n = strspn(l + 8, "0123456789");
		return n && !l[8 + n];
	}
	return !strncasecmp(l, "block", 5);
}

static void _conf_path(char *buf, size_t len)
{
	const char *sc = getenv("SLURM_CONF");
	const char *slash;

	if (conf_arg[0]) {
		snprintf(buf, len, "%s", conf_arg);
		return;
	}
	if (!sc || !*sc)
		sc = "/etc/slurm/slurm.conf";
	slash = strrchr(sc, '/');
	if (!slash)
		snprintf(buf, len, "topogang.conf");
	else
		snprintf(buf, len, "%.*s/topogang.conf", (int) (slash - sc),
			 sc);
}

/* Layer names must be aliases of topogang.conf when it has any. */
static int _check_layers(const char *opt, const tg_request *q)
{
	tgs_conf c;
	char path[PATH_MAX], err[TGS_ERRLEN];
	unsigned i, j;
	int rc = 0;

	_conf_path(path, sizeof(path));
	tgs_conf_init(&c);
	if (tgs_conf_load(&c, path, true, err, sizeof(err))) {
		/* select/topogang reports it; do not block submission */
		slurm_verbose("topogang: %s", err);
		return 0;
	}
	for (i = 0; c.nalias && i < q->n; i++) {
		const char *l = q->item[i].layer;
		bool known = _layer_generic(l);

		for (j = 0; j < c.nalias && !known; j++)
			known = !strcasecmp(c.alias[j].name, l) ||
				!strcasecmp(c.alias[j].layer, l);
		if (!known) {
			char names[512];
			size_t off = 0;

			names[0] = '\0';
			for (j = 0; j < c.nalias && off < sizeof(names); j++)
				off += snprintf(names + off,
						sizeof(names) - off, "%s%s",
						j ? ", " : "",
						c.alias[j].name);
			slurm_error("--%s: unknown layer '%s' (%s names: %s)",
				    opt, l, path, names);
			rc = -1;
			break;
		}
	}
	tgs_conf_free(&c);
	return rc;
}

/* Parses the option (the core's request grammar) into \p req, checks its
 * layers; logs and returns -1 from the caller on either error. */
#define OPT_PARSE(opt, kind, req)					\
	do {								\
		tg_errinfo ei_ = { "" };				\
									\
		if (tg_request_parse(&(req), kind, optarg, &ei_)) {	\
			slurm_error("--" opt ": %s", ei_.msg);		\
			return -1;					\
		}							\
		if (_check_layers(opt, &(req)))				\
			return -1;					\
	} while (0)

static int _opt_gather(int val, const char *optarg, int remote)
{
	(void) val;
	if (remote)
		return 0;
	OPT_PARSE("topo-gather", TG_REQUEST_GATHER, gather);
	gather_set = true;
	return 0;
}

static int _opt_spread(int val, const char *optarg, int remote)
{
	(void) val;
	if (remote)
		return 0;
	OPT_PARSE("topo-spread", TG_REQUEST_SPREAD, spread);
	spread_set = true;
	return 0;
}

static int _opt_slice(int val, const char *optarg, int remote)
{
	(void) val;
	if (remote)
		return 0;
	OPT_PARSE("topo-slice", TG_REQUEST_SLICE, slice);
	slice_set = true;
	return 0;
}

extern int slurm_spank_init(spank_t sp, int ac, char **av)
{
	int i;

	for (i = 0; i < ac; i++) {
		if (!strncmp(av[i], "conf=", 5)) {
			snprintf(conf_arg, sizeof(conf_arg), "%s", av[i] + 5);
		} else {
			slurm_error("topogang: unknown plugstack.conf "
				    "argument '%s'", av[i]);
			return -1;
		}
	}
	if (spank_option_register(sp, &gather_opt) != ESPANK_SUCCESS ||
	    spank_option_register(sp, &spread_opt) != ESPANK_SUCCESS ||
	    spank_option_register(sp, &slice_opt) != ESPANK_SUCCESS) {
		slurm_error("topogang: cannot register --topo-gather, "
			    "--topo-spread and --topo-slice");
		return -1;
	}
	return 0;
}

/* Hands one parsed option to slurmctld in the job's control environment. */
static int _pass(spank_t sp, const char *opt, const char *var,
		 const tg_request *q)
{
	static char buf[TG_REQUEST_MAX_TEXT];
	spank_err_t rc;

	if (tg_request_format(q, buf, sizeof(buf))) {
		slurm_error("topogang: --%s: longer than %d bytes "
			    "(TG_REQUEST_MAX_TEXT)", opt, TG_REQUEST_MAX_TEXT);
		return -1;
	}
	rc = spank_job_control_setenv(sp, var, buf, 1);
	if (rc != ESPANK_SUCCESS) {
		slurm_error("topogang: cannot pass --%s to slurmctld: %s", opt,
			    spank_strerror(rc));
		return -1;
	}
	return 0;
}

extern int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	(void) ac;
	(void) av;
	if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR)
		return 0;
	if (gather_set &&
	    _pass(sp, "topo-gather", TGS_SPANK_GATHER_VAR, &gather))
		return -1;
	if (spread_set &&
	    _pass(sp, "topo-spread", TGS_SPANK_SPREAD_VAR, &spread))
		return -1;
	if (slice_set && _pass(sp, "topo-slice", TGS_SPANK_SLICE_VAR, &slice))
		return -1;
	return 0;
}
