/*
 * shared/src/export/export.c - a built topology in the formats its consumers
 * read: Slurm topology.conf (tree and block forms), Kubernetes node labels
 * (kubectl commands, a merge-patch list), the KAI and Kueue Topology and
 * Koordinator ClusterNetworkTopology resources, and a JSON dump; and the
 * comparison of two topologies of the same nodes.
 *
 * Everything walks the built tree (model.h): domains are numbered layer by
 * layer in path order and each covers a contiguous range of the node
 * order, so every output comes in the same order for the same input.
 *
 * topology.conf tree form: a domain whose only child has the same value
 * is the same switch standing on a missing level (as the topology.conf
 * loader builds it) and is written once, at its lowest level; names that
 * two different switches share are written as full paths ("G6_P10_S14").
 * Reading the file back with tg_topoconf_load() gives the same tree.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define EX_MAX_OUT	TG_MAX_FILE	/* bytes of one output */
#define EX_MAX_REPORT	(1u << 20)	/* bytes of a compare report */
#define EX_SHOW_NODES	4		/* nodes named per report line */

typedef struct ex_ctx {
	const tg_topology *t;
	const tg_export_opts *o;
	tg_errinfo *ei;
	tg_buf b;
	char **names;		/* per domain: its topology.conf name */
} ex_ctx;

/* ---- label keys and values ---------------------------------------------- */

static bool ex_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

const char *tg_export_label_value(const char *value, char *buf)
{
	size_t n, i;
	bool ok;

	if (!value || !buf)
		return NULL;
	n = strlen(value);
	ok = n <= 63;
	if (ok && n)
		ok = ex_alnum(value[0]) && ex_alnum(value[n - 1]);
	for (i = 0; ok && i < n; i++)
		ok = ex_alnum(value[i]) || value[i] == '-' ||
		     value[i] == '_' || value[i] == '.';
	if (ok)
		return value;
	snprintf(buf, 64, "x%016llx",
		 (unsigned long long)tgi_hash(value, n));
	return buf;
}

static bool ex_accel_name(const char *s)
{
	static const char *const words[] = {
		"nvlink", "accelerator", "clique", "nvl", "imex"
	};
	char low[2 * TG_MAX_NAME + 2];
	size_t i;

	for (i = 0; s[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' :
				s[i]);
	low[i] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/* "block16": a layer Slurm derives from BlockSizes. */
static bool ex_block_aggregate(const char *name)
{
	size_t i;

	if (strncmp(name, "block", 5) != 0 || !name[5])
		return false;
	for (i = 5; name[i]; i++)
		if (name[i] < '0' || name[i] > '9')
			return false;
	return true;
}

static bool ex_accel_layer(const tg_topology *t, unsigned l)
{
	const char *name = t->layer_name[l];

	if (l + 1 != t->nlayers)
		return false;
	return strcmp(name, "block") == 0 || ex_accel_name(name);
}

const char *tg_export_label_key(const tg_topology *t, unsigned layer,
				const tg_export_opts *o, char *buf,
				size_t len)
{
	unsigned l, tier = 0;

	if (!t || layer >= t->nlayers || !buf || !len)
		return NULL;
	if (o && o->keys && o->nkeys == t->nlayers)
		return o->keys[layer];
	if (t->layer_key[layer])
		return t->layer_key[layer];
	if (ex_accel_layer(t, layer))
		return TG_LABEL_ACCEL;
	if (ex_block_aggregate(t->layer_name[layer]))
		return NULL;
	for (l = layer + 1; l < t->nlayers; l++)
		if (!t->layer_key[l] && !ex_accel_layer(t, l) &&
		    !ex_block_aggregate(t->layer_name[l]))
			tier++;
	snprintf(buf, len, TG_LABEL_TIER_PREFIX "%u", tier);
	return buf;
}

/* Keys of every layer into keys[] (NULL = left out); TG_EINVAL when two
 * layers would write one key. */
static tg_err ex_keys(ex_ctx *c, char (*kb)[TG_MAX_NAME + 1],
		      const char **keys)
{
	const tg_topology *t = c->t;
	unsigned l, m;

	if (c->o && c->o->keys && c->o->nkeys != t->nlayers)
		return tgi_errf(c->ei, TG_EINVAL, "%u label keys for %u "
				"layers", c->o->nkeys, t->nlayers);
	for (l = 0; l < t->nlayers; l++) {
		keys[l] = tg_export_label_key(t, l, c->o, kb[l],
					      TG_MAX_NAME + 1);
		for (m = 0; keys[l] && m < l; m++)
			if (keys[m] && strcmp(keys[m], keys[l]) == 0)
				return tgi_errf(c->ei, TG_EINVAL, "layers %s "
						"and %s would both be written "
						"as label %s",
						t->layer_name[m],
						t->layer_name[l], keys[l]);
	}
	return TG_OK;
}

/* ex_keys() for the writers that label nodes: TG_EINVAL when no layer has
 * a key (nothing to write). */
static tg_err ex_keys_some(ex_ctx *c, char (*kb)[TG_MAX_NAME + 1],
			   const char **keys)
{
	tg_err err = ex_keys(c, kb, keys);
	unsigned l;

	if (err)
		return err;
	for (l = 0; l < c->t->nlayers; l++)
		if (keys[l])
			return TG_OK;
	return tgi_errf(c->ei, TG_EINVAL, "no layer has a label key: "
			"nothing to write");
}

/* ---- shared walks ------------------------------------------------------- */

static const char *dom_value(const tg_topology *t, uint32_t d)
{
	return tgi_strtab_get(&t->strs, t->dom[d].value);
}

static const char *node_name(const tg_topology *t, uint32_t pos)
{
	return tgi_strtab_get(&t->strs, t->name[t->order[pos]]);
}

/* A domain that only repeats its single child (the same switch on a
 * missing level). */
static bool dom_repeat(const tg_topology *t, uint32_t d)
{
	const tgi_domain *dd = &t->dom[d];

	return dd->layer + 1 < t->nlayers && dd->nchild == 1 &&
	       t->dom[dd->child0].value == dd->value;
}

/* The lowest domain of a repeat chain. */
static uint32_t dom_bottom(const tg_topology *t, uint32_t d)
{
	while (dom_repeat(t, d))
		d = t->dom[d].child0;
	return d;
}

/* A name topology.conf can hold: no blank, '/', ',', '[', ']', '=', '#',
 * quote or control byte. */
static bool ex_conf_name_ok(const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= ' ' || ch == 0x7f || strchr("/,[]=#\"\\", ch))
			return false;
	}
	return true;
}

/* The full path of a domain, '_' between the values; a repeat (the
 * same switch on a missing level) counts once. */
static char *ex_qualified(const tg_topology *t, uint32_t d)
{
	uint32_t chain[TG_MAX_LAYERS + 1];
	unsigned n = 0, i;
	tg_buf b;

	for (; d && n <= TG_MAX_LAYERS; d = t->dom[d].parent)
		chain[n++] = d;
	tg_buf_init(&b, (TG_MAX_NAME + 1) * (TG_MAX_LAYERS + 1));
	for (i = n; i > 0; i--) {
		uint32_t x = chain[i - 1];

		if (i > 1 && dom_repeat(t, x))
			continue;
		if (b.len)
			tg_buf_add(&b, "_", 1);
		tg_buf_adds(&b, dom_value(t, x));
	}
	return tg_buf_take(&b);
}

/*
 * Names every domain of layers [0, upto] for topology.conf: bare values,
 * except on a layer where some value is not unique among the written
 * switches (Crux's ToR names repeat under every aggregation switch):
 * there every domain gets its qualified path.  A repeat takes its
 * bottom's name.
 */
static tg_err ex_names(ex_ctx *c, unsigned upto, const char *what)
{
	const tg_topology *t = c->t;
	uint32_t *count = NULL, d, hi = t->layer_hi[upto];
	bool qualify[TG_MAX_LAYERS];
	tgi_strtab seen;
	unsigned l;
	tg_err err = TG_OK;

	c->names = tgi_calloc(t->ndom, sizeof(char *));
	count = tgi_calloc(t->strs.n + 1, sizeof(uint32_t));
	tgi_strtab_init(&seen);
	if (!c->names || !count) {
		err = tgi_errf(c->ei, TG_ENOMEM, "out of memory");
		goto out;
	}
	for (d = 1; d < hi; d++)
		if (!dom_repeat(t, d) || t->dom[d].layer == upto)
			count[t->dom[d].value]++;
	for (l = 0; l <= upto; l++) {
		qualify[l] = false;
		for (d = t->layer_lo[l]; d < t->layer_hi[l]; d++)
			if ((!dom_repeat(t, d) || l == upto) &&
			    count[t->dom[d].value] > 1)
				qualify[l] = true;
	}
	for (d = hi; d > 1; d--) {
		uint32_t x = d - 1;
		uint32_t bot = t->dom[x].layer == upto ? x : dom_bottom(t, x);

		if (bot != x)
			c->names[x] = tgi_strdup(c->names[bot]);
		else if (qualify[t->dom[x].layer])
			c->names[x] = ex_qualified(t, x);
		else
			c->names[x] = tgi_strdup(dom_value(t, x));
		if (!c->names[x]) {
			err = tgi_errf(c->ei, TG_ENOMEM, "out of memory");
			goto out;
		}
		if (strlen(c->names[x]) > TG_MAX_NAME) {
			err = tgi_errf(c->ei, TG_ELIMIT, "%s '%.60s...' (%s) "
				       "cannot be written to topology.conf: "
				       "its name with its path is %zu bytes, "
				       "longer than %d (TG_MAX_NAME)", what,
				       c->names[x], t->dom[x].path,
				       strlen(c->names[x]), TG_MAX_NAME);
			goto out;
		}
		if (!ex_conf_name_ok(c->names[x])) {
			err = tgi_errf(c->ei, TG_EINVAL, "%s '%s' (%s) cannot "
				       "be written to topology.conf: it "
				       "contains a blank or one of "
				       "/,[]=#\"\\", what, c->names[x],
				       t->dom[x].path);
			goto out;
		}
	}
	/* qualified names must not collide with anything either */
	for (d = 1; d < hi; d++) {
		uint32_t id;
		size_t before = seen.n;

		if (dom_repeat(t, d) && t->dom[d].layer != upto)
			continue;
		if (tgi_strtab_intern(&seen, c->names[d], &id)) {
			err = tgi_errf(c->ei, TG_ENOMEM, "out of memory");
			goto out;
		}
		if (seen.n == before) {
			err = tgi_errf(c->ei, TG_EEXIST, "%s names collide: "
				       "two would both be written as '%s' "
				       "(one is %s)", what, c->names[d],
				       t->dom[d].path);
			goto out;
		}
	}
out:
	tgi_free(count);
	tgi_strtab_free(&seen);
	return err;
}

static void ex_names_free(ex_ctx *c)
{
	size_t d;

	if (!c->names)
		return;
	for (d = 0; d < c->t->ndom; d++)
		tgi_free(c->names[d]);
	tgi_free(c->names);
	c->names = NULL;
}

/* Appends the compressed hostlist of node positions [lo, hi). */
static tg_err ex_nodes(ex_ctx *c, uint32_t lo, uint32_t hi)
{
	const char **names;
	char *hl;
	uint32_t i;

	names = tgi_malloc(((size_t)(hi - lo) + 1) * sizeof(char *));
	if (!names)
		return c->b.err = TG_ENOMEM;
	for (i = lo; i < hi; i++)
		names[i - lo] = node_name(c->t, i);
	hl = tg_hostlist_compress(names, hi - lo);
	tgi_free(names);
	if (!hl)
		return c->b.err = TG_ENOMEM;
	tg_buf_adds(&c->b, hl);
	tgi_free(hl);
	return c->b.err;
}

/* Comment lines naming the nodes outside the tree. */
static void ex_outside(ex_ctx *c, const char *lead)
{
	const tg_topology *t = c->t;

	if (t->ntree == t->nnodes)
		return;
	tg_buf_addf(&c->b, "%s%zu node%s outside the tree (missing "
		     "labels or switches): ", lead, t->nnodes - t->ntree,
		     t->nnodes - t->ntree == 1 ? "" : "s");
	ex_nodes(c, (uint32_t)t->ntree, (uint32_t)t->nnodes);
	tg_buf_add(&c->b, "\n", 1);
}

/* ---- topology.conf ------------------------------------------------------ */

static tg_err ex_tree(ex_ctx *c)
{
	const tg_topology *t = c->t;
	unsigned l;
	uint32_t d, k;
	tg_err err;

	err = ex_names(c, t->nlayers - 1, "switch");
	if (err)
		return err;
	tg_buf_addf(&c->b, "# topology.conf (tree) written by topogang: "
		     "%zu nodes, %u switch level%s\n", t->ntree, t->nlayers,
		     t->nlayers == 1 ? "" : "s");
	ex_outside(c, "# ");
	for (l = 0; l < t->nlayers; l++) {
		for (d = t->layer_lo[l]; d < t->layer_hi[l]; d++) {
			const tgi_domain *dd = &t->dom[d];

			if (dom_repeat(t, d))
				continue;
			tg_buf_addf(&c->b, "SwitchName=%s ", c->names[d]);
			if (l + 1 == t->nlayers) {
				tg_buf_adds(&c->b, "Nodes=");
				ex_nodes(c, dd->lo, dd->hi);
			} else {
				const char **kids;
				char *hl;

				kids = tgi_malloc(((size_t)dd->nchild + 1) *
						  sizeof(char *));
				if (!kids)
					return tgi_errf(c->ei, TG_ENOMEM,
							"out of memory");
				for (k = 0; k < dd->nchild; k++)
					kids[k] = c->names[dd->child0 + k];
				hl = tg_hostlist_compress(kids, dd->nchild);
				tgi_free(kids);
				if (!hl)
					return tgi_errf(c->ei, TG_ENOMEM,
							"out of memory");
				tg_buf_addf(&c->b, "Switches=%s", hl);
				tgi_free(hl);
			}
			tg_buf_add(&c->b, "\n", 1);
		}
	}
	return TG_OK;
}

static unsigned ex_pow2(unsigned v)
{
	unsigned p = 1;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

/* One BlockName= line per block of \p bl; aligned, each domain of the
 * layer above gets \p g consecutive blocks, placeholders ("padN", a new
 * name) after its own. */
static tg_err ex_block_lines(ex_ctx *c, unsigned bl, unsigned g, bool align)
{
	const tg_topology *t = c->t;
	uint32_t d, p, lo = t->layer_lo[bl], hi = t->layer_hi[bl];
	unsigned k, pad = 0;

	if (!align) {
		for (d = lo; d < hi; d++) {
			tg_buf_addf(&c->b, "BlockName=%s Nodes=",
				     c->names[d]);
			ex_nodes(c, t->dom[d].lo, t->dom[d].hi);
			tg_buf_add(&c->b, "\n", 1);
		}
		return TG_OK;
	}
	for (p = t->layer_lo[bl - 1]; p < t->layer_hi[bl - 1]; p++) {
		const tgi_domain *pd = &t->dom[p];

		for (k = 0; k < g; k++) {
			char pname[32];

			if (k < pd->nchild) {
				d = pd->child0 + k;
				tg_buf_addf(&c->b, "BlockName=%s Nodes=",
					     c->names[d]);
				ex_nodes(c, t->dom[d].lo, t->dom[d].hi);
				tg_buf_add(&c->b, "\n", 1);
				continue;
			}
			/* a placeholder; its name must be new */
			snprintf(pname, sizeof(pname), "pad%u", ++pad);
			for (d = lo; d < hi; d++)
				if (strcmp(c->names[d], pname) == 0)
					return tgi_errf(c->ei, TG_EEXIST,
							"block '%s' clashes "
							"with a placeholder "
							"name", pname);
			tg_buf_addf(&c->b, "BlockName=%s\n", pname);
		}
	}
	return TG_OK;
}

/* BlockSizes: the options' (checked), else topograph's inference from
 * the smallest block (\p minsz nodes) and \p total blocks. */
static tg_err ex_block_sizes(ex_ctx *c, unsigned minsz, unsigned total,
			     unsigned *sizes, unsigned *ns)
{
	const tg_export_opts *o = c->o;
	unsigned i, k = 1;

	*ns = 0;
	if (o && o->block_sizes && o->nblock_sizes) {
		if (o->nblock_sizes > TG_MAX_LAYERS)
			return tgi_errf(c->ei, TG_ELIMIT, "more than %d block "
					"sizes", TG_MAX_LAYERS);
		for (i = 0; i < o->nblock_sizes; i++) {
			unsigned s = o->block_sizes[i];

			if (!s || (i && (s <= sizes[i - 1] ||
					 s % sizes[0] ||
					 ((s / sizes[0]) &
					  (s / sizes[0] - 1)))))
				return tgi_errf(c->ei, TG_EINVAL, "block size "
						"%u: sizes must grow by "
						"power-of-two multiples of the "
						"first", s);
			sizes[(*ns)++] = s;
		}
		return TG_OK;
	}
	sizes[(*ns)++] = minsz ? minsz : 1;
	while (*ns < TG_MAX_LAYERS && k * 2 <= total &&
	       sizes[0] <= (1u << 30) / (k * 2)) {
		k *= 2;
		sizes[(*ns)++] = sizes[0] * k;
	}
	return TG_OK;
}

static tg_err ex_block(ex_ctx *c)
{
	const tg_topology *t = c->t;
	const tg_export_opts *o = c->o;
	unsigned bl = t->nlayers - 1, sizes[TG_MAX_LAYERS], ns = 0, i;
	unsigned g = 1, minsz = 0, nblocks, total;
	uint32_t d, lo, hi;
	bool align = false;
	tg_err err;

	if (o && o->block_layer_set) {
		if (o->block_layer >= t->nlayers)
			return tgi_errf(c->ei, TG_EINVAL, "block layer %u: "
					"the topology has %u layers",
					o->block_layer, t->nlayers);
		bl = o->block_layer;
	}
	lo = t->layer_lo[bl];
	hi = t->layer_hi[bl];
	nblocks = hi - lo;
	err = ex_names(c, bl, "block");
	if (err)
		return err;
	for (d = lo; d < hi; d++) {
		unsigned n = t->dom[d].hi - t->dom[d].lo;

		if (!minsz || n < minsz)
			minsz = n;
	}
	/* alignment with the layer above: pad every parent to g blocks */
	if (bl > 0 && !(o && o->no_pad) &&
	    !ex_block_aggregate(t->layer_name[bl - 1]) &&
	    t->layer_hi[bl - 1] - t->layer_lo[bl - 1] > 1) {
		for (d = t->layer_lo[bl - 1]; d < t->layer_hi[bl - 1]; d++)
			if (ex_pow2(t->dom[d].nchild) > g)
				g = ex_pow2(t->dom[d].nchild);
		align = g > 1;
	}
	total = nblocks;
	if (align)
		total = g * (t->layer_hi[bl - 1] - t->layer_lo[bl - 1]);
	err = ex_block_sizes(c, minsz, total, sizes, &ns);
	if (err)
		return err;
	tg_buf_addf(&c->b, "# topology.conf (block) written by topogang: "
		     "%zu nodes in %u blocks of layer %s\n", t->ntree, nblocks,
		     t->layer_name[bl]);
	if (align)
		tg_buf_addf(&c->b, "# each %s gets %u consecutive blocks "
			     "(empty ones added) so that blocks of %u nodes "
			     "line up with it\n", t->layer_name[bl - 1], g,
			     sizes[0] * g);
	ex_outside(c, "# ");
	err = ex_block_lines(c, bl, g, align);
	if (err)
		return err;
	tg_buf_adds(&c->b, "BlockSizes=");
	for (i = 0; i < ns; i++)
		tg_buf_addf(&c->b, "%s%u", i ? "," : "", sizes[i]);
	tg_buf_add(&c->b, "\n", 1);
	return TG_OK;
}

/* ---- Kubernetes --------------------------------------------------------- */


/* A JSON string literal. */
static void ex_json(tg_buf *b, const char *s)
{
	tg_buf_add_json(b, s);
}

/* The domain of node position \p pos on layer \p l. */
static uint32_t ex_dom_at(const tg_topology *t, uint32_t pos, unsigned l)
{
	uint32_t d = t->leaf[t->order[pos]];

	while (d != TG_NONE && d && t->dom[d].layer > l)
		d = t->dom[d].parent;
	return d;
}

static tg_err ex_labels(ex_ctx *c, bool patch)
{
	const tg_topology *t = c->t;
	char kb[TG_MAX_LAYERS][TG_MAX_NAME + 1];
	const char *keys[TG_MAX_LAYERS];
	uint32_t pos;
	unsigned l;
	tg_err err;

	err = ex_keys_some(c, kb, keys);
	if (err)
		return err;
	if (patch)
		tg_buf_adds(&c->b, "[");
	else {
		tg_buf_adds(&c->b, "# node labels written by topogang:");
		for (l = 0; l < t->nlayers; l++)
			if (keys[l])
				tg_buf_addf(&c->b, " %s", keys[l]);
		tg_buf_add(&c->b, "\n", 1);
		ex_outside(c, "# not labelled: ");
	}
	for (pos = 0; pos < t->ntree; pos++) {
		bool first = true;

		if (patch) {
			tg_buf_adds(&c->b, pos ? ",\n {\"name\": " :
				     "\n {\"name\": ");
			ex_json(&c->b, node_name(t, pos));
			tg_buf_adds(&c->b, ", \"patch\": {\"metadata\": "
				     "{\"labels\": {");
		} else {
			tg_buf_adds(&c->b, "kubectl label node ");
			tgi_buf_shell(&c->b, "._-/=:,@+", node_name(t, pos));
			tg_buf_adds(&c->b, " --overwrite");
		}
		for (l = 0; l < t->nlayers; l++) {
			char vb[64];
			const char *v;

			if (!keys[l])
				continue;
			v = tg_export_label_value(dom_value(t,
						ex_dom_at(t, pos, l)), vb);
			if (patch) {
				if (!first)
					tg_buf_adds(&c->b, ", ");
				ex_json(&c->b, keys[l]);
				tg_buf_adds(&c->b, ": ");
				ex_json(&c->b, v);
			} else {
				char kv[2 * TG_MAX_NAME + 2];

				snprintf(kv, sizeof(kv), "%s=%s", keys[l], v);
				tg_buf_add(&c->b, " ", 1);
				tgi_buf_shell(&c->b, "._-/=:,@+", kv);
			}
			first = false;
		}
		if (patch)
			tg_buf_adds(&c->b, "}}}}");
		else
			tg_buf_add(&c->b, "\n", 1);
		if (c->b.err)
			break;
	}
	if (patch)
		tg_buf_adds(&c->b, "\n]\n");
	return TG_OK;
}

/* "switch-l1" -> "SwitchL1Layer"; names ending in "Layer" stay. */
static void ex_camel(const char *name, char *out, size_t cap)
{
	size_t n = strlen(name), k = 0;
	bool up = true;

	if (n >= 5 && strcmp(name + n - 5, "Layer") == 0 && n < cap) {
		memcpy(out, name, n + 1);
		return;
	}
	for (; *name && k + 6 < cap; name++) {
		char ch = *name;

		if (!ex_alnum(ch)) {
			up = true;
			continue;
		}
		if (up && ch >= 'a' && ch <= 'z')
			ch = (char)(ch - 'a' + 'A');
		up = false;
		out[k++] = ch;
	}
	memcpy(out + k, "Layer", 6);
}

static tg_err ex_crd(ex_ctx *c, tg_export_format fmt)
{
	const tg_topology *t = c->t;
	char kb[TG_MAX_LAYERS][TG_MAX_NAME + 1];
	const char *keys[TG_MAX_LAYERS];
	const char *name = c->o && c->o->name ? c->o->name : "default";
	unsigned l;
	tg_err err;

	err = ex_keys_some(c, kb, keys);
	if (err)
		return err;
	if (fmt == TG_EXPORT_KOORDINATOR) {
		char parent[TG_MAX_NAME + 8] = "ClusterTopologyLayer";

		tg_buf_addf(&c->b, "apiVersion: scheduling.koordinator.sh/"
			     "v1alpha1\nkind: ClusterNetworkTopology\n"
			     "metadata:\n  name: %s\nspec:\n"
			     "  networkTopologySpec:\n", name);
		for (l = 0; l < t->nlayers; l++) {
			char layer[TG_MAX_NAME + 8];

			if (!keys[l])
				continue;
			ex_camel(t->layer_name[l], layer, sizeof(layer));
			tg_buf_addf(&c->b, "  - topologyLayer: %s\n"
				     "    parentTopologyLayer: %s\n"
				     "    labelKey:\n    - %s\n", layer, parent,
				     keys[l]);
			memcpy(parent, layer, strlen(layer) + 1);
		}
		tg_buf_addf(&c->b, "  - topologyLayer: NodeTopologyLayer\n"
			     "    parentTopologyLayer: %s\n", parent);
		return TG_OK;
	}
	tg_buf_addf(&c->b, "apiVersion: %s\nkind: Topology\nmetadata:\n"
		     "  name: %s\nspec:\n  levels:\n",
		     fmt == TG_EXPORT_KAI_TOPOLOGY ? "kai.scheduler/v1alpha1" :
		     "kueue.x-k8s.io/v1beta2", name);
	for (l = 0; l < t->nlayers; l++)
		if (keys[l])
			tg_buf_addf(&c->b, "  - nodeLabel: %s\n", keys[l]);
	tg_buf_adds(&c->b, "  - nodeLabel: " TG_LABEL_HOSTNAME "\n");
	return TG_OK;
}

static tg_err ex_model_json(ex_ctx *c)
{
	const tg_topology *t = c->t;
	char kb[TG_MAX_LAYERS][TG_MAX_NAME + 1];
	const char *keys[TG_MAX_LAYERS];
	unsigned l;
	uint32_t pos, d;
	tg_err err;

	err = ex_keys(c, kb, keys);
	if (err)
		return err;
	tg_buf_adds(&c->b, "{\"layers\": [");
	for (l = 0; l < t->nlayers; l++) {
		tg_buf_adds(&c->b, l ? ", {\"name\": " : "{\"name\": ");
		ex_json(&c->b, t->layer_name[l]);
		tg_buf_adds(&c->b, ", \"key\": ");
		if (keys[l])
			ex_json(&c->b, keys[l]);
		else
			tg_buf_adds(&c->b, "null");
		tg_buf_addf(&c->b, ", \"domains\": %u}",
			     t->layer_hi[l] - t->layer_lo[l]);
	}
	tg_buf_adds(&c->b, "],\n \"domains\": [");
	for (d = 1; d < t->ndom; d++) {
		tg_buf_adds(&c->b, d > 1 ? ",\n  {\"path\": " :
			     "\n  {\"path\": ");
		ex_json(&c->b, t->dom[d].path);
		tg_buf_addf(&c->b, ", \"layer\": ");
		ex_json(&c->b, t->layer_name[t->dom[d].layer]);
		tg_buf_addf(&c->b, ", \"nodes\": %u}",
			     t->dom[d].hi - t->dom[d].lo);
	}
	tg_buf_adds(&c->b, "],\n \"nodes\": [");
	for (pos = 0; pos < t->nnodes; pos++) {
		uint32_t n = t->order[pos];

		tg_buf_adds(&c->b, pos ? ",\n  {\"name\": " :
			     "\n  {\"name\": ");
		ex_json(&c->b, node_name(t, pos));
		tg_buf_adds(&c->b, ", \"path\": ");
		if (t->leaf[n] == TG_NONE)
			tg_buf_adds(&c->b, "null");
		else
			ex_json(&c->b, t->dom[t->leaf[n]].path);
		if (t->ngpus[n])
			tg_buf_addf(&c->b, ", \"gpus\": %u", t->ngpus[n]);
		tg_buf_adds(&c->b, "}");
		if (c->b.err)
			break;
	}
	tg_buf_adds(&c->b, "],\n \"warnings\": [");
	for (d = 0; d < t->nwarn; d++) {
		tg_buf_adds(&c->b, d ? ",\n  " : "\n  ");
		ex_json(&c->b, t->warn[d]);
	}
	tg_buf_adds(&c->b, "]}\n");
	return TG_OK;
}

tg_err tg_export(const tg_topology *t, tg_export_format fmt,
		 const tg_export_opts *opts, char **out, tg_errinfo *ei)
{
	ex_ctx c;
	tg_err err;

	if (!out)
		return tgi_errf(ei, TG_EINVAL, "tg_export: NULL");
	*out = NULL;
	if (!t)
		return tgi_errf(ei, TG_EINVAL, "tg_export: NULL");
	if (!t->built)
		return tgi_errf(ei, TG_ESTATE, "tg_export: the topology is "
				"not built");
	if (fmt != TG_EXPORT_JSON && (!t->nlayers || !t->ntree))
		return tgi_errf(ei, TG_EINVAL, "the topology has %s: nothing "
				"to write", t->nlayers ? "no node in its tree" :
				"no layers");
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.o = opts;
	c.ei = ei;
	tg_buf_init(&c.b, EX_MAX_OUT);
	switch (fmt) {
	case TG_EXPORT_SLURM_TREE:
		err = ex_tree(&c);
		break;
	case TG_EXPORT_SLURM_BLOCK:
		err = ex_block(&c);
		break;
	case TG_EXPORT_K8S_LABELS:
	case TG_EXPORT_K8S_PATCH:
		err = ex_labels(&c, fmt == TG_EXPORT_K8S_PATCH);
		break;
	case TG_EXPORT_KAI_TOPOLOGY:
	case TG_EXPORT_KUEUE_TOPOLOGY:
	case TG_EXPORT_KOORDINATOR:
		err = ex_crd(&c, fmt);
		break;
	case TG_EXPORT_JSON:
		err = ex_model_json(&c);
		break;
	default:
		err = tgi_errf(ei, TG_EINVAL, "tg_export: unknown format %d",
			       (int)fmt);
		break;
	}
	ex_names_free(&c);
	if (!err && c.b.err)
		err = tgi_errf(ei, c.b.err, c.b.err == TG_ELIMIT ?
			       "the output is larger than %u bytes" :
			       "out of memory writing the output",
			       EX_MAX_OUT);
	if (err) {
		tg_buf_free(&c.b);
		return err;
	}
	*out = tg_buf_take(&c.b);
	if (!*out)
		return tgi_errf(ei, TG_ENOMEM, "out of memory");
	return TG_OK;
}

/* ---- comparison --------------------------------------------------------- */

typedef struct cmp_ctx {
	const tg_topology *t[2];
	const char *what[2];
	tg_buf b;
	unsigned ndiff;
	uint32_t *other[2];	/* node id on one side -> on the other */
	uint64_t *pairs;
} cmp_ctx;

static void cmp_line(cmp_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void cmp_line(cmp_ctx *c, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	c->ndiff++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->b.len + strlen(line) + 1 > EX_MAX_REPORT - 64) {
		if (c->b.len + 32 < EX_MAX_REPORT)
			tg_buf_adds(&c->b, "... (report cut)\n");
		c->b.max = c->b.len;	/* later lines are dropped */
		return;
	}
	tg_buf_adds(&c->b, line);
	tg_buf_add(&c->b, "\n", 1);
}

/* Node names (ids on side \p s): "a, b, c and 12 more". */
static void cmp_names(char *out, size_t cap, const tg_topology *t,
		      const uint32_t *ids, size_t n)
{
	size_t i, k = 0;

	out[0] = '\0';
	for (i = 0; i < n && i < EX_SHOW_NODES; i++) {
		int w = snprintf(out + k, cap - k, "%s%s", i ? ", " : "",
				 tgi_strtab_get(&t->strs, t->name[ids[i]]));

		if (w < 0 || (size_t)w >= cap - k)
			return;
		k += (size_t)w;
	}
	if (n > EX_SHOW_NODES)
		snprintf(out + k, cap - k, " and %zu more",
			 n - EX_SHOW_NODES);
}

/* The layer-\p l domain of node \p n (TG_NONE outside the tree). */
static uint32_t cmp_dom(const tg_topology *t, uint32_t n, unsigned l)
{
	uint32_t d = t->leaf[n];

	if (d == TG_NONE)
		return TG_NONE;
	while (d && t->dom[d].layer > l)
		d = t->dom[d].parent;
	return d;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Side \p s, its layer la against the other side's layer lb: a domain
 * whose common nodes the other side spreads over several domains is one
 * line.
 */
static void cmp_layer(cmp_ctx *c, int s, unsigned la, unsigned lb)
{
	const tg_topology *a = c->t[s], *b = c->t[1 - s];
	uint32_t d, pos, ids[EX_SHOW_NODES];

	for (d = a->layer_lo[la]; d < a->layer_hi[la]; d++) {
		char line[900];
		size_t np = 0, i, k = 0, parts = 0;

		for (pos = a->dom[d].lo; pos < a->dom[d].hi; pos++) {
			uint32_t n = a->order[pos], m = c->other[s][n], bd;

			if (m == TG_NONE)
				continue;
			bd = cmp_dom(b, m, lb);
			if (bd == TG_NONE)
				continue;
			c->pairs[np++] = (uint64_t)bd << 32 | m;
		}
		qsort(c->pairs, np, sizeof(uint64_t), cmp_u64);
		for (i = 0; i < np; i++)
			parts += !i || c->pairs[i] >> 32 !=
				       c->pairs[i - 1] >> 32;
		if (parts < 2)
			continue;
		k = (size_t)snprintf(line, sizeof(line), "%s: %s %s holds "
				     "nodes that %s puts in %zu %s domains:",
				     a->layer_name[la], c->what[s],
				     a->dom[d].path, c->what[1 - s], parts,
				     b->layer_name[lb]);
		for (i = 0; i < np && k < sizeof(line);) {
			uint32_t bd = (uint32_t)(c->pairs[i] >> 32);
			size_t j = i, nn = 0;
			char names[300];

			while (j < np && c->pairs[j] >> 32 == bd) {
				if (nn < EX_SHOW_NODES)
					ids[nn] = (uint32_t)c->pairs[j];
				nn++;
				j++;
			}
			cmp_names(names, sizeof(names), b, ids,
				  TG_MIN(nn, (size_t)EX_SHOW_NODES));
			if (nn > EX_SHOW_NODES) {
				size_t l = strlen(names);

				snprintf(names + l, sizeof(names) - l,
					 " and %zu more", nn - EX_SHOW_NODES);
			}
			k += (size_t)snprintf(line + k, sizeof(line) - k,
					      "%s %s (%s)", i ? ";" : "",
					      b->dom[bd].path, names);
			i = j;
		}
		cmp_line(c, "%s", line);
	}
}

/* Nodes of side \p s that the other side lacks (or leaves out). */
static tg_err cmp_missing(cmp_ctx *c, int s, bool tree)
{
	const tg_topology *a = c->t[s], *b = c->t[1 - s];
	const char **names;
	size_t n = 0;
	uint32_t pos;
	char *hl;

	names = tgi_malloc((a->nnodes + 1) * sizeof(char *));
	if (!names)
		return TG_ENOMEM;
	for (pos = 0; pos < a->nnodes; pos++) {
		uint32_t x = a->order[pos], m = c->other[s][x];

		if (!tree && m == TG_NONE)
			names[n++] = tgi_strtab_get(&a->strs, a->name[x]);
		if (tree && m != TG_NONE && a->leaf[x] != TG_NONE &&
		    b->leaf[m] == TG_NONE)
			names[n++] = tgi_strtab_get(&a->strs, a->name[x]);
	}
	if (n) {
		hl = tg_hostlist_compress(names, (unsigned)n);
		if (!hl) {
			tgi_free(names);
			return TG_ENOMEM;
		}
		if (tree)
			cmp_line(c, "%zu node%s in %s's tree %s outside %s's "
				 "tree: %.600s%s", n, n == 1 ? "" : "s",
				 c->what[s], n == 1 ? "is" : "are",
				 c->what[1 - s], hl,
				 strlen(hl) > 600 ? "..." : "");
		else
			cmp_line(c, "%zu node%s only in %s: %.600s%s", n,
				 n == 1 ? "" : "s", c->what[s], hl,
				 strlen(hl) > 600 ? "..." : "");
		tgi_free(hl);
	}
	tgi_free(names);
	return TG_OK;
}

tg_err tg_topology_compare(const tg_topology *a, const char *what_a,
			   const tg_topology *b, const char *what_b,
			   char **report, unsigned *ndiff, tg_errinfo *ei)
{
	cmp_ctx c;
	unsigned k, nm;
	int s;
	uint32_t n;
	tg_err err = TG_ENOMEM;

	if (!report || !ndiff)
		return tgi_errf(ei, TG_EINVAL, "tg_topology_compare: NULL");
	*report = NULL;
	*ndiff = 0;
	if (!a || !b)
		return tgi_errf(ei, TG_EINVAL, "tg_topology_compare: NULL");
	if (!a->built || !b->built)
		return tgi_errf(ei, TG_ESTATE, "tg_topology_compare: build "
				"both topologies first");
	memset(&c, 0, sizeof(c));
	c.t[0] = a;
	c.t[1] = b;
	c.what[0] = what_a ? what_a : "the first";
	c.what[1] = what_b ? what_b : "the second";
	tg_buf_init(&c.b, EX_MAX_REPORT);
	c.other[0] = tgi_malloc((a->nnodes + 1) * sizeof(uint32_t));
	c.other[1] = tgi_malloc((b->nnodes + 1) * sizeof(uint32_t));
	c.pairs = tgi_malloc((TG_MAX(a->nnodes, b->nnodes) + 1) *
			     sizeof(uint64_t));
	if (!c.other[0] || !c.other[1] || !c.pairs)
		goto out;
	for (s = 0; s < 2; s++) {
		const tg_topology *x = c.t[s], *y = c.t[1 - s];

		for (n = 0; n < x->nnodes; n++) {
			tg_node_id id;

			c.other[s][n] = TG_NONE;
			if (tg_topology_node_find(y, tgi_strtab_get(&x->strs,
								   x->name[n]),
						  &id) == TG_OK)
				c.other[s][n] = id;
		}
	}
	for (s = 0; s < 2; s++)
		if (cmp_missing(&c, s, false))
			goto out;
	for (s = 0; s < 2; s++)
		if (cmp_missing(&c, s, true))
			goto out;
	if (a->nlayers != b->nlayers) {
		char la[200] = "", lb[200] = "";
		size_t ka = 0, kb = 0;

		for (k = 0; k < a->nlayers && ka < sizeof(la); k++)
			ka += (size_t)snprintf(la + ka, sizeof(la) - ka,
					       "%s%s", k ? " > " : "",
					       a->layer_name[k]);
		for (k = 0; k < b->nlayers && kb < sizeof(lb); k++)
			kb += (size_t)snprintf(lb + kb, sizeof(lb) - kb,
					       "%s%s", k ? " > " : "",
					       b->layer_name[k]);
		cmp_line(&c, "%s has %u layer%s (%s), %s has %u (%s); the "
			 "lowest %u are compared", c.what[0], a->nlayers,
			 a->nlayers == 1 ? "" : "s", la, c.what[1],
			 b->nlayers, lb, TG_MIN(a->nlayers, b->nlayers));
	}
	nm = TG_MIN(a->nlayers, b->nlayers);
	for (k = 0; k < nm; k++) {
		unsigned la = a->nlayers - 1 - k, lb = b->nlayers - 1 - k;

		cmp_layer(&c, 0, la, lb);
		cmp_layer(&c, 1, lb, la);
	}
	if (c.b.err && c.b.err != TG_ELIMIT)
		goto out;
	c.b.err = TG_OK;
	*report = tg_buf_take(&c.b);
	if (!*report)
		goto out;
	*ndiff = c.ndiff;
	err = TG_OK;
out:
	tgi_free(c.other[0]);
	tgi_free(c.other[1]);
	tgi_free(c.pairs);
	tg_buf_free(&c.b);
	if (err)
		return tgi_errf(ei, err, "out of memory comparing the "
				"topologies");
	return TG_OK;
}
