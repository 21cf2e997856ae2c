/*
 * tests/fuzz/fuzz_slurmrest.c - libFuzzer target for what the bridge's
 * mixed mode reads from slurmrestd v0.0.38 and v0.0.40+
 * (k8s_bridge/slurmrest.c):
 * the jobs list (br_sjobs_parse, heterogeneous jobs folded), the nodes
 * list (br_snodes_parse: names and states present, at most BR_SNODES_MAX
 * nodes, the same twice), the submit
 * answer (br_sjob_submit_result), the errors array (br_slurm_error) and
 * Slurm hostlists (br_hosts_expand).  See README.md for how to build it.
 *
 * Oracles beyond the sanitizers: a failure always leaves a non-empty
 * message (and a failed jobs parse no records); a parsed job list is
 * consistent (ids set, strings present, component starts ordered and
 * ending at nhosts, slots present exactly when there are hosts, no empty
 * host name, at most BR_SJOB_MAX_SLOTS slots a host and
 * BR_SJOBS_MAX_NAMES names in all); a submit that succeeds has a job id;
 * an expanded hostlist has no empty name; and parsing the same bytes
 * twice gives the same outcome.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurmrest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz_slurmrest: %s: %s\n", what, msg ? msg : "");
	abort();
}

static void check_job(const br_sjob *j)
{
	unsigned h, c;

	if (!j->id)
		fail("job without an id", "");
	if (!j->name || !j->comment || !j->state || !j->reason ||
	    !j->nodes || !j->partition)
		fail("job with a NULL string", j->name);
	if (!j->cpus_per_task)
		fail("job with cpus_per_task 0", j->name);
	if (j->nhosts && (!j->hosts || !j->slots))
		fail("job with hosts but no host or slot array", j->nodes);
	for (h = 0; h < j->nhosts; h++) {
		if (!j->hosts[h] || !*j->hosts[h])
			fail("job with an empty host name", j->nodes);
		if (j->slots[h] > BR_SJOB_MAX_SLOTS)
			fail("job with more slots on a host than CPUs",
			     j->nodes);
	}
	if (j->ncomp < 1)
		fail("job with no component", j->nodes);
	if (!j->comp_start) {
		if (j->ncomp != 1)
			fail("components without comp_start", j->nodes);
	} else {
		if (j->comp_start[0] != 0 || j->comp_start[j->ncomp] !=
		    j->nhosts)
			fail("comp_start does not span the hosts", j->nodes);
		for (c = 0; c < j->ncomp; c++)
			if (j->comp_start[c] > j->comp_start[c + 1])
				fail("comp_start out of order", j->nodes);
	}
	/* the predicates read the strings */
	(void)br_sjob_live(j);
	(void)br_sjob_running(j);
	(void)br_sjob_preempting(j);
	(void)br_sjob_ours(j, "topogang", "k8s", 1000);
	(void)br_sjob_owner_unknown(j, "topogang", -1);
	(void)br_sjob_ours(j, "", "", -1);
}

static void fuzz_jobs(const char *body, unsigned ver)
{
	br_sjobs js, again;
	char err[512], err2[512];
	int rc, rc2;
	size_t i, names;

	err[0] = err2[0] = '\0';
	rc = br_sjobs_parse(body, ver, &js, err, sizeof(err));
	rc2 = br_sjobs_parse(body, ver, &again, err2, sizeof(err2));
	if (rc != rc2 || strcmp(err, err2) != 0)
		fail("jobs: two parses disagree", err);
	if (rc) {
		if (!*err)
			fail("jobs: failed without a message", "");
		if (js.n || js.v || again.n || again.v)
			fail("jobs: failed but left records", err);
		return;
	}
	if (js.n != again.n)
		fail("jobs: two parses give different counts", "");
	if (js.n && !js.v)
		fail("jobs: a count but no records", "");
	for (i = 0, names = 0; i < js.n; i++)
		names += js.v[i].nhosts;
	if (names > BR_SJOBS_MAX_NAMES)
		fail("jobs: more names than the bound", "");
	for (i = 0; i < js.n; i++) {
		check_job(&js.v[i]);
		if (js.v[i].id != again.v[i].id ||
		    js.v[i].nhosts != again.v[i].nhosts ||
		    js.v[i].ncomp != again.v[i].ncomp)
			fail("jobs: two parses give different records",
			     js.v[i].nodes);
	}
	br_sjobs_free(&js);
	br_sjobs_free(&again);
	if (js.n || js.v)
		fail("jobs: free left records", "");
}

static void fuzz_nodes(const char *body, unsigned ver)
{
	br_snodes ns, again;
	char err[512] = "", err2[512] = "";
	int rc = br_snodes_parse(body, ver, &ns, err, sizeof(err));
	int rc2 = br_snodes_parse(body, ver, &again, err2, sizeof(err2));
	size_t i;

	if (rc != rc2 || strcmp(err, err2) != 0)
		fail("nodes: two parses disagree", err);
	if (rc) {
		if (!*err || ns.n || ns.v)
			fail("nodes: failed without a message or with nodes",
			     err);
		return;
	}
	if (ns.n > BR_SNODES_MAX || ns.n != again.n)
		fail("nodes: too many, or two parses give different counts",
		     "");
	for (i = 0; i < ns.n; i++)
		if (!ns.v[i].name || !*ns.v[i].name || !ns.v[i].state ||
		    !ns.v[i].reason ||
		    ns.v[i].unusable != again.v[i].unusable ||
		    ns.v[i].alloc_cpus != again.v[i].alloc_cpus)
			fail("nodes: a record without a name or state, or two "
			     "parses differ", ns.v[i].name);
	br_snodes_free(&ns);
	br_snodes_free(&again);
}

static void fuzz_submit(const char *body, long status)
{
	char err[512];
	uint32_t id = 0;

	err[0] = '\0';
	if (br_sjob_submit_result(body, status, &id, err, sizeof(err)) == 0) {
		if (!id)
			fail("submit: success with job id 0", body);
	} else if (!*err) {
		fail("submit: failed without a message", "");
	}
	br_slurm_error(body, err, sizeof(err));
	/* a small buffer is cut, never overrun */
	br_slurm_error(body, err, 8);
}

static void fuzz_hosts(const char *expr)
{
	char **names = NULL, err[512];
	unsigned n = 0, i;

	err[0] = '\0';
	if (br_hosts_expand(expr, &names, &n, err, sizeof(err))) {
		if (!*err)
			fail("hosts: failed without a message", expr);
		if (names || n)
			fail("hosts: failed but left names", expr);
		return;
	}
	if (n && !names)
		fail("hosts: a count but no names", expr);
	for (i = 0; i < n; i++)
		if (!names[i] || !*names[i])
			fail("hosts: an empty name", expr);
	br_hosts_free(names, n);
}

/* The version picked from an OpenAPI spec: one the bridge speaks. */
static void fuzz_version(const char *body)
{
	char err[512] = "";
	unsigned v = 7;

	if (br_slurm_pick_version(body, &v, err, sizeof(err)) == 0) {
		if (v != 38 && v != 40 && v != 41 && v != 42)
			fail("version: picked one the bridge does not speak",
			     body);
	} else if (!*err || v) {
		fail("version: failed without a message or with a version",
		     body);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	static const long status[4] = { 200, 500, 0, 404 };

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	/* 22.05's v0.0.38 and 24.11's shapes (v0.0.40; v0.0.41+) */
	fuzz_jobs(buf, 38);
	fuzz_jobs(buf, 40);
	fuzz_jobs(buf, 42);
	fuzz_nodes(buf, 38);
	fuzz_nodes(buf, 42);
	fuzz_version(buf);
	fuzz_submit(buf, size ? status[data[size - 1] & 3] : 200);
	fuzz_submit(buf, 200);
	fuzz_hosts(buf);
	free(buf);
	return 0;
}
