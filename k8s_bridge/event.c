/*
 * k8s_bridge/event.c - events.k8s.io/v1 Event bodies (see event.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "event.h"
#include "util.h"

char *br_event_body(const br_event *ev, int64_t us, unsigned ctr,
		    char *name, size_t namelen, char *evns, size_t evnslen)
{
	char ts[40], trunc[BR_EVENT_NOTE_MAX + 1], *out, *body;
	const char *note = ev->note ? ev->note : "";
	cJSON *j, *md, *reg;

	snprintf(name, namelen, "%.240s.%llx%llx", ev->name,
		 (unsigned long long)us * 1000ull,
		 (unsigned long long)(ctr & 0xfff));
	snprintf(evns, evnslen, "%s", *ev->ns ? ev->ns : "default");
	if (strlen(note) > BR_EVENT_NOTE_MAX) {
		snprintf(trunc, sizeof(trunc), "%.*s ...",
			 BR_EVENT_NOTE_MAX - 4, note);
		note = trunc;
	}
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "apiVersion", "events.k8s.io/v1");
	cJSON_AddStringToObject(j, "kind", "Event");
	md = cJSON_AddObjectToObject(j, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", evns);
	cJSON_AddStringToObject(j, "eventTime",
				br_rfc3339(ts, sizeof(ts), us, true));
	cJSON_AddStringToObject(j, "reportingController", ev->controller);
	cJSON_AddStringToObject(j, "reportingInstance", ev->instance);
	cJSON_AddStringToObject(j, "action", ev->action);
	cJSON_AddStringToObject(j, "reason", ev->reason);
	cJSON_AddStringToObject(j, "type", ev->type);
	reg = cJSON_AddObjectToObject(j, "regarding");
	cJSON_AddStringToObject(reg, "apiVersion", "v1");
	cJSON_AddStringToObject(reg, "kind", ev->kind);
	if (*ev->ns)
		cJSON_AddStringToObject(reg, "namespace", ev->ns);
	cJSON_AddStringToObject(reg, "name", ev->name);
	if (ev->uid && *ev->uid)
		cJSON_AddStringToObject(reg, "uid", ev->uid);
	cJSON_AddStringToObject(j, "note", note);
	out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!out)
		return NULL;
	body = br_xstrdup(out);
	cJSON_free(out);
	return body;
}

char *br_event_path(const char *ns, const char *name)
{
	return br_xasprintf("/apis/events.k8s.io/v1/namespaces/%s/events%s%s",
			    ns, name ? "/" : "", name ? name : "");
}
