/*
 * k8s_bridge/mixed.h - mixed mode: Slurm arbitrates a node pool that
 * Slurm and Kubernetes share.
 *
 * Off unless the config file has a "mixed:" section (config/bridge.yaml).
 * Then no gang is placed by the bridge's own decisions; instead, in every
 * scheduling cycle (sched.c calls br_mixed_cycle in place of its decide
 * and write steps):
 *
 *  1. A pending gang without a Slurm job gets one, through slurmrestd
 *     (slurmrest.h): named after the gang ("namespace/group", what squeue
 *     shows), a task per member with the member's requests (-c,
 *     --gpus-per-task, --mem-per-cpu; not exclusive: select/topogang
 *     makes each task a gang member, so several may share a node), a
 *     heterogeneous job (a component a pod set) when the pod sets'
 *     requests differ, the gang's gather/spread requests in the
 *     comment ("topogang-bridge/<scheduler> gang=ns/g topo-gather=
 *     spine:must"; select/topogang reads topo-gather=/topo-spread= there,
 *     as it reads the SPANK options of sbatch), and the partition/QOS of
 *     the first tier whose minPriority the gang's priority reaches.  The
 *     job's script only holds the allocation.
 *  2. While the job is pending its members carry PodScheduled=False
 *     (reason SlurmJobPending, message "Slurm job N pending: Resources")
 *     and the annotation topogang.io/slurm-job=N (kubectl describe pod).
 *  3. Once it runs, its node list is expanded (the core's hostlist
 *     expander), mapped to Kubernetes nodes (same name, or the node whose
 *     label KEY holds the Slurm name), each node's task slots read from
 *     the job record's allocation (slurmrest.h, br_sjob), and the members
 *     are bound one a slot, in rank order (a het job's pod sets each on
 *     its component's slots), with the job id recorded on each pod.
 *  4. A bound pod whose job is no longer running on its node (preempted,
 *     requeued, cancelled, ended, gone) is evicted, and so is one whose
 *     job Slurm is preempting with a GraceTime (preempt_time set: the
 *     placeholder ignores SIGTERM, so the nodes stay held until the pods
 *     are gone and the bridge cancels the job); a job of ours whose
 *     gang has no pod left (deleted, or finished: the informer drops
 *     Succeeded/Failed pods) is cancelled.
 *
 * The job list is polled every pollSeconds.  When slurmrestd does not
 * answer, nothing is bound, submitted, evicted or cancelled (the bridge
 * cannot know what Slurm holds), /readyz answers 503 and the gauge
 * topogang_slurm_up is 0; pending members say so in their condition.
 * Nodes held by Slurm jobs that are not the bridge's are Slurm's to keep:
 * the bridge only ever binds inside its own jobs' allocations.
 */
#ifndef BR_MIXED_H
#define BR_MIXED_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>
#include <topogang/topogang.h>

#include "bconfig.h"
#include "http.h"
#include "informer.h"
#include "map.h"
#include "metrics.h"
#include "slurmrest.h"

#define BR_MIXED_MAX_TIERS	16
#define BR_MIXED_MAX_LAYERS	16
#define BR_MIXED_MAX_COMPS	16	/* het job components (pod sets) */

#define BR_ANN_SLURM_JOB	"topogang.io/slurm-job"

typedef struct br_mixed_tier {
	int64_t min_priority;
	char *partition;	/* NULL = the default partition */
	char *qos;
} br_mixed_tier;

typedef struct br_mixed_conf {
	char *url;		/* slurmrestd, "http://127.0.0.1:6820" */
	char *token_file;	/* JWT: `scontrol token` output or bare */
	char *user;		/* X-SLURM-USER-NAME; the jobs' owner */
	/*
	 * The jobs' owner's uid: mixed.uid, else mixed.user resolved once
	 * when the config is read (getpwnam); -1 when neither.  Compared with
	 * a job's user_id when slurmrestd sends no user_name (it cannot
	 * resolve the uid); see br_sjob_ours().
	 */
	int64_t uid;
	char *partition, *qos;	/* below every tier */
	br_mixed_tier tiers[BR_MIXED_MAX_TIERS];	/* highest first */
	unsigned ntiers;
	char *node_label;	/* NULL: same name; else the label KEY */
	char *layer_k8s[BR_MIXED_MAX_LAYERS];	/* layerMap keys ... */
	char *layer_slurm[BR_MIXED_MAX_LAYERS];	/* ... and values */
	unsigned nlayers;
	char *gpu_resource;	/* "nvidia.com/gpu" */
	char *gres_name;	/* "gpu" */
	char *time_limit;	/* NULL: the partition's */
	char *workdir;		/* the placeholder job's directory */
	double poll_s;
	double timeout_s;	/* one slurmrestd request */
} br_mixed_conf;

/*
 * The "mixed:" section (\p v) into *\p mc (allocated).  0, or -1 with
 * \p err naming the file and key.
 */
int br_mixed_conf_load(br_mixed_conf **mc, const cJSON *v, const char *src,
		       char *err, size_t errlen);
void br_mixed_conf_free(br_mixed_conf *mc);

typedef struct br_mixed br_mixed;
struct br_sched;

/* \note Destroy with br_mixed_destroy(); NULL with \p err filled. */
br_mixed *br_mixed_create(const br_config *cfg, br_http *kh, br_metrics *m,
			  br_informer *nodes, br_informer *pods, char *err,
			  size_t errlen);
void br_mixed_destroy(br_mixed *x);
/* The slurmrestd client (the daemon's loop turn is set on it). */
br_http *br_mixed_http(br_mixed *x);

/*
 * Every loop turn: runs slurmrestd transfers, polls the job list when
 * due.  True when what Slurm says changed (a cycle should run).
 */
bool br_mixed_tick(br_mixed *x, int64_t now_ms);
/* slurmrestd answered the last poll. */
bool br_mixed_ready(const br_mixed *x, const char **why);
/* Appends the mixed-mode gauges and counters. */
void br_mixed_metrics(const br_mixed *x, tg_buf *b);

/* One scheduling cycle's work on the core's snapshot (see above). */
void br_mixed_cycle(br_mixed *x, struct br_sched *s, tg_k8s *k,
		    tg_topology *t);

/*
 * Feeds what Slurm says of its nodes (GET nodes, polled with the jobs)
 * into the shared pool's model \p t (the bridge's picture of the
 * Kubernetes nodes and pods, /ui): a node Slurm does not give to jobs
 * (br_snode.unusable: DOWN, DRAIN, ...) becomes unschedulable, and what
 * Slurm holds on a node beyond what the pods in \p t already use there
 * (alloc_cpus and alloc_memory, less those pods' CPUs and memory: the
 * bridge's own jobs hold nodes through their pods) becomes one
 * allocation "slurm/NODE" of gang "slurm", not preemptible.  \p k8s_node
 * maps a Slurm node name to its Kubernetes node's (nodeMap); Slurm nodes
 * without one are skipped.  br_mixed_cycle() calls it after its binding
 * decisions.  Returns the number of nodes changed.
 */
unsigned br_mixed_feed_nodes(const br_snodes *ns, tg_topology *t,
			     const br_map *k8s_node);

#endif /* BR_MIXED_H */
