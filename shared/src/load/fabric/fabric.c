/*
 * shared/src/load/fabric/fabric.c - the fabric object: switch trees from
 * fabric discovery (fabric.h).
 *
 * Each input format is one file implementing tgi_fabric_fmt
 * (fabric_int.h) and one row of fab_formats[] below; tg_fabric_add()
 * finds the row, checks that the input's shape goes with what the fabric
 * holds and calls the format's parse().  The formats record what they
 * read through the builder primitives here (devices and links, host
 * rows, NVLink domains); tg_fabric_build() (build.c, graph.c) turns that
 * into layers and nodes.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"

/*
 * The input formats.  A row per format, in no particular order: lookups
 * go by the row's fmt, never by position.  Adding a format: see
 * docs/HACKING-fabric.md.
 */
static const tgi_fabric_fmt *const fab_formats[] = {
	&tgi_fab_ibnetdiscover,
	&tgi_fab_netq,
	&tgi_fab_csv,
	&tgi_fab_netq_nvl,
};

#define FAB_NFORMATS (sizeof(fab_formats) / sizeof(fab_formats[0]))

static const tgi_fabric_fmt *fab_format(tg_fabric_format fmt)
{
	size_t i;

	for (i = 0; i < FAB_NFORMATS; i++)
		if (fab_formats[i]->fmt == fmt)
			return fab_formats[i];
	return NULL;
}

/* ---- small helpers ------------------------------------------------------ */

tg_err tgi_fab_warn(tg_fabric *f, const char *fmt, ...)
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

bool tgi_fab_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

bool tgi_fab_digit(char c)
{
	return c >= '0' && c <= '9';
}

bool tgi_fab_alnum(char c)
{
	return tgi_fab_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A node name the exports can write: [A-Za-z0-9._-], 1..TG_MAX_NAME. */
bool tgi_fab_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > TG_MAX_NAME)
		return false;
	for (i = 0; i < n; i++)
		if (!tgi_fab_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return false;
	return true;
}

/* Copies [s, s + n) into out (cap bytes) for a message, cut with "...". */
const char *tgi_fab_show(const char *s, size_t n, char *out, size_t cap)
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

const char *tgi_fab_src(const tg_fabric *f, uint32_t src)
{
	return src < f->nsrcs ? f->srcs[src] : "?";
}

tg_err tgi_fab_slot(uint32_t **arr, size_t *n, size_t *cap, uint32_t id,
		    uint32_t **slot)
{
	if (id >= *n) {
		size_t old = *n;

		if (tgi_grow(arr, cap, (size_t)id + 1, sizeof(uint32_t)))
			return TG_ENOMEM;
		memset(*arr + old, 0, ((size_t)id + 1 - old) *
		       sizeof(uint32_t));
		*n = (size_t)id + 1;
	}
	*slot = &(*arr)[id];
	return TG_OK;
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

void tgi_fab_groups_free(tg_fabric *f)
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
	tgi_fab_hostmap_free(f);
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
	tgi_fab_groups_free(f);
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

tg_err tgi_fab_dev_get(tg_fabric *f, const char *id, uint32_t src,
		       unsigned line, uint32_t *out)
{
	uint32_t sid, *slot;
	fdev *d;

	if (tgi_strtab_intern(&f->ids, id, &sid) ||
	    tgi_fab_slot(&f->dev_of, &f->ndevof, &f->devofcap, sid, &slot))
		return TG_ENOMEM;
	if (*slot) {
		*out = *slot - 1;
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

tg_err tgi_fab_link_add(tg_fabric *f, uint32_t a, unsigned pa, uint32_t b,
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

tg_err tgi_fab_set_levels(tg_fabric *f, char *const *names, unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++) {
		f->layer_name[k] = tgi_strdup(names[k]);
		if (!f->layer_name[k])
			return TG_ENOMEM;
		f->nlayers = k + 1;
	}
	return TG_OK;
}

tg_err tgi_fab_row_add(tg_fabric *f, uint32_t hid, const uint32_t *path,
		       uint32_t src, unsigned line, const frow **clash)
{
	uint32_t *slot;
	frow *r;

	if (tgi_fab_slot(&f->row_of, &f->nrowof, &f->rowofcap, hid, &slot))
		return TG_ENOMEM;
	if (*slot) {
		const frow *o = &f->rows[*slot - 1];

		if (memcmp(o->path, path, f->nlayers * sizeof(uint32_t)) == 0)
			return TG_OK;	/* the same row again */
		*clash = o;
		return TG_EEXIST;
	}
	if (f->nrows >= TG_MAX_NODES)
		return TG_ELIMIT;
	if (tgi_grow(&f->rows, &f->rowcap, f->nrows + 1, sizeof(frow)))
		return TG_ENOMEM;
	r = &f->rows[f->nrows];
	memset(r, 0, sizeof(*r));
	r->host = hid;
	r->line = line;
	r->src = src;
	memcpy(r->path, path, f->nlayers * sizeof(uint32_t));
	f->row_of[hid] = (uint32_t)++f->nrows;
	return TG_OK;
}

tg_err tgi_fab_nvl_add(tg_fabric *f, uint32_t hid, uint32_t did,
		       unsigned idx, uint32_t src, const fnvl **clash)
{
	uint32_t *slot;
	fnvl *v;

	if (tgi_fab_slot(&f->nvl_of, &f->nnvlof, &f->nvlofcap, hid, &slot))
		return TG_ENOMEM;
	if (*slot) {
		const fnvl *o = &f->nvl[*slot - 1];

		if (o->domain == did)
			return TG_OK;	/* listed twice, same domain */
		*clash = o;
		return TG_EEXIST;
	}
	if (f->nnvl >= TG_MAX_NODES)
		return TG_ELIMIT;
	if (tgi_grow(&f->nvl, &f->nvlcap, f->nnvl + 1, sizeof(fnvl)))
		return TG_ENOMEM;
	v = &f->nvl[f->nnvl];
	memset(v, 0, sizeof(*v));
	v->host = hid;
	v->domain = did;
	v->idx = idx;
	v->src = src;
	f->nvl_of[hid] = (uint32_t)++f->nnvl;
	return TG_OK;
}

/* ---- adding inputs ------------------------------------------------------ */

static const char *shape_name(tgi_fab_shape s, bool plural)
{
	if (s == TGI_FAB_TABLE)
		return plural ? "host tables" : "host table";
	return plural ? "switch graphs" : "switch graph";
}

/* Checks an input against the fabric's state and names its source:
 * *src gets the index of the source name. */
static tg_err add_check(tg_fabric *f, const tgi_fabric_fmt *ff, size_t len,
			const char *source, uint32_t *src, tg_errinfo *ei)
{
	if (f->failed)
		return tgi_errf(ei, TG_ESTATE, "%s: an earlier input failed; "
				"the fabric takes no more", source);
	if (f->shape && ff->shape && f->shape != ff->shape)
		return tgi_errf(ei, TG_ESTATE, "%s: a %s cannot be added to "
				"a fabric read from %s", source,
				shape_name(ff->shape, false),
				shape_name(f->shape, true));
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
	*src = (uint32_t)f->nsrcs++;
	return TG_OK;
}

tg_err tg_fabric_add(tg_fabric *f, tg_fabric_format fmt, const char *buf,
		     size_t len, const char *source, tg_errinfo *ei)
{
	const tgi_fabric_fmt *ff = fab_format(fmt);
	tgi_fab_in in;
	tg_err err;

	if (!source)
		source = ff ? ff->name : "fabric input";
	if (!f || (!buf && len) || !ff)
		return tgi_errf(ei, TG_EINVAL, "%s: bad arguments", source);
	memset(&in, 0, sizeof(in));
	err = add_check(f, ff, len, source, &in.src, ei);
	if (err)
		return err;
	f->any_input = true;
	if (ff->shape)
		f->shape = ff->shape;
	tgi_fab_groups_free(f);
	in.buf = buf ? buf : "";
	in.len = len;
	in.source = source;
	/* the line parsers cut lines in place: they work on a copy */
	if (ff->copy_text) {
		in.text = tgi_malloc(len + 1);
		if (!in.text) {
			f->failed = true;
			return tgi_errf(ei, TG_ENOMEM, "%s: out of memory",
					source);
		}
		if (len)
			memcpy(in.text, buf, len);
		in.text[len] = '\0';
	}
	err = ff->parse(f, &in, ei);
	tgi_free(in.text);
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

const char *tg_fabric_format_name(tg_fabric_format fmt)
{
	const tgi_fabric_fmt *ff = fab_format(fmt);

	return ff ? ff->name : NULL;
}

tg_err tg_fabric_detect(const char *buf, size_t len, tg_fabric_format *fmt)
{
	unsigned best = 0, sure;
	size_t i;

	if (!buf || !fmt)
		return TG_EINVAL;
	if (len > TG_FABRIC_SNIFF_BYTES)
		len = TG_FABRIC_SNIFF_BYTES;
	for (i = 0; i < FAB_NFORMATS; i++) {
		sure = fab_formats[i]->sniff(buf, len);
		if (sure > best) {
			best = sure;
			*fmt = fab_formats[i]->fmt;
		}
	}
	return best ? TG_OK : TG_ENOENT;
}
