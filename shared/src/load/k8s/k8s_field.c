/*
 * shared/src/load/k8s/k8s_field.c - the Kubernetes loader's typed fields: an
 * object's members read as the type they must be, and errors and warnings that
 * name the input, the line when known, the object and the field
 * ("cluster.yaml:12: Pod default/x: spec.containers[0]: expected an object").
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "k8s_load.h"

const char *tgk_jstr(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *tgk_jget(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const char *tgk_nonempty(const cJSON *map, const char *key)
{
	const char *v = tgk_jstr(map, key);

	return v && *v ? v : NULL;
}

/* \p m when it is a map of strings (labels, annotations), else NULL. */
const cJSON *tgk_strmap(const cJSON *m)
{
	const cJSON *c;

	if (!cJSON_IsObject(m))
		return NULL;
	cJSON_ArrayForEach(c, m)
		if (!cJSON_IsString(c))
			return NULL;
	return m;
}

const char *tgk_oname(const kobj *o, char *buf, size_t n)
{
	if (*o->ns)
		snprintf(buf, n, "%s/%s", o->ns, o->name);
	else
		snprintf(buf, n, "%s", o->name);
	return buf;
}

/* One error naming the input, the line when known, the object. */
tg_err tgk_oerr(bctx *b, const kobj *o, const cJSON *at, tg_err err,
		   const char *fmt, ...)
{
	char msg[400], nm[300];
	const char *src = b->k->srcs[o->src];
	unsigned line;
	va_list ap;

	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line = tgi_json_line(at);
	if (!line)
		line = tgi_json_line(o->j);
	if (line)
		return tgi_errf(b->ei, err, "%s:%u: %s %s: %s", src, line,
				o->kind, tgk_oname(o, nm, sizeof(nm)), msg);
	return tgi_errf(b->ei, err, "%s: %s %s: %s", src, o->kind,
			tgk_oname(o, nm, sizeof(nm)), msg);
}

tg_err tgk_owarn(bctx *b, const kobj *o, const char *fmt, ...)
{
	char msg[400], nm[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tgk_warnf(b->k, "%s %s: %s", o->kind,
			 tgk_oname(o, nm, sizeof(nm)),
			 msg);
}

static bool simple_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++) {
		char c = *k;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* prefix + ".key" or "[key]" */
const char *tgk_pjoin(char *buf, size_t n, const char *prefix,
			 const char *key)
{
	if (simple_key(key))
		snprintf(buf, n, "%s%s%.200s", prefix, *prefix ? "." : "",
			 key);
	else
		snprintf(buf, n, "%s[%.200s]", prefix, key);
	return buf;
}

const char *tgk_pidx(char *buf, size_t n, const char *prefix, unsigned i)
{
	snprintf(buf, n, "%s[%u]", prefix, i);
	return buf;
}

static const char *tname(int t)
{
	switch (t) {
	case T_OBJ:
		return "an object";
	case T_ARR:
		return "a list";
	case T_STR:
		return "a string";
	case T_NUM:
		return "a number";
	default:
		return "a boolean";
	}
}

static bool is_type(const cJSON *v, int t)
{
	switch (t) {
	case T_OBJ:
		return cJSON_IsObject(v);
	case T_ARR:
		return cJSON_IsArray(v);
	case T_STR:
		return cJSON_IsString(v);
	case T_NUM:
		return cJSON_IsNumber(v);
	default:
		return cJSON_IsBool(v);
	}
}

/*
 * Member \p key of \p parent as type \p t: *out NULL when absent or null,
 * an error when of another type.
 */
tg_err tgk_field(bctx *b, const kobj *o, const cJSON *parent,
		    const char *ppath, const char *key, int t,
		    const cJSON **out)
{
	const cJSON *v = tgk_jget(parent, key);
	char path[300];

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return TG_OK;
	if (!is_type(v, t))
		return tgk_oerr(b, o, v, TG_EINVAL, "%s: expected %s",
				tgk_pjoin(path, sizeof(path), ppath, key),
				tname(t));
	*out = v;
	return TG_OK;
}

/* An integer-valued JSON number. */
bool tgk_num_int(const cJSON *v, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) ||
	    d != floor(d))
		return false;
	*out = (int64_t)d;
	return true;
}

tg_err tgk_field_int(bctx *b, const kobj *o, const cJSON *parent,
			const char *ppath, const char *key, int64_t min,
			int64_t max, bool *present, int64_t *out)
{
	const cJSON *v;
	char path[300];
	tg_err err;

	*present = false;
	err = tgk_field(b, o, parent, ppath, key, T_NUM, &v);
	if (err || !v)
		return err;
	if (!tgk_num_int(v, out))
		return tgk_oerr(b, o, v, TG_EINVAL, "%s: expected an integer",
				tgk_pjoin(path, sizeof(path), ppath, key));
	if (*out < min || *out > max)
		return tgk_oerr(b, o, v, TG_EINVAL,
				"%s: %lld is out of range [%lld, %lld]",
				tgk_pjoin(path, sizeof(path), ppath, key),
				(long long)*out, (long long)min,
				(long long)max);
	*present = true;
	return TG_OK;
}

/* Checks a map of strings (labels, annotations, nodeSelector). */
tg_err tgk_check_strmap(bctx *b, const kobj *o, const cJSON *m,
			   const char *path)
{
	const cJSON *c;
	char p[300];

	cJSON_ArrayForEach(c, m) {
		if (!cJSON_IsString(c))
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s: expected a string",
					tgk_pjoin(p, sizeof(p), path,
						  c->string));
	}
	return TG_OK;
}

/* Parses a whole decimal integer annotation or label value. */
tg_err tgk_annot_int(bctx *b, const kobj *o, const cJSON *map,
			const char *mpath, const char *key, int64_t min,
			int64_t *out, bool *present)
{
	const cJSON *v = tgk_jget(map, key);
	char p[300];

	*present = false;
	if (!cJSON_IsString(v))
		return TG_OK;
	if (!tg_i64_parse(v->valuestring, out) || *out < min)
		return tgk_oerr(b, o, v, TG_EINVAL, "%s: bad value '%.60s'",
				tgk_pjoin(p, sizeof(p), mpath, key),
				v->valuestring);
	*present = true;
	return TG_OK;
}

/* RFC 3339 time ("2026-08-01T00:20:00Z", fractions and offsets too). */
static bool parse_time(const char *s, int64_t *out)
{
	int v[6], i, pos[6] = { 0, 5, 8, 11, 14, 17 }, len[6] = { 4, 2, 2, 2,
								 2, 2 };
	int64_t y, m, d, days, secs, us = 0, scale = 100000;
	const char *p;

	if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' ||
	    s[16] != ':')
		return false;
	for (i = 0; i < 6; i++) {
		int j;

		v[i] = 0;
		for (j = 0; j < len[i]; j++) {
			char c = s[pos[i] + j];

			if (c < '0' || c > '9')
				return false;
			v[i] = v[i] * 10 + (c - '0');
		}
	}
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 ||
	    v[4] > 59 || v[5] > 60)
		return false;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		for (; *p >= '0' && *p <= '9'; p++) {
			us += scale * (*p - '0');
			scale /= 10;
		}
	}
	/* days from civil (Howard Hinnant) */
	y = v[0];
	m = v[1];
	d = v[2];
	y -= m <= 2;
	{
		int64_t era = (y >= 0 ? y : y - 399) / 400;
		int64_t yoe = y - era * 400;
		int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
		int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

		days = era * 146097 + doe - 719468;
	}
	secs = days * 86400 + v[3] * 3600 + v[4] * 60 + v[5];
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		if (!(p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
		      p[2] <= '9' && p[3] == ':' && p[4] >= '0' &&
		      p[4] <= '9' && p[5] >= '0' && p[5] <= '9'))
			return false;
		secs -= sign * (((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
				((p[4] - '0') * 10 + (p[5] - '0')) * 60);
		p += 6;
	} else {
		return false;
	}
	if (*p)
		return false;
	*out = secs * 1000000 + us;
	return true;
}

tg_err tgk_obj_created(bctx *b, const kobj *o, int64_t *out)
{
	const cJSON *md = tgk_jget(o->j, "metadata"), *ts;
	tg_err err;

	*out = INT64_MAX;
	err = tgk_field(b, o, md, "metadata", "creationTimestamp", T_STR, &ts);
	if (err || !ts)
		return err;
	if (!parse_time(ts->valuestring, out))
		return tgk_oerr(b, o, ts, TG_EINVAL,
				"metadata.creationTimestamp: bad time '%.60s'",
				ts->valuestring);
	return TG_OK;
}

/* metadata.labels and .annotations, checked. */
tg_err tgk_obj_meta(bctx *b, const kobj *o, const cJSON **labels,
		       const cJSON **annots)
{
	const cJSON *md;
	tg_err err;

	err = tgk_field(b, o, o->j, "", "metadata", T_OBJ, &md);
	if (err)
		return err;
	if (!*o->name)
		return tgk_oerr(b, o, md, TG_EINVAL, "metadata.name: missing");
	if (strlen(o->name) > TG_MAX_NAME || strlen(o->ns) > TG_MAX_NAME)
		return tgk_oerr(b, o, md, TG_EINVAL,
				"metadata.name: longer than %d bytes",
				TG_MAX_NAME);
	err = tgk_field(b, o, md, "metadata", "labels", T_OBJ, labels);
	if (!err)
		err = tgk_check_strmap(b, o, *labels, "metadata.labels");
	if (!err && annots) {
		err = tgk_field(b, o, md, "metadata", "annotations", T_OBJ,
				annots);
		if (!err)
			err = tgk_check_strmap(b, o, *annots,
					       "metadata.annotations");
	}
	return err;
}

/* A label selector against a label map; an error for a bad selector. */
tg_err tgk_sel_match(bctx *b, const kobj *o, const cJSON *sel,
			const char *path, const cJSON *labels, bool *match)
{
	const cJSON *ml, *me, *c;
	char p[300];
	unsigned i = 0;

	*match = false;
	if (!sel || cJSON_IsNull(sel))
		return TG_OK;	/* a nil selector selects nothing */
	if (!cJSON_IsObject(sel))
		return tgk_oerr(b, o, sel, TG_EINVAL, "%s: expected an object",
				path);
	ml = tgk_jget(sel, "matchLabels");
	me = tgk_jget(sel, "matchExpressions");
	if (ml && !cJSON_IsNull(ml) && !cJSON_IsObject(ml))
		return tgk_oerr(b, o, ml, TG_EINVAL,
				"%s.matchLabels: expected an object", path);
	if (me && !cJSON_IsNull(me) && !cJSON_IsArray(me))
		return tgk_oerr(b, o, me, TG_EINVAL,
				"%s.matchExpressions: expected a list", path);
	*match = true;
	cJSON_ArrayForEach(c, ml) {
		const char *v = tgk_jstr(labels, c->string);

		if (!cJSON_IsString(c))
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s.matchLabels: expected strings",
					path);
		if (!v || strcmp(v, c->valuestring) != 0)
			*match = false;
	}
	cJSON_ArrayForEach(c, me) {
		const char *key = tgk_jstr(c, "key");
		const char *op = tgk_jstr(c, "operator");
		const cJSON *vals = tgk_jget(c, "values"), *v;
		const char *have;
		bool in = false;

		tgk_pidx(p, sizeof(p), path, i++);
		if (!key || !op)
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s.matchExpressions%s: needs a key "
					"and an operator", path,
					p + strlen(path));
		if (vals && !cJSON_IsNull(vals) && !cJSON_IsArray(vals))
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s.matchExpressions%s.values: "
					"expected a list", path,
					p + strlen(path));
		have = tgk_jstr(labels, key);
		cJSON_ArrayForEach(v, vals) {
			if (!cJSON_IsString(v))
				return tgk_oerr(b, o, v, TG_EINVAL,
						"%s.matchExpressions%s.values: "
						"expected strings", path,
						p + strlen(path));
			if (have && strcmp(have, v->valuestring) == 0)
				in = true;
		}
		if (strcmp(op, "In") == 0) {
			if (!in)
				*match = false;
		} else if (strcmp(op, "NotIn") == 0) {
			if (in)
				*match = false;
		} else if (strcmp(op, "Exists") == 0) {
			if (!have)
				*match = false;
		} else if (strcmp(op, "DoesNotExist") == 0) {
			if (have)
				*match = false;
		} else {
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s.matchExpressions%s.operator: "
					"unknown operator '%.40s'", path,
					p + strlen(path), op);
		}
	}
	return TG_OK;
}

/*
 * Fault isolation: an object that cannot be read costs only what depends
 * on it (its gang, its node), never the whole build.  The error \p err
 * just set in b->ei becomes \p msg and b->ei is cleared; TG_ENOMEM is
 * returned as is (it still ends the build).
 */
tg_err tgk_fail_msg(bctx *b, tg_err err, char *msg, size_t n)
{
	if (err == TG_ENOMEM)
		return err;
	snprintf(msg, n, "%s", b->ei->msg[0] ? b->ei->msg : tg_strerror(err));
	b->ei->msg[0] = '\0';
	return TG_OK;
}
