/*
 * cli/bench.c - "topogang bench": tg_place() latency and core memory per
 * node on synthetic GPU fabrics.
 *
 * Fabrics.  Every node has 8 GPUs (one NVLink island), 224 cores, 2 TiB
 * of memory and 110 pod slots.  Three layers, farthest first:
 *
 *   zone          topology.kubernetes.io/zone   32 spines
 *   spine         topogang.io/spine             32 blocks (576 nodes)
 *   nvlink-block  topogang.io/nvlink-block      18 nodes (144 GPUs)
 *
 * The lowest layer is an 18-node NVLink domain (its name makes the
 * bandwidth model treat it as NVLink); a spine is 32 blocks = 576 nodes =
 * 4,608 GPUs; a zone is 32 spines = 18,432 nodes = 147,456 GPUs.  The
 * last block, spine and zone of a fabric may be partial.  Sizes take
 * binary suffixes (k = 1024, M = 1,048,576), so the defaults are:
 *
 *   --gpus        GPUs      nodes  blocks  spines  zones
 *   1k           1,024        128       8       1      1
 *   10k         10,240      1,280      72       3      1
 *   100k       102,400     12,800     712      23      1
 *   1M       1,048,576    131,072   7,282     228      8
 *
 * (--gpus 1000000 gives the decimal million: 125,000 nodes, 6,945
 * blocks, 218 spines, 7 zones.)
 *
 * Label values are unique across the fabric (zone-3, spine-97,
 * block-1234); node names are node-N.
 *
 * Occupancy.  Every spine gets its own target occupancy, drawn uniformly
 * from LO..HI percent of its GPUs, and is filled with allocations of 8
 * (50%), 4 (20%), 2 (15%) or 1 (15%) GPUs, each with 12 cores and
 * 128 GiB per GPU, on random nodes of the spine (a size that finds no
 * room after a few tries is halved).  Pods are named job-N.  Everything
 * comes from one splitmix64 generator seeded by --seed, so a run is
 * deterministic.
 *
 * Gangs.  For each gang size G and member size m (8 = whole nodes, and 4
 * = half nodes by default) the gang has G/m members of m GPUs, 12 cores
 * and 128 GiB per GPU, and prefers the nvlink-block layer (placement
 * escalates from single nodes to the root as needed).  A gang larger
 * than the free capacity (in whole members) is skipped with a note.
 *
 * Measures.
 *  - per-decision latency of tg_place() (CLOCK_MONOTONIC) over repeated
 *    decisions on the same state; decisions are never applied.  One
 *    untimed warm-up decision comes first (it allocates the topology's
 *    placement scratch).  min, median and p99 are nearest-rank.  With
 *    --churn N, N one-pod allocations are added and removed on random
 *    nodes (untimed) before each decision: the same state, but those
 *    nodes' blocks count as changed for the core's slot cache.
 *  - core memory per node: bytes requested from the allocator installed
 *    with tg_set_allocator() and still live after tg_topology_build()
 *    and the allocations, divided by the nodes.  Allocator overhead is
 *    not counted.  The placement scratch (allocated by the first
 *    tg_place()) is reported separately.
 *  - the time to build the topology (create, nodes, build) and to add
 *    the allocations.
 *  - a hash of each decision (status, domain, message, node, GPUs and
 *    rank of every placement, victims), so that two builds of the
 *    library can be compared for identical decisions; every repeated
 *    decision must hash like the first.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define GPUS_PER_NODE		8
#define NODES_PER_BLOCK		18
#define BLOCKS_PER_SPINE	32
#define SPINES_PER_ZONE		32
#define CPU_PER_NODE		224000		/* millicores */
#define MEM_PER_NODE		(2ll << 40)	/* bytes */
#define PODS_PER_NODE		110
#define CPU_PER_GPU		12000
#define KEY_SPREAD		"topogang.io/rail"	/* --key-spread */
#define MEM_PER_GPU		(128ll << 30)

#define MAX_LIST		32
#define MAX_BENCH_GPUS		((uint64_t)TG_MAX_NODES * GPUS_PER_NODE)
#define ADAPTIVE_NS		300000000ll	/* 0.3 s of decisions */
#define ADAPTIVE_MIN		15
#define ADAPTIVE_MAX		1000000
#define MAX_REPEAT		10000000ull
#define MAX_CHURN		100000

/* Targets from the issue. */
#define TARGET_GANG		1024
#define TARGET_100K_GPUS	102400
#define TARGET_100K_US		100.0
#define TARGET_1M_GPUS		1048576
#define TARGET_1M_US		1000.0
#define TARGET_BYTES		256.0

static const char *const layer_name[3] = {
	"zone", "spine", "nvlink-block"
};
static const char *const layer_key[3] = {
	"topology.kubernetes.io/zone", "topogang.io/spine",
	"topogang.io/nvlink-block"
};

/* ---- counting allocator ---- */

typedef union mhdr {
	size_t n;
	max_align_t align;
} mhdr;

static size_t mem_live;
static size_t mem_blocks;

static void *cnt_malloc(size_t n)
{
	mhdr *h;

	if (n > SIZE_MAX - sizeof(*h))
		return NULL;
	h = malloc(sizeof(*h) + n);
	if (!h)
		return NULL;
	h->n = n;
	mem_live += n;
	mem_blocks++;
	return h + 1;
}

static void *cnt_realloc(void *p, size_t n)
{
	mhdr *h, *nh;
	size_t old;

	if (!p)
		return cnt_malloc(n);
	if (n > SIZE_MAX - sizeof(*h))
		return NULL;
	h = (mhdr *)p - 1;
	old = h->n;
	nh = realloc(h, sizeof(*nh) + n);
	if (!nh)
		return NULL;
	nh->n = n;
	mem_live = mem_live - old + n;
	return nh + 1;
}

static void cnt_free(void *p)
{
	mhdr *h;

	if (!p)
		return;
	h = (mhdr *)p - 1;
	mem_live -= h->n;
	mem_blocks--;
	free(h);
}

/* ---- small helpers ---- */

static uint64_t rng_state;

/* splitmix64 */
static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* In [0, n); n > 0 (the modulo bias is irrelevant here). */
static uint64_t rng_below(uint64_t n)
{
	return rng_next() % n;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* "1,048,576" */
static const char *grouped(uint64_t v, char *buf, size_t size)
{
	char tmp[32];
	size_t n, i, o = 0;

	n = (size_t)snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	for (i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/*
 * Parses a count with an optional binary suffix (k = 1024, M = 1048576)
 * from s[0..len).  false on anything else or on overflow past \p max.
 */
static bool parse_count(const char *s, size_t len, uint64_t max,
			uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	size_t i;

	if (len && (s[len - 1] == 'k' || s[len - 1] == 'K')) {
		mul = 1024;
		len--;
	} else if (len && (s[len - 1] == 'M' || s[len - 1] == 'm')) {
		mul = 1048576;
		len--;
	}
	if (!len)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max / mul)
		return false;
	*out = v * mul;
	return true;
}

/* "8,64,1k": at most MAX_LIST counts in [1, max]. */
static bool parse_list(const char *s, uint64_t max, uint64_t *v,
		       unsigned *n)
{
	const char *p = s;

	*n = 0;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (*n >= MAX_LIST || !parse_count(p, len, max, &v[*n]) ||
		    !v[*n])
			return false;
		(*n)++;
		if (!c)
			return true;
		p = c + 1;
	}
}

/* Writes \p s as a JSON string. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* Nearest-rank percentile of sorted v[0..n). */
static int64_t pct(const int64_t *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* ---- options ---- */

typedef struct opts {
	bool json;
	uint64_t gpus[MAX_LIST];
	unsigned ngpus;
	uint64_t gang[MAX_LIST];
	unsigned ngang;
	uint64_t member[MAX_LIST];
	unsigned nmember;
	uint64_t repeat;	/* 0 = adaptive */
	uint64_t churn;		/* changes before each decision */
	uint64_t seed;
	unsigned occ_lo, occ_hi;
	bool preempt;		/* issue #3's preemption configurations */
	uint64_t key_values;	/* --key-spread: values of KEY_SPREAD */
	bool quick;
} opts;

static void usage(FILE *f)
{
	fprintf(f,
"usage: topogang bench [options]\n"
"  Measures tg_place() latency and core memory per node on synthetic\n"
"  fabrics (8 GPUs/node; zone / spine of 576 nodes / 18-node\n"
"  nvlink-block) with random occupancy; decisions are not applied.\n"
"options:\n"
"  --output text|json    json: one object per line per configuration\n"
"  --gpus LIST           fabric sizes in GPUs, multiples of 8; k = 1024,\n"
"                        M = 1048576 (default 1k,10k,100k,1M)\n"
"  --gang-gpus LIST      gang sizes in GPUs (default 8,64,1024,8192)\n"
"  --member-gpus LIST    GPUs per member, 1..8 (default 8,4)\n"
"  --repeat N            decisions per configuration (default: adaptive,\n"
"                        about 0.3 s and at least 15)\n"
"  --churn N            before each timed decision, N times: add a one-pod\n"
"                        allocation on a random node and remove it (the\n"
"                        state stays the same, the node counts as changed)\n"
"  --seed N              PRNG seed (default 1)\n"
"  --occupancy LO-HI     percent of GPUs in use per spine (default 50-80)\n"
"  --quick               small fabrics and gangs, 15 decisions (for tests)\n"
"  --key-spread N        label node i " KEY_SPREAD "=rail-(i mod N), no\n"
"                        layer, and give each gang a hard spread over it\n"
"                        (maxSkew 1, its own members): members are placed\n"
"                        one at a time (docs/placement.md)\n"
"  --preempt             preemption decisions instead: 2k nodes under 700\n"
"                        running lower-priority gangs, and 100k GPUs under\n"
"                        51,200 running allocations (with --quick: smaller)\n"
"  -h, --help            this text\n");
}

static bool parse_occupancy(const char *s, unsigned *lo, unsigned *hi)
{
	const char *dash = strchr(s, '-');
	uint64_t a, b;

	if (!dash) {
		if (!parse_count(s, strlen(s), 100, &a) ||
		    strpbrk(s, "kKmM"))
			return false;
		*lo = *hi = (unsigned)a;
		return true;
	}
	if (strpbrk(s, "kKmM") ||
	    !parse_count(s, (size_t)(dash - s), 100, &a) ||
	    !parse_count(dash + 1, strlen(dash + 1), 100, &b) || a > b)
		return false;
	*lo = (unsigned)a;
	*hi = (unsigned)b;
	return true;
}

/* Which option lists were given (the others take their defaults). */
typedef struct given {
	bool gpus, gang, repeat;
} given;

/* --gpus LIST: fabric sizes, whole nodes. */
static int set_gpus(opts *o, const char *v)
{
	unsigned k;

	if (!parse_list(v, MAX_BENCH_GPUS, o->gpus, &o->ngpus)) {
		cli_err("bench: --gpus wants a list of GPU counts such as "
			"1k,10k,100k,1M");
		return 2;
	}
	for (k = 0; k < o->ngpus; k++)
		if (o->gpus[k] % GPUS_PER_NODE) {
			cli_err("bench: --gpus: %llu is not a multiple of %d "
				"GPUs per node", (unsigned long long)o->gpus[k],
				GPUS_PER_NODE);
			return 2;
		}
	return 0;
}

/* Sets the option \p name (one of bench_opts' values) to \p v; 0, or 2
 * with a message. */
static int set_value(opts *o, given *gv, const char *name, const char *v)
{
	if (!strcmp(name, "--output")) {
		if (strcmp(v, "json") && strcmp(v, "text")) {
			cli_err("bench: --output wants text or json");
			return 2;
		}
		o->json = !strcmp(v, "json");
	} else if (!strcmp(name, "--gpus")) {
		gv->gpus = true;
		return set_gpus(o, v);
	} else if (!strcmp(name, "--gang-gpus")) {
		if (!parse_list(v, MAX_BENCH_GPUS, o->gang, &o->ngang)) {
			cli_err("bench: --gang-gpus wants a list of GPU "
				"counts such as 8,64,1k");
			return 2;
		}
		gv->gang = true;
	} else if (!strcmp(name, "--member-gpus")) {
		if (!parse_list(v, GPUS_PER_NODE, o->member, &o->nmember)) {
			cli_err("bench: --member-gpus wants a list of counts "
				"from 1 to %d", GPUS_PER_NODE);
			return 2;
		}
	} else if (!strcmp(name, "--repeat")) {
		if (!parse_count(v, strlen(v), MAX_REPEAT, &o->repeat) ||
		    !o->repeat) {
			cli_err("bench: --repeat wants a count from 1 to %llu",
				MAX_REPEAT);
			return 2;
		}
		gv->repeat = true;
	} else if (!strcmp(name, "--churn")) {
		if (!parse_count(v, strlen(v), MAX_CHURN, &o->churn)) {
			cli_err("bench: --churn wants a count from 0 to %d",
				MAX_CHURN);
			return 2;
		}
	} else if (!strcmp(name, "--seed")) {
		if (!parse_count(v, strlen(v), UINT64_MAX, &o->seed)) {
			cli_err("bench: --seed wants a number");
			return 2;
		}
	} else if (!strcmp(name, "--key-spread")) {
		if (!parse_count(v, strlen(v), TG_MAX_NODES, &o->key_values) ||
		    !o->key_values) {
			cli_err("bench: --key-spread wants a count from 1 "
				"to %u", TG_MAX_NODES);
			return 2;
		}
	} else if (!strcmp(name, "--occupancy")) {
		if (!parse_occupancy(v, &o->occ_lo, &o->occ_hi)) {
			cli_err("bench: --occupancy wants LO-HI percent, "
				"0 <= LO <= HI <= 100");
			return 2;
		}
	}
	return 0;
}

/* The lists not given: the defaults, smaller with --quick. */
static void set_defaults(opts *o, const given *gv)
{
	static const uint64_t def_gpus[] = { 1024, 10240, 102400, 1048576 };
	static const uint64_t def_gang[] = { 8, 64, 1024, 8192 };
	static const uint64_t quick_gpus[] = { 1024, 4096 };
	static const uint64_t quick_gang[] = { 8, 64, 256 };
	bool quick = o->quick;

	if (!gv->gpus) {
		const uint64_t *d = quick ? quick_gpus : def_gpus;

		o->ngpus = quick ? 2 : 4;
		memcpy(o->gpus, d, o->ngpus * sizeof(*d));
	}
	if (!gv->gang) {
		const uint64_t *d = quick ? quick_gang : def_gang;

		o->ngang = quick ? 3 : 4;
		memcpy(o->gang, d, o->ngang * sizeof(*d));
	}
	if (quick && !gv->repeat)
		o->repeat = ADAPTIVE_MIN;
}

static const cli_opt bench_opts[] = {
	CLI_OPT_FLAG("--preempt"), CLI_OPT_FLAG("--quick"),
	CLI_OPT_VALUE("--output"), CLI_OPT_VALUE("--gpus"),
	CLI_OPT_VALUE("--gang-gpus"), CLI_OPT_VALUE("--member-gpus"),
	CLI_OPT_VALUE("--repeat"), CLI_OPT_VALUE("--churn"),
	CLI_OPT_VALUE("--seed"), CLI_OPT_VALUE("--occupancy"),
	CLI_OPT_VALUE("--key-spread"), CLI_OPT_END
};

/* What cli_opts_parse() sets. */
typedef struct parse_ctx {
	opts *o;
	given gv;
} parse_ctx;

static int on_set(const cli_opts *co, unsigned k, const char *v)
{
	parse_ctx *pc = co->arg;
	const char *name = bench_opts[k].name;

	if (v)
		return set_value(pc->o, &pc->gv, name, v);
	if (!strcmp(name, "--preempt"))
		pc->o->preempt = true;
	else
		pc->o->quick = true;
	return 0;
}

/* 0 ok, 1 help printed, 2 bad usage (reported). */
static int parse_opts(int argc, char **argv, opts *o)
{
	parse_ctx pc = { o, { false, false, false } };
	const cli_opts co = { "bench", bench_opts, usage, on_set, &pc,
			      false };
	int rc;

	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->occ_lo = 50;
	o->occ_hi = 80;
	o->member[0] = 8;
	o->member[1] = 4;
	o->nmember = 2;
	if ((rc = cli_opts_parse(argc, argv, &co)))
		return rc;
	set_defaults(o, &pc.gv);
	return 0;
}

/* ---- the fabric ---- */

typedef struct fabric {
	tg_topology *t;
	uint64_t gpus;
	uint32_t nodes, blocks, spines, zones;
	double build_ms, alloc_ms;
	size_t topo_bytes;	/* live after build */
	size_t core_bytes;	/* live after build and allocations */
	size_t core_blocks;	/* allocations (malloc blocks) live */
	uint64_t allocs, used;	/* allocations added, GPUs they hold */
	uint64_t key_values;	/* --key-spread */
} fabric;

static tg_err fabric_nodes(fabric *f, tg_errinfo *ei)
{
	char name[32], zone[32], spine[32], block[32];
	const char *path[3] = { zone, spine, block };
	uint32_t i;
	unsigned l;
	tg_err err;

	for (l = 0; l < 3; l++)
		if ((err = tg_topology_add_layer(f->t, layer_name[l],
						 layer_key[l])))
			return err;
	for (i = 0; i < f->nodes; i++) {
		uint32_t b = i / NODES_PER_BLOCK, s = b / BLOCKS_PER_SPINE;
		tg_node_id id;

		snprintf(name, sizeof(name), "node-%u", i);
		snprintf(zone, sizeof(zone), "zone-%u", s / SPINES_PER_ZONE);
		snprintf(spine, sizeof(spine), "spine-%u", s);
		snprintf(block, sizeof(block), "block-%u", b);
		if ((err = tg_topology_add_node(f->t, name, path, &id)))
			return err;
		if (f->key_values) {
			char v[32];

			snprintf(v, sizeof(v), "rail-%llu", (unsigned long long)
				 (i % f->key_values));
			if ((err = tg_topology_node_add_label(f->t, id,
							      KEY_SPREAD, v)))
				return err;
		}
		if (
		    (err = tg_topology_node_set_gpus(f->t, id, GPUS_PER_NODE,
						     NULL)) ||
		    (err = tg_topology_node_set_resource(f->t, id, TG_RES_CPU,
							 CPU_PER_NODE)) ||
		    (err = tg_topology_node_set_resource(f->t, id,
							 TG_RES_MEMORY,
							 MEM_PER_NODE)) ||
		    (err = tg_topology_node_set_resource(f->t, id,
							 TG_RES_PODS,
							 PODS_PER_NODE)))
			return err;
	}
	return tg_topology_build(f->t, ei);
}

/* One allocation of \p g GPUs on node \p n. */
static tg_err fabric_alloc(fabric *f, uint32_t n, unsigned g)
{
	char pod[32];
	tg_alloc_spec sp;
	tg_shape sh;
	tg_err err;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = g;
	sh.v[TG_RES_CPU] = (int64_t)g * CPU_PER_GPU;
	sh.v[TG_RES_MEMORY] = (int64_t)g * MEM_PER_GPU;
	sh.v[TG_RES_PODS] = 1;
	memset(&sp, 0, sizeof(sp));
	snprintf(pod, sizeof(pod), "job-%llu", (unsigned long long)f->allocs);
	sp.pod = pod;
	sp.node = n;
	sp.shape = &sh;
	sp.preemptible = true;
	if ((err = tg_topology_add_alloc(f->t, &sp)))
		return err;
	f->allocs++;
	f->used += g;
	return TG_OK;
}

static unsigned alloc_size(void)
{
	uint64_t r = rng_below(100);

	return r < 50 ? 8 : r < 70 ? 4 : r < 85 ? 2 : 1;
}

/* Fills every spine to its own occupancy drawn from [lo, hi] percent. */
static tg_err fabric_occupy(fabric *f, unsigned lo, unsigned hi)
{
	uint32_t s;
	tg_err err;

	for (s = 0; s < f->spines; s++) {
		uint32_t a = s * BLOCKS_PER_SPINE * NODES_PER_BLOCK;
		uint32_t b = a + BLOCKS_PER_SPINE * NODES_PER_BLOCK;
		uint64_t cap, target, used = 0;
		unsigned occ;

		if (b > f->nodes)
			b = f->nodes;
		cap = (uint64_t)(b - a) * GPUS_PER_NODE;
		occ = lo + (unsigned)rng_below(hi - lo + 1);
		target = cap * occ / 100;
		while (used < target) {
			unsigned g = alloc_size(), tries;
			uint32_t n = TG_NONE;

			if (g > target - used)
				g = (unsigned)(target - used);
			for (;;) {
				for (tries = 0; tries < 8 && n == TG_NONE;
				     tries++) {
					uint32_t c = a + (uint32_t)rng_below(
							b - a);

					if (tg_topology_node_free(f->t, c,
							TG_RES_GPU) >= g)
						n = c;
				}
				if (n != TG_NONE || g == 1)
					break;
				g /= 2;
			}
			if (n == TG_NONE) {
				/* one GPU: scan; used < cap, so one exists */
				uint32_t c = a + (uint32_t)rng_below(b - a), k;

				for (k = 0; k < b - a && n == TG_NONE; k++) {
					uint32_t x = a + (c - a + k) % (b - a);

					if (tg_topology_node_free(f->t, x,
							TG_RES_GPU) >= 1)
						n = x;
				}
				if (n == TG_NONE)
					break;
			}
			if ((err = fabric_alloc(f, n, g)))
				return err;
			used += g;
		}
	}
	return TG_OK;
}

/* An empty fabric of \p gpus GPUs: its node, block, spine and zone
 * counts. */
static void fabric_shape(fabric *f, uint64_t gpus)
{
	memset(f, 0, sizeof(*f));
	f->gpus = gpus;
	f->nodes = (uint32_t)(gpus / GPUS_PER_NODE);
	f->blocks = (f->nodes + NODES_PER_BLOCK - 1) / NODES_PER_BLOCK;
	f->spines = (f->blocks + BLOCKS_PER_SPINE - 1) / BLOCKS_PER_SPINE;
	f->zones = (f->spines + SPINES_PER_ZONE - 1) / SPINES_PER_ZONE;
}

static tg_err fabric_make(fabric *f, uint64_t gpus, const opts *o,
			  tg_errinfo *ei)
{
	int64_t t0, t1, t2;
	tg_err err;

	fabric_shape(f, gpus);
	f->key_values = o->key_values;
	/* one stream per fabric size, so a size's state does not depend
	 * on which other sizes run */
	rng_state = o->seed ^ (gpus * 0x9e3779b97f4a7c15ull);
	ei->msg[0] = '\0';
	t0 = now_ns();
	f->t = tg_topology_create();
	if (!f->t)
		return TG_ENOMEM;
	if ((err = fabric_nodes(f, ei)))
		return err;
	t1 = now_ns();
	f->topo_bytes = mem_live;
	if ((err = fabric_occupy(f, o->occ_lo, o->occ_hi)))
		return err;
	t2 = now_ns();
	f->core_bytes = mem_live;
	f->core_blocks = mem_blocks;
	f->build_ms = (double)(t1 - t0) / 1e6;
	f->alloc_ms = (double)(t2 - t1) / 1e6;
	return TG_OK;
}

/* Members of \p m GPUs the fabric's free resources can take. */
static uint64_t free_members(const fabric *f, unsigned m)
{
	uint64_t sum = 0;
	uint32_t n;

	for (n = 0; n < f->nodes; n++) {
		int64_t g = tg_topology_node_free(f->t, n, TG_RES_GPU);

		if (g > 0)
			sum += (uint64_t)g / m;
	}
	return sum;
}

/* ---- one configuration ---- */

typedef struct result {
	uint64_t gang_gpus;
	unsigned member;
	uint64_t members;
	bool skipped;
	uint64_t room;		/* members that fit, when skipped */
	size_t n;		/* decisions timed */
	int64_t min, median, p99, max;
	double mean;
	size_t scratch_bytes;	/* live beyond the core after placing */
	tg_status status;
	char domain[256];
	double bw;
	uint64_t hash;
} result;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t decision_hash(const tg_decision *d)
{
	uint64_t h = 1469598103934665603ull;
	unsigned i, st = tg_decision_status(d);
	const char *dom = tg_decision_domain(d);
	const char *msg = tg_decision_message(d);

	h = fnv(h, &st, sizeof(st));
	h = fnv(h, dom, strlen(dom));
	h = fnv(h, msg, strlen(msg));
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		h = fnv(h, &p->node, sizeof(p->node));
		h = fnv(h, &p->gpus, sizeof(p->gpus));
		h = fnv(h, &p->rank, sizeof(p->rank));
	}
	for (i = 0; i < tg_decision_nvictims(d); i++) {
		const tg_victim *v = tg_decision_victim(d, i);

		h = fnv(h, v->pod, strlen(v->pod) + 1);
	}
	return h;
}

/* --key-spread: a hard spread of maxSkew 1 over KEY_SPREAD counting the
 * gang's own members (app=bench). */
static tg_err key_spread(tg_gang *g)
{
	static const char *const vals[] = { "bench" };
	static const tg_label_expr e = { "app", TG_SEL_IN, vals, 1 };
	static const tg_label l = { "app", "bench" };
	tg_spread_spec sp;
	unsigned i, n = tg_gang_nmembers(g);
	tg_err err;

	memset(&sp, 0, sizeof(sp));
	sp.layer = KEY_SPREAD;
	sp.max_skew = 1;
	sp.hard = true;
	sp.ns = "bench";
	sp.selector = true;
	sp.exprs = &e;
	sp.nexprs = 1;
	if ((err = tg_gang_add_spread_spec(g, &sp)))
		return err;
	for (i = 0; i < n; i++)
		if ((err = tg_gang_podset_set_member_labels(g, 0, i, "bench",
							    &l, 1)))
			return err;
	return TG_OK;
}

static tg_gang *make_gang(uint64_t gpus, unsigned m, bool spread)
{
	char name[64];
	tg_gang *g;
	tg_shape sh;
	unsigned ps;

	snprintf(name, sizeof(name), "bench/gang-%llu-by-%u",
		 (unsigned long long)gpus, m);
	g = tg_gang_create(name);
	if (!g)
		return NULL;
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = m;
	sh.v[TG_RES_CPU] = (int64_t)m * CPU_PER_GPU;
	sh.v[TG_RES_MEMORY] = (int64_t)m * MEM_PER_GPU;
	sh.v[TG_RES_PODS] = 1;
	if (tg_gang_add_podset(g, "worker", &sh, (unsigned)(gpus / m),
			       &ps) ||
	    tg_gang_set_gather(g, layer_name[2], TG_GATHER_PREFER) ||
	    (spread && key_spread(g))) {
		tg_gang_destroy(g);
		return NULL;
	}
	return g;
}

/*
 * \p n times: a one-pod allocation (1 core, no GPU) on a random node,
 * removed again: the state is the same, but the node's domain counts as
 * changed for the core's caches, as between two real decisions.
 */
static tg_err churn(fabric *f, uint64_t n)
{
	tg_alloc_spec sp;
	tg_shape sh;
	uint64_t k;
	tg_err err;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 1000;
	sh.v[TG_RES_PODS] = 1;
	memset(&sp, 0, sizeof(sp));
	sp.pod = "bench-churn";
	sp.shape = &sh;
	for (k = 0; k < n; k++) {
		sp.node = (tg_node_id)rng_below(f->nodes);
		if ((err = tg_topology_add_alloc(f->t, &sp)))
			return err;
		tg_topology_remove_alloc(f->t, sp.pod);
	}
	return TG_OK;
}

/* 0 ok, 1 a placement failed (reported). */
static int run_config(fabric *f, const opts *o, uint64_t gang_gpus,
		      unsigned m, result *r)
{
	tg_errinfo ei;
	tg_decision *d = NULL;
	tg_gang *g;
	int64_t *lat = NULL, total = 0;
	size_t cap = 0, limit, gang_bytes;
	double sum = 0;
	size_t i;
	tg_err err;

	memset(r, 0, sizeof(*r));
	r->gang_gpus = gang_gpus;
	r->member = m;
	r->members = gang_gpus / m;
	r->room = free_members(f, m);
	if (r->members > r->room || r->members > TG_MAX_MEMBERS) {
		r->skipped = true;
		return 0;
	}
	gang_bytes = mem_live;
	g = make_gang(gang_gpus, m, o->key_values > 0);
	gang_bytes = mem_live - gang_bytes;
	if (!g) {
		cli_err("bench: out of memory making a gang");
		return 1;
	}
	/* warm-up: allocates the scratch, gives the reference decision */
	if ((err = tg_place(f->t, g, &d, &ei))) {
		cli_err("bench: %s", ei.msg);
		tg_gang_destroy(g);
		return 1;
	}
	r->status = tg_decision_status(d);
	snprintf(r->domain, sizeof(r->domain), "%s",
		 tg_decision_domain(d));
	r->bw = tg_decision_bandwidth_gbps(d);
	r->hash = decision_hash(d);
	tg_decision_free(d);
	r->scratch_bytes = mem_live - gang_bytes - f->core_bytes;
	limit = o->repeat ? (size_t)o->repeat : ADAPTIVE_MAX;
	for (i = 0; i < limit; i++) {
		int64_t t0, t1;

		if (i == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			int64_t *nl;

			if (nc > limit)
				nc = limit;
			nl = realloc(lat, nc * sizeof(*lat));
			if (!nl) {
				cli_err("bench: out of memory");
				goto fail;
			}
			lat = nl;
			cap = nc;
		}
		if (churn(f, o->churn)) {
			cli_err("bench: out of memory changing allocations");
			goto fail;
		}
		t0 = now_ns();
		err = tg_place(f->t, g, &d, &ei);
		t1 = now_ns();
		if (err) {
			cli_err("bench: %s", ei.msg);
			goto fail;
		}
		if (decision_hash(d) != r->hash) {
			cli_err("bench: %llu GPUs, gang of %llu: decision %zu "
				"differs from the first on the same state",
				(unsigned long long)f->gpus,
				(unsigned long long)gang_gpus, i + 1);
			tg_decision_free(d);
			goto fail;
		}
		tg_decision_free(d);
		lat[i] = t1 - t0;
		total += t1 - t0;
		if (!o->repeat && i + 1 >= ADAPTIVE_MIN &&
		    total >= ADAPTIVE_NS) {
			i++;
			break;
		}
	}
	r->n = i;
	for (i = 0; i < r->n; i++)
		sum += (double)lat[i];
	qsort(lat, r->n, sizeof(*lat), cmp_i64);
	r->min = lat[0];
	r->max = lat[r->n - 1];
	r->median = pct(lat, r->n, 50);
	r->p99 = pct(lat, r->n, 99);
	r->mean = sum / (double)r->n;
	free(lat);
	tg_gang_destroy(g);
	return 0;
fail:
	free(lat);
	tg_gang_destroy(g);
	return 1;
}

/* ---- output ---- */

static double per_node(size_t bytes, const fabric *f)
{
	return f->nodes ? (double)bytes / f->nodes : 0;
}

static void text_fabric(const fabric *f, const opts *o)
{
	char a[32], b[32], c[32], e[32];

	printf("\nfabric %s GPUs: %s nodes = %u zone%s x %u spine%s x %s "
	       "nvlink-blocks of %d nodes\n", grouped(f->gpus, a, sizeof(a)),
	       grouped(f->nodes, b, sizeof(b)), f->zones,
	       f->zones == 1 ? "" : "s", f->spines,
	       f->spines == 1 ? "" : "s", grouped(f->blocks, c, sizeof(c)),
	       NODES_PER_BLOCK);
	printf("  built in %.1f ms; %s allocations (%.1f%% of GPUs in use, "
	       "%u-%u%% per spine) added in %.1f ms\n", f->build_ms,
	       grouped(f->allocs, e, sizeof(e)),
	       100.0 * (double)f->used / (double)f->gpus, o->occ_lo,
	       o->occ_hi, f->alloc_ms);
	printf("  core memory: %.1f B/node (topology %.1f B/node after "
	       "build, %.1f B/node for allocations; %s blocks)\n",
	       per_node(f->core_bytes, f), per_node(f->topo_bytes, f),
	       per_node(f->core_bytes - f->topo_bytes, f),
	       grouped(f->core_blocks, a, sizeof(a)));
	printf("  %9s %6s %7s %9s %10s %10s %10s  %s\n", "gang_gpus",
	       "member", "members", "decisions", "min_us", "median_us",
	       "p99_us", "placed in");
}

static void text_result(const result *r)
{
	char a[32], b[32];

	if (r->skipped) {
		printf("  %9llu %6u %7llu  skipped: only %s members of %u "
		       "GPUs fit in the free capacity\n",
		       (unsigned long long)r->gang_gpus, r->member,
		       (unsigned long long)r->members,
		       grouped(r->room, a, sizeof(a)), r->member);
		return;
	}
	printf("  %9llu %6u %7llu %9s %10.1f %10.1f %10.1f  %s\n",
	       (unsigned long long)r->gang_gpus, r->member,
	       (unsigned long long)r->members, grouped(r->n, b, sizeof(b)),
	       (double)r->min / 1e3, (double)r->median / 1e3,
	       (double)r->p99 / 1e3,
	       r->status == TG_STATUS_PLACED ? r->domain :
	       tg_status_name(r->status));
}

static void json_result(const fabric *f, const opts *o, const result *r)
{
	printf("{\"gpus\":%llu,\"nodes\":%u,\"zones\":%u,\"spines\":%u,"
	       "\"blocks\":%u,\"seed\":%llu,\"occupancy_pct\":%.2f,"
	       "\"allocs\":%llu,\"build_ms\":%.3f,\"alloc_ms\":%.3f,"
	       "\"bytes_per_node\":%.1f,\"topology_bytes_per_node\":%.1f,"
	       "\"scratch_bytes_per_node\":%.1f,",
	       (unsigned long long)f->gpus, f->nodes, f->zones, f->spines,
	       f->blocks, (unsigned long long)o->seed,
	       100.0 * (double)f->used / (double)f->gpus,
	       (unsigned long long)f->allocs, f->build_ms, f->alloc_ms,
	       per_node(f->core_bytes, f), per_node(f->topo_bytes, f),
	       per_node(r->scratch_bytes, f));
	printf("\"gang_gpus\":%llu,\"member_gpus\":%u,\"members\":%llu,"
	       "\"decisions\":%zu,\"churn\":%llu,\"min_us\":%.3f,"
	       "\"median_us\":%.3f,"
	       "\"p99_us\":%.3f,\"mean_us\":%.3f,\"max_us\":%.3f,"
	       "\"status\":", (unsigned long long)r->gang_gpus, r->member,
	       (unsigned long long)r->members, r->n,
	       (unsigned long long)o->churn, (double)r->min / 1e3,
	       (double)r->median / 1e3, (double)r->p99 / 1e3,
	       r->mean / 1e3, (double)r->max / 1e3);
	json_str(stdout, tg_status_name(r->status));
	printf(",\"domain\":");
	json_str(stdout, r->domain);
	printf(",\"bandwidth_gbps\":%g,\"decision_hash\":\"%016llx\"}\n",
	       r->bw, (unsigned long long)r->hash);
	fflush(stdout);
}

/* ---- targets ---- */

typedef struct target_seen {
	double median_us[MAX_LIST];	/* per member size; < 0 = none */
	bool any;
} target_seen;

static void text_target_latency(const char *what, double limit_us,
				const target_seen *ts, const opts *o)
{
	const char *sep = "";
	unsigned k;

	printf("  median <= %g us for a 1,024-GPU gang at %s GPUs:", limit_us,
	       what);
	if (!ts->any) {
		printf(" not measured\n");
		return;
	}
	for (k = 0; k < o->nmember; k++) {
		if (ts->median_us[k] < 0)
			continue;
		printf("%s %llu-GPU members %.1f us (%s)", sep,
		       (unsigned long long)o->member[k], ts->median_us[k],
		       ts->median_us[k] <= limit_us ? "met" : "MISSED");
		sep = ",";
	}
	printf("\n");
}

/* ---- preemption ---- */

#define PRE_PRIO_MAX	100	/* running gangs: priority 1..100 */
#define PRE_PRIO	1000	/* the preemptor */

/* Fills every GPU with running gangs of lower priority: \p slots_per_node
 * allocations of 8 / slots_per_node GPUs per node, shuffled over the
 * fabric, grouped into gangs of \p min_pods..max_pods pods (or exactly
 * \p ngangs gangs when non-zero). */
static tg_err pre_fill(fabric *f, unsigned slots_per_node, unsigned ngangs,
		       unsigned min_pods, unsigned max_pods)
{
	uint64_t nslot = (uint64_t)f->nodes * slots_per_node, i, j;
	uint32_t *slot = malloc(nslot * sizeof(uint32_t));
	unsigned g = GPUS_PER_NODE / slots_per_node, gang = 0;
	char pod[64], gname[32];
	tg_alloc_spec sp;
	tg_shape sh;
	tg_err err = TG_OK;

	if (!slot)
		return TG_ENOMEM;
	for (i = 0; i < nslot; i++)
		slot[i] = (uint32_t)(i / slots_per_node);
	for (i = nslot; i > 1; i--) {
		uint32_t x;

		j = rng_below(i);
		x = slot[i - 1];
		slot[i - 1] = slot[j];
		slot[j] = x;
	}
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = g;
	sh.v[TG_RES_CPU] = (int64_t)g * CPU_PER_GPU;
	sh.v[TG_RES_MEMORY] = (int64_t)g * MEM_PER_GPU;
	sh.v[TG_RES_PODS] = 1;
	for (i = 0; i < nslot && !err; gang++) {
		uint64_t size = ngangs ?
			(gang + 1) * nslot / ngangs - gang * nslot / ngangs :
			min_pods + rng_below(max_pods - min_pods + 1);
		int64_t prio = 1 + (int64_t)rng_below(PRE_PRIO_MAX);

		snprintf(gname, sizeof(gname), "run/gang-%u", gang);
		for (j = 0; j < size && i < nslot && !err; j++, i++) {
			memset(&sp, 0, sizeof(sp));
			snprintf(pod, sizeof(pod), "%s-%llu", gname,
				 (unsigned long long)j);
			sp.pod = pod;
			sp.gang = gname;
			sp.node = slot[i];
			sp.shape = &sh;
			sp.priority = prio;
			sp.preemptible = true;
			err = tg_topology_add_alloc(f->t, &sp);
			f->allocs++;
			f->used += g;
		}
	}
	free(slot);
	return err;
}

/* One preemption configuration. */
typedef struct pre_cfg {
	const char *what;
	uint64_t gpus, quick_gpus;
	unsigned slots_per_node, ngangs, min_pods, max_pods;
	uint64_t gang_gpus;
	double target_ms;
} pre_cfg;

/* What the timed preemption decisions gave. */
typedef struct pre_run {
	int64_t *lat;		/* n latencies, ns */
	size_t n;
	uint64_t hash;		/* of the first decision; all match it */
	unsigned nv;		/* its victims */
} pre_run;

/* The full fabric of \p pc (\p gpus GPUs) and its preemptor gang; 1 on
 * failure, with nothing left to free. */
static int pre_build(const opts *o, const pre_cfg *pc, uint64_t gpus,
		     fabric *f, tg_gang **gp)
{
	tg_errinfo ei;
	tg_gang *g;
	tg_err err;

	fabric_shape(f, gpus);
	rng_state = o->seed ^ (gpus * 0x9e3779b97f4a7c15ull) ^ 0x5eed;
	ei.msg[0] = '\0';
	f->t = tg_topology_create();
	if (!f->t || (err = fabric_nodes(f, &ei)) ||
	    (err = pre_fill(f, pc->slots_per_node, pc->ngangs, pc->min_pods,
			    pc->max_pods))) {
		cli_err("bench: building the preemption fabric failed: %s",
			ei.msg);
		tg_topology_destroy(f->t);
		return 1;
	}
	g = make_gang(pc->gang_gpus, GPUS_PER_NODE, false);
	if (!g || tg_gang_set_gather(g, layer_name[1], TG_GATHER_MUST)) {
		tg_gang_destroy(g);
		tg_topology_destroy(f->t);
		return 1;
	}
	tg_gang_set_priority(g, PRE_PRIO);
	*gp = g;
	return 0;
}

/* One timed decision, checked against the first; 1 on failure. */
static int pre_decide(const fabric *f, tg_gang *g, pre_run *r)
{
	tg_errinfo ei = { "" };
	tg_decision *d = NULL;
	int64_t t0, t1;
	int ret = 0;

	t0 = now_ns();
	if (tg_place(f->t, g, &d, &ei)) {
		cli_err("bench: %s", ei.msg);
		return 1;
	}
	t1 = now_ns();
	if (!r->n) {
		r->hash = decision_hash(d);
		r->nv = tg_decision_nvictims(d);
		if (tg_decision_status(d) != TG_STATUS_PREEMPTING) {
			cli_err("bench: expected a preempting decision: %s",
				tg_decision_message(d));
			ret = 1;
		}
	} else if (decision_hash(d) != r->hash) {
		cli_err("bench: preemption decisions differ");
		ret = 1;
	}
	tg_decision_free(d);
	if (!ret)
		r->lat[r->n] = t1 - t0;
	return ret;
}

/* --repeat decisions, or adaptive: at least ADAPTIVE_MIN and about
 * ADAPTIVE_NS in all. */
static int pre_measure(const opts *o, const fabric *f, tg_gang *g,
		       pre_run *r)
{
	size_t cap = 0, limit = o->repeat ? (size_t)o->repeat : ADAPTIVE_MAX;
	int64_t total = 0;

	for (r->n = 0; r->n < limit; r->n++) {
		if (r->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			int64_t *nl = realloc(r->lat, nc * sizeof(*r->lat));

			if (!nl)
				return 1;
			r->lat = nl;
			cap = nc;
		}
		if (pre_decide(f, g, r))
			return 1;
		total += r->lat[r->n];
		if (!o->repeat && r->n + 1 >= ADAPTIVE_MIN &&
		    total >= ADAPTIVE_NS) {
			r->n++;
			break;
		}
	}
	return 0;
}

static void pre_report(const opts *o, const pre_cfg *pc, const fabric *f,
		       pre_run *r)
{
	double med, p99;

	qsort(r->lat, r->n, sizeof(*r->lat), cmp_i64);
	med = (double)pct(r->lat, r->n, 50) / 1e6;
	p99 = (double)pct(r->lat, r->n, 99) / 1e6;
	if (o->json)
		printf("{\"preempt\":true,\"gpus\":%llu,\"nodes\":%u,"
		       "\"allocs\":%llu,\"gang_gpus\":%llu,\"victims\":%u,"
		       "\"decisions\":%zu,\"median_ms\":%.3f,"
		       "\"p99_ms\":%.3f,\"min_ms\":%.3f,"
		       "\"decision_hash\":\"%016llx\"}\n",
		       (unsigned long long)f->gpus, f->nodes,
		       (unsigned long long)f->allocs,
		       (unsigned long long)pc->gang_gpus, r->nv, r->n, med,
		       p99, (double)r->lat[0] / 1e6,
		       (unsigned long long)r->hash);
	else
		printf("preemption: %s (%llu GPUs, %u nodes, %llu "
		       "allocations, all GPUs in use)\n"
		       "  gang of %llu GPUs, priority %d, must gather on a "
		       "spine: %u victims; %zu decisions: min %.2f ms, median "
		       "%.2f ms, p99 %.2f ms (target median <= %g ms: %s)\n",
		       pc->what, (unsigned long long)f->gpus, f->nodes,
		       (unsigned long long)f->allocs,
		       (unsigned long long)pc->gang_gpus, PRE_PRIO, r->nv,
		       r->n, (double)r->lat[0] / 1e6, med, p99,
		       pc->target_ms, med <= pc->target_ms ? "met" :
		       "MISSED");
}

static int bench_preempt(const opts *o)
{
	static const pre_cfg cfg[] = {
		{ "2k nodes, 700 running lower-priority gangs", 16384, 2048,
		  1, 700, 0, 0, 128, 10.0 },
		{ "100k GPUs, 51,200 running allocations", 102400, 8192,
		  4, 0, 1, 8, 1024, 50.0 },
	};
	unsigned c;
	int ret = 0;

	for (c = 0; c < sizeof(cfg) / sizeof(cfg[0]) && !ret; c++) {
		fabric f;
		tg_gang *g = NULL;
		pre_run r;

		memset(&r, 0, sizeof(r));
		if (pre_build(o, &cfg[c], o->quick ? cfg[c].quick_gpus :
			      cfg[c].gpus, &f, &g))
			return 1;
		ret = pre_measure(o, &f, g, &r);
		if (!ret)
			pre_report(o, &cfg[c], &f, &r);
		free(r.lat);
		tg_gang_destroy(g);
		tg_topology_destroy(f.t);
	}
	return ret;
}

/* One gang size \p j and member size \p k on fabric \p f: the result
 * printed, the target sizes' medians noted; 1 on failure. */
static int bench_one(fabric *f, const opts *o, unsigned j, unsigned k,
		     target_seen *t100k, target_seen *t1m)
{
	result r;

	if (o->gang[j] % o->member[k]) {
		fprintf(stderr, "topogang bench: gang of %llu GPUs does not "
			"divide into members of %llu GPUs; skipped\n",
			(unsigned long long)o->gang[j],
			(unsigned long long)o->member[k]);
		return 0;
	}
	if (run_config(f, o, o->gang[j], (unsigned)o->member[k], &r))
		return 1;
	if (!o->json)
		text_result(&r);
	else if (!r.skipped)
		json_result(f, o, &r);
	else
		fprintf(stderr, "topogang bench: %llu GPUs: gang of %llu GPUs "
			"skipped: only %llu members of %u GPUs fit\n",
			(unsigned long long)f->gpus,
			(unsigned long long)r.gang_gpus,
			(unsigned long long)r.room, r.member);
	if (r.skipped || o->gang[j] != TARGET_GANG)
		return 0;
	if (f->gpus == TARGET_100K_GPUS) {
		t100k->median_us[k] = (double)r.median / 1e3;
		t100k->any = true;
	} else if (f->gpus == TARGET_1M_GPUS) {
		t1m->median_us[k] = (double)r.median / 1e3;
		t1m->any = true;
	}
	return 0;
}

int cli_bench(int argc, char **argv)
{
	opts o;
	target_seen t100k, t1m;
	double bytes[MAX_LIST];
	tg_errinfo ei;
	unsigned s, k, j;
	int rc, ret = 0;

	rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : 2;
	for (k = 0; k < MAX_LIST; k++)
		t100k.median_us[k] = t1m.median_us[k] = -1;
	t100k.any = t1m.any = false;

	/* the library's allocations are counted from here on; nothing of
	 * the library may be live from before */
	if (o.preempt)
		return bench_preempt(&o) ? 1 : 0;
	tg_set_allocator(cnt_malloc, cnt_realloc, cnt_free);
	if (!o.json) {
		printf("topogang bench: seed %llu, occupancy %u-%u%% per "
		       "spine, %s\n", (unsigned long long)o.seed, o.occ_lo,
		       o.occ_hi, o.repeat ? "fixed decisions per "
		       "configuration" : "about 0.3 s of decisions per "
		       "configuration");
		printf("  nodes of %d GPUs; gangs prefer nvlink-block; "
		       "latency of tg_place() only, decisions not applied\n",
		       GPUS_PER_NODE);
		if (o.churn)
			printf("  before each decision: %llu one-pod "
			       "allocations added and removed on random "
			       "nodes\n", (unsigned long long)o.churn);
	}
	for (s = 0; s < o.ngpus && !ret; s++) {
		fabric f;
		tg_err err;

		bytes[s] = -1;
		err = fabric_make(&f, o.gpus[s], &o, &ei);
		if (err) {
			cli_err("bench: building %llu GPUs: %s%s%s",
				(unsigned long long)o.gpus[s],
				tg_strerror(err), ei.msg[0] ? ": " : "",
				ei.msg);
			tg_topology_destroy(f.t);
			ret = 1;
			break;
		}
		bytes[s] = per_node(f.core_bytes, &f);
		if (!o.json)
			text_fabric(&f, &o);
		for (j = 0; j < o.ngang && !ret; j++)
			for (k = 0; k < o.nmember && !ret; k++)
				ret = bench_one(&f, &o, j, k, &t100k, &t1m);
		if (!o.json)
			printf("  placement scratch: %.1f B/node "
			       "(allocated by the first tg_place())\n",
			       per_node(mem_live - f.core_bytes, &f));
		tg_topology_destroy(f.t);
	}
	if (!o.json && !ret) {
		char a[32];

		printf("\ntargets:\n");
		text_target_latency("102,400", TARGET_100K_US, &t100k, &o);
		text_target_latency("1,048,576", TARGET_1M_US, &t1m, &o);
		printf("  core memory <= %g B/node:", TARGET_BYTES);
		for (s = 0; s < o.ngpus; s++)
			printf("%s %s GPUs %.1f (%s)", s ? "," : "",
			       grouped(o.gpus[s], a, sizeof(a)), bytes[s],
			       bytes[s] <= TARGET_BYTES ? "met" : "MISSED");
		printf("\n");
	}
	tg_set_allocator(NULL, NULL, NULL);
	return ret;
}
