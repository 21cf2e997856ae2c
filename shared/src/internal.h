/*
 * shared/src/internal.h - private helpers of libtopogang.
 *
 * Internal functions shared between files are named tgi_*; they are not
 * exported from the shared library (only ^tg_ symbols are).
 */
#ifndef TG_INTERNAL_H
#define TG_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topogang/topogang.h"
#include "topogang/util.h"

#define TG_UNUSED(x) ((void)(x))
#define TG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TG_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Allocation through the hook set by tg_set_allocator(). */
void *tgi_malloc(size_t n);
void *tgi_calloc(size_t n, size_t size);
void *tgi_realloc(void *p, size_t n);
/* Grows *p to hold at least \p need elements of \p size; *cap updated. */
tg_err tgi_grow(void *pp, size_t *cap, size_t need, size_t size);
void tgi_free(void *p);
char *tgi_strdup(const char *s);
char *tgi_strndup(const char *s, size_t n);

/* Fills ei->msg (if ei) and returns err. */
tg_err tgi_errf(tg_errinfo *ei, tg_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "source:line: message" into ei->msg (if ei); returns err. */
tg_err tgi_verrf_at(tg_errinfo *ei, tg_err err, const char *source,
		    unsigned line, const char *fmt, va_list ap);

/* The growable string is public: topogang/util.h's tg_buf. */

/*
 * Appends \p s as one shell word: as it is when it is not empty and holds
 * only ASCII letters, digits and the characters of \p plain, else
 * single-quoted (a ' written '\'').  For commands the exporters print.
 */
void tgi_buf_shell(tg_buf *b, const char *plain, const char *s);

/*
 * Sorts \p n elements of \p size bytes at \p base by \p cmp, which gets
 * \p ctx as its third argument: no file-level state, so two threads sort
 * at once.  Stable (equal elements keep their input order), in place, no
 * allocation, cannot fail; a stable sort's result is unique, so it is the
 * order qsort() gives a total order and glibc's merge-sorting qsort() gives
 * any order.  O(n log n) comparisons (tgi_sort() in util.c says how).
 */
typedef int (*tgi_cmp_fn)(const void *a, const void *b, void *ctx);
void tgi_sort(void *base, size_t n, size_t size, tgi_cmp_fn cmp, void *ctx);

/*
 * String interning: equal strings get equal ids; id 0 is "" / missing.
 */
typedef struct tgi_strtab {
	char **strs;
	size_t n, cap;
	uint32_t *slots;	/* open addressing, id+1; 0 = empty */
	size_t nslots;
	/* a clone's strings 1..narena-1 live in one block (arena), not
	 * one allocation each (tgi_strtab_clone()) */
	char *arena;
	size_t narena;
} tgi_strtab;

void tgi_strtab_init(tgi_strtab *st);
void tgi_strtab_free(tgi_strtab *st);
/* Interns s; *id gets its id (>= 1). */
tg_err tgi_strtab_intern(tgi_strtab *st, const char *s, uint32_t *id);
/* Looks s up; 0 when absent. */
uint32_t tgi_strtab_find(const tgi_strtab *st, const char *s);
/* Room for \p n strings without growing (ids and hash slots): a table
 * filled with many strings at once is not rehashed at every doubling. */
tg_err tgi_strtab_reserve(tgi_strtab *st, size_t n);
/* \p dst as a copy of \p src (same ids, same slots): its strings in one
 * block, two allocations in all.  TG_ENOMEM (\p dst then empty). */
tg_err tgi_strtab_clone(tgi_strtab *dst, const tgi_strtab *src);
static inline const char *tgi_strtab_get(const tgi_strtab *st, uint32_t id)
{
	return id && id < st->n ? st->strs[id] : "";
}

/* 64-bit FNV-1a. */
uint64_t tgi_hash(const char *s, size_t n);
/* FNV-1a: tgi_hash() is tgi_hash_mix(TGI_HASH_SEED, s, n); chained calls
 * hash the concatenation. */
#define TGI_HASH_SEED 14695981039346656037ull
uint64_t tgi_hash_mix(uint64_t h, const void *p, size_t n);

/* Checked decimal parses: topogang/util.h's tg_i64_parse() and kin. */

/*
 * Before build: every node inside the tree must carry label \p key (the
 * node level of a Kubernetes Topology, kubernetes.io/hostname); build
 * leaves a node without it out of topology-aware placement, with a
 * warning, as it does a node missing a layer's label.  TG_ESTATE after
 * build, TG_ENOMEM.
 */
tg_err tgi_topology_set_node_key(tg_topology *t, const char *key);
/* Room for \p more allocations (their pod names, hash slots and entries)
 * without growing: a host that adds many at once (a snapshot's bound
 * pods).  Changes no result. */
tg_err tgi_topology_reserve_allocs(tg_topology *t, size_t more);

/*
 * A copy of built topology \p t that shares nothing with it (not its
 * place.c scratch buffers, which the copy makes again when it places):
 * the same nodes, domains, warnings and allocations (live and removed,
 * at the same indices).  NULL when out of memory.  Caller destroys it
 * with tg_topology_destroy().  A host that keeps a topology between
 * snapshots (tg_k8s_cache) hands out copies of it.
 */
tg_topology *tgi_topology_clone(const tg_topology *t);

/* Allocation \p i (live or removed) as a kept topology's updater reads
 * it: strings are \p t's, valid until it changes. */
typedef struct tgi_alloc_info {
	bool live, nominated;
	uint32_t pod;		/* strtab id of its pod name */
	tg_node_id node;
	const char *gang;	/* the pod's name when it has no gang */
	const char *budget;	/* NULL: none */
	int64_t priority;
	bool preemptible;
} tgi_alloc_info;

/* Allocations made so far, removed ones included (indices 0..n-1; a new
 * allocation takes index n). */
size_t tgi_alloc_count(const tg_topology *t);
void tgi_alloc_get(const tg_topology *t, size_t i, tgi_alloc_info *out);
/* Removes allocation \p i if it is live (tg_topology_remove_alloc()
 * by index). */
void tgi_alloc_remove(tg_topology *t, size_t i);

/* Reads a whole file (at most TG_MAX_FILE bytes), NUL-terminated:
 * tg_file_read() with the loaders' bound. */
#define tgi_read_file(path, buf, len, ei) \
	tg_file_read((path), TG_MAX_FILE, (buf), (len), (ei))

#endif /* TG_INTERNAL_H */
