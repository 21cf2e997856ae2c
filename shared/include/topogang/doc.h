/*
 * topogang/doc.h - YAML and JSON documents as cJSON trees: the reader the
 * loaders use (tg_k8s_*), for hosts that work in cJSON themselves (the
 * bridge's config file and kubeconfig).  Not part of the placement API
 * and not included by topogang/topogang.h: a host that includes it links
 * cJSON (libcjson) as libtopogang does.
 */
#ifndef TOPOGANG_DOC_H
#define TOPOGANG_DOC_H

#include <stddef.h>

#include "topogang/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cJSON;

/*
 * Reads \p len bytes of YAML (JSON is YAML) into a cJSON array of its
 * documents, in order; empty and null documents are dropped.  Mappings
 * become objects, sequences arrays; plain scalars resolve by the YAML 1.2
 * core schema (null, booleans, integers in decimal, 0o octal and 0x hex,
 * floats, else strings); quoted and block scalars are strings; aliases
 * are copied.  Errors (TG_EPARSE, TG_ELIMIT, TG_ENOMEM) name \p source
 * and the line: "bridge.yaml:12: mapping values are not allowed here",
 * "bridge.yaml:3: duplicate key 'a' in the mapping starting here"; merge
 * keys, complex keys and tags outside the core schema are errors; the
 * bounds are the loaders' (256 levels of nesting, 2^20 nodes copied by
 * aliases, 65536 anchors a document).
 * Numbers: read valuedouble (valueint holds the source line, valuestring
 * the number's text).
 * \note The caller frees *docs with cJSON_Delete(); *docs is NULL on
 * error.
 */
tg_err tg_doc_parse_yaml(const char *buf, size_t len, const char *source,
			 struct cJSON **docs, tg_errinfo *ei);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_DOC_H */
