/*
 * shared/src/load/k8s/k8s_spread.c - topologySpreadConstraints of a gang's
 * members as the core's spreads, each distinct constraint once.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

/*
 * A label selector as core expressions: matchLabels as In, then
 * matchExpressions, then matchLabelKeys as In with the pod's own value
 * (a key the pod does not carry adds nothing, as kube-scheduler does).
 * The strings stay the tree's; vals is the caller's to free.
 */
typedef struct ksel {
	tg_label_expr e[TG_MAX_TERMS];
	const char **vals;
	unsigned n;
	bool selector;		/* false: nil, selects nothing */
} ksel;

static tg_err sel_exprs(bctx *b, const kobj *o, const cJSON *sel,
			const char *path, const cJSON *labels,
			const cJSON *mlk, ksel *out)
{
	const cJSON *c, *v;
	size_t nv = 0, iv = 0;
	bool m;
	tg_err err;

	memset(out, 0, sizeof(*out));
	err = tgk_sel_match(b, o, sel, path, labels, &m);	/* checks it */
	if (err)
		return err;
	out->selector = sel && cJSON_IsObject(sel);
	cJSON_ArrayForEach(c, tgk_jget(sel, "matchLabels"))
		nv++;
	cJSON_ArrayForEach(c, tgk_jget(sel, "matchExpressions"))
		nv += (size_t)cJSON_GetArraySize(tgk_jget(c, "values"));
	cJSON_ArrayForEach(c, mlk)
		nv++;
	out->vals = tgi_calloc(nv ? nv : 1, sizeof(char *));
	if (!out->vals)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	cJSON_ArrayForEach(c, tgk_jget(sel, "matchLabels")) {
		if (out->n == TG_MAX_TERMS)
			return TG_ELIMIT;
		out->vals[iv] = c->valuestring;
		out->e[out->n++] = (tg_label_expr){ c->string, TG_SEL_IN,
						   &out->vals[iv++], 1 };
	}
	cJSON_ArrayForEach(c, tgk_jget(sel, "matchExpressions")) {
		const char *op = tgk_jstr(c, "operator");
		tg_label_expr *e;

		if (out->n == TG_MAX_TERMS)
			return TG_ELIMIT;
		e = &out->e[out->n++];
		e->key = tgk_jstr(c, "key");
		e->op = strcmp(op, "In") == 0 ? TG_SEL_IN :
			strcmp(op, "NotIn") == 0 ? TG_SEL_NOT_IN :
			strcmp(op, "Exists") == 0 ? TG_SEL_EXISTS :
			TG_SEL_DOES_NOT_EXIST;
		e->values = &out->vals[iv];
		e->nvalues = 0;
		cJSON_ArrayForEach(v, tgk_jget(c, "values")) {
			out->vals[iv++] = v->valuestring;
			e->nvalues++;
		}
		if ((e->op == TG_SEL_IN || e->op == TG_SEL_NOT_IN) &&
		    !e->nvalues)
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s.matchExpressions: "
					"%s needs values", path, op);
	}
	cJSON_ArrayForEach(c, mlk) {
		const char *have;

		if (!cJSON_IsString(c))
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s: matchLabelKeys: "
					"expected strings", path);
		if (!(have = tgk_jstr(labels, c->valuestring)))
			continue;
		if (out->n == TG_MAX_TERMS)
			return TG_ELIMIT;
		out->vals[iv] = have;
		out->e[out->n++] = (tg_label_expr){ c->valuestring, TG_SEL_IN,
						   &out->vals[iv++], 1 };
	}
	return TG_OK;
}

/* "Honor" or "Ignore" (absent: \p dflt) into *honor. */
static tg_err policy(bctx *b, const kobj *o, const cJSON *c, const char *path,
		     const char *key, bool dflt, bool *honor)
{
	const cJSON *v;
	char q[300];
	tg_err err = tgk_field(b, o, c, path, key, T_STR, &v);

	*honor = dflt;
	if (err || !v)
		return err;
	if (strcmp(v->valuestring, "Honor") != 0 &&
	    strcmp(v->valuestring, "Ignore") != 0)
		return tgk_oerr(b, o, v, TG_EINVAL, "%s: unknown value '%.40s' "
				"(Honor or Ignore)", tgk_pjoin(q, sizeof(q),
							       path,
							       key),
				v->valuestring);
	*honor = strcmp(v->valuestring, "Honor") == 0;
	return TG_OK;
}

/*
 * One topologySpreadConstraints entry of member \p p as a core spread;
 * an entry equal to one another member gave (\p seen) is added once.
 */
static tg_err spread_one(gctx *c, const kpod *p, const cJSON *e,
			 const char *path, tgi_strtab *seen)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const cJSON *key, *wu, *mlk;
	int64_t skew, mind;
	bool present, have_mind, honor_aff, honor_taints;
	char q[300];
	ksel ks;
	tg_buf kb;
	tg_spread_spec sp;
	uint32_t id;
	unsigned i, j;
	tg_err err;

	if (!cJSON_IsObject(e))
		return tgk_oerr(b, o, e, TG_EINVAL, "%s: expected an object",
				path);
	err = tgk_field_int(b, o, e, path, "maxSkew", 1, INT32_MAX, &present,
			    &skew);
	if (!err)
		err = tgk_field(b, o, e, path, "topologyKey", T_STR, &key);
	if (!err)
		err = tgk_field(b, o, e, path, "whenUnsatisfiable", T_STR, &wu);
	if (!err)
		err = tgk_field_int(b, o, e, path, "minDomains", 1, INT32_MAX,
				    &have_mind, &mind);
	if (!err)
		err = tgk_field(b, o, e, path, "matchLabelKeys", T_ARR, &mlk);
	if (!err)
		err = policy(b, o, e, path, "nodeAffinityPolicy", true,
			     &honor_aff);
	if (!err)
		err = policy(b, o, e, path, "nodeTaintsPolicy", false,
			     &honor_taints);
	if (err)
		return err;
	if (!present || !key || !*key->valuestring || !wu)
		return tgk_oerr(b, o, e, TG_EINVAL, "%s: needs maxSkew, "
				"topologyKey and whenUnsatisfiable", path);
	if (strcmp(wu->valuestring, "DoNotSchedule") != 0 &&
	    strcmp(wu->valuestring, "ScheduleAnyway") != 0)
		return tgk_oerr(b, o, wu, TG_EINVAL, "%s.whenUnsatisfiable: "
				"unknown value '%.40s'", path, wu->valuestring);
	memset(&sp, 0, sizeof(sp));
	sp.hard = strcmp(wu->valuestring, "DoNotSchedule") == 0;
	if (have_mind && !sp.hard)
		return tgk_oerr(b, o, e, TG_EINVAL, "%s.minDomains: only with "
				"whenUnsatisfiable DoNotSchedule", path);
	err = sel_exprs(b, o, tgk_jget(e, "labelSelector"),
			tgk_pjoin(q, sizeof(q), path, "labelSelector"),
			p->labels,
			mlk, &ks);
	if (err == TG_ELIMIT) {
		tgi_free(ks.vals);
		snprintf(c->limited, sizeof(c->limited), "%.150s: more than %d "
			 "selector expressions", path, TG_MAX_TERMS);
		return err;
	}
	if (err) {
		tgi_free(ks.vals);
		return err;
	}
	sp.layer = tgk_level_of(b, key->valuestring);
	sp.max_skew = (unsigned)skew;
	sp.min_domains = have_mind ? (unsigned)mind : 0;
	sp.ignore_node_affinity = !honor_aff;
	sp.honor_taints = honor_taints;
	sp.ns = o->ns;
	sp.selector = ks.selector;
	sp.exprs = ks.e;
	sp.nexprs = ks.n;
	/* the same constraint from another member: once */
	tg_buf_init(&kb, 1u << 20);
	tg_buf_addf(&kb, "%s\x1f%u\x1f%d\x1f%u\x1f%d%d%d", sp.layer,
		     sp.max_skew, sp.hard, sp.min_domains,
		     sp.ignore_node_affinity, sp.honor_taints, sp.selector);
	for (i = 0; i < ks.n; i++) {
		tg_buf_addf(&kb, "\x1e%s\x1f%d", ks.e[i].key, ks.e[i].op);
		for (j = 0; j < ks.e[i].nvalues; j++)
			tg_buf_addf(&kb, "\x1f%s", ks.e[i].values[j]);
	}
	/* a key too long to keep: added anyway (the core's bounds say) */
	err = kb.err == TG_ENOMEM ? TG_ENOMEM : TG_OK;
	if (!err && (kb.err || !tgi_strtab_find(seen, kb.s ? kb.s : ""))) {
		char what[400];

		if (!kb.err)
			err = tgi_strtab_intern(seen, kb.s ? kb.s : "", &id);
		snprintf(what, sizeof(what), "%.200s (at most %d spreads a "
			 "gang, 256 values an expression)", path,
			 TG_MAX_SPREADS);
		if (!err)
			err = tgk_gcore(c, o, tg_gang_add_spread_spec(c->gang,
								      &sp),
					what);
	}
	tg_buf_free(&kb);
	tgi_free(ks.vals);
	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	return err;
}

/* topologySpreadConstraints of every member, each distinct one once. */
tg_err tgk_spread_reqs(gctx *c)
{
	tgi_strtab seen;
	size_t m;
	tg_err err = TG_OK;

	tgi_strtab_init(&seen);
	for (m = 0; m < c->nm && !err; m++) {
		const kpod *p = c->m[m];
		const cJSON *list, *e;
		char path[300];
		unsigned i = 0;

		err = tgk_field(c->b, p->o, p->spec, "spec",
				"topologySpreadConstraints", T_ARR, &list);
		cJSON_ArrayForEach(e, list) {
			if (err)
				break;
			tgk_pidx(path, sizeof(path),
				 "spec.topologySpreadConstraints", i++);
			err = spread_one(c, p, e, path, &seen);
		}
	}
	tgi_strtab_free(&seen);
	return err;
}
