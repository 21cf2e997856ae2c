/*
 * cli/sim.h - the trace-driven placement simulator behind "topogang sim"
 * (issue #7).
 *
 * A trace (CSV: job_id, submit_s, duration_s, gpus[, nodes, priority])
 * is replayed on a fabric (a synthetic spec, a topology.conf or a
 * `kubectl get nodes -o json` dump) under one placement policy at a
 * time: the topogang core, or a baseline that re-implements what another
 * scheduler publishes (sim_policy.c).  The engine is event-driven and
 * deterministic for a seed: the same trace, fabric, policy and
 * configuration give the same result, bit for bit (sim_result.digest).
 *
 * This module does not depend on the command line (sim_cli.c) nor on
 * cJSON, so that the unit tests link it alone; it uses libtopogang's
 * public API and nothing else.
 *
 * Jobs.  A job asks for `nodes` members of gpus/nodes GPUs each, one
 * member per node (the trace says how many nodes the job ran on).
 * Without a nodes column, a job of at most one node's GPUs is one
 * member; a larger one is gpus/G whole-node members (G the fabric's
 * largest node).  Every policy admits a job all or nothing: it starts
 * only when every member has a place in the same scheduling pass (what
 * Kueue or the coscheduling plugin give kube-scheduler), which spares the
 * pod-by-pod baselines the partial-bind deadlock they would otherwise
 * suffer.
 *
 * Queue.  Every policy sees the same queue: pending jobs in priority
 * order (higher first), then submit time, then trace order.  A pass
 * tries every pending job after something was freed, only the jobs not
 * tried yet otherwise (nothing else can have become possible); a job
 * that does not fit does not block later ones (kube-scheduler's queue,
 * and Slurm's backfill without reservations).
 *
 * Runtime model.  A job's run time is its trace duration stretched by
 * its placement:
 *
 *	run = duration * ((1 - f) + f * B_best / B)
 *
 * f is the communication fraction (--comm-fraction, default 0.5), B the
 * bottleneck all-reduce bandwidth of the placement (the bandwidth of the
 * lowest domain holding every member: tg_decision_bandwidth_gbps() for
 * topogang, tg_topology_layer_bandwidth() of the same layer for the
 * baselines) and B_best that of the tightest placement the job could have
 * on the empty fabric.  The trace duration is taken as the run time on
 * that best placement.  Default f = 0.5: seed document 01 reports that
 * an 8-rank job crossing racks (all-reduce 450-500 -> 200-250 GB/s, half
 * the bandwidth) runs epochs 40-60% longer; 1 + f * (2 - 1) = 1.4..1.6
 * gives f = 0.4..0.6, whose middle is 0.5.
 *
 * Preemption.  Victims are killed and requeued (Slurm's REQUEUE mode,
 * a Kubernetes Job's restart): the work they did is lost, counted as
 * GPU-hours (GPUs x time run), and they run again from the start.
 * Eviction is instantaneous for every policy.
 */
#ifndef TG_SIM_H
#define TG_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "topogang/topogang.h"

/* Bounds on what the simulator reads; hitting one is an error. */
#define SIM_MAX_JOBS		(1u << 20)	/* rows of a trace */
#define SIM_MAX_LINE		4096		/* bytes of one CSV line */
#define SIM_MAX_FIELDS		64		/* columns of a trace */
#define SIM_MAX_ID		63		/* bytes of a job_id */
#define SIM_MAX_JOB_GPUS	(1u << 20)	/* GPUs of one job */
#define SIM_MAX_DURATION	1e9		/* seconds (31 years) */
#define SIM_MAX_SPEC		1024		/* bytes of a fabric spec */
#define SIM_MAX_SPEC_NODES	(1u << 20)	/* nodes of a spec fabric */

/* Defaults (see the runtime model above). */
#define SIM_DEFAULT_COMM	0.5
#define SIM_PRIO_HIGH		100	/* --priority-mix: high jobs */
#define SIM_PRIO_LOW		0	/* --priority-mix: low jobs */

/* ---- trace ---- */

typedef struct sim_job {
	char id[SIM_MAX_ID + 1];	/* job_id as written */
	double submit;			/* seconds */
	double duration;		/* seconds, on the best placement */
	unsigned gpus;			/* > 0 */
	unsigned nodes;			/* 0 = not given */
	int64_t priority;		/* 0 when the trace has none */
	unsigned line;			/* in the CSV, for messages */
} sim_job;

typedef struct sim_trace {
	char *source;		/* file name, for messages */
	sim_job *jobs;		/* by submit time, then file order */
	unsigned njobs;
	bool has_nodes, has_priority;
} sim_trace;

/* Sets \p ei's message (printf-style); NULL \p ei is ignored. */
void sim_seterr(tg_errinfo *ei, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Parses CSV text with a header line.  Required columns: job_id,
 * submit_s, duration_s, gpus; optional: nodes, priority; others are
 * ignored.  No quoting.  Errors name "source:line".
 * \note Free with sim_trace_free(), also after an error.
 */
tg_err sim_trace_parse(sim_trace *tr, const char *buf, size_t len,
		       const char *source, tg_errinfo *ei);
tg_err sim_trace_load(sim_trace *tr, const char *path, tg_errinfo *ei);
void sim_trace_free(sim_trace *tr);

/* ---- fabric ---- */

typedef struct sim_fabric sim_fabric;

/*
 * A synthetic fabric: "zone:2,spine:4,block:8,node:18,gpu:8" means, from
 * the farthest layer in, 2 zones, 4 spines in each zone, 8 blocks in each
 * spine, 18 nodes in each block and 8 GPUs (one NVLink island) in each
 * node.  Layer names are [A-Za-z0-9_.-], at most 63 bytes, and label
 * keys "topogang.io/<name>"; "node:N" is required and comes last but
 * for "gpu:G" (1..64, default 8).  Zero layers ("node:16") is a flat
 * fabric.  Domain values are "<layer>-<k>", k counted across the whole
 * layer (block-0 .. block-63), nodes "node-<k>".  A layer whose name
 * says nvlink, nvl, clique or accelerator gets the NVLink bandwidth.
 * \note Destroy with sim_fabric_destroy().
 */
tg_err sim_fabric_spec(const char *spec, sim_fabric **out, tg_errinfo *ei);

/* Copies the structure of a built topology: layers, nodes, their paths
 * and GPU counts (not allocations, labels or taints). */
tg_err sim_fabric_topology(const tg_topology *t, const char *what,
			   sim_fabric **out, tg_errinfo *ei);

/*
 * \p arg is a file (topology.conf, or Kubernetes JSON/YAML when it
 * starts with '{', '[', "apiVersion" or "kind") or else a spec.
 * topology.conf nodes get \p gpus_per_node GPUs.
 */
tg_err sim_fabric_load(const char *arg, unsigned gpus_per_node,
		       sim_fabric **out, tg_errinfo *ei);

/* "LAYER=GBPS,...", a layer by name or label key, or "node" for inside
 * one node.  Crossing the top layer stays half the top layer's figure
 * (the core's model). */
tg_err sim_fabric_set_bandwidth(sim_fabric *f, const char *list,
				tg_errinfo *ei);

/* A fresh topology, built, no allocations.  \note The caller destroys
 * it with tg_topology_destroy(). */
tg_err sim_fabric_instantiate(const sim_fabric *f, tg_topology **out,
			      tg_errinfo *ei);

unsigned sim_fabric_nnodes(const sim_fabric *f);
uint64_t sim_fabric_ngpus(const sim_fabric *f);
/* One line, e.g. "2 zone x 4 spine x 8 block x 18 nodes x 8 GPUs =
 * 1152 nodes, 9216 GPUs"; valid until sim_fabric_destroy(). */
const char *sim_fabric_describe(const sim_fabric *f);
void sim_fabric_destroy(sim_fabric *f);

/* ---- the world a policy sees ---- */

/* One job as the engine tracks it; policies read it for preemption. */
typedef struct sim_live {
	int64_t priority;
	unsigned gpus;		/* per member */
	unsigned nmembers;
	tg_node_id *nodes;	/* nmembers, while running */
	double start;		/* of the current run */
	bool running;
} sim_live;

typedef struct sim_world {
	tg_topology *t;
	unsigned nnodes, nlayers, ndomains;
	uint32_t *ndom;		/* [n * nlayers + l]: node n's domain on
				 * layer l, TG_NONE when outside the tree */
	int32_t *free;		/* free GPUs per node */
	uint8_t *ngpus;		/* GPUs per node */
	/* running work that may be preempted (set by the engine) */
	const sim_live *live;	/* njobs entries */
	unsigned njobs;
	const unsigned *run;	/* indices into live of running jobs, in
				 * start order */
	unsigned nrun;
} sim_world;

/* Fills \p w from a built topology (no running jobs).  \note Release
 * with sim_world_fini(); \p t must outlive it. */
tg_err sim_world_init(sim_world *w, tg_topology *t);
/* Re-reads free GPUs from the topology. */
void sim_world_refresh(sim_world *w);
void sim_world_fini(sim_world *w);

/* The lowest domain's layer holding every node of \p nodes: nlayers for
 * one node, TG_NONE across the root. */
unsigned sim_world_level(const sim_world *w, const tg_node_id *nodes,
			 unsigned n);
/* The bandwidth of a level as sim_world_level() gives it. */
double sim_world_level_bw(const sim_world *w, unsigned level);

/* ---- policies (sim_policy.c) ---- */

typedef struct sim_req {
	unsigned job;		/* index into the engine's jobs */
	const char *name;	/* gang name, sim_gang_name() */
	unsigned members;
	unsigned gpus;		/* per member */
	int64_t priority;
	bool may_preempt;	/* preemption on and lower work runs */
} sim_req;

typedef struct sim_choice {
	tg_node_id *node;	/* [members] in rank order */
	uint64_t *gpus;		/* [members]: GPU indices, 0 = any free */
	unsigned *victims;	/* job indices to kill first */
	unsigned nvictims;	/* capacity: the engine's job count */
	double bw;		/* > 0: the policy's own estimate */
} sim_choice;

typedef struct sim_policy sim_policy;

/* NULL-terminated, in the order the CLI runs them by default. */
extern const char *const sim_policy_names[];
bool sim_policy_known(const char *name);
/* Whether the policy preempts (random does not). */
bool sim_policy_preempts(const char *name);

/*
 * A policy for the world \p w, which must outlive it.  \p seed feeds the
 * policy's own random choices (ties in kube-scheduler, random).
 * \note Destroy with sim_policy_destroy().
 */
tg_err sim_policy_create(const char *name, const sim_world *w,
			 uint64_t seed, sim_policy **out, tg_errinfo *ei);
/*
 * Chooses where \p r goes on the world's current state.  *placed false
 * (and TG_OK) when it does not fit now.  Only reads the world.
 */
tg_err sim_policy_place(sim_policy *p, const sim_req *r, sim_choice *c,
			bool *placed, tg_errinfo *ei);
void sim_policy_destroy(sim_policy *p);

/* Gang names of jobs: "job-<index>". */
#define SIM_GANG_MAX	32
void sim_gang_name(unsigned job, char buf[SIM_GANG_MAX]);
bool sim_gang_job(const char *gang, unsigned *job);

/* splitmix64: the simulator's one random generator. */
uint64_t sim_rand(uint64_t *state);

/* ---- the engine ---- */

typedef struct sim_config {
	double comm_fraction;	/* f in [0, 1] */
	uint64_t seed;
	double high_fraction;	/* share of SIM_PRIO_HIGH jobs; < 0: the
				 * trace's priorities (0 without) */
	double time_scale;	/* > 0: submit times divided by it */
	bool preempt;		/* for the policies that have it */
	bool keep_jobs;		/* fill sim_result.jobs */
	bool check;		/* tg_topology_check() after every change */
} sim_config;

/* comm 0.5, seed 1, no mix, time scale 1, preemption on. */
void sim_config_default(sim_config *c);

/* The runtime model: the factor a run takes over the trace duration. */
double sim_stretch(double comm_fraction, double best_gbps, double gbps);

typedef struct sim_jobres {
	double start, end;	/* last run; start < 0: never ran */
	double wait;		/* total time pending, seconds */
	double stretch;		/* last run / trace duration */
	double gbps, best_gbps;
	unsigned level;		/* sim_world_level() of the last run */
	unsigned smallest;	/* lowest level free at its start */
	unsigned preempted;	/* times killed */
	int64_t priority;	/* as the engine gave it (--priority-mix) */
	unsigned nmembers, gpus;	/* members, GPUs per member */
	tg_node_id *nodes;	/* last run, rank order */
	bool rejected;		/* never fits the empty fabric */
} sim_jobres;

typedef struct sim_result {
	char policy[32];
	unsigned njobs, completed, rejected, multinode;
	double wait_mean, wait_median, wait_p95;	/* s, completed jobs */
	double stretch_mean;		/* completed jobs */
	double stretch_multi;		/* completed multi-node jobs */
	double util;		/* GPU-seconds held / (GPUs x makespan) */
	double makespan;	/* first submit to last end, s */
	double smallest_frac;	/* multi-node starts in the lowest level
				 * that could have held them then */
	unsigned nlayers;
	char layer[TG_MAX_LAYERS][64];
	double span[TG_MAX_LAYERS];	/* mean domains per layer, multi */
	double frag;		/* time-weighted share of free GPUs not in
				 * a whole 8-GPU group on their node */
	unsigned preemptions;	/* jobs killed */
	double gpuh_lost;
	double wall_s;		/* measured, not part of the digest */
	uint64_t digest;	/* every start and kill, hashed */
	sim_jobres *jobs;	/* keep_jobs: njobs, in trace order */
} sim_result;

/*
 * Replays \p tr on a fresh instance of \p f under \p policy.  Errors:
 * a job whose GPUs do not split into whole nodes (TG_EINVAL, naming its
 * line), a policy that returns an impossible choice (TG_ESTATE).
 * \note Release \p res with sim_result_free().
 */
tg_err sim_run(const sim_fabric *f, const sim_trace *tr,
	       const char *policy, const sim_config *cfg, sim_result *res,
	       tg_errinfo *ei);
void sim_result_free(sim_result *res);

/* ---- calibration against a real scheduler (sim_calib.c) ---- */

typedef struct sim_calib_miss {
	char job[SIM_MAX_ID + 1];
	unsigned line;		/* of the start or pending event */
	char *sched;		/* the scheduler's nodes, "-" if pending */
	char *policy;		/* the policy's nodes, "-" if none fit */
	char *sched_leaves, *policy_leaves;	/* their leaf domains */
} sim_calib_miss;

typedef struct sim_calib {
	char policy[32];
	unsigned decisions;	/* starts and pendings compared */
	unsigned matches;	/* same node set (or both not placed) */
	unsigned sched_pending;	/* the scheduler did not start the job */
	sim_calib_miss *miss;	/* in stream order */
	unsigned nmiss, capmiss;
} sim_calib;

/*
 * Replays a scheduler's recorded decisions (tests/slurm/slurm-replay.py:
 * "start JOB GPUS NODE,...", "end JOB", "pending JOB GPUS MEMBERS") on a
 * fresh instance of \p f and, before applying each, asks \p policy for
 * its choice on the same state.  Errors name "source:line" (an unknown
 * node, GPUs not free, an end without a start).
 * \note Release \p out with sim_calib_free(), also after an error.
 */
tg_err sim_calibrate(const sim_fabric *f, const char *buf, size_t len,
		     const char *source, const char *policy, sim_calib *out,
		     tg_errinfo *ei);
void sim_calib_free(sim_calib *c);

#endif /* TG_SIM_H */
