/*
 * shared/src/load/yaml_json.c - JSON streams and YAML documents as cJSON trees.
 *
 * YAML goes through libyaml's event parser; a stack of open mappings and
 * sequences builds the tree, so depth costs heap, not C stack, and is
 * bounded (TGI_DOC_MAX_DEPTH).  Scalars resolve by the YAML 1.2 core
 * schema, not 1.1: "yes", "on" and "0777" stay strings and numbers.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "k8s/k8s_internal.h"
#include "topogang/doc.h"

#define TAG_STR		"tag:yaml.org,2002:str"
#define TAG_INT		"tag:yaml.org,2002:int"
#define TAG_FLOAT	"tag:yaml.org,2002:float"
#define TAG_BOOL	"tag:yaml.org,2002:bool"
#define TAG_NULL	"tag:yaml.org,2002:null"
#define TAG_MAP		"tag:yaml.org,2002:map"
#define TAG_SEQ		"tag:yaml.org,2002:seq"

unsigned tgi_json_line(const cJSON *item)
{
	/* numbers from JSON keep their value in valueint */
	if (!item || (cJSON_IsNumber(item) && !item->valuestring) ||
	    item->valueint <= 0)
		return 0;
	return (unsigned)item->valueint;
}

static void set_line(cJSON *item, size_t line)
{
	item->valueint = line < INT32_MAX ? (int)line : 0;
}

/* Line of byte offset \p off, 1-based. */
static unsigned line_of(const char *buf, size_t off)
{
	unsigned line = 1;
	size_t i;

	for (i = 0; i < off; i++)
		if (buf[i] == '\n')
			line++;
	return line;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Quotes up to 20 bytes of \p p for a message, printable ASCII only. */
static void excerpt(const char *p, size_t n, char *out, size_t outsz)
{
	size_t i, o = 0;

	for (i = 0; i < n && i < 20 && o + 1 < outsz; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\n' || c == '\r')
			break;
		out[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[o] = '\0';
}

tg_err tgi_json_parse_stream(const char *buf, size_t len, const char *source,
			     cJSON **out, tg_errinfo *ei)
{
	cJSON *arr, *v;
	size_t off = 0;

	*out = NULL;
	arr = cJSON_CreateArray();
	if (!arr)
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		off = 3;
	for (;;) {
		const char *end = NULL;

		while (off < len && is_space(buf[off]))
			off++;
		if (off >= len)
			break;
		v = cJSON_ParseWithLengthOpts(buf + off, len - off, &end, 0);
		if (!v) {
			size_t at = off;
			char ex[24];

			if (end && end >= buf + off && end <= buf + len)
				at = (size_t)(end - buf);
			excerpt(buf + at, len - at, ex, sizeof(ex));
			cJSON_Delete(arr);
			if (at >= len)
				return tgi_errf(ei, TG_EPARSE,
						"%s:%u: malformed JSON: "
						"unexpected end of input",
						source, line_of(buf, at));
			return tgi_errf(ei, TG_EPARSE,
					"%s:%u: malformed JSON near '%s'",
					source, line_of(buf, at), ex);
		}
		if (!cJSON_AddItemToArray(arr, v)) {
			cJSON_Delete(v);
			cJSON_Delete(arr);
			return tgi_errf(ei, TG_ENOMEM, "%s: out of memory",
					source);
		}
		off = (size_t)(end - buf);
	}
	*out = arr;
	return TG_OK;
}

/* ---- duplicate keys ---------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a;
	const cJSON *y = *(const cJSON *const *)b;

	return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

static tg_err check_keys(const cJSON *node, const char *source,
			 tg_errinfo *ei, unsigned depth)
{
	const cJSON *c;
	const cJSON **keys = NULL;
	size_t n = 0, i;
	tg_err err;

	if (depth > CJSON_NESTING_LIMIT + 1)
		return tgi_errf(ei, TG_ELIMIT, "%s: nested too deeply",
				source);
	if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
		return TG_OK;
	for (c = node->child; c; c = c->next) {
		err = check_keys(c, source, ei, depth + 1);
		if (err)
			return err;
		n++;
	}
	if (!cJSON_IsObject(node) || n < 2)
		return TG_OK;
	keys = tgi_calloc(n, sizeof(*keys));
	if (!keys)
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	for (i = 0, c = node->child; c; c = c->next)
		keys[i++] = c;
	qsort(keys, n, sizeof(*keys), key_cmp);
	for (i = 1; i < n; i++) {
		if (key_cmp(&keys[i - 1], &keys[i]) == 0) {
			unsigned line = tgi_json_line(node);
			const char *k = keys[i]->string ? keys[i]->string : "";

			tgi_free(keys);
			if (line)
				return tgi_errf(ei, TG_EPARSE,
						"%s:%u: duplicate key '%.200s' "
						"in the mapping starting here",
						source, line, k);
			return tgi_errf(ei, TG_EPARSE,
					"%s: duplicate key '%.200s'", source,
					k);
		}
	}
	tgi_free(keys);
	return TG_OK;
}

tg_err tgi_json_check_keys(const cJSON *root, const char *source,
			   tg_errinfo *ei)
{
	return check_keys(root, source, ei, 0);
}

/* ---- YAML -------------------------------------------------------------- */

typedef struct yframe {
	cJSON *node;		/* the open mapping or sequence */
	char *key;		/* a mapping's key waiting for its value */
	size_t key_line;
	uint32_t anchor;	/* anchor id of this node, 0 = none */
} yframe;

typedef struct yctx {
	const char *source;
	tg_errinfo *ei;
	cJSON *docs;		/* the result */
	cJSON *root;		/* the current document's root */
	yframe *stack;
	size_t depth, cap;
	tgi_strtab anchors;	/* names -> ids */
	cJSON **anode;		/* id -> node; NULL while still open */
	size_t nanode;
	size_t alias_nodes;	/* nodes copied by aliases so far */
} yctx;

static bool all_digits(const char *s, const char *set)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr(set, *s))
			return false;
	return true;
}

/* YAML 1.2 core schema resolution of a plain scalar. */
typedef enum ykind { Y_STR, Y_NULL, Y_TRUE, Y_FALSE, Y_INT, Y_FLOAT } ykind;

static bool is_float(const char *s)
{
	const char *p = s;
	bool digits = false;

	if (*p == '+' || *p == '-')
		p++;
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 ||
	    strcmp(p, ".INF") == 0)
		return true;
	if (p == s && (strcmp(p, ".nan") == 0 || strcmp(p, ".NaN") == 0 ||
		       strcmp(p, ".NAN") == 0))
		return true;
	while (*p >= '0' && *p <= '9') {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

static ykind resolve_plain(const char *s)
{
	const char *p = s;

	if (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	    strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0)
		return Y_NULL;
	if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 ||
	    strcmp(s, "TRUE") == 0)
		return Y_TRUE;
	if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 ||
	    strcmp(s, "FALSE") == 0)
		return Y_FALSE;
	if (strncmp(s, "0o", 2) == 0 && all_digits(s + 2, "01234567"))
		return Y_INT;
	if (strncmp(s, "0x", 2) == 0 &&
	    all_digits(s + 2, "0123456789abcdefABCDEF"))
		return Y_INT;
	if (*p == '+' || *p == '-')
		p++;
	if (all_digits(p, "0123456789"))
		return Y_INT;
	if (is_float(s))
		return Y_FLOAT;
	return Y_STR;
}

/* The value of an integer or float scalar (already resolved). */
static double number_value(const char *s, ykind k)
{
	const char *p = s;
	double v = 0, sign = 1;
	unsigned base = 10;

	if (k == Y_FLOAT) {
		cJSON *tmp;

		if (*p == '+' || *p == '-')
			sign = *p++ == '-' ? -1 : 1;
		if (p[0] == '.' && (p[1] == 'i' || p[1] == 'I'))
			return sign * INFINITY;
		if (p[0] == '.' && (p[1] == 'n' || p[1] == 'N'))
			return NAN;
		/* cJSON's reader copes with the locale's decimal point. */
		tmp = cJSON_ParseWithLength(p, strlen(p));
		if (tmp && cJSON_IsNumber(tmp))
			v = tmp->valuedouble;
		else if (p[0] == '.' || p[strlen(p) - 1] == '.') {
			/* ".5" and "5." are not JSON: pad them */
			char pad[80];
			int n = snprintf(pad, sizeof(pad), "0%s0", p);

			cJSON_Delete(tmp);
			tmp = NULL;
			if (n > 0 && (size_t)n < sizeof(pad))
				tmp = cJSON_Parse(pad);
			if (tmp && cJSON_IsNumber(tmp))
				v = tmp->valuedouble;
		}
		cJSON_Delete(tmp);
		return sign * v;
	}
	if (strncmp(p, "0o", 2) == 0) {
		base = 8;
		p += 2;
	} else if (strncmp(p, "0x", 2) == 0) {
		base = 16;
		p += 2;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
	}
	for (; *p; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else
			d = (unsigned)(*p - 'A' + 10);
		v = v * base + d;
	}
	return sign * v;
}

static tg_err yerr(yctx *y, tg_err err, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static tg_err yerr(yctx *y, tg_err err, size_t line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (err == TG_ENOMEM)
		return tgi_errf(y->ei, err, "%s: out of memory", y->source);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tgi_errf(y->ei, err, "%s:%zu: %s", y->source, line, msg);
}

/* Builds the cJSON item of a scalar event. */
static tg_err scalar_item(yctx *y, const yaml_event_t *ev, cJSON **out)
{
	const char *s = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	size_t line = ev->start_mark.line + 1;
	ykind k = Y_STR;
	cJSON *item;

	*out = NULL;
	if (strlen(s) != ev->data.scalar.length)
		return yerr(y, TG_EPARSE, line, "NUL byte in a scalar");
	if (tag && strcmp(tag, "!") != 0) {
		if (strcmp(tag, TAG_STR) == 0) {
			k = Y_STR;
		} else if (strcmp(tag, TAG_INT) == 0 ||
			   strcmp(tag, TAG_FLOAT) == 0 ||
			   strcmp(tag, TAG_BOOL) == 0 ||
			   strcmp(tag, TAG_NULL) == 0) {
			k = resolve_plain(s);
			if ((strcmp(tag, TAG_INT) == 0 && k != Y_INT) ||
			    (strcmp(tag, TAG_FLOAT) == 0 && k != Y_FLOAT &&
			     k != Y_INT) ||
			    (strcmp(tag, TAG_BOOL) == 0 && k != Y_TRUE &&
			     k != Y_FALSE) ||
			    (strcmp(tag, TAG_NULL) == 0 && k != Y_NULL))
				return yerr(y, TG_EPARSE, line,
					    "scalar does not match its tag "
					    "'%.100s'", tag);
		} else {
			return yerr(y, TG_EPARSE, line,
				    "unsupported tag '%.100s'", tag);
		}
	} else if (!tag && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		k = resolve_plain(s);
	}
	switch (k) {
	case Y_NULL:
		item = cJSON_CreateNull();
		break;
	case Y_TRUE:
		item = cJSON_CreateTrue();
		break;
	case Y_FALSE:
		item = cJSON_CreateFalse();
		break;
	case Y_INT:
	case Y_FLOAT:
		item = cJSON_CreateNumber(number_value(s, k));
		if (item) {
			size_t n = strlen(s) + 1;

			item->valuestring = cJSON_malloc(n);
			if (!item->valuestring) {
				cJSON_Delete(item);
				item = NULL;
			} else {
				memcpy(item->valuestring, s, n);
				set_line(item, line);
			}
		}
		*out = item;
		return item ? TG_OK : TG_ENOMEM;
	default:
		item = cJSON_CreateString(s);
		break;
	}
	if (!item)
		return TG_ENOMEM;
	set_line(item, line);
	*out = item;
	return TG_OK;
}

/* Counts nodes of a tree, stopping once past \p limit. */
static size_t count_nodes(const cJSON *n, size_t limit)
{
	size_t c = 1;
	const cJSON *ch;

	for (ch = n->child; ch && c <= limit; ch = ch->next)
		c += count_nodes(ch, limit - c + 1);
	return c;
}

/* Attaches a finished item to the open container, or makes it the root. */
static tg_err attach(yctx *y, cJSON *item, size_t line)
{
	yframe *f;

	if (y->depth == 0) {
		if (y->root) {
			cJSON_Delete(item);
			return yerr(y, TG_EPARSE, line,
				    "more than one root node");
		}
		y->root = item;
		return TG_OK;
	}
	f = &y->stack[y->depth - 1];
	if (cJSON_IsArray(f->node)) {
		cJSON_AddItemToArray(f->node, item);
		return TG_OK;
	}
	if (!f->key) {
		/* item is a key */
		cJSON_Delete(item);
		return yerr(y, TG_EPARSE, line,
			    "a mapping key must be a scalar");
	}
	if (!cJSON_AddItemToObject(f->node, f->key, item)) {
		cJSON_Delete(item);
		return TG_ENOMEM;
	}
	tgi_free(f->key);
	f->key = NULL;
	return TG_OK;
}

static tg_err set_anchor(yctx *y, const yaml_char_t *name, cJSON *node,
			 uint32_t *id, size_t line)
{
	uint32_t a;

	*id = 0;
	if (!name)
		return TG_OK;
	if (tgi_strtab_intern(&y->anchors, (const char *)name, &a))
		return TG_ENOMEM;
	if (a >= TGI_DOC_MAX_ANCHORS)
		return yerr(y, TG_ELIMIT, line, "more than %u anchors",
			    TGI_DOC_MAX_ANCHORS);
	if (a >= y->nanode) {
		size_t cap = y->nanode, i;

		if (tgi_grow(&y->anode, &cap, (size_t)a + 1, sizeof(cJSON *)))
			return TG_ENOMEM;
		for (i = y->nanode; i < cap; i++)
			y->anode[i] = NULL;
		y->nanode = cap;
	}
	y->anode[a] = node;
	*id = a;
	return TG_OK;
}

static tg_err on_scalar(yctx *y, const yaml_event_t *ev)
{
	size_t line = ev->start_mark.line + 1;
	yframe *f = y->depth ? &y->stack[y->depth - 1] : NULL;
	cJSON *item;
	uint32_t id;
	tg_err err;

	if (f && cJSON_IsObject(f->node) && !f->key) {
		/* a mapping key: its text, whatever it resolves to */
		const char *s = (const char *)ev->data.scalar.value;

		if (strlen(s) != ev->data.scalar.length)
			return yerr(y, TG_EPARSE, line,
				    "NUL byte in a key");
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    strcmp(s, "<<") == 0)
			return yerr(y, TG_EPARSE, line,
				    "merge keys (<<) are not supported");
		if (ev->data.scalar.anchor)
			return yerr(y, TG_EPARSE, line,
				    "anchors on keys are not supported");
		f->key = tgi_strdup(s);
		if (!f->key)
			return TG_ENOMEM;
		f->key_line = line;
		return TG_OK;
	}
	err = scalar_item(y, ev, &item);
	if (err)
		return err;
	err = set_anchor(y, ev->data.scalar.anchor, item, &id, line);
	if (err) {
		cJSON_Delete(item);
		return err;
	}
	return attach(y, item, line);
}

static tg_err on_alias(yctx *y, const yaml_event_t *ev)
{
	size_t line = ev->start_mark.line + 1;
	const char *name = (const char *)ev->data.alias.anchor;
	yframe *f = y->depth ? &y->stack[y->depth - 1] : NULL;
	uint32_t a = tgi_strtab_find(&y->anchors, name);
	size_t left = TGI_DOC_MAX_ALIAS_NODES - y->alias_nodes, n;
	cJSON *src, *copy;

	if (f && cJSON_IsObject(f->node) && !f->key)
		return yerr(y, TG_EPARSE, line,
			    "aliases as mapping keys are not supported");
	if (!a || a >= y->nanode)
		return yerr(y, TG_EPARSE, line, "unknown anchor '%.100s'",
			    name);
	src = y->anode[a];
	if (!src)
		return yerr(y, TG_EPARSE, line,
			    "alias '%.100s' refers to a node that contains it",
			    name);
	n = count_nodes(src, left);
	if (n > left)
		return yerr(y, TG_ELIMIT, line,
			    "aliases expand to more than %u nodes",
			    TGI_DOC_MAX_ALIAS_NODES);
	y->alias_nodes += n;
	copy = cJSON_Duplicate(src, 1);
	if (!copy)
		return TG_ENOMEM;
	return attach(y, copy, line);
}

static tg_err on_open(yctx *y, const yaml_event_t *ev, bool map)
{
	size_t line = ev->start_mark.line + 1;
	const yaml_char_t *anchor, *tag;
	yframe *f;
	cJSON *node;
	tg_err err;

	if (map) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	} else {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	}
	if (tag && strcmp((const char *)tag, "!") != 0 &&
	    strcmp((const char *)tag, map ? TAG_MAP : TAG_SEQ) != 0)
		return yerr(y, TG_EPARSE, line, "unsupported tag '%.100s'",
			    (const char *)tag);
	if (y->depth > 0) {
		f = &y->stack[y->depth - 1];
		if (cJSON_IsObject(f->node) && !f->key)
			return yerr(y, TG_EPARSE, line,
				    "a mapping key must be a scalar");
	}
	if (y->depth >= TGI_DOC_MAX_DEPTH)
		return yerr(y, TG_ELIMIT, line, "nested deeper than %d levels",
			    TGI_DOC_MAX_DEPTH);
	if (tgi_grow(&y->stack, &y->cap, y->depth + 1, sizeof(yframe)))
		return TG_ENOMEM;
	node = map ? cJSON_CreateObject() : cJSON_CreateArray();
	if (!node)
		return TG_ENOMEM;
	set_line(node, line);
	f = &y->stack[y->depth];
	f->node = node;
	f->key = NULL;
	f->key_line = 0;
	err = set_anchor(y, anchor, NULL, &f->anchor, line);
	if (err) {
		cJSON_Delete(node);
		return err;
	}
	y->depth++;
	return TG_OK;
}

static tg_err on_close(yctx *y, const yaml_event_t *ev)
{
	size_t line = ev->start_mark.line + 1;
	yframe *f = &y->stack[y->depth - 1];
	cJSON *node = f->node;

	if (f->key) {
		/* cannot happen with a well-formed event stream */
		tgi_free(f->key);
		f->key = NULL;
	}
	y->depth--;
	if (f->anchor)
		y->anode[f->anchor] = node;
	return attach(y, node, line);
}

static void reset_doc(yctx *y)
{
	size_t i;

	while (y->depth > 0) {
		yframe *f = &y->stack[--y->depth];

		tgi_free(f->key);
		/* open nodes are not attached yet: free them here */
		cJSON_Delete(f->node);
	}
	cJSON_Delete(y->root);
	y->root = NULL;
	tgi_strtab_free(&y->anchors);
	tgi_strtab_init(&y->anchors);
	for (i = 0; i < y->nanode; i++)
		y->anode[i] = NULL;
}

static tg_err on_doc_end(yctx *y)
{
	cJSON *root = y->root;

	y->root = NULL;
	reset_doc(y);
	if (!root || cJSON_IsNull(root)) {
		cJSON_Delete(root);
		return TG_OK;
	}
	if (!cJSON_AddItemToArray(y->docs, root)) {
		cJSON_Delete(root);
		return TG_ENOMEM;
	}
	return TG_OK;
}

tg_err tgi_yaml_parse_stream(const char *buf, size_t len, const char *source,
			     cJSON **out, tg_errinfo *ei)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	yctx y;
	tg_err err = TG_OK;
	bool done = false;

	*out = NULL;
	memset(&y, 0, sizeof(y));
	y.source = source;
	y.ei = ei;
	tgi_strtab_init(&y.anchors);
	y.docs = cJSON_CreateArray();
	if (!y.docs)
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	if (!yaml_parser_initialize(&parser)) {
		cJSON_Delete(y.docs);
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf,
				     len);
	while (!done && !err) {
		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR) {
				err = TG_ENOMEM;
			} else {
				const char *prob = parser.problem ?
					parser.problem : "malformed YAML";

				if (parser.context)
					err = tgi_errf(ei, TG_EPARSE,
						"%s:%zu: %s (%s at line %zu)",
						source,
						parser.problem_mark.line + 1,
						prob, parser.context,
						parser.context_mark.line + 1);
				else
					err = tgi_errf(ei, TG_EPARSE,
						"%s:%zu: %s", source,
						parser.problem_mark.line + 1,
						prob);
			}
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			reset_doc(&y);
			break;
		case YAML_DOCUMENT_END_EVENT:
			err = on_doc_end(&y);
			break;
		case YAML_SCALAR_EVENT:
			err = on_scalar(&y, &ev);
			break;
		case YAML_ALIAS_EVENT:
			err = on_alias(&y, &ev);
			break;
		case YAML_MAPPING_START_EVENT:
			err = on_open(&y, &ev, true);
			break;
		case YAML_SEQUENCE_START_EVENT:
			err = on_open(&y, &ev, false);
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			err = on_close(&y, &ev);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	reset_doc(&y);
	tgi_strtab_free(&y.anchors);
	tgi_free(y.anode);
	tgi_free(y.stack);
	if (err) {
		if (err == TG_ENOMEM)
			tgi_errf(ei, err, "%s: out of memory", source);
		cJSON_Delete(y.docs);
		return err;
	}
	*out = y.docs;
	return TG_OK;
}

tg_err tg_doc_parse_yaml(const char *buf, size_t len, const char *source,
			 cJSON **docs, tg_errinfo *ei)
{
	tg_err err;

	if (!docs)
		return tgi_errf(ei, TG_EINVAL, "%s: nowhere to put the "
				"documents", source ? source : "?");
	*docs = NULL;
	if (!buf || !source)
		return tgi_errf(ei, TG_EINVAL, "no text or no source name");
	err = tgi_yaml_parse_stream(buf, len, source, docs, ei);
	if (!err)
		err = tgi_json_check_keys(*docs, source, ei);
	if (err) {
		cJSON_Delete(*docs);
		*docs = NULL;
	}
	return err;
}
