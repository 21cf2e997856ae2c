/*
 * k8s_bridge/slurmrest.h - what the bridge's mixed mode says to and reads
 * from slurmrestd (rest_auth/jwt): Slurm 22.05's OpenAPI v0.0.38, or the
 * data_parser versions v0.0.40, v0.0.41 and v0.0.42 of Slurm 24.11 (and
 * later ones that still serve one of them).
 *
 * The version: GET /openapi/v3 (served by 22.05 and 24.11 alike) lists
 * the paths; the newest version with a /slurm/v0.0.N/job/submit path that
 * the bridge also speaks is the one (br_slurm_pick_version).  The paths
 * below are then under /slurm/v0.0.N.
 *
 * Requests go through a second br_http client (http.h) whose config has
 * slurm_user set: X-SLURM-USER-NAME and X-SLURM-USER-TOKEN instead of a
 * bearer token, the token file re-read as the API server's is.
 *
 *   GET    /slurm/v0.0.38/jobs          {jobs: [{job_id, name, comment,
 *                                        job_state, state_reason, nodes,
 *                                        partition, tasks, cpus, cpus_per_task,
 *                                        job_resources: {allocated_nodes:
 *                                        [{nodename, sockets: {"0": {cores:
 *                                        {"0": "allocated", ...}}}}]}, ...}]}
 *   POST   /slurm/v0.0.38/job/submit    {job: {...}, script: "..."}, or
 *                                       {jobs: [{...}, ...], script: "..."}
 *                                       (heterogeneous, slurm_submit_batch_
 *                                       het_job) -> {job_id, errors: [...]}
 *   DELETE /slurm/v0.0.38/job/{job_id}  (SIGKILL: scancel)
 *
 * (Fields as src/plugins/openapi/v0.0.38/jobs.c of 22.05 reads and
 * writes them; "required_switches" and "wait_for_switch" are disabled
 * there, so a REST job cannot carry --switches.)
 *
 * v0.0.40 and later (24.11's src/plugins/data_parser/v0.0.4N/parsers.c)
 * differ in shape, not in meaning: job_state is an array (the base state,
 * then flags: ["RUNNING", "COMPLETING"]); tasks, cpus, cpus_per_task,
 * het_job_id, het_job_offset, preempt_time are {set, infinite, number}
 * objects; v0.0.41+ put the allocation under job_resources.nodes.
 * allocation [{name, cpus: {count}, ...}] (v0.0.40 keeps 22.05's
 * allocated_nodes).  A submit has numbers for tasks and cpus_per_task,
 * tres_per_task "gres/gpu:N" for --gpus-per-task, {set, number} for
 * memory_per_cpu and time_limit (minutes), the environment as
 * ["NAME=value"] and the script in the (first) job.
 */
#ifndef BR_SLURMREST_H
#define BR_SLURMREST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A data_parser version's path prefix: printf'ed with its N. */
#define BR_SLURM_API_FMT	"/slurm/v0.0.%u"

/*
 * The version both sides speak, from slurmrestd's GET /openapi/v3 answer
 * (its "paths"): the newest of v0.0.42, v0.0.41, v0.0.40, v0.0.38 that
 * has a /slurm/v0.0.N/job/submit path.  0 with *ver = N, or -1 with
 * \p err (not a spec; no common version: the ones it serves named).
 */
int br_slurm_pick_version(const char *spec, unsigned *ver, char *err,
			  size_t errlen);
/* The comment's first word marks the bridge's jobs. */
#define BR_SLURM_MARK	"topogang-bridge"

typedef struct br_sjob {
	uint32_t id;
	char *name;		/* the gang, "namespace/group" */
	char *comment;
	char *user;		/* "user_name": who the job runs as ("" when
				 * slurmrestd cannot resolve the uid) */
	int64_t uid;		/* "user_id" (-1 when absent) */
	char *state;		/* "PENDING", "RUNNING", "COMPLETING", ... */
	char *reason;		/* state_reason ("Resources", "None") */
	char *nodes;		/* hostlist, "" while pending */
	char *partition;
	int64_t preempt_time;	/* set while Slurm preempts it (GraceTime) */
	char **hosts;		/* nodes expanded */
	unsigned nhosts;
	/*
	 * Task slots on each host (nhosts of them, NULL while pending): the
	 * CPUs job_resources.allocated_nodes gives the host (its allocated
	 * cores, scaled by the job's cpus / cores) over cpus_per_task; 1 on
	 * every host when the record has no allocation details.
	 */
	unsigned *slots;
	/*
	 * A heterogeneous job (a gang whose pod sets differ) is one record
	 * here: its leader's (id = het_job_id, state, reason, partition), its
	 * components' hosts and slots one after the other, in het_job_offset
	 * order, the component c's from comp_start[c] to comp_start[c + 1];
	 * nodes their lists joined by ','.  ncomp 1 and comp_start NULL for
	 * a plain job.
	 */
	unsigned ncomp;
	unsigned *comp_start;
	uint32_t het_id;	/* "het_job_id" (0: not heterogeneous) */
	unsigned het_off;	/* "het_job_offset" */
	unsigned tasks;		/* "tasks" (0 when not given) */
	unsigned cpus_per_task;	/* "cpus_per_task", else cpus / tasks */
} br_sjob;

/* Task slots on one host at most: 22.05 counts a node's CPUs in 16 bits. */
#define BR_SJOB_MAX_SLOTS	65535u
/*
 * Node names in one jobs answer at most (all its node lists expanded):
 * 262,144, eight jobs on every node of a 32,768-node cluster; more is an
 * error naming this limit, not hundreds of MB under the Deployment's
 * 512 MiB (it was 4 Mi names: fuzz_slurmrest found one 1,010,100-name
 * node list whose copies alone passed 2 GB under ASan).  A single list is
 * expanded first within the core's TG_MAX_HOSTLIST, then checked.
 */
#define BR_SJOBS_MAX_NAMES	(1u << 18)

typedef struct br_sjobs {
	br_sjob *v;
	size_t n;
} br_sjobs;

/*
 * Parses a GET jobs body of data_parser version v0.0.\p ver (38, 40, 41,
 * 42).  0, or -1 with \p err filled (not JSON, no jobs array, an errors
 * entry, a node list that does not expand, more than BR_SJOBS_MAX_NAMES
 * names in all; v0.0.40+: a job_state or a number field of another shape,
 * the field and the job named).
 * \note Free with br_sjobs_free().
 */
int br_sjobs_parse(const char *body, unsigned ver, br_sjobs *out,
		   char *err, size_t errlen);
void br_sjobs_free(br_sjobs *js);

/*
 * A node as GET /slurm/v0.0.N/nodes gives it.  v0.0.38 (22.05's
 * src/plugins/openapi/v0.0.38/nodes.c) writes "state" as the lower-case
 * base state and the flags apart ("state_flags": ["DRAIN"]); v0.0.40 and
 * later (24.11's data_parser) an array, the base state then its flags
 * (["IDLE", "DRAIN"]).  cpus, alloc_cpus, real_memory and alloc_memory
 * (MB) are plain numbers in both (a {set, infinite, number} object is
 * read too).
 */
typedef struct br_snode {
	char *name;
	char *state;		/* base state, upper case: "IDLE", "DOWN" */
	char *reason;		/* the admin's reason ("" when none) */
	bool unusable;		/* DOWN, FUTURE, or DRAIN, FAIL,
				 * NOT_RESPONDING among the flags */
	unsigned cpus, alloc_cpus;
	uint64_t real_memory, alloc_memory;	/* MB */
} br_snode;

/* Nodes in one answer at most: more is an error naming this limit. */
#define BR_SNODES_MAX	(1u << 17)
/*
 * A node's cpus and alloc_cpus at most: 65,535, as Slurm counts a node's
 * CPUs in 16 bits (node_record_t.cpus, uint16_t in 22.05 and 24.11).
 * Its real_memory and alloc_memory (MB) at most 2^40 MB (1 EiB).  A
 * value above its bound, negative, not a whole number, or not finite is
 * an error naming the node, the field and the bound: it was read as 0
 * before, and the node then looked empty or full with no word said.
 */
#define BR_SNODE_MAX_CPUS	65535u
#define BR_SNODE_MAX_MEMORY_MB	(UINT64_C(1) << 40)

typedef struct br_snodes {
	br_snode *v;
	size_t n;
} br_snodes;

/*
 * Parses a GET nodes body of data_parser version v0.0.\p ver (38, 40,
 * 41, 42).  0, or -1 with \p err filled (not JSON, no nodes array, a node
 * without a name, a state or a number field of another shape, a number
 * out of bounds (BR_SNODE_MAX_CPUS, BR_SNODE_MAX_MEMORY_MB), more than
 * BR_SNODES_MAX nodes; the node and the field named).
 * \note Free with br_snodes_free().
 */
int br_snodes_parse(const char *body, unsigned ver, br_snodes *out,
		    char *err, size_t errlen);
void br_snodes_free(br_snodes *ns);

/* Not ended: PENDING, RUNNING, CONFIGURING, SUSPENDED, REQUEUED...  */
bool br_sjob_live(const br_sjob *j);
/* Holding its nodes and running: RUNNING (CONFIGURING counts). */
bool br_sjob_running(const br_sjob *j);
/* Running but preempted: in its partition's GraceTime, SIGTERM sent. */
bool br_sjob_preempting(const br_sjob *j);
/*
 * Whether it is a bridge job of \p sched: the comment's mark names the
 * scheduler and the job runs as \p user (the user the bridge submits as,
 * mixed.user): any Slurm user can write the comment, so a job of another
 * user is not the bridge's.  A record without user_name (slurmrestd could
 * not resolve the uid) is compared by "user_id" with \p uid (mixed.uid,
 * or mixed.user resolved at config time); -1 or no user_id: not the
 * bridge's (br_sjob_owner_unknown() says so).
 */
bool br_sjob_ours(const br_sjob *j, const char *sched, const char *user,
		  int64_t uid);
/*
 * Whether \p j is marked for \p sched but its owner cannot be told: no
 * user_name, and no user_id or no \p uid to compare it with.
 */
bool br_sjob_owner_unknown(const br_sjob *j, const char *sched, int64_t uid);
/* Whether the comment alone marks it as a bridge job of \p sched. */
bool br_sjob_marked(const br_sjob *j, const char *sched);

/*
 * Expands a Slurm hostlist (ranges, zero-padded ranges, several bracket
 * groups, commas) with the core's expander.  0, or -1 with \p err.
 * \note Free with br_hosts_free().
 */
int br_hosts_expand(const char *expr, char ***names, unsigned *n,
		    char *err, size_t errlen);
void br_hosts_free(char **names, unsigned n);

/* One task shape: a component of a heterogeneous job. */
typedef struct br_sjob_task {
	unsigned tasks;
	unsigned cpus_per_task;	/* >= 1 */
	unsigned gpus_per_task;	/* 0 = none */
	uint64_t mem_per_cpu;	/* MB, 0 = none */
} br_sjob_task;

/* A gang as a Slurm job. */
typedef struct br_sjob_spec {
	const char *name;	/* "namespace/group" */
	const char *sched;	/* scheduler name, in the comment */
	const char *gather;	/* "spine:must,block:prefer", or "" */
	const char *spread;	/* "block:1:hard", or "" */
	const char *partition, *qos;	/* NULL = Slurm's default */
	/*
	 * One task per member (-n), each with the largest member's requests
	 * (-c, --gpus-per-task, --mem-per-cpu); not --exclusive, so Slurm
	 * (select/topogang) may put several members on a node.
	 */
	unsigned tasks;
	unsigned cpus_per_task;	/* >= 1 */
	unsigned gpus_per_task;	/* 0 = none */
	uint64_t mem_per_cpu;	/* MB, 0 = none */
	const char *gres_name;	/* "gpu" or "gpu:TYPE" */
	/*
	 * ncomps > 1: a heterogeneous job ({"jobs": [...]}, one component a
	 * pod set, each with its own task shape) instead of the one above.
	 */
	const br_sjob_task *comps;
	unsigned ncomps;
	const char *time_limit;	/* NULL = the partition's */
	const char *workdir;
} br_sjob_spec;

/* The submit request's body in version v0.0.\p ver (caller frees). */
char *br_sjob_submit_body(const br_sjob_spec *sp, unsigned ver);
/*
 * A Slurm time limit ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S") in
 * minutes, seconds rounded up as Slurm does; -1 when it is not one.
 */
long br_slurm_minutes(const char *s);
/* The submit answer: 0 with *id, or -1 with Slurm's error in \p err. */
int br_sjob_submit_result(const char *body, long status, uint32_t *id,
			  char *err, size_t errlen);
/* The first error of any answer ("" when none), for logs. */
void br_slurm_error(const char *body, char *err, size_t errlen);

#endif /* BR_SLURMREST_H */
