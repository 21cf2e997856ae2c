/*
 * shared/src/load/fabric/fabric.c - switch trees from fabric discovery.
 *
 * Inputs, each parsed into one of two shapes:
 *
 *   a switch graph  devices (switches, hosts' ports) and the links
 *                   between them: `ibnetdiscover` text, NetQ's
 *                   topology-graph JSON;
 *   a table         one row per host with its switch on every level,
 *                   farthest first: a CSV such as Alibaba Crux's
 *                   "ip,DSW,PSW,ASW".
 *
 * tg_fabric_build() turns a graph into a tree (see discover.h): leaves
 * are the switches with hosts, leaves sharing a host are one group, a
 * switch's level is one more than its nearest leaf's, and switches of one
 * level reaching a common group below are one group.  Union-find does
 * both groupings; nothing depends on input order (groups are named after
 * their first member in tg_name_cmp() order, hosts are added in that
 * order too).
 *
 * ibnetdiscover, as `ibnetdiscover` (infiniband-diags) prints it:
 *
 *   vendid=0x2c9                       (and devid=, sysimgguid=, ...)
 *   Switch  65 "S-2c5e..."  # "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" ...
 *   [1]  "H-e09d..."[1](e09d...)  # "a08-p1-dgx-04-c01 mlx5_5" lid 647 ...
 *   (blank line)
 *   Ca  1 "H-e09d..."  # "a08-p1-dgx-04-c01 mlx5_5"
 *   [1](e09d...)  "S-2c5e..."[17]  # lid 657 lmc 0 "MF0;A09-..." lid 73 ...
 *
 * Every node reached has a block of its own and every link is listed by
 * both ends; a file cut short breaks one of the two, and that is reported
 * as truncated rather than silently giving a smaller fabric.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../k8s/k8s_internal.h"

#define FAB_MAX_DESC	256	/* bytes of a node description */
#define FAB_MAX_PORT	255	/* InfiniBand port numbers are 8 bits */
#define FAB_MAX_LINE	65536	/* bytes of one input line */
#define FAB_MAX_STEPS	32	/* steps of a host-map rule */
#define FAB_MAX_ALTS	16	/* globs of one match= or drop= */
#define FAB_MAX_WARN	1000	/* warnings kept; the rest counted */
#define FAB_MAX_SOURCES	4096	/* tg_fabric_add() calls */
#define FAB_SHOW	80	/* bytes of a value quoted in messages */

enum { DEV_SWITCH = 1, DEV_HOST, DEV_OTHER };
enum { MODE_NONE = 0, MODE_GRAPH, MODE_TABLE };

enum {
	HM_MATCH = 1, HM_DROP, HM_LOWER, HM_UPPER, HM_STRIP_DOMAIN,
	HM_STRIP_PREFIX, HM_STRIP_SUFFIX, HM_PREFIX, HM_SUFFIX, HM_REPLACE
};

typedef struct hm_step {
	int op;
	char *arg;		/* owned; globs are '|'-separated */
	char *arg2;		/* replace= target */
} hm_step;

typedef struct fdev {
	uint32_t id;		/* strtab id in ids */
	uint32_t desc;		/* strtab id in strs, 0 = none */
	uint8_t kind;
	bool defined;		/* has a block (or a NetQ node entry) */
	unsigned nports;
	unsigned line;		/* where defined, or first referenced */
	uint32_t src;
} fdev;

typedef struct flink {
	uint32_t a, b;		/* device indices */
	uint16_t pa, pb;	/* ports (0 for NetQ) */
	unsigned line;
	uint32_t src;
} flink;

typedef struct frow {
	uint32_t host;		/* strtab id in strs (mapped name) */
	uint32_t path[TG_MAX_LAYERS];
	unsigned line;
	uint32_t src;
} frow;

typedef struct fnvl {
	uint32_t host;		/* strtab id in strs (mapped name) */
	uint32_t domain;	/* strtab id in strs */
	unsigned idx;		/* entry in its input */
	uint32_t src;
	bool used;		/* build: a host of the switch fabric */
} fnvl;

typedef struct fgroup {
	uint32_t name;		/* strtab id in strs */
	const char *sname;	/* its text, for sorting */
	unsigned level;
	unsigned nmembers;
	char *members;		/* compressed hostlist, owned */
} fgroup;

struct tg_fabric {
	bool failed;
	int mode;
	hm_step steps[FAB_MAX_STEPS];
	unsigned nsteps;
	bool any_input;

	char **srcs;
	size_t nsrcs, srccap;

	tgi_strtab ids;		/* device ids */
	uint32_t *dev_of;	/* ids id -> device index + 1 */
	size_t ndevof, devofcap;
	fdev *devs;
	size_t ndevs, devcap;
	flink *links;
	size_t nlinks, linkcap;

	tgi_strtab strs;	/* descriptions, names, values */

	/* table mode */
	char *layer_name[TG_MAX_LAYERS];
	unsigned nlayers;
	frow *rows;
	size_t nrows, rowcap;
	uint32_t *row_of;	/* strs id of a host -> row index + 1 */
	size_t nrowof, rowofcap;

	/* NVLink domains (NetQ compute nodes), with either shape */
	fnvl *nvl;
	size_t nnvl, nvlcap;
	uint32_t *nvl_of;	/* strs id of a host -> nvl index + 1 */
	size_t nnvlof, nvlofcap;

	char **warn;
	size_t nwarn, warncap, nmore;

	tg_fabric_summary sum;
	fgroup *groups;
	size_t ngroups;
};

/* ---- small helpers ------------------------------------------------------ */

static tg_err fab_warn(tg_fabric *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static tg_err fab_warn(tg_fabric *f, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	char *s;

	if (f->nwarn >= FAB_MAX_WARN) {
		f->nmore++;
		return TG_OK;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s = tgi_strdup(msg);
	if (!s || tgi_grow(&f->warn, &f->warncap, f->nwarn + 1,
			   sizeof(char *))) {
		tgi_free(s);
		return TG_ENOMEM;
	}
	f->warn[f->nwarn++] = s;
	return TG_OK;
}

static bool fab_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool fab_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool fab_alnum(char c)
{
	return fab_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A node name the exports can write: [A-Za-z0-9._-], 1..TG_MAX_NAME. */
static bool fab_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > TG_MAX_NAME)
		return false;
	for (i = 0; i < n; i++)
		if (!fab_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return false;
	return true;
}

/* Copies [s, s + n) into out (cap bytes) for a message, cut with "...". */
static const char *fab_show(const char *s, size_t n, char *out, size_t cap)
{
	size_t i, k = 0;

	for (i = 0; i < n && k + 4 < cap; i++) {
		unsigned char c = (unsigned char)s[i];

		out[k++] = c >= ' ' && c < 0x7f ? (char)c : '?';
	}
	if (i < n) {
		out[k++] = '.';
		out[k++] = '.';
		out[k++] = '.';
	}
	out[k] = '\0';
	return out;
}

static const char *fab_src(const tg_fabric *f, uint32_t src)
{
	return src < f->nsrcs ? f->srcs[src] : "?";
}

/* ---- host-map rules ----------------------------------------------------- */

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

static void hm_free(tg_fabric *f)
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
				fab_show(s, n, show, sizeof(show)));
	if (ops[i].arg && (!eq || eq + 1 == s + n))
		return tgi_errf(ei, TG_EINVAL, "host-map rule: step '%s' "
				"needs a value ('%s=...')",
				fab_show(s, n, show, sizeof(show)),
				ops[i].name);
	if (!ops[i].arg && eq)
		return tgi_errf(ei, TG_EINVAL, "host-map rule: step '%s' "
				"takes no value",
				fab_show(s, n, show, sizeof(show)));
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
					fab_show(s, n, show, sizeof(show)));
		if (strstr(st->arg, "||") || st->arg[0] == '|' ||
		    p[-1] == '|')
			return tgi_errf(ei, TG_EINVAL, "host-map rule: empty "
					"glob in '%s'",
					fab_show(s, n, show, sizeof(show)));
	}
	if (st->op == HM_REPLACE) {
		char *sl = strchr(st->arg, '/');

		if (!sl || sl == st->arg)
			return tgi_errf(ei, TG_EINVAL, "host-map rule: "
					"'%s': expected replace=FROM/TO",
					fab_show(s, n, show, sizeof(show)));
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
	hm_free(f);
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
			hm_free(f);
			return tgi_errf(ei, TG_EINVAL, "host-map rule '%.*s': "
					"empty step", FAB_SHOW, rule);
		}
		err = hm_step_parse(f, p, n, ei);
		if (err) {
			hm_free(f);
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
static int hm_apply(const tg_fabric *f, const char *in, char *out)
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

/* ---- the fabric object -------------------------------------------------- */

tg_fabric *tg_fabric_create(void)
{
	tg_fabric *f = tgi_calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	tgi_strtab_init(&f->ids);
	tgi_strtab_init(&f->strs);
	return f;
}

static void groups_free(tg_fabric *f)
{
	size_t i;

	for (i = 0; i < f->ngroups; i++)
		tgi_free(f->groups[i].members);
	tgi_free(f->groups);
	f->groups = NULL;
	f->ngroups = 0;
}

void tg_fabric_destroy(tg_fabric *f)
{
	size_t i;

	if (!f)
		return;
	hm_free(f);
	for (i = 0; i < f->nsrcs; i++)
		tgi_free(f->srcs[i]);
	tgi_free(f->srcs);
	tgi_strtab_free(&f->ids);
	tgi_free(f->dev_of);
	tgi_free(f->devs);
	tgi_free(f->links);
	tgi_strtab_free(&f->strs);
	for (i = 0; i < f->nlayers; i++)
		tgi_free(f->layer_name[i]);
	tgi_free(f->rows);
	tgi_free(f->row_of);
	tgi_free(f->nvl);
	tgi_free(f->nvl_of);
	for (i = 0; i < f->nwarn; i++)
		tgi_free(f->warn[i]);
	tgi_free(f->warn);
	groups_free(f);
	tgi_free(f);
}

unsigned tg_fabric_nwarnings(const tg_fabric *f)
{
	return f ? (unsigned)(f->nwarn + (f->nmore ? 1 : 0)) : 0;
}

const char *tg_fabric_warning(const tg_fabric *f, unsigned i)
{
	if (!f)
		return NULL;
	if (i < f->nwarn)
		return f->warn[i];
	if (i == f->nwarn && f->nmore)
		return "... more warnings not kept";
	return NULL;
}

void tg_fabric_summary_get(const tg_fabric *f, tg_fabric_summary *s)
{
	if (!s)
		return;
	if (!f) {
		memset(s, 0, sizeof(*s));
		return;
	}
	*s = f->sum;
}

tg_err tg_fabric_group(const tg_fabric *f, unsigned i, unsigned *level,
		       const char **name, const char **members,
		       unsigned *nmembers)
{
	const fgroup *g;

	if (!f || i >= f->ngroups)
		return TG_ENOENT;
	g = &f->groups[i];
	if (level)
		*level = g->level;
	if (name)
		*name = tgi_strtab_get(&f->strs, g->name);
	if (members)
		*members = g->members ? g->members : "";
	if (nmembers)
		*nmembers = g->nmembers;
	return TG_OK;
}

/* Finds or creates the device with id [s, s + n). */
static tg_err dev_get(tg_fabric *f, const char *id, uint32_t src,
		      unsigned line, uint32_t *out)
{
	uint32_t sid;
	fdev *d;

	if (tgi_strtab_intern(&f->ids, id, &sid))
		return TG_ENOMEM;
	if (sid >= f->ndevof) {
		size_t old = f->ndevof;

		if (tgi_grow(&f->dev_of, &f->devofcap, (size_t)sid + 1,
			     sizeof(uint32_t)))
			return TG_ENOMEM;
		memset(f->dev_of + old, 0, ((size_t)sid + 1 - old) *
		       sizeof(uint32_t));
		f->ndevof = (size_t)sid + 1;
	}
	if (f->dev_of[sid]) {
		*out = f->dev_of[sid] - 1;
		return TG_OK;
	}
	if (f->ndevs >= TG_MAX_FABRIC_DEVICES)
		return TG_ELIMIT;
	if (tgi_grow(&f->devs, &f->devcap, f->ndevs + 1, sizeof(fdev)))
		return TG_ENOMEM;
	d = &f->devs[f->ndevs];
	memset(d, 0, sizeof(*d));
	d->id = sid;
	d->line = line;
	d->src = src;
	f->dev_of[sid] = (uint32_t)f->ndevs + 1;
	*out = (uint32_t)f->ndevs++;
	return TG_OK;
}

static tg_err link_add(tg_fabric *f, uint32_t a, unsigned pa, uint32_t b,
		       unsigned pb, uint32_t src, unsigned line)
{
	flink *l;

	if (f->nlinks >= (size_t)TG_MAX_FABRIC_DEVICES * 4)
		return TG_ELIMIT;
	if (tgi_grow(&f->links, &f->linkcap, f->nlinks + 1, sizeof(flink)))
		return TG_ENOMEM;
	l = &f->links[f->nlinks++];
	l->a = a;
	l->b = b;
	l->pa = (uint16_t)pa;
	l->pb = (uint16_t)pb;
	l->src = src;
	l->line = line;
	return TG_OK;
}

/* ---- ibnetdiscover ------------------------------------------------------ */

typedef struct ib_ctx {
	tg_fabric *f;
	const char *source;
	uint32_t src;
	tg_errinfo *ei;
	unsigned line;
	bool cut;		/* the line is the last and has no newline */
	uint32_t cur;		/* device of the open block, TG_NONE */
	uint8_t *seen;		/* ports listed in the open block */
	size_t first_link;	/* links of this input start here */
} ib_ctx;

static tg_err ib_fail(ib_ctx *c, tg_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tg_err ib_fail(ib_ctx *c, tg_err err, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return tgi_errf(c->ei, err, "%s:%u: %s%s", c->source, c->line, why,
			c->cut && err == TG_EPARSE ? " (the file ends inside "
			"this line: the output is truncated)" : "");
}

static tg_err ib_nomem(ib_ctx *c, tg_err err)
{
	if (err == TG_ELIMIT)
		return ib_fail(c, err, "more than %u devices or links",
			       TG_MAX_FABRIC_DEVICES);
	return ib_fail(c, TG_ENOMEM, "out of memory");
}

/* Reads a quoted string at *p (which must be '"'); NUL-terminates it in
 * place and moves *p past the closing quote.  NULL when unterminated. */
static char *ib_quoted(char **p)
{
	char *s = *p + 1, *e = strchr(s, '"');

	if (!e)
		return NULL;
	*e = '\0';
	*p = e + 1;
	return s;
}

/* Reads 1..3 digits as a port number. */
static bool ib_num(char **p, unsigned *out)
{
	unsigned v = 0, n = 0;

	while (fab_digit(**p) && n < 6) {
		v = v * 10 + (unsigned)(**p - '0');
		(*p)++;
		n++;
	}
	if (n == 0 || n > 5 || fab_digit(**p))
		return false;
	*out = v;
	return true;
}

/* Skips "(hexguid)" when present. */
static bool ib_guid(char **p)
{
	char *s = *p;

	if (*s != '(')
		return true;
	s++;
	while (fab_alnum(*s))
		s++;
	if (*s != ')')
		return false;
	*p = s + 1;
	return true;
}

static void ib_skip(char **p)
{
	while (fab_blank(**p))
		(*p)++;
}

/* The first quoted string of a comment ("# lid 1 \"desc\" ..."), or
 * NULL. */
static char *ib_comment_desc(char *p)
{
	char *q;

	ib_skip(&p);
	if (*p != '#')
		return NULL;
	q = strchr(p, '"');
	if (!q)
		return NULL;
	return ib_quoted(&q);
}

static tg_err ib_set_desc(ib_ctx *c, uint32_t d, const char *desc,
			  bool own)
{
	fdev *dv = &c->f->devs[d];
	uint32_t sid;

	if (strlen(desc) > FAB_MAX_DESC)
		return ib_fail(c, TG_ELIMIT, "node description longer than "
			       "%d bytes", FAB_MAX_DESC);
	/* the node's own block wins over what its neighbours say */
	if (dv->desc && !own)
		return TG_OK;
	if (tgi_strtab_intern(&c->f->strs, desc, &sid))
		return ib_nomem(c, TG_ENOMEM);
	dv->desc = sid;
	return TG_OK;
}

/* "Switch 65 "S-..." # "desc" ...", "Ca 1 ...", "Rt 1 ...". */
static tg_err ib_header(ib_ctx *c, char *p, int kind)
{
	char show[FAB_SHOW + 4], *id, *desc;
	unsigned nports;
	uint32_t d;
	fdev *dv;
	tg_err err;

	ib_skip(&p);
	if (!ib_num(&p, &nports) || nports == 0 || nports > FAB_MAX_PORT)
		return ib_fail(c, TG_EPARSE, "bad port count (1 to %d)",
			       FAB_MAX_PORT);
	ib_skip(&p);
	if (*p != '"' || !(id = ib_quoted(&p)) || !*id)
		return ib_fail(c, TG_EPARSE, "expected the node id in quotes "
			       "after the port count");
	if (strlen(id) > TG_MAX_NAME)
		return ib_fail(c, TG_ELIMIT, "node id longer than %d bytes",
			       TG_MAX_NAME);
	desc = ib_comment_desc(p);
	err = dev_get(c->f, id, c->src, c->line, &d);
	if (err)
		return ib_nomem(c, err);
	dv = &c->f->devs[d];
	if (dv->defined)
		return ib_fail(c, TG_EEXIST, "node %s is defined twice (first "
			       "at %s:%u)", fab_show(id, strlen(id), show,
						     sizeof(show)),
			       fab_src(c->f, dv->src), dv->line);
	/* a peer's id prefix ("S-", "H-") said what it is; an unknown
	 * prefix says nothing */
	if (dv->kind && dv->kind != DEV_OTHER && dv->kind != kind)
		return ib_fail(c, TG_EPARSE, "node %s is a %s here but its "
			       "id says %s", fab_show(id, strlen(id), show,
						      sizeof(show)),
			       kind == DEV_SWITCH ? "switch" :
			       kind == DEV_HOST ? "CA" : "router",
			       dv->kind == DEV_SWITCH ? "switch" : "CA");
	dv->kind = (uint8_t)kind;
	dv->defined = true;
	dv->nports = nports;
	dv->line = c->line;
	dv->src = c->src;
	if (kind == DEV_SWITCH)
		c->f->sum.switches++;
	if (desc) {
		err = ib_set_desc(c, d, desc, true);
		if (err)
			return err;
	}
	c->cur = d;
	memset(c->seen, 0, FAB_MAX_PORT + 1);
	return TG_OK;
}

static int ib_kind_of_id(const char *id)
{
	if (id[0] == 'S' && id[1] == '-')
		return DEV_SWITCH;
	if (id[0] == 'H' && id[1] == '-')
		return DEV_HOST;
	return DEV_OTHER;
}

/* "[P](guid) "PEER"[PP](guid) # ..." inside a block. */
static tg_err ib_port(ib_ctx *c, char *p)
{
	char show[FAB_SHOW + 4], *peer, *desc;
	unsigned port, pport;
	uint32_t d;
	fdev *me = &c->f->devs[c->cur], *dv;
	int kind;
	tg_err err;

	p++;
	if (!ib_num(&p, &port) || *p != ']')
		return ib_fail(c, TG_EPARSE, "bad port number in '[...]'");
	p++;
	if (port == 0 || port > me->nports)
		return ib_fail(c, TG_EPARSE, "port %u of a node with %u "
			       "ports", port, me->nports);
	if (c->seen[port])
		return ib_fail(c, TG_EEXIST, "port %u listed twice", port);
	c->seen[port] = 1;
	if (!ib_guid(&p))
		return ib_fail(c, TG_EPARSE, "unterminated '(' after the "
			       "port number");
	ib_skip(&p);
	if (*p != '"' || !(peer = ib_quoted(&p)) || !*peer)
		return ib_fail(c, TG_EPARSE, "expected the peer's id in "
			       "quotes");
	if (strlen(peer) > TG_MAX_NAME)
		return ib_fail(c, TG_ELIMIT, "node id longer than %d bytes",
			       TG_MAX_NAME);
	if (*p != '[')
		return ib_fail(c, TG_EPARSE, "expected '[port]' after the "
			       "peer's id");
	p++;
	if (!ib_num(&p, &pport) || *p != ']' || pport == 0 ||
	    pport > FAB_MAX_PORT)
		return ib_fail(c, TG_EPARSE, "bad peer port number");
	p++;
	if (!ib_guid(&p))
		return ib_fail(c, TG_EPARSE, "unterminated '(' after the "
			       "peer's port");
	desc = ib_comment_desc(p);
	err = dev_get(c->f, peer, c->src, c->line, &d);
	if (err)
		return ib_nomem(c, err);
	dv = &c->f->devs[d];
	kind = ib_kind_of_id(peer);
	if (!dv->kind)
		dv->kind = (uint8_t)kind;
	else if (!dv->defined && dv->kind != kind)
		return ib_fail(c, TG_EPARSE, "node %s: id prefix says one "
			       "kind of node, an earlier line another",
			       fab_show(peer, strlen(peer), show,
					sizeof(show)));
	if (desc) {
		err = ib_set_desc(c, d, desc, false);
		if (err)
			return err;
	}
	err = link_add(c->f, c->cur, port, d, pport, c->src, c->line);
	if (err)
		return ib_nomem(c, err);
	me = &c->f->devs[c->cur];	/* dev_get() may have moved it */
	if (me->kind == DEV_HOST)
		c->f->sum.host_ports++;
	return TG_OK;
}

static int link_cmp(const void *x, const void *y)
{
	const flink *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->pa != b->pa)
		return a->pa < b->pa ? -1 : 1;
	return 0;
}

/* Every link of this input ends at a defined node that lists it back. */
static tg_err ib_crosscheck(ib_ctx *c)
{
	tg_fabric *f = c->f;
	size_t n = f->nlinks - c->first_link, i;
	char s1[FAB_SHOW + 4], s2[FAB_SHOW + 4];
	flink *l;

	if (!n)
		return TG_OK;
	l = f->links + c->first_link;
	qsort(l, n, sizeof(*l), link_cmp);
	for (i = 0; i < n; i++) {
		const fdev *b = &f->devs[l[i].b];
		const char *an = tgi_strtab_get(&f->ids, f->devs[l[i].a].id);
		const char *bn = tgi_strtab_get(&f->ids, b->id);
		flink key, *back;

		c->line = l[i].line;
		c->cut = false;
		if (!b->defined)
			return ib_fail(c, TG_EPARSE, "%s port %u links to %s, "
				       "which has no block of its own: the "
				       "output is truncated",
				       fab_show(an, strlen(an), s1,
						sizeof(s1)), l[i].pa,
				       fab_show(bn, strlen(bn), s2,
						sizeof(s2)));
		key.a = l[i].b;
		key.pa = l[i].pb;
		back = bsearch(&key, l, n, sizeof(*l), link_cmp);
		if (!back || back->b != l[i].a || back->pb != l[i].pa)
			return ib_fail(c, TG_EPARSE, "%s port %u links to %s "
				       "port %u, but %s's block does not list "
				       "that link back: the output is "
				       "truncated or inconsistent",
				       fab_show(an, strlen(an), s1,
						sizeof(s1)), l[i].pa,
				       fab_show(bn, strlen(bn), s2,
						sizeof(s2)), l[i].pb, s2);
	}
	return TG_OK;
}

static tg_err ib_parse(tg_fabric *f, char *buf, size_t len, uint32_t src,
		       const char *source, tg_errinfo *ei)
{
	uint8_t seen[FAB_MAX_PORT + 1];
	ib_ctx c;
	size_t pos = 0;
	bool any_node = false;
	tg_err err;

	memset(&c, 0, sizeof(c));
	c.f = f;
	c.source = source;
	c.src = src;
	c.ei = ei;
	c.cur = TG_NONE;
	c.seen = seen;
	c.first_link = f->nlinks;
	while (pos < len) {
		char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
		size_t pl = nl ? (size_t)(nl - p) : len - pos;
		char *s;

		c.line++;
		pos += pl + (nl ? 1 : 0);
		c.cut = !nl;
		if (pl > FAB_MAX_LINE)
			return ib_fail(&c, TG_ELIMIT, "line longer than %d "
				       "bytes", FAB_MAX_LINE);
		if (memchr(p, '\0', pl))
			return ib_fail(&c, TG_EPARSE, "NUL byte in the text");
		p[pl] = '\0';
		s = p;
		ib_skip(&s);
		if (!*s) {
			c.cur = TG_NONE;
			continue;
		}
		if (*s == '#')
			continue;
		if (strncmp(s, "Switch", 6) == 0 && fab_blank(s[6])) {
			err = ib_header(&c, s + 6, DEV_SWITCH);
		} else if (strncmp(s, "Ca", 2) == 0 && fab_blank(s[2])) {
			err = ib_header(&c, s + 2, DEV_HOST);
		} else if (strncmp(s, "Rt", 2) == 0 && fab_blank(s[2])) {
			err = ib_header(&c, s + 2, DEV_OTHER);
		} else if (*s == '[') {
			if (c.cur == TG_NONE)
				return ib_fail(&c, TG_EPARSE, "a port line "
					       "outside a Switch, Ca or Rt "
					       "block");
			err = ib_port(&c, s);
		} else {
			char *e = s;

			while (fab_alnum(*e))
				e++;
			if (*e != '=' || e == s) {
				char show[FAB_SHOW + 4];

				return ib_fail(&c, TG_EPARSE, "unrecognised "
					       "line '%s'",
					       fab_show(s, strlen(s), show,
							sizeof(show)));
			}
			err = TG_OK;	/* vendid=, devid=, ...guid= */
		}
		if (err)
			return err;
		any_node = any_node || c.cur != TG_NONE;
	}
	if (!any_node) {
		c.line = TG_MAX(c.line, 1u);
		return ib_fail(&c, TG_EPARSE, "no Switch or Ca block: not "
			       "ibnetdiscover output");
	}
	return ib_crosscheck(&c);
}

/* ---- NetQ --------------------------------------------------------------- */

static const char *nq_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ?
		cJSON_GetObjectItemCaseSensitive(o, key) : NULL;

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static tg_err nq_node(tg_fabric *f, const cJSON *n, const char *where,
		      uint32_t src, const char *source, tg_errinfo *ei)
{
	const char *id = nq_str(n, "id"), *name = nq_str(n, "name");
	const char *type = nq_str(n, "device_type");
	const cJSON *tier = cJSON_GetObjectItemCaseSensitive(n, "tier");
	char show[FAB_SHOW + 4];
	bool sw;
	uint32_t d, sid;
	fdev *dv;
	tg_err err;

	if (!id || !*id || !name || !*name)
		return tgi_errf(ei, TG_EPARSE, "%s: %s: a node needs string "
				"\"id\" and \"name\"", source, where);
	if (strlen(id) > TG_MAX_NAME || strlen(name) > FAB_MAX_DESC)
		return tgi_errf(ei, TG_ELIMIT, "%s: %s: id or name too long",
				source, where);
	if (type)
		sw = strcmp(type, "switch") == 0;
	else
		sw = cJSON_IsNumber(tier) && tier->valuedouble >= 1;
	err = dev_get(f, id, src, 0, &d);
	if (err == TG_ELIMIT)
		return tgi_errf(ei, err, "%s: more than %u devices", source,
				TG_MAX_FABRIC_DEVICES);
	if (err)
		return tgi_errf(ei, err, "%s: out of memory", source);
	dv = &f->devs[d];
	if (dv->defined)
		return tgi_errf(ei, TG_EEXIST, "%s: %s: node '%s' appears "
				"twice", source, where,
				fab_show(id, strlen(id), show, sizeof(show)));
	if (tgi_strtab_intern(&f->strs, name, &sid))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	dv->defined = true;
	dv->kind = sw ? DEV_SWITCH : DEV_HOST;
	dv->desc = sid;
	if (sw)
		f->sum.switches++;
	else
		f->sum.host_ports++;
	return TG_OK;
}

static tg_err nq_graph(tg_fabric *f, const cJSON *g, unsigned gi,
		       uint32_t src, const char *source, tg_errinfo *ei)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(g, "nodes");
	const cJSON *links = cJSON_GetObjectItemCaseSensitive(g, "links");
	const cJSON *e, *c;
	char where[96], show[FAB_SHOW + 4];
	unsigned i = 0, j;
	tg_err err;

	if (!cJSON_IsArray(nodes) || !cJSON_IsArray(links))
		return tgi_errf(ei, TG_EPARSE, "%s: [%u]: expected \"nodes\" "
				"and \"links\" arrays (NetQ topology graph)",
				source, gi);
	cJSON_ArrayForEach(e, nodes) {
		const cJSON *cn = cJSON_GetObjectItemCaseSensitive(e,
							"compounded_nodes");

		if (!cJSON_IsObject(e))
			return tgi_errf(ei, TG_EPARSE, "%s: [%u].nodes[%u]: "
					"expected an object", source, gi, i);
		if (cJSON_IsArray(cn)) {
			j = 0;
			cJSON_ArrayForEach(c, cn) {
				snprintf(where, sizeof(where),
					 "[%u].nodes[%u].compounded_nodes[%u]",
					 gi, i, j++);
				err = nq_node(f, c, where, src, source, ei);
				if (err)
					return err;
			}
		} else {
			snprintf(where, sizeof(where), "[%u].nodes[%u]", gi,
				 i);
			err = nq_node(f, e, where, src, source, ei);
			if (err)
				return err;
		}
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(e, links) {
		const char *a = nq_str(e, "src"), *b = nq_str(e, "target");
		char ab[2][TG_MAX_NAME + 1];
		uint32_t sa, sb;

		snprintf(where, sizeof(where), "[%u].links[%u]", gi, i++);
		if (!a || !b) {
			const char *id = nq_str(e, "id"), *sep;

			sep = id ? strstr(id, "-*-") : NULL;
			if (!sep || (size_t)(sep - id) > TG_MAX_NAME ||
			    strlen(sep + 3) > TG_MAX_NAME)
				return tgi_errf(ei, TG_EPARSE, "%s: %s: a link "
						"needs \"src\" and \"target\" "
						"(or an id \"A-*-B\")", source,
						where);
			memcpy(ab[0], id, (size_t)(sep - id));
			ab[0][sep - id] = '\0';
			memcpy(ab[1], sep + 3, strlen(sep + 3) + 1);
			a = ab[0];
			b = ab[1];
		}
		sa = tgi_strtab_find(&f->ids, a);
		sb = tgi_strtab_find(&f->ids, b);
		if (!sa || !sb || !f->dev_of[sa] || !f->dev_of[sb])
			return tgi_errf(ei, TG_EPARSE, "%s: %s: '%s' is not "
					"a node of the graph", source, where,
					fab_show(sa ? b : a, strlen(sa ? b : a),
						 show, sizeof(show)));
		if (sa == sb)
			continue;
		err = link_add(f, f->dev_of[sa] - 1, 0, f->dev_of[sb] - 1, 0,
			       src, 0);
		if (err)
			return tgi_errf(ei, err, "%s: %s", source,
					err == TG_ELIMIT ? "too many links" :
					"out of memory");
	}
	return TG_OK;
}

static tg_err nq_parse(tg_fabric *f, const char *buf, size_t len,
		       uint32_t src, const char *source, tg_errinfo *ei)
{
	cJSON *docs = NULL, *d, *e;
	unsigned gi = 0;
	tg_err err;

	err = tgi_json_parse_stream(buf, len, source, &docs, ei);
	if (err)
		return err;
	err = TG_OK;
	cJSON_ArrayForEach(d, docs) {
		if (cJSON_IsObject(d)) {
			err = nq_graph(f, d, gi++, src, source, ei);
		} else if (cJSON_IsArray(d)) {
			cJSON_ArrayForEach(e, d) {
				err = nq_graph(f, e, gi++, src, source, ei);
				if (err)
					break;
			}
		} else {
			err = tgi_errf(ei, TG_EPARSE, "%s: expected a NetQ "
				       "topology graph (an object or a list "
				       "of objects)", source);
		}
		if (err)
			break;
	}
	if (!err && gi == 0)
		err = tgi_errf(ei, TG_EPARSE, "%s: no topology graph in the "
			       "input", source);
	cJSON_Delete(docs);
	return err;
}

/* ---- NetQ compute nodes (NVLink domains) ------------------------------- */

/*
 * One entry of NMX's compute-node list:
 *   {"Name": "node1", "DomainUUID": "3fbf...", "GpuIDList": [...], ...}
 * Only Name and DomainUUID are read.
 */
static tg_err nvl_entry(tg_fabric *f, const cJSON *e, unsigned idx,
			uint32_t src, const char *source, tg_errinfo *ei)
{
	const char *name = nq_str(e, "Name"), *dom = nq_str(e, "DomainUUID");
	char nm[TG_MAX_NAME + 1], show[FAB_SHOW + 4], show2[FAB_SHOW + 4];
	uint32_t hid, did, *slot;
	fnvl *v;
	int kept;

	if (!cJSON_IsObject(e) || !name || !*name || !dom)
		return tgi_errf(ei, TG_EPARSE, "%s: [%u]: expected a compute "
				"node with string \"Name\" and \"DomainUUID\" "
				"(NetQ nmx/v1/compute-nodes)", source, idx);
	if (!*dom) {
		if (fab_warn(f, "%s: [%u]: node '%s' has no DomainUUID (no "
			     "NVLink domain); skipped", source, idx,
			     fab_show(name, strlen(name), show, sizeof(show))))
			return tgi_errf(ei, TG_ENOMEM, "%s: out of memory",
					source);
		return TG_OK;
	}
	if (strlen(dom) > TG_MAX_NAME || !fab_name_ok(dom))
		return tgi_errf(ei, TG_EPARSE, "%s: [%u]: DomainUUID '%s' is "
				"not a domain name (1 to %d of "
				"[A-Za-z0-9._-])", source, idx,
				fab_show(dom, strlen(dom), show, sizeof(show)),
				TG_MAX_NAME);
	kept = hm_apply(f, name, nm);
	if (kept < 0)
		return tgi_errf(ei, TG_ELIMIT, "%s: [%u]: node '%s': too long "
				"(at most %d bytes after the host-map rule)",
				source, idx, fab_show(name, strlen(name), show,
						      sizeof(show)),
				TG_MAX_NAME);
	if (kept == 0)
		return TG_OK;
	if (!fab_name_ok(nm)) {
		if (fab_warn(f, "%s: [%u]: node '%s' is not a valid node "
			     "name; skipped", source, idx,
			     fab_show(nm, strlen(nm), show, sizeof(show))))
			return tgi_errf(ei, TG_ENOMEM, "%s: out of memory",
					source);
		return TG_OK;
	}
	if (tgi_strtab_intern(&f->strs, nm, &hid) ||
	    tgi_strtab_intern(&f->strs, dom, &did))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	if (hid >= f->nnvlof) {
		size_t old = f->nnvlof;

		if (tgi_grow(&f->nvl_of, &f->nvlofcap, (size_t)hid + 1,
			     sizeof(uint32_t)))
			return tgi_errf(ei, TG_ENOMEM, "%s: out of memory",
					source);
		memset(f->nvl_of + old, 0,
		       ((size_t)hid + 1 - old) * sizeof(uint32_t));
		f->nnvlof = (size_t)hid + 1;
	}
	slot = &f->nvl_of[hid];
	if (*slot) {
		const fnvl *o = &f->nvl[*slot - 1];

		if (o->domain == did)
			return TG_OK;	/* listed twice, same domain */
		return tgi_errf(ei, TG_EEXIST, "%s: [%u]: node '%s' is "
				"already in NVLink domain '%s' (%s: [%u]), "
				"not '%s'", source, idx, nm,
				fab_show(tgi_strtab_get(&f->strs, o->domain),
					 strlen(tgi_strtab_get(&f->strs,
							       o->domain)),
					 show, sizeof(show)),
				fab_src(f, o->src), o->idx,
				fab_show(dom, strlen(dom), show2,
					 sizeof(show2)));
	}
	if (f->nnvl >= TG_MAX_NODES)
		return tgi_errf(ei, TG_ELIMIT, "%s: more than %u compute "
				"nodes", source, TG_MAX_NODES);
	if (tgi_grow(&f->nvl, &f->nvlcap, f->nnvl + 1, sizeof(fnvl)))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	v = &f->nvl[f->nnvl];
	memset(v, 0, sizeof(*v));
	v->host = hid;
	v->domain = did;
	v->idx = idx;
	v->src = src;
	*slot = (uint32_t)++f->nnvl;
	return TG_OK;
}

static tg_err nvl_parse(tg_fabric *f, const char *buf, size_t len,
			uint32_t src, const char *source, tg_errinfo *ei)
{
	cJSON *docs = NULL, *d, *e;
	unsigned idx = 0;
	tg_err err;

	err = tgi_json_parse_stream(buf, len, source, &docs, ei);
	if (err)
		return err;
	cJSON_ArrayForEach(d, docs) {
		if (cJSON_IsArray(d)) {
			cJSON_ArrayForEach(e, d) {
				err = nvl_entry(f, e, idx++, src, source, ei);
				if (err)
					break;
			}
		} else {
			err = nvl_entry(f, d, idx++, src, source, ei);
		}
		if (err)
			break;
	}
	if (!err && idx == 0)
		err = tgi_errf(ei, TG_EPARSE, "%s: no compute node in the "
			       "input (expected NetQ's nmx/v1/compute-nodes "
			       "list)", source);
	cJSON_Delete(docs);
	return err;
}

/* ---- CSV (host, top switch, ..., leaf switch) --------------------------- */

typedef struct csv_ctx {
	tg_fabric *f;
	const char *source;
	tg_errinfo *ei;
	unsigned line;
} csv_ctx;

static tg_err csv_fail(csv_ctx *c, tg_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tg_err csv_fail(csv_ctx *c, tg_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = tgi_verrf_at(c->ei, err, c->source, c->line, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Splits one line (NUL-terminated, modified in place) into at most
 * \p max fields; "quoted" fields may hold commas and "" for a quote.
 * Returns the field count, or -1 with the error set.
 */
static int csv_split(csv_ctx *c, char *p, char **fld, int max, tg_err *err)
{
	int n = 0;

	for (;;) {
		char *w;

		if (n == max) {
			*err = csv_fail(c, TG_ELIMIT, "more than %d columns",
					max);
			return -1;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '"') {
			w = ++p;
			fld[n] = w;
			for (;;) {
				if (!*p) {
					*err = csv_fail(c, TG_EPARSE, "column "
							"%d: unterminated "
							"quote", n + 1);
					return -1;
				}
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p && *p != ',') {
				*w = '\0';
				*err = csv_fail(c, TG_EPARSE, "column %d: text "
						"after the closing quote",
						n + 1);
				return -1;
			}
			*w = '\0';
		} else {
			char *e;

			fld[n] = p;
			while (*p && *p != ',')
				p++;
			e = p;
			while (e > fld[n] && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if (*p == ',') {
				*e = '\0';
				p++;
				n++;
				continue;
			}
			*e = '\0';
			n++;
			return n;
		}
		n++;
		if (!*p)
			return n;
		p++;	/* the comma */
	}
}

/*
 * A switch name that repeats under different parents (Crux's ToR names)
 * is written to topology.conf with its path, the names from the top level
 * down joined by '_': that must fit TG_MAX_NAME too, so a row whose joined
 * switch path is longer is refused here, naming the line, rather than
 * exported as a file the topology.conf loader refuses.
 */
static tg_err csv_path_len(csv_ctx *c, char **fld, int n)
{
	size_t len = 0;
	int k;

	for (k = 1; k < n; k++)
		len += strlen(fld[k]) + (k > 1);
	if (len <= TG_MAX_NAME)
		return TG_OK;
	return csv_fail(c, TG_ELIMIT, "the switch path %.40s_..._%.40s is %zu "
			"bytes; a repeated switch name is written to "
			"topology.conf with its path, and names there are at "
			"most %d bytes (TG_MAX_NAME)", fld[1], fld[n - 1], len,
			TG_MAX_NAME);
}

static tg_err csv_parse(tg_fabric *f, char *buf, size_t len, uint32_t src,
			const char *source, tg_errinfo *ei)
{
	char *fld[TG_MAX_LAYERS + 2], show[FAB_SHOW + 4];
	csv_ctx c;
	size_t pos = 0;
	int ncols = -1, n, k;
	unsigned hdr_line = 0;
	tg_err err = TG_OK;

	memset(&c, 0, sizeof(c));
	c.f = f;
	c.source = source;
	c.ei = ei;
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	while (pos < len) {
		char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
		size_t pl = nl ? (size_t)(nl - p) : len - pos;
		char name[TG_MAX_NAME + 1];
		uint32_t hid, *slot;
		frow *r;
		int kept;

		c.line++;
		pos += pl + (nl ? 1 : 0);
		if (pl > FAB_MAX_LINE)
			return csv_fail(&c, TG_ELIMIT, "line longer than %d "
					"bytes", FAB_MAX_LINE);
		if (memchr(p, '\0', pl))
			return csv_fail(&c, TG_EPARSE, "NUL byte in the text");
		if (pl && p[pl - 1] == '\r')
			pl--;
		p[pl] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		n = csv_split(&c, p, fld, TG_MAX_LAYERS + 2, &err);
		if (n < 0)
			return err;
		if (ncols < 0) {
			/* the header: host column, then the levels */
			if (n < 2)
				return csv_fail(&c, TG_EPARSE, "the header "
						"needs a host column and at "
						"least one switch column "
						"(e.g. ip,DSW,PSW,ASW)");
			if (n - 1 > TG_MAX_LAYERS)
				return csv_fail(&c, TG_ELIMIT, "more than %d "
						"switch levels",
						TG_MAX_LAYERS);
			if (f->nlayers && (unsigned)(n - 1) != f->nlayers)
				return csv_fail(&c, TG_EPARSE, "%d switch "
						"columns; an earlier input "
						"had %u", n - 1, f->nlayers);
			for (k = 1; k < n; k++) {
				int j;

				if (!fab_name_ok(fld[k]))
					return csv_fail(&c, TG_EPARSE, "column "
							"%d: bad level name "
							"'%s'", k + 1,
							fab_show(fld[k],
								 strlen(fld[k]),
								 show,
								 sizeof(show)));
				for (j = 1; j < k; j++)
					if (strcmp(fld[j], fld[k]) == 0)
						return csv_fail(&c, TG_EPARSE,
							"level '%s' named "
							"twice", fld[k]);
				if (f->nlayers &&
				    strcmp(f->layer_name[k - 1], fld[k]))
					return csv_fail(&c, TG_EPARSE, "column "
							"%d is '%s'; an "
							"earlier input named "
							"it '%s'", k + 1,
							fld[k],
							f->layer_name[k - 1]);
			}
			if (!f->nlayers) {
				for (k = 1; k < n; k++) {
					f->layer_name[k - 1] =
						tgi_strdup(fld[k]);
					if (!f->layer_name[k - 1])
						return csv_fail(&c,
							TG_ENOMEM,
							"out of memory");
					f->nlayers = (unsigned)k;
				}
			}
			ncols = n;
			hdr_line = c.line;
			continue;
		}
		if (n != ncols)
			return csv_fail(&c, TG_EPARSE, "%d columns; the header "
					"(line %u) has %d", n, hdr_line, ncols);
		for (k = 0; k < n; k++) {
			if (!*fld[k])
				return csv_fail(&c, TG_EPARSE, "column %d is "
						"empty", k + 1);
			if (strlen(fld[k]) > TG_MAX_NAME)
				return csv_fail(&c, TG_ELIMIT, "column %d is "
						"longer than %d bytes", k + 1,
						TG_MAX_NAME);
			if (k && !fab_name_ok(fld[k]))
				return csv_fail(&c, TG_EPARSE, "column %d: "
						"switch '%s': expected "
						"letters, digits, '.', '_' "
						"or '-'",
						k + 1,
						fab_show(fld[k],
							 strlen(fld[k]), show,
							 sizeof(show)));
		}
		err = csv_path_len(&c, fld, n);
		if (err)
			return err;
		f->sum.host_ports++;
		kept = hm_apply(f, fld[0], name);
		if (kept <= 0) {
			if (kept < 0)
				return csv_fail(&c, TG_ELIMIT, "host '%s': the "
						"host-map rule makes it longer "
						"than %d bytes",
						fab_show(fld[0],
							 strlen(fld[0]), show,
							 sizeof(show)),
						TG_MAX_NAME);
			f->sum.dropped++;
			continue;
		}
		if (!fab_name_ok(name)) {
			f->sum.unnamed++;
			if (fab_warn(f, "%s:%u: host '%s' is not a valid node "
				     "name; skipped", source, c.line,
				     fab_show(name, strlen(name), show,
					      sizeof(show))))
				return csv_fail(&c, TG_ENOMEM,
						"out of memory");
			continue;
		}
		if (tgi_strtab_intern(&f->strs, name, &hid))
			return csv_fail(&c, TG_ENOMEM, "out of memory");
		if (hid >= f->nrowof) {
			size_t old = f->nrowof;

			if (tgi_grow(&f->row_of, &f->rowofcap,
				     (size_t)hid + 1, sizeof(uint32_t)))
				return csv_fail(&c, TG_ENOMEM,
						"out of memory");
			memset(f->row_of + old, 0,
			       ((size_t)hid + 1 - old) * sizeof(uint32_t));
			f->nrowof = (size_t)hid + 1;
		}
		slot = &f->row_of[hid];
		if (f->nrows >= TG_MAX_NODES && !*slot)
			return csv_fail(&c, TG_ELIMIT, "more than %u hosts",
					TG_MAX_NODES);
		if (tgi_grow(&f->rows, &f->rowcap, f->nrows + 1,
			     sizeof(frow)))
			return csv_fail(&c, TG_ENOMEM, "out of memory");
		r = &f->rows[f->nrows];
		memset(r, 0, sizeof(*r));
		r->host = hid;
		r->line = c.line;
		r->src = src;
		for (k = 1; k < n; k++)
			if (tgi_strtab_intern(&f->strs, fld[k],
					      &r->path[k - 1]))
				return csv_fail(&c, TG_ENOMEM,
						"out of memory");
		if (*slot) {
			const frow *o = &f->rows[*slot - 1];

			if (memcmp(o->path, r->path, sizeof(r->path)) == 0)
				continue;	/* the same row again */
			return csv_fail(&c, TG_EEXIST, "host '%s' is already "
					"under other switches (%s:%u)", name,
					fab_src(f, o->src), o->line);
		}
		*slot = (uint32_t)f->nrows + 1;
		f->nrows++;
	}
	if (ncols < 0) {
		c.line = TG_MAX(c.line, 1u);
		return csv_fail(&c, TG_EPARSE, "no header line (host column "
				"then switch levels, e.g. ip,DSW,PSW,ASW)");
	}
	return TG_OK;
}

/* ---- adding inputs ------------------------------------------------------ */

tg_err tg_fabric_add(tg_fabric *f, tg_fabric_format fmt, const char *buf,
		     size_t len, const char *source, tg_errinfo *ei)
{
	int mode = fmt == TG_FABRIC_CSV ? MODE_TABLE :
		   fmt == TG_FABRIC_NETQ_NVL ? MODE_NONE : MODE_GRAPH;
	char *copy = NULL;
	uint32_t src;
	tg_err err;

	if (!source)
		source = fmt == TG_FABRIC_IBNETDISCOVER ? "ibnetdiscover" :
			 fmt == TG_FABRIC_NETQ ? "netq" :
			 fmt == TG_FABRIC_NETQ_NVL ? "compute-nodes" : "csv";
	if (!f || (!buf && len) || (fmt != TG_FABRIC_IBNETDISCOVER &&
				    fmt != TG_FABRIC_NETQ &&
				    fmt != TG_FABRIC_CSV &&
				    fmt != TG_FABRIC_NETQ_NVL))
		return tgi_errf(ei, TG_EINVAL, "%s: bad arguments", source);
	if (f->failed)
		return tgi_errf(ei, TG_ESTATE, "%s: an earlier input failed; "
				"the fabric takes no more", source);
	if (f->mode && mode && f->mode != mode)
		return tgi_errf(ei, TG_ESTATE, "%s: a %s cannot be added to "
				"a fabric read from %s", source,
				mode == MODE_TABLE ? "host table" :
				"switch graph",
				mode == MODE_TABLE ? "switch graphs" :
				"host tables");
	if (len > TG_MAX_FILE)
		return tgi_errf(ei, TG_ELIMIT, "%s: larger than %u bytes",
				source, TG_MAX_FILE);
	if (f->nsrcs >= FAB_MAX_SOURCES)
		return tgi_errf(ei, TG_ELIMIT, "%s: more than %d inputs",
				source, FAB_MAX_SOURCES);
	if (tgi_grow(&f->srcs, &f->srccap, f->nsrcs + 1, sizeof(char *)))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	f->srcs[f->nsrcs] = tgi_strdup(source);
	if (!f->srcs[f->nsrcs])
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	src = (uint32_t)f->nsrcs++;
	f->any_input = true;
	if (mode)
		f->mode = mode;
	groups_free(f);
	/* the line parsers cut lines in place: work on a copy */
	if (fmt != TG_FABRIC_NETQ && fmt != TG_FABRIC_NETQ_NVL) {
		copy = tgi_malloc(len + 1);
		if (!copy) {
			f->failed = true;
			return tgi_errf(ei, TG_ENOMEM, "%s: out of memory",
					source);
		}
		if (len)
			memcpy(copy, buf, len);
		copy[len] = '\0';
	}
	if (fmt == TG_FABRIC_IBNETDISCOVER)
		err = ib_parse(f, copy, len, src, source, ei);
	else if (fmt == TG_FABRIC_NETQ)
		err = nq_parse(f, buf ? buf : "", len, src, source, ei);
	else if (fmt == TG_FABRIC_NETQ_NVL)
		err = nvl_parse(f, buf ? buf : "", len, src, source, ei);
	else
		err = csv_parse(f, copy, len, src, source, ei);
	tgi_free(copy);
	if (err)
		f->failed = true;
	return err;
}

tg_err tg_fabric_add_file(tg_fabric *f, tg_fabric_format fmt,
			  const char *path, tg_errinfo *ei)
{
	char *buf = NULL;
	size_t len = 0;
	tg_err err;

	if (!f || !path)
		return tgi_errf(ei, TG_EINVAL, "tg_fabric_add_file: NULL");
	err = tgi_read_file(path, &buf, &len, ei);
	if (err)
		return err;
	err = tg_fabric_add(f, fmt, buf, len, path, ei);
	tgi_free(buf);
	return err;
}

/* ---- building the tree -------------------------------------------------- */

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
	uint32_t r = x;

	while (uf[r] != r)
		r = uf[r];
	while (uf[x] != r) {
		uint32_t n = uf[x];

		uf[x] = r;
		x = n;
	}
	return r;
}

static void uf_union(uint32_t *uf, uint32_t a, uint32_t b)
{
	a = uf_find(uf, a);
	b = uf_find(uf, b);
	if (a != b)
		uf[a > b ? a : b] = a > b ? b : a;
}

/* The host name an InfiniBand CA description gives: its first word when
 * it has one or two words ("a05-p1-dgx-01-c01 mlx5_0"). */
static bool host_from_desc(const char *d, char *out)
{
	const char *w0 = NULL, *p = d;
	size_t n0 = 0;
	unsigned words = 0;

	while (*p) {
		while (fab_blank(*p))
			p++;
		if (!*p)
			break;
		if (words == 0)
			w0 = p;
		words++;
		while (*p && !fab_blank(*p))
			p++;
		if (words == 1)
			n0 = (size_t)(p - w0);
	}
	if (words < 1 || words > 2 || n0 > TG_MAX_NAME)
		return false;
	memcpy(out, w0, n0);
	out[n0] = '\0';
	return true;
}

/* A switch's display name: "MF0;NAME:MODEL" gives NAME; else the whole
 * description when it is a label value; else empty (use the id). */
static void switch_name(const char *d, char *out, size_t cap)
{
	const char *semi = strchr(d, ';'), *colon;
	char buf[64];
	size_t n;

	out[0] = '\0';
	if (semi && (colon = strchr(semi + 1, ':')) &&
	    !strchr(colon + 1, ';') && !strchr(colon + 1, ':') &&
	    !memchr(d, ':', (size_t)(semi - d))) {
		n = (size_t)(colon - semi - 1);
		if (n == 0 || n >= cap)
			return;
		memcpy(out, semi + 1, n);
		out[n] = '\0';
	} else {
		n = strlen(d);
		if (n == 0 || n >= cap)
			return;
		memcpy(out, d, n + 1);
	}
	if (tg_export_label_value(out, buf) != out)
		out[0] = '\0';
}

typedef struct gb_ctx {
	tg_fabric *f;
	tg_errinfo *ei;
	uint32_t *swidx;	/* device -> switch index, TG_NONE */
	uint32_t *swdev;	/* switch index -> device */
	uint32_t nsw;
	uint32_t *swname;	/* switch -> strs id of its unique name */
	uint32_t *hostof;	/* device -> strs id of its host, 0 none */
	uint8_t *named;		/* device: a CA whose description names a
				 * host (kept or not) */
	uint8_t *edge;		/* switch: hosts hang off it (level 0 or
				 * nothing) */
	uint32_t *adj0, *adj;	/* CSR: switch neighbours */
	uint32_t *hadj0, *hadj;	/* CSR: host (strs id) neighbours */
	uint32_t *level;
	uint32_t *uf;
	uint32_t *uplink;	/* switch root -> a parent switch, TG_NONE */
	uint32_t *hostleaf;	/* strs id -> a leaf switch + 1 */
	uint32_t *hosts;	/* distinct host strs ids */
	size_t nhosts;
} gb_ctx;

static void gb_free(gb_ctx *g)
{
	tgi_free(g->swidx);
	tgi_free(g->swdev);
	tgi_free(g->swname);
	tgi_free(g->hostof);
	tgi_free(g->named);
	tgi_free(g->edge);
	tgi_free(g->adj0);
	tgi_free(g->adj);
	tgi_free(g->hadj0);
	tgi_free(g->hadj);
	tgi_free(g->level);
	tgi_free(g->uf);
	tgi_free(g->uplink);
	tgi_free(g->hostleaf);
	tgi_free(g->hosts);
}

/* A string id with its text, for sorting without a global context. */
typedef struct fnid {
	const char *s;
	uint32_t id;
} fnid;

static int fnid_cmp(const void *a, const void *b)
{
	return tg_name_cmp(((const fnid *)a)->s, ((const fnid *)b)->s);
}

/* Sorts string ids of \p st in tg_name_cmp() order of their text. */
static tg_err sort_ids(const tgi_strtab *st, uint32_t *ids, size_t n)
{
	fnid *tmp = tgi_malloc((n + 1) * sizeof(fnid));
	size_t i;

	if (!tmp)
		return TG_ENOMEM;
	for (i = 0; i < n; i++) {
		tmp[i].s = tgi_strtab_get(st, ids[i]);
		tmp[i].id = ids[i];
	}
	qsort(tmp, n, sizeof(fnid), fnid_cmp);
	for (i = 0; i < n; i++)
		ids[i] = tmp[i].id;
	tgi_free(tmp);
	return TG_OK;
}

/* Names: unique display names for the switches, host names for CAs. */
static tg_err gb_names(gb_ctx *g)
{
	tg_fabric *f = g->f;
	tgi_strtab seen;
	uint32_t *count = NULL;
	size_t ncount = 0, cap = 0, i;
	char nm[TG_MAX_NAME + 1], show[FAB_SHOW + 4];
	tg_err err = TG_OK;

	tgi_strtab_init(&seen);
	g->swidx = tgi_malloc(f->ndevs * sizeof(uint32_t) + 1);
	g->swdev = tgi_malloc(f->ndevs * sizeof(uint32_t) + 1);
	g->swname = tgi_calloc(f->ndevs + 1, sizeof(uint32_t));
	g->hostof = tgi_calloc(f->ndevs + 1, sizeof(uint32_t));
	g->named = tgi_calloc(f->ndevs + 1, 1);
	if (!g->swidx || !g->swdev || !g->swname || !g->hostof || !g->named)
		return TG_ENOMEM;
	g->nsw = 0;
	for (i = 0; i < f->ndevs; i++) {
		g->swidx[i] = TG_NONE;
		if (f->devs[i].kind == DEV_SWITCH) {
			g->swidx[i] = g->nsw;
			g->swdev[g->nsw++] = (uint32_t)i;
		}
	}
	/* display names; a name two switches share falls back to ids */
	for (i = 0; i < g->nsw; i++) {
		const fdev *d = &f->devs[g->swdev[i]];
		uint32_t id;

		switch_name(tgi_strtab_get(&f->strs, d->desc), nm,
			    sizeof(nm));
		if (!nm[0])
			continue;
		if (tgi_strtab_intern(&seen, nm, &id) ||
		    tgi_grow(&count, &cap, (size_t)id + 1, sizeof(uint32_t))) {
			err = TG_ENOMEM;
			goto out;
		}
		while (ncount <= id)
			count[ncount++] = 0;
		count[id]++;
	}
	for (i = 0; i < g->nsw; i++) {
		const fdev *d = &f->devs[g->swdev[i]];
		const char *use;
		uint32_t id;

		switch_name(tgi_strtab_get(&f->strs, d->desc), nm,
			    sizeof(nm));
		use = nm;
		if (!nm[0] || count[tgi_strtab_find(&seen, nm)] > 1)
			use = tgi_strtab_get(&f->ids, d->id);
		if (tg_export_label_value(use, show) != use) {
			/* an id no label can hold: hash it like a value */
			use = show;
		}
		if (tgi_strtab_intern(&f->strs, use, &id)) {
			err = TG_ENOMEM;
			goto out;
		}
		g->swname[i] = id;
	}
	/* an id that equals another switch's name: hashed ids for both */
	tgi_free(count);
	count = tgi_calloc(f->strs.n + 1, sizeof(uint32_t));
	if (!count) {
		err = TG_ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nsw; i++)
		count[g->swname[i]]++;
	for (i = 0; i < g->nsw; i++) {
		const char *id = tgi_strtab_get(&f->ids,
						f->devs[g->swdev[i]].id);

		if (count[g->swname[i]] < 2)
			continue;
		snprintf(nm, sizeof(nm), "x%016llx",
			 (unsigned long long)tgi_hash(id, strlen(id)));
		if (tgi_strtab_intern(&f->strs, nm, &g->swname[i])) {
			err = TG_ENOMEM;
			goto out;
		}
	}
	/* hosts */
	for (i = 0; i < f->ndevs; i++) {
		const fdev *d = &f->devs[i];
		char raw[TG_MAX_NAME + 1];
		int kept;
		uint32_t id;

		if (d->kind != DEV_HOST)
			continue;
		if (!d->desc || !host_from_desc(tgi_strtab_get(&f->strs,
							       d->desc),
						raw)) {
			f->sum.unnamed++;
			continue;
		}
		g->named[i] = 1;
		kept = hm_apply(f, raw, nm);
		if (kept == 0) {
			f->sum.dropped++;
			continue;
		}
		if (kept < 0 || !fab_name_ok(nm)) {
			f->sum.unnamed++;
			if (fab_warn(f, "%s: host '%s' (port %s): %s; "
				     "skipped", fab_src(f, d->src),
				     fab_show(raw, strlen(raw), show,
					      sizeof(show)),
				     tgi_strtab_get(&f->ids, d->id),
				     kept < 0 ? "the host-map rule makes the "
				     "name too long" :
				     "not a valid node name")) {
				err = TG_ENOMEM;
				goto out;
			}
			continue;
		}
		if (tgi_strtab_intern(&f->strs, nm, &id)) {
			err = TG_ENOMEM;
			goto out;
		}
		g->hostof[i] = id;
	}
out:
	tgi_free(count);
	tgi_strtab_free(&seen);
	return err;
}

/* Adjacency lists, switch-switch and switch-host, as CSR arrays. */
static tg_err gb_adjacency(gb_ctx *g)
{
	tg_fabric *f = g->f;
	size_t i, ns = 0, nh = 0;
	uint32_t *fill = NULL, *hfill = NULL;

	g->adj0 = tgi_calloc((size_t)g->nsw + 1, sizeof(uint32_t));
	g->hadj0 = tgi_calloc((size_t)g->nsw + 1, sizeof(uint32_t));
	g->edge = tgi_calloc((size_t)g->nsw + 1, 1);
	if (!g->adj0 || !g->hadj0 || !g->edge)
		return TG_ENOMEM;
	for (i = 0; i < f->nlinks; i++) {
		uint32_t a = g->swidx[f->links[i].a];
		uint32_t b = g->swidx[f->links[i].b];

		if (a != TG_NONE && g->named[f->links[i].b])
			g->edge[a] = 1;
		if (b != TG_NONE && g->named[f->links[i].a])
			g->edge[b] = 1;

		if (a != TG_NONE && b != TG_NONE) {
			g->adj0[a + 1]++;
			g->adj0[b + 1]++;
			ns += 2;
		} else if (a != TG_NONE && g->hostof[f->links[i].b]) {
			g->hadj0[a + 1]++;
			nh++;
		} else if (b != TG_NONE && g->hostof[f->links[i].a]) {
			g->hadj0[b + 1]++;
			nh++;
		}
	}
	for (i = 0; i < g->nsw; i++) {
		g->adj0[i + 1] += g->adj0[i];
		g->hadj0[i + 1] += g->hadj0[i];
	}
	g->adj = tgi_malloc(ns * sizeof(uint32_t) + 1);
	g->hadj = tgi_malloc(nh * sizeof(uint32_t) + 1);
	fill = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	hfill = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	if (!g->adj || !g->hadj || !fill || !hfill) {
		tgi_free(fill);
		tgi_free(hfill);
		return TG_ENOMEM;
	}
	memcpy(fill, g->adj0, ((size_t)g->nsw + 1) * sizeof(uint32_t));
	memcpy(hfill, g->hadj0, ((size_t)g->nsw + 1) * sizeof(uint32_t));
	for (i = 0; i < f->nlinks; i++) {
		uint32_t a = g->swidx[f->links[i].a];
		uint32_t b = g->swidx[f->links[i].b];

		if (a != TG_NONE && b != TG_NONE) {
			g->adj[fill[a]++] = b;
			g->adj[fill[b]++] = a;
		} else if (a != TG_NONE && g->hostof[f->links[i].b]) {
			g->hadj[hfill[a]++] = g->hostof[f->links[i].b];
		} else if (b != TG_NONE && g->hostof[f->links[i].a]) {
			g->hadj[hfill[b]++] = g->hostof[f->links[i].a];
		}
	}
	tgi_free(fill);
	tgi_free(hfill);
	return TG_OK;
}

/*
 * Levels and groups.  Leaves (level 0) are unioned through shared hosts;
 * a breadth-first walk gives every other switch its level (switches that
 * hosts hang off, all of them dropped by the host-map rule, get none and
 * are left out: they are some other unit's leaves, not parents); then,
 * level by level, the parents of one group are unioned.
 */
static tg_err gb_tree(gb_ctx *g, unsigned *nlevels)
{
	tg_fabric *f = g->f;
	uint32_t *queue = NULL, s, top = 0;
	size_t qh = 0, qt = 0, nstrs = f->strs.n + 1;
	unsigned l;
	tg_err err = TG_OK;

	g->level = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	g->uf = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	g->uplink = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	g->hostleaf = tgi_calloc(nstrs, sizeof(uint32_t));
	g->hosts = tgi_malloc(nstrs * sizeof(uint32_t));
	queue = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	if (!g->level || !g->uf || !g->uplink || !g->hostleaf || !g->hosts ||
	    !queue) {
		err = TG_ENOMEM;
		goto out;
	}
	for (s = 0; s < g->nsw; s++) {
		g->uf[s] = s;
		g->uplink[s] = TG_NONE;
		g->level[s] = TG_NONE;
	}
	g->nhosts = 0;
	for (s = 0; s < g->nsw; s++) {
		uint32_t k;

		for (k = g->hadj0[s]; k < g->hadj0[s + 1]; k++) {
			uint32_t h = g->hadj[k];

			if (!g->hostleaf[h]) {
				g->hostleaf[h] = s + 1;
				g->hosts[g->nhosts++] = h;
			} else {
				uf_union(g->uf, s, g->hostleaf[h] - 1);
			}
		}
		if (g->hadj0[s + 1] > g->hadj0[s]) {
			g->level[s] = 0;
			queue[qt++] = s;
		}
	}
	while (qh < qt) {
		uint32_t k;

		s = queue[qh++];
		for (k = g->adj0[s]; k < g->adj0[s + 1]; k++) {
			uint32_t p = g->adj[k];

			/* a switch hosts hang off is a leaf or nothing:
			 * the host-map rule may have dropped its hosts */
			if (g->level[p] != TG_NONE || g->edge[p])
				continue;
			g->level[p] = g->level[s] + 1;
			if (g->level[p] > top)
				top = g->level[p];
			queue[qt++] = p;
		}
	}
	if (top + 1 > TG_MAX_LAYERS) {
		err = TG_ELIMIT;
		goto out;
	}
	/* level by level: parents of one group are one group */
	for (l = 0; l < top; l++) {
		for (s = 0; s < g->nsw; s++) {
			uint32_t k, r;

			if (g->level[s] != l)
				continue;
			r = uf_find(g->uf, s);
			for (k = g->adj0[s]; k < g->adj0[s + 1]; k++) {
				uint32_t p = g->adj[k];

				if (g->level[p] != l + 1)
					continue;
				if (g->uplink[r] == TG_NONE)
					g->uplink[r] = p;
				else
					uf_union(g->uf, p, g->uplink[r]);
			}
		}
	}
	f->sum.unlinked = 0;
	for (s = 0; s < g->nsw; s++)
		if (g->level[s] == TG_NONE)
			f->sum.unlinked++;
	*nlevels = g->nhosts ? top + 1 : 0;
out:
	tgi_free(queue);
	return err;
}

/* A group's name: its member whose name sorts first; the group table
 * lists every group's members. */
static tg_err gb_groups(gb_ctx *g, uint32_t *gname)
{
	tg_fabric *f = g->f;
	uint32_t s, *gidx = NULL, *start = NULL, *members = NULL;
	const char **names = NULL;
	size_t ng = 0, i;
	tg_err err = TG_ENOMEM;

	for (s = 0; s < g->nsw; s++)
		gname[s] = 0;
	for (s = 0; s < g->nsw; s++) {
		uint32_t r;
		const char *a, *b;

		if (g->level[s] == TG_NONE)
			continue;
		r = uf_find(g->uf, s);
		if (!gname[r]) {
			gname[r] = g->swname[s];
			continue;
		}
		a = tgi_strtab_get(&f->strs, g->swname[s]);
		b = tgi_strtab_get(&f->strs, gname[r]);
		if (tg_name_cmp(a, b) < 0)
			gname[r] = g->swname[s];
	}
	groups_free(f);
	gidx = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	start = tgi_calloc((size_t)g->nsw + 2, sizeof(uint32_t));
	members = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	names = tgi_malloc(((size_t)g->nsw + 1) * sizeof(char *));
	if (!gidx || !start || !members || !names)
		goto out;
	for (s = 0; s < g->nsw; s++) {
		gidx[s] = TG_NONE;
		if (g->level[s] != TG_NONE && uf_find(g->uf, s) == s)
			gidx[s] = (uint32_t)ng++;
	}
	f->groups = tgi_calloc(ng + 1, sizeof(fgroup));
	if (!f->groups)
		goto out;
	/* bucket the switches by group */
	for (s = 0; s < g->nsw; s++)
		if (g->level[s] != TG_NONE)
			start[gidx[uf_find(g->uf, s)] + 1]++;
	for (i = 0; i < ng; i++)
		start[i + 1] += start[i];
	for (s = 0; s < g->nsw; s++)
		if (g->level[s] != TG_NONE)
			members[start[gidx[uf_find(g->uf, s)]]++] =
				g->swname[s];
	for (i = ng; i > 0; i--)
		start[i] = start[i - 1];
	start[0] = 0;
	for (s = 0; s < g->nsw; s++) {
		fgroup *gr;
		uint32_t *m, nm, k;

		if (gidx[s] == TG_NONE)
			continue;
		gr = &f->groups[f->ngroups++];
		gr->name = gname[s];
		gr->level = g->level[s];
		m = members + start[gidx[s]];
		nm = start[gidx[s] + 1] - start[gidx[s]];
		if (sort_ids(&f->strs, m, nm))
			goto out;
		for (k = 0; k < nm; k++)
			names[k] = tgi_strtab_get(&f->strs, m[k]);
		gr->members = tg_hostlist_compress(names, nm);
		gr->nmembers = nm;
		if (!gr->members)
			goto out;
	}
	err = TG_OK;
out:
	tgi_free(gidx);
	tgi_free(start);
	tgi_free(members);
	tgi_free(names);
	return err;
}

static int group_cmp(const void *x, const void *y)
{
	const fgroup *a = x, *b = y;

	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return tg_name_cmp(a->sname, b->sname);
}

/* ---- NVLink domains in the tree ----------------------------------------- */

/* A path filler: the switch values of host \p h, farthest first. */
typedef void (*path_fn)(void *ctx, uint32_t h, const char **path);

/* The first host seen of an NVLink domain, and where it hangs. */
typedef struct nvl_span {
	uint32_t domain;
	uint32_t host;
	const char *path[TG_MAX_LAYERS];
	bool warned;
} nvl_span;

/* The NVLink domain (strs id) of host \p h, 0 when none. */
static uint32_t nvl_domain(const tg_fabric *f, uint32_t h)
{
	if (h >= f->nnvlof || !f->nvl_of[h])
		return 0;
	return f->nvl[f->nvl_of[h] - 1].domain;
}

/* "a/b/c" of \p n values into \p out. */
static const char *path_text(const char *const *path, unsigned n, char *out,
			     size_t cap)
{
	size_t k = 0;
	unsigned i;

	out[0] = '\0';
	for (i = 0; i < n && k + 1 < cap; i++)
		k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? "/" : "",
				      path[i] ? path[i] : "?");
	return out;
}

/* Warns once per domain whose hosts hang off different switches. */
static tg_err nvl_span_check(tg_fabric *f, nvl_span **sp, size_t *nsp,
			     size_t *cap, uint32_t dom, uint32_t host,
			     const char *const *path, unsigned nlev)
{
	char a[512], b[512];
	nvl_span *s = NULL;
	size_t i;
	unsigned k;

	for (i = 0; i < *nsp && !s; i++)
		if ((*sp)[i].domain == dom)
			s = &(*sp)[i];
	if (!s) {
		if (tgi_grow(sp, cap, *nsp + 1, sizeof(nvl_span)))
			return TG_ENOMEM;
		s = &(*sp)[(*nsp)++];
		memset(s, 0, sizeof(*s));
		s->domain = dom;
		s->host = host;
		for (k = 0; k < nlev; k++)
			s->path[k] = path[k];
		return TG_OK;
	}
	if (s->warned)
		return TG_OK;
	for (k = 0; k < nlev; k++)
		if (!s->path[k] != !path[k] ||
		    (path[k] && strcmp(s->path[k], path[k]) != 0))
			break;
	if (k == nlev)
		return TG_OK;
	s->warned = true;
	return fab_warn(f, "NVLink domain '%s' spans switches: %s is under "
			"%s, %s under %s; each part is a domain of its own",
			tgi_strtab_get(&f->strs, dom),
			tgi_strtab_get(&f->strs, s->host),
			path_text(s->path, nlev, a, sizeof(a)),
			tgi_strtab_get(&f->strs, host),
			path_text(path, nlev, b, sizeof(b)));
}

/* One warning naming the hosts of \p ids (a compressed hostlist). */
static tg_err warn_hosts(tg_fabric *f, const uint32_t *ids, size_t n,
			 const char *what)
{
	const char **names;
	char *hl;
	size_t i;
	tg_err err;

	if (!n)
		return TG_OK;
	names = tgi_malloc(n * sizeof(char *));
	if (!names)
		return TG_ENOMEM;
	for (i = 0; i < n; i++)
		names[i] = tgi_strtab_get(&f->strs, ids[i]);
	hl = tg_hostlist_compress(names, (unsigned)n);
	tgi_free(names);
	if (!hl)
		return TG_ENOMEM;
	err = fab_warn(f, "%zu host%s %s: %.300s%s", n, n == 1 ? "" : "s",
		       what, hl, strlen(hl) > 300 ? "..." : "");
	tg_free(hl);
	return err;
}

/*
 * Adds the hosts to \p t, in tg_name_cmp() order: \p hosts (nh strs
 * ids, sorted) of the switch fabric, whose \p nlev switch values \p fn
 * fills, and the hosts that only the NVLink list names (no switch
 * values).  With NVLink domains the lowest layer "nvlink" (key
 * TG_LABEL_ACCEL) is added first and each path gets the host's domain
 * (missing when it has none).  Counts into f->sum.
 */
static tg_err add_hosts(tg_fabric *f, tg_topology *t, const uint32_t *hosts,
			size_t nh, unsigned nlev, path_fn fn, void *ctx,
			tg_errinfo *ei)
{
	uint32_t *extra = NULL, *nodom = NULL, *doms = NULL;
	nvl_span *sp = NULL;
	size_t nx = 0, nnd = 0, nsp = 0, spcap = 0, i = 0, j = 0, k;
	tg_err err = TG_OK;

	if (f->nnvl) {
		err = tg_topology_add_layer(t, "nvlink", TG_LABEL_ACCEL);
		if (err)
			return tgi_errf(ei, err, "cannot add layer nvlink: %s",
					tg_strerror(err));
		extra = tgi_malloc((f->nnvl + 1) * sizeof(uint32_t));
		nodom = tgi_malloc((nh + 1) * sizeof(uint32_t));
		doms = tgi_malloc((f->nnvl + 1) * sizeof(uint32_t));
		if (!extra || !nodom || !doms)
			goto nomem;
		for (k = 0; k < f->nnvl; k++)
			f->nvl[k].used = false;
		for (k = 0; k < nh; k++)
			if (hosts[k] < f->nnvlof && f->nvl_of[hosts[k]])
				f->nvl[f->nvl_of[hosts[k]] - 1].used = true;
		for (k = 0; k < f->nnvl; k++)
			if (!f->nvl[k].used)
				extra[nx++] = f->nvl[k].host;
		if (sort_ids(&f->strs, extra, nx))
			goto nomem;
		/* distinct domains, for the summary */
		for (k = 0; k < f->nnvl; k++)
			doms[k] = f->nvl[k].domain;
		if (sort_ids(&f->strs, doms, f->nnvl))
			goto nomem;
		f->sum.nvl_domains = 0;
		for (k = 0; k < f->nnvl; k++)
			if (!k || doms[k] != doms[k - 1])
				f->sum.nvl_domains++;
		f->sum.nvl_hosts = (unsigned)f->nnvl;
	}
	while (i < nh || j < nx) {
		const char *path[TG_MAX_LAYERS + 1];
		bool sw = j == nx || (i < nh &&
			  tg_name_cmp(tgi_strtab_get(&f->strs, hosts[i]),
				      tgi_strtab_get(&f->strs, extra[j])) < 0);
		uint32_t h = sw ? hosts[i++] : extra[j++], dom;
		const char *hn = tgi_strtab_get(&f->strs, h);

		for (k = 0; k < nlev; k++)
			path[k] = NULL;
		if (sw)
			fn(ctx, h, path);
		if (f->nnvl) {
			dom = nvl_domain(f, h);
			path[nlev] = dom ? tgi_strtab_get(&f->strs, dom) :
				     NULL;
			if (!dom)
				nodom[nnd++] = h;
			else if (sw && nvl_span_check(f, &sp, &nsp, &spcap,
						      dom, h, path, nlev))
				goto nomem;
		}
		err = tg_topology_add_node(t, hn, path, NULL);
		if (err) {
			err = tgi_errf(ei, err, "cannot add node %s: %s", hn,
				       tg_strerror(err));
			goto out;
		}
	}
	f->sum.hosts = (unsigned)(nh + nx);
	if (warn_hosts(f, nodom, nnd, "of the switch fabric are in no "
		       "NVLink domain of the compute-node list") ||
	    (nh && warn_hosts(f, extra, nx, "of the compute-node list are "
			      "on no switch of the fabric")))
		goto nomem;
	goto out;
nomem:
	err = tgi_errf(ei, TG_ENOMEM, "out of memory building the fabric");
out:
	tgi_free(extra);
	tgi_free(nodom);
	tgi_free(doms);
	tgi_free(sp);
	return err;
}

/* The switch path of a graph host: a group stands on its level and those
 * up to its parent's. */
typedef struct graph_paths {
	tg_fabric *f;
	gb_ctx *g;
	uint32_t *gname;
	unsigned nlevels;
} graph_paths;

static void graph_path(void *ctx, uint32_t h, const char **path)
{
	graph_paths *gp = ctx;
	gb_ctx *g = gp->g;
	uint32_t s = g->hostleaf[h] - 1;
	unsigned k, n = gp->nlevels;

	for (;;) {
		uint32_t r = uf_find(g->uf, s), up = g->uplink[r];
		unsigned lo = g->level[s];
		unsigned hi = up == TG_NONE ? n : g->level[up];

		for (k = lo; k < hi; k++)
			path[n - 1 - k] = tgi_strtab_get(&gp->f->strs,
							 gp->gname[r]);
		if (up == TG_NONE)
			break;
		s = up;
	}
}

static void table_path(void *ctx, uint32_t h, const char **path)
{
	tg_fabric *f = ctx;
	const frow *r = &f->rows[f->row_of[h] - 1];
	unsigned k;

	for (k = 0; k < f->nlayers; k++)
		path[k] = tgi_strtab_get(&f->strs, r->path[k]);
}

static tg_err build_graph(tg_fabric *f, tg_topology *t, tg_errinfo *ei)
{
	gb_ctx g;
	graph_paths gp;
	uint32_t *gname = NULL;
	unsigned nlevels = 0, k;
	size_t i;
	tg_err err;

	memset(&g, 0, sizeof(g));
	g.f = f;
	g.ei = ei;
	f->sum.unnamed = f->sum.dropped = 0;
	err = gb_names(&g);
	if (!err)
		err = gb_adjacency(&g);
	if (!err)
		err = gb_tree(&g, &nlevels);
	if (err == TG_ELIMIT) {
		err = tgi_errf(ei, err, "%s: the switch tree is deeper than "
			       "%d levels", fab_src(f, 0), TG_MAX_LAYERS);
		goto out;
	}
	if (err)
		goto nomem;
	if (!g.nhosts) {
		err = tgi_errf(ei, TG_EINVAL, "%s: no host is attached to a "
			       "switch (%u host ports: %u without a host name, "
			       "%u dropped by the host-map rule)",
			       fab_src(f, 0), f->sum.host_ports,
			       f->sum.unnamed, f->sum.dropped);
		goto out;
	}
	gname = tgi_malloc(((size_t)g.nsw + 1) * sizeof(uint32_t));
	if (!gname || gb_groups(&g, gname))
		goto nomem;
	for (i = 0; i < f->ngroups; i++)
		f->groups[i].sname = tgi_strtab_get(&f->strs,
						    f->groups[i].name);
	qsort(f->groups, f->ngroups, sizeof(fgroup), group_cmp);
	f->sum.levels = nlevels;
	f->sum.groups = (unsigned)f->ngroups;
	f->sum.hosts = (unsigned)g.nhosts;

	for (k = nlevels; k > 0; k--) {
		char name[32], key[64];

		snprintf(name, sizeof(name), "switch-l%u", k - 1);
		snprintf(key, sizeof(key), TG_LABEL_TIER_PREFIX "%u", k - 1);
		err = tg_topology_add_layer(t, name, key);
		if (err) {
			err = tgi_errf(ei, err, "cannot add layer %s: %s",
				       name, tg_strerror(err));
			goto out;
		}
	}
	if (sort_ids(&f->strs, g.hosts, g.nhosts))
		goto nomem;
	gp.f = f;
	gp.g = &g;
	gp.gname = gname;
	gp.nlevels = nlevels;
	err = add_hosts(f, t, g.hosts, g.nhosts, nlevels, graph_path, &gp,
			ei);
	goto out;
nomem:
	err = tgi_errf(ei, TG_ENOMEM, "out of memory building the fabric");
out:
	tgi_free(gname);
	gb_free(&g);
	return err;
}

static tg_err build_table(tg_fabric *f, tg_topology *t, tg_errinfo *ei)
{
	uint32_t *order = NULL;
	unsigned k;
	size_t i;
	tg_err err;

	if (!f->nrows)
		return tgi_errf(ei, TG_EINVAL, "%s: no host rows (%u rows: "
				"%u dropped by the host-map rule, %u without "
				"a valid name)", fab_src(f, 0),
				f->sum.host_ports, f->sum.dropped,
				f->sum.unnamed);
	for (k = 0; k < f->nlayers; k++) {
		char key[64];

		snprintf(key, sizeof(key), TG_LABEL_TIER_PREFIX "%u",
			 f->nlayers - 1 - k);
		err = tg_topology_add_layer(t, f->layer_name[k], key);
		if (err)
			return tgi_errf(ei, err, "cannot add layer %s: %s",
					f->layer_name[k], tg_strerror(err));
	}
	order = tgi_malloc(f->nrows * sizeof(uint32_t));
	if (!order)
		return tgi_errf(ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < f->nrows; i++)
		order[i] = f->rows[i].host;
	if (sort_ids(&f->strs, order, f->nrows)) {
		tgi_free(order);
		return tgi_errf(ei, TG_ENOMEM, "out of memory");
	}
	err = add_hosts(f, t, order, f->nrows, f->nlayers, table_path, f, ei);
	tgi_free(order);
	if (err)
		return err;
	f->sum.levels = f->nlayers;
	f->sum.groups = 0;
	return TG_OK;
}

tg_err tg_fabric_build(tg_fabric *f, tg_topology *t, tg_errinfo *ei)
{
	if (!f || !t)
		return tgi_errf(ei, TG_EINVAL, "tg_fabric_build: NULL");
	if (f->failed)
		return tgi_errf(ei, TG_ESTATE, "an input of the fabric failed "
				"to load");
	if (!f->any_input)
		return tgi_errf(ei, TG_EINVAL, "the fabric has no input");
	if (tg_topology_nlayers(t) || tg_topology_nnodes(t))
		return tgi_errf(ei, TG_ESTATE, "the topology already has "
				"layers or nodes");
	if (f->mode == MODE_TABLE)
		return build_table(f, t, ei);
	if (f->mode == MODE_GRAPH)
		return build_graph(f, t, ei);
	/* NVLink domains alone: one layer */
	if (!f->nnvl)
		return tgi_errf(ei, TG_EINVAL, "%s: no compute node with an "
				"NVLink domain", fab_src(f, 0));
	f->sum.levels = 0;
	f->sum.groups = 0;
	return add_hosts(f, t, NULL, 0, 0, NULL, NULL, ei);
}
