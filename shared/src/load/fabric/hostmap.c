/*
 * shared/src/load/fabric/hostmap.c - host-map rules: how a fabric's host
 * names become node names (tg_fabric_set_hostmap(), fabric.h).
 *
 * A rule is a list of steps applied in order to each name; a match= or
 * drop= step may drop it.  Every format names its hosts through
 * tgi_fab_host_map(), so a rule means the same for all of them.
 */
#include "config.h"

#include <string.h>

#include "fabric_int.h"

enum {
	HM_MATCH = 1, HM_DROP, HM_LOWER, HM_UPPER, HM_STRIP_DOMAIN,
	HM_STRIP_PREFIX, HM_STRIP_SUFFIX, HM_PREFIX, HM_SUFFIX, HM_REPLACE
};

/* Glob match with '*' and '?', iterative (no recursion, linear memory). */
static bool glob1(const char *g, size_t gn, const char *s)
{
	size_t gi = 0, si = 0, star = SIZE_MAX, mark = 0;
	size_t sn = strlen(s);

	while (si < sn) {
		if (gi < gn && (g[gi] == '?' || g[gi] == s[si])) {
			gi++;
			si++;
		} else if (gi < gn && g[gi] == '*') {
			star = gi++;
			mark = si;
		} else if (star != SIZE_MAX) {
			gi = star + 1;
			si = ++mark;
		} else {
			return false;
		}
	}
	while (gi < gn && g[gi] == '*')
		gi++;
	return gi == gn;
}

static bool glob_any(const char *alts, const char *s)
{
	const char *p = alts;

	for (;;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (glob1(p, n, s))
			return true;
		if (!bar)
			return false;
		p = bar + 1;
	}
}

void tgi_fab_hostmap_free(tg_fabric *f)
{
	unsigned i;

	for (i = 0; i < f->nsteps; i++) {
		tgi_free(f->steps[i].arg);
		tgi_free(f->steps[i].arg2);
	}
	f->nsteps = 0;
}

static tg_err hm_step_parse(tg_fabric *f, const char *s, size_t n,
			    tg_errinfo *ei)
{
	static const struct {
		const char *name;
		int op;
		int arg;	/* 0 none, 1 required */
	} ops[] = {
		{ "match", HM_MATCH, 1 },
		{ "drop", HM_DROP, 1 },
		{ "lower", HM_LOWER, 0 },
		{ "upper", HM_UPPER, 0 },
		{ "strip-domain", HM_STRIP_DOMAIN, 0 },
		{ "strip-prefix", HM_STRIP_PREFIX, 1 },
		{ "strip-suffix", HM_STRIP_SUFFIX, 1 },
		{ "prefix", HM_PREFIX, 1 },
		{ "suffix", HM_SUFFIX, 1 },
		{ "replace", HM_REPLACE, 1 },
	};
	const char *eq = memchr(s, '=', n);
	size_t kn = eq ? (size_t)(eq - s) : n, i;
	char show[FAB_SHOW + 4];
	hm_step *st;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strlen(ops[i].name) == kn &&
		    memcmp(ops[i].name, s, kn) == 0)
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return tgi_errf(ei, TG_EINVAL, "host-map rule: unknown step "
				"'%s' (match=, drop=, lower, upper, "
				"strip-domain, strip-prefix=, strip-suffix=, "
				"prefix=, suffix=, replace=)",
				tgi_fab_show(s, n, show, sizeof(show)));
	if (ops[i].arg && (!eq || eq + 1 == s + n))
		return tgi_errf(ei, TG_EINVAL, "host-map rule: step '%s' "
				"needs a value ('%s=...')",
				tgi_fab_show(s, n, show, sizeof(show)),
				ops[i].name);
	if (!ops[i].arg && eq)
		return tgi_errf(ei, TG_EINVAL, "host-map rule: step '%s' "
				"takes no value",
				tgi_fab_show(s, n, show, sizeof(show)));
	if (f->nsteps == FAB_MAX_STEPS)
		return tgi_errf(ei, TG_ELIMIT, "host-map rule: more than %d "
				"steps", FAB_MAX_STEPS);
	st = &f->steps[f->nsteps];
	memset(st, 0, sizeof(*st));
	st->op = ops[i].op;
	if (eq) {
		st->arg = tgi_strndup(eq + 1, (size_t)(s + n - eq - 1));
		if (!st->arg)
			return tgi_errf(ei, TG_ENOMEM, "out of memory");
	}
	f->nsteps++;
	if (st->op == HM_MATCH || st->op == HM_DROP) {
		const char *p = st->arg;
		unsigned alts = 1;

		for (; *p; p++)
			alts += *p == '|';
		if (alts > FAB_MAX_ALTS)
			return tgi_errf(ei, TG_ELIMIT, "host-map rule: more "
					"than %d globs in '%s'", FAB_MAX_ALTS,
					tgi_fab_show(s, n, show, sizeof(show)));
		if (strstr(st->arg, "||") || st->arg[0] == '|' ||
		    p[-1] == '|')
			return tgi_errf(ei, TG_EINVAL, "host-map rule: empty "
					"glob in '%s'",
					tgi_fab_show(s, n, show, sizeof(show)));
	}
	if (st->op == HM_REPLACE) {
		char *sl = strchr(st->arg, '/');

		if (!sl || sl == st->arg)
			return tgi_errf(ei, TG_EINVAL, "host-map rule: "
					"'%s': expected replace=FROM/TO",
					tgi_fab_show(s, n, show, sizeof(show)));
		st->arg2 = tgi_strdup(sl + 1);
		if (!st->arg2)
			return tgi_errf(ei, TG_ENOMEM, "out of memory");
		*sl = '\0';
	}
	return TG_OK;
}

tg_err tg_fabric_set_hostmap(tg_fabric *f, const char *rule, tg_errinfo *ei)
{
	const char *p;
	tg_err err;

	if (!f)
		return tgi_errf(ei, TG_EINVAL, "tg_fabric_set_hostmap: NULL");
	if (f->any_input || f->failed)
		return tgi_errf(ei, TG_ESTATE, "host-map rule: set it before "
				"the first input");
	tgi_fab_hostmap_free(f);
	if (!rule || !*rule)
		return TG_OK;
	if (strlen(rule) > TG_MAX_HOSTMAP)
		return tgi_errf(ei, TG_ELIMIT, "host-map rule: longer than %u "
				"bytes", TG_MAX_HOSTMAP);
	p = rule;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);

		if (n == 0) {
			tgi_fab_hostmap_free(f);
			return tgi_errf(ei, TG_EINVAL, "host-map rule '%.*s': "
					"empty step", FAB_SHOW, rule);
		}
		err = hm_step_parse(f, p, n, ei);
		if (err) {
			tgi_fab_hostmap_free(f);
			return err;
		}
		if (!c)
			break;
		p = c + 1;
	}
	return TG_OK;
}

/*
 * Applies the rule to \p in; *out (TG_MAX_NAME + 1 bytes) gets the name.
 * Returns 1 kept, 0 dropped, -1 the result is too long.
 */
int tgi_fab_host_map(const tg_fabric *f, const char *in, char *out)
{
	char tmp[TG_MAX_NAME + 1];
	size_t n = strlen(in), i;
	unsigned k;

	if (n > TG_MAX_NAME)
		return -1;
	memcpy(out, in, n + 1);
	for (k = 0; k < f->nsteps; k++) {
		const hm_step *st = &f->steps[k];
		size_t al = st->arg ? strlen(st->arg) : 0;
		char *hit;

		n = strlen(out);
		switch (st->op) {
		case HM_MATCH:
			if (!glob_any(st->arg, out))
				return 0;
			break;
		case HM_DROP:
			if (glob_any(st->arg, out))
				return 0;
			break;
		case HM_LOWER:
		case HM_UPPER:
			for (i = 0; i < n; i++) {
				char c = out[i];

				if (st->op == HM_LOWER && c >= 'A' && c <= 'Z')
					out[i] = (char)(c - 'A' + 'a');
				if (st->op == HM_UPPER && c >= 'a' && c <= 'z')
					out[i] = (char)(c - 'a' + 'A');
			}
			break;
		case HM_STRIP_DOMAIN:
			hit = strchr(out, '.');
			if (hit)
				*hit = '\0';
			break;
		case HM_STRIP_PREFIX:
			if (n >= al && memcmp(out, st->arg, al) == 0)
				memmove(out, out + al, n - al + 1);
			break;
		case HM_STRIP_SUFFIX:
			if (n >= al && strcmp(out + n - al, st->arg) == 0)
				out[n - al] = '\0';
			break;
		case HM_PREFIX:
			if (n + al > TG_MAX_NAME)
				return -1;
			memmove(out + al, out, n + 1);
			memcpy(out, st->arg, al);
			break;
		case HM_SUFFIX:
			if (n + al > TG_MAX_NAME)
				return -1;
			memcpy(out + n, st->arg, al + 1);
			break;
		case HM_REPLACE:
			hit = strstr(out, st->arg);
			if (hit) {
				size_t pre = (size_t)(hit - out);
				size_t tl = strlen(st->arg2);

				if (n - al + tl > TG_MAX_NAME)
					return -1;
				memcpy(tmp, out, pre);
				memcpy(tmp + pre, st->arg2, tl);
				memcpy(tmp + pre + tl, hit + al,
				       n - pre - al + 1);
				memcpy(out, tmp, n - al + tl + 1);
			}
			break;
		}
	}
	return 1;
}
