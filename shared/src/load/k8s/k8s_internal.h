/*
 * shared/src/load/k8s/k8s_internal.h - private helpers of the Kubernetes loader:
 * JSON and YAML text as cJSON trees.
 *
 * Both readers return one cJSON array whose elements are the documents
 * of the input, in order (a JSON stream of several values, a YAML stream
 * of several documents).  Empty YAML documents are dropped.
 *
 * Line numbers: trees built from YAML carry the 1-based line where each
 * node starts in its valueint (cJSON itself only reads valueint of
 * numbers it parsed, and prints numbers from valuedouble); YAML numbers
 * also keep their original text in valuestring ("0.1", "1e3"), so that
 * quantities are read without going through a double and JSON numbers
 * (valuestring NULL) are told apart.  tgi_json_line() reads the line, 0
 * when unknown (JSON input).  Read numbers through valuedouble only.
 */
#ifndef TG_K8S_INTERNAL_H
#define TG_K8S_INTERNAL_H

#include <cJSON.h>

#include "internal.h"

/*
 * Bounds of the readers; hitting one is TG_ELIMIT: nested mappings and
 * sequences, nodes copied by alias expansion, anchors in one document.
 */
#define TGI_DOC_MAX_DEPTH	256
#define TGI_DOC_MAX_ALIAS_NODES	(1u << 20)
#define TGI_DOC_MAX_ANCHORS	65536

/*
 * Parses a stream of JSON values (whitespace-separated) into a cJSON array
 * of the values.  \p source names the input in messages
 * ("cluster.json:3: malformed JSON near '...'").
 * \note The caller frees *out with cJSON_Delete().
 */
tg_err tgi_json_parse_stream(const char *buf, size_t len, const char *source,
			     cJSON **out, tg_errinfo *ei);

/*
 * Converts YAML text (one or several documents) into a cJSON array of
 * the documents.  Mappings become objects (keys are the key scalars'
 * text), sequences arrays.  Plain scalars resolve by the YAML 1.2 core
 * schema: null, booleans, integers (decimal, 0o octal, 0x hex), floats,
 * else strings; quoted and block scalars are strings.  Aliases are
 * resolved by copying the anchored node (TGI_DOC_MAX_ALIAS_NODES nodes in
 * all); merge keys ("<<"), complex keys and tags outside the core schema
 * are errors.  Messages carry the line: "cluster.yaml:12: ...".
 * \note The caller frees *out with cJSON_Delete().
 */
tg_err tgi_yaml_parse_stream(const char *buf, size_t len, const char *source,
			     cJSON **out, tg_errinfo *ei);

/*
 * Checks that no object in the tree has the same key twice (a YAML error;
 * in JSON the result would depend on the reader).  TG_EPARSE naming the
 * key and, when known, the line.
 */
tg_err tgi_json_check_keys(const cJSON *root, const char *source,
			   tg_errinfo *ei);

/* The 1-based source line of an item, 0 when unknown. */
unsigned tgi_json_line(const cJSON *item);

#endif /* TG_K8S_INTERNAL_H */
