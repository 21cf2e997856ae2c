/*
 * k8s_bridge/kyaml.h - the first YAML document of a text as a cJSON tree
 * (libyaml), for the bridge's config file and kubeconfig.
 *
 * Mappings become objects, sequences arrays.  Plain scalars resolve by
 * the YAML 1.2 core schema: null/~/empty, true/false, decimal integers
 * and floats become JSON null, booleans and numbers; everything else,
 * and every quoted or block scalar, is a string.  Aliases are copied
 * (at most BR_YAML_MAX_NODES nodes in all); nesting deeper than
 * BR_YAML_MAX_DEPTH is an error.  JSON is YAML, so JSON text works too.
 */
#ifndef BR_KYAML_H
#define BR_KYAML_H

#include <stddef.h>

#include <cJSON.h>

#define BR_YAML_MAX_DEPTH	64
#define BR_YAML_MAX_NODES	(1u << 20)

/*
 * Parses \p buf.  \p source names the input in messages
 * ("bridge.yaml:12: mapping values are not allowed here").
 * \note The caller frees the tree with cJSON_Delete(); NULL with \p err
 * filled on failure.  An empty text gives an empty object.
 */
cJSON *br_yaml_parse(const char *buf, size_t len, const char *source,
		     char *err, size_t errlen);

#endif /* BR_KYAML_H */
