/*
 * k8s_bridge/kyaml.c - YAML to cJSON through libyaml's document API.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "kyaml.h"
#include "util.h"

typedef struct yctx {
	yaml_document_t *doc;
	const char *source;
	char *err;
	size_t errlen;
	unsigned nodes;
} yctx;

static bool is_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool is_float(const char *s)
{
	bool dig = false, dot = false, exp = false;

	if (*s == '-' || *s == '+')
		s++;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9') {
			dig = true;
		} else if (*s == '.' && !dot && !exp) {
			dot = true;
		} else if ((*s == 'e' || *s == 'E') && dig && !exp) {
			exp = true;
			if (s[1] == '-' || s[1] == '+')
				s++;
			if (!s[1])
				return false;
		} else {
			return false;
		}
	}
	return dig;
}

static cJSON *scalar(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return cJSON_CreateString(v);
	if (!*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	    strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0)
		return cJSON_CreateNull();
	if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 ||
	    strcmp(v, "TRUE") == 0)
		return cJSON_CreateTrue();
	if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 ||
	    strcmp(v, "FALSE") == 0)
		return cJSON_CreateFalse();
	if (is_int(v) || is_float(v)) {
		double d;

		if (br_parse_double(v, &d))
			return cJSON_CreateNumber(d);
	}
	return cJSON_CreateString(v);
}

static cJSON *convert(yctx *c, yaml_node_t *n, unsigned depth)
{
	cJSON *out = NULL;

	if (!n) {
		snprintf(c->err, c->errlen, "%s: dangling alias", c->source);
		return NULL;
	}
	if (depth > BR_YAML_MAX_DEPTH) {
		snprintf(c->err, c->errlen, "%s:%lu: nested deeper than %d",
			 c->source, (unsigned long)n->start_mark.line + 1,
			 BR_YAML_MAX_DEPTH);
		return NULL;
	}
	if (++c->nodes > BR_YAML_MAX_NODES) {
		snprintf(c->err, c->errlen, "%s: more than %u nodes",
			 c->source, BR_YAML_MAX_NODES);
		return NULL;
	}
	switch (n->type) {
	case YAML_SCALAR_NODE:
		out = scalar(n);
		break;
	case YAML_SEQUENCE_NODE: {
		yaml_node_item_t *it;

		out = cJSON_CreateArray();
		for (it = n->data.sequence.items.start;
		     out && it < n->data.sequence.items.top; it++) {
			cJSON *e = convert(c, yaml_document_get_node(c->doc,
								    *it),
					   depth + 1);

			if (!e) {
				cJSON_Delete(out);
				return NULL;
			}
			cJSON_AddItemToArray(out, e);
		}
		break;
	}
	case YAML_MAPPING_NODE: {
		yaml_node_pair_t *p;

		out = cJSON_CreateObject();
		for (p = n->data.mapping.pairs.start;
		     out && p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(c->doc,
								p->key);
			cJSON *v;

			if (!k || k->type != YAML_SCALAR_NODE) {
				snprintf(c->err, c->errlen,
					 "%s:%lu: mapping key is not a scalar",
					 c->source,
					 (unsigned long)n->start_mark.line +
					 1);
				cJSON_Delete(out);
				return NULL;
			}
			if (cJSON_GetObjectItemCaseSensitive(
				    out, (const char *)k->data.scalar.value)) {
				snprintf(c->err, c->errlen,
					 "%s:%lu: duplicate key '%.80s'",
					 c->source,
					 (unsigned long)k->start_mark.line + 1,
					 (const char *)k->data.scalar.value);
				cJSON_Delete(out);
				return NULL;
			}
			v = convert(c, yaml_document_get_node(c->doc, p->value),
				    depth + 1);
			if (!v) {
				cJSON_Delete(out);
				return NULL;
			}
			cJSON_AddItemToObject(out,
					      (const char *)k->data.scalar.value,
					      v);
		}
		break;
	}
	default:
		out = cJSON_CreateNull();
	}
	if (!out && !c->err[0])
		snprintf(c->err, c->errlen, "%s: out of memory", c->source);
	return out;
}

cJSON *br_yaml_parse(const char *buf, size_t len, const char *source,
		     char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yctx c;
	cJSON *out;

	err[0] = '\0';
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "%s: out of memory", source);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf,
				     len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%lu: %s", source,
			 (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		return NULL;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		out = cJSON_CreateObject();
	} else {
		memset(&c, 0, sizeof(c));
		c.doc = &doc;
		c.source = source;
		c.err = err;
		c.errlen = errlen;
		out = convert(&c, root, 0);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return out;
}
