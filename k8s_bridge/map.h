/*
 * k8s_bridge/map.h - a string-keyed hash map of owned values (the
 * scheduler's per-gang and per-pod state).
 */
#ifndef BR_MAP_H
#define BR_MAP_H

#include <stddef.h>

typedef struct br_map_ent {
	char *key;
	void *val;
	struct br_map_ent *next;
} br_map_ent;

typedef struct br_map {
	br_map_ent **slots;
	size_t nslots, n;
	void (*free_val)(void *);
} br_map;

void br_map_init(br_map *m, void (*free_val)(void *));
void br_map_free(br_map *m);
void *br_map_get(const br_map *m, const char *key);
/* Stores \p val under \p key (copied), freeing a value it replaces. */
void br_map_put(br_map *m, const char *key, void *val);
/* Removes and frees. */
void br_map_del(br_map *m, const char *key);

/*
 * Iteration: for (e = br_map_first(m, &i); e; e = br_map_next(m, &i, e)).
 * Deleting the current entry while iterating is not allowed; collect
 * keys first.
 */
br_map_ent *br_map_first(const br_map *m, size_t *slot);
br_map_ent *br_map_next(const br_map *m, size_t *slot, br_map_ent *e);

#endif /* BR_MAP_H */
