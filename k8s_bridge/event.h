/*
 * k8s_bridge/event.h - the one events.k8s.io/v1 Event body of the bridge
 * (the scheduler's events, sched.c, with their series; the node
 * labeller's drift events, labeller.c).
 */
#ifndef BR_EVENT_H
#define BR_EVENT_H

#include <stddef.h>
#include <stdint.h>

#define BR_EVENT_NOTE_MAX	1024	/* events.k8s.io note, in bytes */

typedef struct br_event {
	const char *type;	/* "Normal", "Warning" */
	const char *reason;	/* "Scheduled", "TopologyLabelDrift" */
	const char *action;	/* "Binding", "Labeling" */
	const char *note;	/* cut to BR_EVENT_NOTE_MAX with " ..." */
	const char *kind;	/* the regarding object (apiVersion v1) */
	const char *ns;		/* "" for a cluster object (a Node) */
	const char *name;
	const char *uid;	/* NULL or "": left out */
	const char *controller;	/* reportingController */
	const char *instance;	/* reportingInstance */
} br_event;

/*
 * The Event's body (cJSON text; caller frees with free()) at wall time
 * \p us (µs), named "<regarding name>.<ns time hex><ctr hex>" as
 * client-go's recorder names them; the name goes to \p name, the
 * Event's namespace (the object's, "default" for a cluster object) to
 * \p evns.  NULL when out of memory.
 */
char *br_event_body(const br_event *ev, int64_t us, unsigned ctr,
		    char *name, size_t namelen, char *evns, size_t evnslen);
/* "/apis/events.k8s.io/v1/namespaces/<ns>/events[/<name>]" (freed by
 * the caller); \p name NULL for the collection. */
char *br_event_path(const char *ns, const char *name);

#endif /* BR_EVENT_H */
