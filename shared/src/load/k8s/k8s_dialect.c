/*
 * shared/src/load/k8s/k8s_dialect.c - the table of gang dialects
 * (k8s_dialect.h says what a row holds; docs/HACKING-dialect.md how to add
 * one) and tg_k8s_dialect_key().
 *
 * Table order is the order in which the dialects' pod() hooks read each
 * member's annotations and in which they lend their size keys; which
 * dialect a pod belongs to is decided by the keys' ranks, not by this
 * order.
 */
#include "config.h"

#include <string.h>

#include "k8s_dialect.h"

extern const tgk_dialect tgk_koordinator, tgk_coscheduling, tgk_kueue,
	tgk_kai, tgk_lws;

const tgk_dialect *const tgk_dialects[] = {
	&tgk_koordinator,
	&tgk_coscheduling,
	&tgk_kueue,
	&tgk_kai,
	&tgk_lws,
};

const unsigned tgk_ndialects = sizeof(tgk_dialects) / sizeof(tgk_dialects[0]);

/* a handle holds the table's rows and those registered after them */
_Static_assert(sizeof(tgk_dialects) / sizeof(tgk_dialects[0]) <
	       K8S_MAX_DIALECTS, "the dialect table outgrew K8S_MAX_DIALECTS");

/* Whether key \p x of dialect \p dx comes before \p y of \p dy: rank,
 * then table order (keys of one dialect in their order). */
static bool key_before(unsigned dx, const tgk_key *x, unsigned dy,
		       const tgk_key *y)
{
	if (x->rank != y->rank)
		return x->rank < y->rank;
	return dx != dy ? dx < dy : x < y;
}

const char *tg_k8s_dialect_key(const char *dialect, unsigned i,
			       bool *annotation)
{
	unsigned d, e;
	const tgk_key *k, *l;

	/* the key with exactly i keys before it (a dozen keys in all) */
	for (d = 0; d < tgk_ndialects; d++) {
		if (dialect && strcmp(dialect, tgk_dialects[d]->name) != 0)
			continue;
		for (k = tgk_dialects[d]->keys; k->key; k++) {
			unsigned before = 0;

			for (e = 0; e < tgk_ndialects; e++) {
				if (dialect &&
				    strcmp(dialect, tgk_dialects[e]->name) != 0)
					continue;
				for (l = tgk_dialects[e]->keys; l->key; l++)
					before += key_before(e, l, d, k);
			}
			if (before != i)
				continue;
			if (annotation)
				*annotation = k->annotation;
			return k->key;
		}
	}
	return NULL;
}

tg_err tg_k8s_dialect_group(const char *dialect, const char **kind,
			    const char **api, const char **resource,
			    const char *const **versions)
{
	const tgk_dialect *d = NULL;
	unsigned i;

	for (i = 0; dialect && i < tgk_ndialects && !d; i++)
		if (strcmp(dialect, tgk_dialects[i]->name) == 0)
			d = tgk_dialects[i];
	if (!d || !d->group_kind)
		return TG_EINVAL;
	if (kind)
		*kind = d->group_kind;
	if (api)
		*api = d->group_api;
	if (resource)
		*resource = d->group_resource;
	if (versions)
		*versions = d->group_versions;
	return TG_OK;
}

const char *tg_k8s_dialect_name(unsigned i)
{
	return i < tgk_ndialects ? tgk_dialects[i]->name : NULL;
}
