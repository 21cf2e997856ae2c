/*
 * k8s_bridge/metrics.h - the daemon's counters and histograms, rendered
 * in the Prometheus text exposition format (version 0.0.4).
 */
#ifndef BR_METRICS_H
#define BR_METRICS_H

#include <stdint.h>

#include "util.h"

#define BR_HIST_BUCKETS	14

typedef struct br_hist {
	uint64_t b[BR_HIST_BUCKETS + 1];	/* last = +Inf */
	uint64_t count;
	double sum;
} br_hist;

typedef struct br_metrics {
	uint64_t gangs_scheduled;	/* every member bound */
	uint64_t gangs_unschedulable;	/* decisions "unschedulable" */
	uint64_t gangs_preempting;	/* decisions "preempting" */
	uint64_t preemption_victims;	/* victims evicted or deleted */
	uint64_t evictions_blocked;	/* 429s: disruption budgets */
	uint64_t pods_bound;
	uint64_t bind_failures;
	uint64_t gangs_repaired;	/* half-bound gangs completed */
	uint64_t gangs_reset;		/* half-bound gangs evicted */
	uint64_t cycles;
	uint64_t cycles_modelless;	/* nothing to decide: no model */
	uint64_t events_sent;		/* events.k8s.io Events posted */
	uint64_t events_dropped;	/* over the queue's bound */
	uint64_t api_requests;
	uint64_t api_errors[600];	/* by HTTP status; [0] transport */
	br_hist decision;		/* seconds per tg_place() */
	br_hist snapshot;		/* seconds per snapshot build */
	br_hist bind;			/* seconds per gang binding */
} br_metrics;

void br_hist_observe(br_hist *h, double seconds);
/* Adds \p from's observations to \p h. */
void br_hist_merge(br_hist *h, const br_hist *from);

/* Appends the counters and histograms above to \p b. */
void br_metrics_render(const br_metrics *m, tg_buf *b);
/* One "# HELP / # TYPE" header. */
void br_metrics_header(tg_buf *b, const char *name, const char *type,
		       const char *help);

#endif /* BR_METRICS_H */
