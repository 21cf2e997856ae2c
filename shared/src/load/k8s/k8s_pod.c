/*
 * shared/src/load/k8s/k8s_pod.c - PriorityClasses and pods: each pod's
 * priority, requests (its shape), state (bound, pending, skipped), member
 * index and role, and the group its labels or annotations name.  A pod that
 * cannot be read costs only its gang or its node.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

/*
 * A member's index (its place in member order) and role (its pod set's
 * name) come from the workload controllers' keys, whatever the gang's
 * dialect (research/k8s-api.md §2).
 */
#define A_KOORD_INDEX \
	"gang.scheduling.koordinator.sh/network-topology-index"
#define L_JOB_INDEX	"batch.kubernetes.io/job-completion-index"
#define L_KF_INDEX	"training.kubeflow.org/replica-index"
#define L_KF_TYPE	"training.kubeflow.org/replica-type"
#define L_LWS_WORKER	"leaderworkerset.sigs.k8s.io/worker-index"
#define L_KAI_SUBGROUP	"kai.scheduler/subgroup-name"

static int pc_cmp(const void *a, const void *c)
{
	return strcmp(((const pclass *)a)->name, ((const pclass *)c)->name);
}

tg_err tgk_load_prioclasses(bctx *b)
{
	static const struct {
		const char *name;
		int64_t value;
	} builtin[] = {
		{ "system-cluster-critical", 2000000000 },
		{ "system-node-critical", 2000001000 },
	};
	size_t n = b->first[C_PRIOCLASS + 1] - b->first[C_PRIOCLASS], i;
	tg_err err;

	b->pcs = tgi_calloc(n + 2, sizeof(pclass));
	if (!b->pcs)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const kobj *o = b->idx[b->first[C_PRIOCLASS] + i];
		pclass *pc = &b->pcs[b->npcs];
		const cJSON *labels, *gd, *pp;
		bool present;

		err = tgk_obj_meta(b, o, &labels, NULL);
		if (err)
			return err;
		pc->name = o->name;
		err = tgk_field_int(b, o, o->j, "", "value", INT32_MIN,
				    2000001000,
				    &present, &pc->value);
		if (err)
			return err;
		if (!present)
			return tgk_oerr(b, o, NULL, TG_EINVAL,
					"value: missing");
		err = tgk_field(b, o, o->j, "", "globalDefault", T_BOOL, &gd);
		if (!err)
			err = tgk_field(b, o, o->j, "", "preemptionPolicy",
					T_STR,
					&pp);
		if (err)
			return err;
		pc->global = gd && cJSON_IsTrue(gd);
		if (pp && strcmp(pp->valuestring, "Never") != 0 &&
		    strcmp(pp->valuestring, "PreemptLowerPriority") != 0)
			return tgk_oerr(b, o, pp, TG_EINVAL,
					"preemptionPolicy: unknown policy "
					"'%.60s'",
					pp->valuestring);
		pc->never = pp && strcmp(pp->valuestring, "Never") == 0;
		b->npcs++;
	}
	/* pcs[0..n) is in name order: the index sorts them so */
	for (i = 0; i < 2; i++) {
		pclass key = { builtin[i].name, 0, false, false };

		if (!bsearch(&key, b->pcs, n, sizeof(pclass), pc_cmp)) {
			b->pcs[b->npcs] = key;
			b->pcs[b->npcs].value = builtin[i].value;
			b->npcs++;
		}
	}
	qsort(b->pcs, b->npcs, sizeof(pclass), pc_cmp);
	/* several defaults: the lowest value wins, as in the admission */
	for (i = 0; i < b->npcs; i++) {
		if (b->pcs[i].global &&
		    (!b->pcdef || b->pcs[i].value < b->pcdef->value))
			b->pcdef = &b->pcs[i];
	}
	return TG_OK;
}

const pclass *tgk_find_pc(const bctx *b, const char *name)
{
	pclass key = { name, 0, false, false };

	return bsearch(&key, b->pcs, b->npcs, sizeof(pclass), pc_cmp);
}

/* The extended names one pod asks for, in order (k8s_cache.c). */
static tg_err capture(bctx *b, uint32_t s)
{
	const char *name = tgi_strtab_get(&b->rnames, s);
	unsigned i;

	if (!b->rcapture)
		return TG_OK;
	for (i = 0; i < b->nrcap; i++)
		if (b->rcap[i] == name)
			return TG_OK;
	if (b->nrcap < TG_MAX_RESOURCES)
		b->rcap[b->nrcap++] = name;
	else
		b->rcapture = false;	/* not cached */
	return TG_OK;
}

tg_err tgk_res_id(bctx *b, const char *name, unsigned *id)
{
	uint32_t s;
	tg_err err;

	if (strcmp(name, "cpu") == 0)
		*id = TG_RES_CPU;
	else if (strcmp(name, "memory") == 0)
		*id = TG_RES_MEMORY;
	else if (strcmp(name, "nvidia.com/gpu") == 0)
		*id = TG_RES_GPU;
	else if (strcmp(name, "pods") == 0)
		*id = TG_RES_PODS;
	else {
		s = tgi_strtab_find(&b->rnames, name);
		if (s) {
			*id = b->rid[s];
			return capture(b, s);
		}
		if (strlen(name) > TG_MAX_NAME)
			return TG_EINVAL;
		err = tg_topology_resource(b->t, name, id);
		if (err)
			return err;
		if (*id >= TG_MAX_RESOURCES)
			return TG_ELIMIT;
		if (tgi_strtab_intern(&b->rnames, name, &s))
			return TG_ENOMEM;
		if (s > TG_MAX_RESOURCES)
			return TG_ELIMIT;
		b->rid[s] = *id;
		return capture(b, s);
	}
	return TG_OK;
}

/* The text of a quantity: a string, or a number as written. */
const char *tgk_qty_text(const cJSON *v, char *buf, size_t n)
{
	if (cJSON_IsString(v))
		return v->valuestring;
	if (!cJSON_IsNumber(v))
		return NULL;
	if (v->valuestring) {
		int64_t dummy;

		if (tg_k8s_quantity(v->valuestring, false, &dummy) == TG_OK)
			return v->valuestring;
	}
	if (!isfinite(v->valuedouble))
		return NULL;
	snprintf(buf, n, "%.15g", v->valuedouble);
	if (strtod(buf, NULL) != v->valuedouble)
		snprintf(buf, n, "%.17g", v->valuedouble);
	return buf;
}

/* A map of resource name -> quantity into \p v, bit set in \p mask. */
static tg_err res_map(bctx *b, const kobj *o, const cJSON *map,
		      const char *path, int64_t *v, uint64_t *mask,
		      bool only_new)
{
	const cJSON *c;
	char p[300], tb[64];
	tg_err err;

	cJSON_ArrayForEach(c, map) {
		const char *txt = tgk_qty_text(c, tb, sizeof(tb));
		unsigned id;
		int64_t q;

		tgk_pjoin(p, sizeof(p), path, c->string);
		if (!txt || tg_k8s_quantity(txt, strcmp(c->string, "cpu") == 0,
					    &q) != TG_OK) {
			if (!txt && cJSON_IsNumber(c))
				txt = "(not finite)";
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s: bad quantity '%.60s'", p,
					txt ? txt : "(not a string)");
		}
		err = tgk_res_id(b, c->string, &id);
		if (err == TG_ELIMIT)
			return tgk_oerr(b, o, c, err,
					"%s: more than %d resource names", p,
					TG_MAX_RESOURCES);
		if (err)
			return tgk_oerr(b, o, c, err, "%s: bad resource name",
					p);
		if (only_new && (*mask & (1ull << id)))
			continue;
		v[id] = q;
		*mask |= 1ull << id;
	}
	return TG_OK;
}

static bool add_ok(int64_t a, int64_t c, int64_t *out)
{
	if (c > 0 && a > INT64_MAX - c)
		return false;
	*out = a + c;
	return true;
}

/* One container's effective requests (limits stand in for requests). */
static tg_err container_req(bctx *b, const kobj *o, const cJSON *c,
			    const char *path, int64_t *v)
{
	const cJSON *res, *req, *lim;
	char p[300], p2[300];
	uint64_t mask = 0;
	tg_err err;

	memset(v, 0, sizeof(int64_t) * TG_MAX_RESOURCES);
	if (!cJSON_IsObject(c))
		return tgk_oerr(b, o, c, TG_EINVAL, "%s: expected an object",
				path);
	err = tgk_field(b, o, c, path, "resources", T_OBJ, &res);
	if (err || !res)
		return err;
	tgk_pjoin(p, sizeof(p), path, "resources");
	err = tgk_field(b, o, res, p, "requests", T_OBJ, &req);
	if (!err)
		err = tgk_field(b, o, res, p, "limits", T_OBJ, &lim);
	if (!err)
		err = res_map(b, o, req, tgk_pjoin(p2, sizeof(p2), p,
						   "requests"),
			      v, &mask, false);
	if (!err)
		err = res_map(b, o, lim, tgk_pjoin(p2, sizeof(p2), p, "limits"),
			      v, &mask, true);
	return err;
}

/*
 * Pods share a few shapes: one copy of each (a build of 100,000 pods
 * would otherwise hold 100,000 copies of a 256-byte shape).  Equal
 * shapes get the same pointer.
 */
tg_err tgk_shape_intern(bctx *b, const tg_shape *sh,
			 const tg_shape **out)
{
	uint64_t h = tgi_hash((const char *)sh, sizeof(*sh));
	size_t i, m;

	if ((b->nshapes + 1) * 2 > b->nslots) {
		size_t ns = b->nslots ? b->nslots * 2 : 64;
		tg_shape **sl = tgi_calloc(ns, sizeof(*sl));

		if (!sl)
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		for (i = 0; i < b->nslots; i++) {
			if (!b->shapes[i])
				continue;
			m = tgi_hash((const char *)b->shapes[i],
				     sizeof(tg_shape)) & (ns - 1);
			while (sl[m])
				m = (m + 1) & (ns - 1);
			sl[m] = b->shapes[i];
		}
		tgi_free(b->shapes);
		b->shapes = sl;
		b->nslots = ns;
	}
	for (m = h & (b->nslots - 1); b->shapes[m];
	     m = (m + 1) & (b->nslots - 1))
		if (memcmp(b->shapes[m], sh, sizeof(*sh)) == 0) {
			*out = b->shapes[m];
			return TG_OK;
		}
	b->shapes[m] = tgi_malloc(sizeof(tg_shape));
	if (!b->shapes[m])
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	memcpy(b->shapes[m], sh, sizeof(*sh));
	b->nshapes++;
	*out = b->shapes[m];
	return TG_OK;
}

static tg_err pod_shape(bctx *b, kpod *p)
{
	const kobj *o = p->o;
	int64_t sum[TG_MAX_RESOURCES] = { 0 }, side[TG_MAX_RESOURCES] = { 0 };
	int64_t imax[TG_MAX_RESOURCES] = { 0 }, c[TG_MAX_RESOURCES];
	const cJSON *list, *it, *ovh;
	tg_shape sh;
	char path[300];
	unsigned i, r;
	tg_err err;

	memset(&sh, 0, sizeof(sh));
	err = tgk_field(b, o, p->spec, "spec", "containers", T_ARR, &list);
	if (err)
		return err;
	i = 0;
	cJSON_ArrayForEach(it, list) {
		err = container_req(b, o, it,
				    tgk_pidx(path, sizeof(path),
					     "spec.containers",
					     i++), c);
		if (err)
			return err;
		for (r = 0; r < TG_MAX_RESOURCES; r++)
			if (!add_ok(sum[r], c[r], &sum[r]))
				goto overflow;
	}
	err = tgk_field(b, o, p->spec, "spec", "initContainers", T_ARR, &list);
	if (err)
		return err;
	i = 0;
	cJSON_ArrayForEach(it, list) {
		const char *rp = tgk_jstr(it, "restartPolicy");
		bool sidecar = rp && strcmp(rp, "Always") == 0;

		err = container_req(b, o, it,
				    tgk_pidx(path, sizeof(path),
					     "spec.initContainers", i++), c);
		if (err)
			return err;
		for (r = 0; r < TG_MAX_RESOURCES; r++) {
			int64_t use;

			if (sidecar) {
				if (!add_ok(side[r], c[r], &side[r]))
					goto overflow;
				use = side[r];
			} else if (!add_ok(side[r], c[r], &use)) {
				goto overflow;
			}
			imax[r] = TG_MAX(imax[r], use);
		}
	}
	err = tgk_field(b, o, p->spec, "spec", "overhead", T_OBJ, &ovh);
	if (err)
		return err;
	{
		uint64_t mask = 0;

		memset(c, 0, sizeof(c));
		err = res_map(b, o, ovh, "spec.overhead", c, &mask, false);
		if (err)
			return err;
	}
	for (r = 0; r < TG_MAX_RESOURCES; r++) {
		int64_t v;

		if (!add_ok(sum[r], side[r], &v))
			goto overflow;
		v = TG_MAX(v, imax[r]);
		if (!add_ok(v, c[r], &v))
			goto overflow;
		sh.v[r] = v;
	}
	sh.v[TG_RES_PODS] = 1;
	return tgk_shape_intern(b, &sh, &p->shape);
overflow:
	return tgk_oerr(b, o, p->spec, TG_EINVAL,
			"spec: resource requests add up past 2^63");
}

static tg_err pod_priority(bctx *b, kpod *p)
{
	const kobj *o = p->o;
	const cJSON *pcn, *pol;
	const pclass *pc = NULL;
	bool present;
	tg_err err;

	err = tgk_field(b, o, p->spec, "spec", "priorityClassName", T_STR,
			&pcn);
	if (!err)
		err = tgk_field(b, o, p->spec, "spec", "preemptionPolicy",
				T_STR,
				&pol);
	if (!err)
		err = tgk_field_int(b, o, p->spec, "spec", "priority",
				    INT32_MIN,
				    INT32_MAX, &present, &p->prio);
	if (err)
		return err;
	if (pcn && *pcn->valuestring) {
		pc = tgk_find_pc(b, pcn->valuestring);
		if (!pc && !present) {
			err = tgk_owarn(b, o, "spec.priorityClassName: no "
					"PriorityClass '%.100s' in the "
					"snapshot; using %s", pcn->valuestring,
					b->pcdef ? "the global default" : "0");
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
		}
	}
	if (!pc)
		pc = b->pcdef;
	if (!present)
		p->prio = pc ? pc->value : 0;
	if (pol && strcmp(pol->valuestring, "Never") != 0 &&
	    strcmp(pol->valuestring, "PreemptLowerPriority") != 0)
		return tgk_oerr(b, o, pol, TG_EINVAL,
				"spec.preemptionPolicy: unknown policy '%.60s'",
				pol->valuestring);
	p->never = pol ? strcmp(pol->valuestring, "Never") == 0 :
			 (pc && pc->never);
	if (b->rcapture) {	/* what the cache resolves again */
		b->pcap.read = true;
		b->pcap.present = present;
		b->pcap.spec = p->prio;
		b->pcap.has_pol = pol != NULL;
		b->pcap.pol_never = pol && p->never;
		snprintf(b->pcap.pcn, sizeof(b->pcap.pcn), "%s",
			 pcn ? pcn->valuestring : "");
		if (pcn && strlen(pcn->valuestring) >= sizeof(b->pcap.pcn))
			b->rcapture = false;	/* not cached */
	}
	return TG_OK;
}

static tg_err pod_index_role(bctx *b, kpod *p)
{
	static const struct {
		const char *key;
		bool annot;
	} ix[] = {
		{ A_KOORD_INDEX, true },
		{ L_JOB_INDEX, false },
		{ L_JOB_INDEX, true },
		{ L_KF_INDEX, false },
		{ L_LWS_WORKER, false },
	};
	const char *w, *role = "";
	size_t i;
	bool present;
	tg_err err;

	p->index = -1;
	for (i = 0; i < sizeof(ix) / sizeof(ix[0]); i++) {
		err = tgk_annot_int(b, p->o,
				    ix[i].annot ? p->annots : p->labels,
				    ix[i].annot ? "metadata.annotations" :
					      "metadata.labels",
				    ix[i].key, 0, &p->index, &present);
		if (err)
			return err;
		if (present)
			break;
	}
	if ((w = tgk_jstr(p->labels, L_LWS_WORKER)) && tgk_nonempty(p->labels,
							     L_LWS_NAME))
		role = strcmp(w, "0") == 0 ? "leader" : "worker";
	else if ((w = tgk_nonempty(p->labels, L_KF_TYPE)))
		role = w;
	else if ((w = tgk_nonempty(p->labels, L_KAI_SUBGROUP)))
		role = w;
	{
		uint32_t id;	/* a handful of roles: interned */

		if (tgi_strtab_intern(&b->k->names, role, &id))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		p->role = tgi_strtab_get(&b->k->names, id);
	}
	return TG_OK;
}

/* The gang a pod belongs to: its dialect's group, else its own. */
static tg_err pod_group(bctx *b, const kobj *o, kpod *p)
{
	char buf[600];
	const char *gname;
	int d;

	d = tgk_member(b, p->labels, p->annots, &gname, buf, sizeof(buf));
	if (d < 0 && p->state == S_BOUND)
		return TG_OK;
	if (d < 0)
		gname = o->name;
	if (strlen(o->ns) + 1 + strlen(gname) > TG_MAX_NAME)
		return tgk_oerr(b, o, NULL, TG_EINVAL,
				"gang name '%s/%.60s...' longer than %d bytes",
				o->ns, gname, TG_MAX_NAME);
	if (tgk_group_get(b, d, o->ns, gname, &p->group))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	return TG_OK;
}

static tg_err pod_parse(bctx *b, const kobj *o, kpod *p)
{
	const cJSON *st, *nn, *ph, *gates, *del, *sn;
	const char *phase;
	size_t n;
	tg_err err;

	p->o = o;
	p->group = SIZE_MAX;
	p->index = -1;
	err = tgk_obj_meta(b, o, &p->labels, &p->annots);
	if (err)
		return err;
	n = strlen(o->ns) + strlen(o->name) + 2;
	p->id = tgi_malloc(n);
	if (!p->id)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	snprintf(p->id, n, "%s/%s", o->ns, o->name);
	if (n - 1 > TG_MAX_NAME)
		return tgk_oerr(b, o, NULL, TG_EINVAL,
				"metadata: namespace/name longer than %d bytes",
				TG_MAX_NAME);
	err = tgk_field(b, o, o->j, "", "spec", T_OBJ, &p->spec);
	if (!err)
		err = tgk_field(b, o, o->j, "", "status", T_OBJ, &st);
	if (!err)
		err = tgk_field(b, o, p->spec, "spec", "nodeName", T_STR, &nn);
	if (!err)
		err = tgk_field(b, o, st, "status", "phase", T_STR, &ph);
	if (!err)
		err = tgk_field(b, o, p->spec, "spec", "schedulingGates", T_ARR,
				&gates);
	if (!err)
		err = tgk_field(b, o, p->spec, "spec", "schedulerName", T_STR,
				&sn);
	if (err)
		return err;
	if (!p->spec)
		return tgk_oerr(b, o, NULL, TG_EINVAL, "spec: missing");
	phase = ph ? ph->valuestring : "";
	if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
		return TG_OK;	/* terminal: holds nothing */
	del = tgk_jget(tgk_jget(o->j, "metadata"), "deletionTimestamp");
	if (nn && *nn->valuestring) {
		p->state = S_BOUND;
		p->node = nn->valuestring;
		p->terminating = del && !cJSON_IsNull(del);
	} else {
		const char *sched = sn && *sn->valuestring ?
			sn->valuestring : "default-scheduler";

		if (b->k->scheduler && strcmp(sched, b->k->scheduler) != 0) {
			p->other = true;	/* counted in one warning */
			return TG_OK;
		}
		if (gates && cJSON_GetArraySize(gates) > 0) {
			err = tgk_owarn(b, o, "spec.schedulingGates not empty; "
					"skipped");
			return err ? tgi_errf(b->ei, err, "out of memory") :
				     TG_OK;
		}
		if (del && !cJSON_IsNull(del)) {
			err = tgk_owarn(b, o,
					"pending pod being deleted; skipped");
			return err ? tgi_errf(b->ei, err, "out of memory") :
				     TG_OK;
		}
		p->state = S_PENDING;
		{
			const cJSON *nom;

			err = tgk_field(b, o, st, "status", "nominatedNodeName",
					T_STR, &nom);
			if (err)
				return err;
			if (nom && *nom->valuestring)
				p->nominated = nom->valuestring;
		}
	}
	err = pod_priority(b, p);
	if (!err)
		err = tgk_obj_created(b, o, &p->created);
	if (!err)
		err = pod_shape(b, p);
	if (!err)
		err = pod_index_role(b, p);
	if (!err && p->state == S_PENDING)
		err = tgk_pod_volumes(b, p);
	return err ? err : pod_group(b, o, p);
}

/*
 * A pod added by tg_k8s_add_object() is parsed here, when its turn comes;
 * once read, only a pending pod keeps its tree (the gang build reads it
 * again).  A bound pod keeps its labels (selectors of budgets and pod
 * affinity), the rest goes: so a build holds the trees of the pending
 * pods, not of the cluster.
 */
static tg_err pod_tree(bctx *b, kobj *o)
{
	char msg[sizeof(b->ei->msg)], nm[300];
	tg_err err;

	if (o->j || !o->text)
		return TG_OK;
	err = tgk_parse_one(o->text, o->len, b->k->srcs[o->src], &o->j, b->ei);
	if (!err)
		return TG_OK;
	if (err == TG_ENOMEM || !b->ei)
		return err;
	snprintf(msg, sizeof(msg), "%s", b->ei->msg);
	return tgi_errf(b->ei, err, "%s %s: %s", o->kind,
			tgk_oname(o, nm, sizeof(nm)), msg);
}

static tg_err pod_drop_tree(bctx *b, kobj *o, kpod *p)
{
	if (!o->text || !o->j || p->state == S_PENDING)
		return TG_OK;
	if (p->node) {
		uint32_t id;

		/* a few thousand nodes for a hundred thousand pods */
		if (tgi_strtab_intern(&b->k->names, p->node, &id))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		p->node = tgi_strtab_get(&b->k->names, id);
	}
	if (p->labels)
		p->own_labels = cJSON_DetachItemViaPointer(
			cJSON_GetObjectItemCaseSensitive(o->j, "metadata"),
			(cJSON *)p->labels);
	p->labels = p->own_labels;
	{
		cJSON *aff = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(o->j, "spec"),
			"affinity");
		cJSON *anti = cJSON_GetObjectItemCaseSensitive(aff,
			"podAntiAffinity");

		if (anti)	/* for the existing pods' anti-affinity */
			p->own_anti = cJSON_DetachItemViaPointer(aff, anti);
	}
	p->annots = NULL;
	p->spec = NULL;
	cJSON_Delete(o->j);
	o->j = NULL;
	return TG_OK;
}

/*
 * A pod that cannot be read (\p err, b->ei says why).  Pending for this
 * scheduler: a member of its gang (from its labels when they can be read,
 * else a gang of its own), which is reported unschedulable with that
 * message.  Bound: what it uses is unknown, so its node takes no new pod
 * (a warning says so).  Ended, or another scheduler's: a warning, or
 * counted with the others.
 */
static tg_err pod_fail(bctx *b, const kobj *o, kpod *p, tg_err err)
{
	char msg[sizeof(b->ei->msg)], buf[600];
	const cJSON *md = tgk_jget(o->j, "metadata");
	const cJSON *spec = tgk_jget(o->j, "spec");
	const char *node = tgk_jstr(spec, "nodeName");
	const char *sn = tgk_jstr(spec, "schedulerName");
	const char *phase = tgk_jstr(tgk_jget(o->j, "status"), "phase"), *gname;
	uint32_t id;
	size_t n;
	int d;

	if (tgk_fail_msg(b, err, msg, sizeof(msg)))
		return err;
	p->state = S_SKIP;
	p->group = SIZE_MAX;
	p->labels = p->annots = p->spec = NULL;
	p->node = p->nominated = NULL;
	p->other = false;
	if (phase && (strcmp(phase, "Succeeded") == 0 ||
		      strcmp(phase, "Failed") == 0))
		err = tgk_warnf(b->k, "%s; ignored (the pod has ended)", msg);
	else if (node && *node) {
		err = tgi_strtab_intern(&b->badnodes, node, &id);
		if (!err)
			err = tgk_warnf(b->k,
					"%s; node '%.100s' takes no new pod: "
					"what this pod uses there is unknown",
					msg,
					node);
	} else if (b->k->scheduler &&
		   strcmp(sn && *sn ? sn : "default-scheduler",
			  b->k->scheduler) != 0) {
		p->other = true;
	} else if (!*o->name || strlen(o->ns) + 1 + strlen(o->name) >
		   TG_MAX_NAME) {
		err = tgk_warnf(b->k, "%s; ignored", msg);
	} else {
		const cJSON *rl = tgk_jget(md, "labels");
		const cJSON *ra = tgk_jget(md, "annotations");

		/* its group from the keys that can be read (tgk_jstr() checks
		 * each one), so that the gang it belongs to fails whole */
		d = tgk_member(b, cJSON_IsObject(rl) ? rl : NULL,
			       cJSON_IsObject(ra) ? ra : NULL, &gname, buf,
			       sizeof(buf));
		p->labels = tgk_strmap(rl);
		p->annots = tgk_strmap(ra);
		if (d < 0 || strlen(o->ns) + 1 + strlen(gname) >
		    TG_MAX_NAME) {
			d = -1;
			gname = o->name;
		}
		n = strlen(o->ns) + strlen(o->name) + 2;
		if (!p->id && (p->id = tgi_malloc(n)) != NULL)
			snprintf(p->id, n, "%s/%s", o->ns, o->name);
		if (!p->id || tgk_group_get(b, d, o->ns, gname, &p->group))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		p->state = S_PENDING;
		p->broken = true;
		return tgk_group_set_fail(b, &b->groups[p->group], msg);
	}
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

/*
 * One pod: from the cache when it knows this version of it, else parsed
 * (and then recorded there when read without a warning).
 */
static tg_err pod_read(bctx *b, kobj *o, kpod *p)
{
	size_t nw = b->k->nwarns + b->k->ndropped;
	bool hit;
	tg_err err;

	err = tgk_cache_take(b, o, p, &hit);
	if (err || hit)
		return err;
	b->nrcap = 0;
	memset(&b->pcap, 0, sizeof(b->pcap));
	b->rcapture = true;
	err = pod_tree(b, o);
	if (!err)
		err = pod_parse(b, o, p);
	if (err)
		err = pod_fail(b, o, p, err);
	if (!err)
		err = pod_drop_tree(b, o, p);
	if (!err && b->rcapture && nw == b->k->nwarns + b->k->ndropped)
		tgk_cache_put(b, o, p);
	b->rcapture = false;
	return err;
}

tg_err tgk_load_pods(bctx *b)
{
	size_t n = b->first[C_POD + 1] - b->first[C_POD], i, other = 0;
	tg_err err;

	tgk_cache_begin(b);
	b->pods = tgi_calloc(n ? n : 1, sizeof(kpod));
	b->bound = tgi_calloc(n ? n : 1, sizeof(kpod *));
	if (!b->pods || !b->bound)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		kpod *p = &b->pods[i];
		kgroup *g;

		b->npods = i + 1;
		err = pod_read(b, b->idx[b->first[C_POD] + i], p);
		if (err)
			return err;
		if (p->other)
			other++;
		if (p->group == SIZE_MAX)
			continue;
		g = &b->groups[p->group];
		if (p->state == S_BOUND) {
			g->nbound++;
			continue;
		}
		if (tgi_grow(&g->members, &g->capmembers, g->nmembers + 1,
			     sizeof(size_t)))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		g->members[g->nmembers++] = i;
	}
	if (other) {
		err = tgk_warnf(b->k,
				"%zu pending pod%s of other schedulers than "
				"'%s' ignored", other, other == 1 ? "" : "s",
				b->k->scheduler);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	return TG_OK;
}
