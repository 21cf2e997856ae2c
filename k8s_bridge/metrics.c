/*
 * k8s_bridge/metrics.c - Prometheus text rendering.
 */
#include "config.h"

#include <stdio.h>

#include "metrics.h"

static const double bounds[BR_HIST_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10
};

void br_hist_observe(br_hist *h, double s)
{
	unsigned i;

	for (i = 0; i < BR_HIST_BUCKETS && s > bounds[i]; i++)
		;
	h->b[i]++;
	h->count++;
	h->sum += s;
}

void br_hist_merge(br_hist *h, const br_hist *from)
{
	unsigned i;

	for (i = 0; i <= BR_HIST_BUCKETS; i++)
		h->b[i] += from->b[i];
	h->count += from->count;
	h->sum += from->sum;
}

void br_metrics_header(tg_buf *b, const char *name, const char *type,
		       const char *help)
{
	tg_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(tg_buf *b, const char *name, const char *help,
		    uint64_t v)
{
	br_metrics_header(b, name, "counter", help);
	tg_buf_addf(b, "%s %llu\n", name, (unsigned long long)v);
}

static void hist(tg_buf *b, const char *name, const char *help,
		 const br_hist *h)
{
	uint64_t cum = 0;
	unsigned i;

	br_metrics_header(b, name, "histogram", help);
	for (i = 0; i < BR_HIST_BUCKETS; i++) {
		cum += h->b[i];
		tg_buf_addf(b, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i],
			    (unsigned long long)cum);
	}
	cum += h->b[BR_HIST_BUCKETS];
	tg_buf_addf(b, "%s_bucket{le=\"+Inf\"} %llu\n", name,
		    (unsigned long long)cum);
	tg_buf_addf(b, "%s_sum %.9g\n%s_count %llu\n", name, h->sum, name,
		    (unsigned long long)h->count);
}

void br_metrics_render(const br_metrics *m, tg_buf *b)
{
	unsigned i;

	counter(b, "topogang_gangs_scheduled_total",
		"Gangs whose every member was bound.", m->gangs_scheduled);
	counter(b, "topogang_gangs_unschedulable_total",
		"Decisions that a gang cannot be placed.",
		m->gangs_unschedulable);
	counter(b, "topogang_gangs_preempting_total",
		"Decisions that a gang preempts lower-priority work.",
		m->gangs_preempting);
	counter(b, "topogang_preemption_victims_total",
		"Pods evicted or deleted to make room for a gang.",
		m->preemption_victims);
	counter(b, "topogang_evictions_blocked_total",
		"Evictions refused by a disruption budget (429).",
		m->evictions_blocked);
	counter(b, "topogang_pods_bound_total", "Pods bound to nodes.",
		m->pods_bound);
	counter(b, "topogang_bind_failures_total",
		"Bindings that failed for good.", m->bind_failures);
	counter(b, "topogang_gangs_repaired_total",
		"Half-bound gangs completed in their recorded domain.",
		m->gangs_repaired);
	counter(b, "topogang_gangs_reset_total",
		"Half-bound gangs whose bound members were evicted.",
		m->gangs_reset);
	counter(b, "topogang_scheduling_cycles_total",
		"Scheduling cycles run.", m->cycles);
	counter(b, "topogang_modelless_cycles_total",
		"Cycles with nothing to decide (no pod pending for this "
		"scheduler, nothing assumed, no victim, no Node changed): "
		"no model built.", m->cycles_modelless);
	counter(b, "topogang_events_sent_total",
		"Events posted (events.k8s.io/v1).", m->events_sent);
	counter(b, "topogang_events_dropped_total",
		"Events dropped over the queue's bound.", m->events_dropped);
	counter(b, "topogang_api_requests_total",
		"Requests to the API server.", m->api_requests);
	br_metrics_header(b, "topogang_api_errors_total", "counter",
			  "Failed API requests by HTTP status (0: no "
			  "response).");
	for (i = 0; i < 600; i++)
		if (m->api_errors[i])
			tg_buf_addf(b, "topogang_api_errors_total{code=\"%u\"} "
				    "%llu\n", i,
				    (unsigned long long)m->api_errors[i]);
	hist(b, "topogang_decision_duration_seconds",
	     "Time to decide one gang (the core's tg_place).", &m->decision);
	hist(b, "topogang_snapshot_duration_seconds",
	     "Time to turn the caches into the core's model (a cycle "
	     "without one: its own time).", &m->snapshot);
	hist(b, "topogang_gang_bind_duration_seconds",
	     "Time to bind every member of a gang.", &m->bind);
}
