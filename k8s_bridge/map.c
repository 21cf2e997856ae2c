/*
 * k8s_bridge/map.c - string-keyed hash map.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "util.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void br_map_init(br_map *m, void (*free_val)(void *))
{
	memset(m, 0, sizeof(*m));
	m->free_val = free_val;
}

void br_map_free(br_map *m)
{
	size_t i;

	for (i = 0; i < m->nslots; i++) {
		br_map_ent *e = m->slots[i], *nx;

		for (; e; e = nx) {
			nx = e->next;
			if (m->free_val)
				m->free_val(e->val);
			free(e->key);
			free(e);
		}
	}
	free(m->slots);
	m->slots = NULL;
	m->nslots = m->n = 0;
}

static br_map_ent **find(const br_map *m, const char *key)
{
	br_map_ent **pp;

	if (!m->nslots)
		return NULL;
	pp = &m->slots[hash(key) & (m->nslots - 1)];
	while (*pp && strcmp((*pp)->key, key) != 0)
		pp = &(*pp)->next;
	return pp;
}

void *br_map_get(const br_map *m, const char *key)
{
	br_map_ent **pp = find(m, key);

	return pp && *pp ? (*pp)->val : NULL;
}

static void grow(br_map *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 64, i;
	br_map_ent **s = br_xcalloc(n, sizeof(*s));

	for (i = 0; i < m->nslots; i++) {
		br_map_ent *e = m->slots[i], *nx;

		for (; e; e = nx) {
			size_t b = hash(e->key) & (n - 1);

			nx = e->next;
			e->next = s[b];
			s[b] = e;
		}
	}
	free(m->slots);
	m->slots = s;
	m->nslots = n;
}

void br_map_put(br_map *m, const char *key, void *val)
{
	br_map_ent **pp = find(m, key), *e;

	if (pp && *pp) {
		if (m->free_val && (*pp)->val != val)
			m->free_val((*pp)->val);
		(*pp)->val = val;
		return;
	}
	if (m->n + 1 > m->nslots)
		grow(m);
	pp = find(m, key);
	e = br_xcalloc(1, sizeof(*e));
	e->key = br_xstrdup(key);
	e->val = val;
	*pp = e;
	m->n++;
}

void br_map_del(br_map *m, const char *key)
{
	br_map_ent **pp = find(m, key), *e;

	if (!pp || !*pp)
		return;
	e = *pp;
	*pp = e->next;
	if (m->free_val)
		m->free_val(e->val);
	free(e->key);
	free(e);
	m->n--;
}

br_map_ent *br_map_first(const br_map *m, size_t *slot)
{
	size_t i;

	for (i = 0; i < m->nslots; i++)
		if (m->slots[i]) {
			*slot = i;
			return m->slots[i];
		}
	return NULL;
}

br_map_ent *br_map_next(const br_map *m, size_t *slot, br_map_ent *e)
{
	size_t i;

	if (e->next)
		return e->next;
	for (i = *slot + 1; i < m->nslots; i++)
		if (m->slots[i]) {
			*slot = i;
			return m->slots[i];
		}
	return NULL;
}
