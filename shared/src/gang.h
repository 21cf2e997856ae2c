/*
 * shared/src/gang.h - the gang request's private layout.
 */
#ifndef TG_GANG_PRIV_H
#define TG_GANG_PRIV_H

#include "internal.h"

typedef struct tgi_expr {
	char *key;
	tg_sel_op op;
	char **values;
	unsigned nvalues;
} tgi_expr;

typedef struct tgi_term {
	tgi_expr *exprs;
	unsigned n;
} tgi_term;

typedef struct tgi_toleration {
	char *key;	/* NULL: every key */
	bool exists;
	char *value;
	int effect;	/* < 0: every effect */
} tgi_toleration;

typedef struct tgi_podaff {
	char *key;
	bool anti;
	char **pods;
	unsigned npods;
} tgi_podaff;

/* A member's namespace and labels (tg_gang_podset_set_member_labels). */
typedef struct tgi_mlabels {
	char *ns;
	char **keys, **vals;
	unsigned n;
} tgi_mlabels;

typedef struct tgi_podset {
	char *name;
	tg_shape shape;
	unsigned count;
	char **members;		/* count names */
	unsigned max_per_node;
	char **sel_key, **sel_val;
	unsigned nsel;
	tgi_term terms[TG_MAX_TERMS];
	unsigned nterms;
	tgi_toleration tol[TG_MAX_TERMS * 4];
	unsigned ntol;
	tgi_podaff aff[TG_MAX_TERMS];
	unsigned naff;
	tgi_mlabels *mlab;	/* count entries; NULL until one is set */
} tgi_podset;

/* A spread over the pods a label selector picks (tg_spread_spec). */
typedef struct tgi_sspread {
	char *layer;
	unsigned max_skew, min_domains;
	bool hard, ignore_node_affinity, honor_taints, selector;
	char *ns;
	tgi_expr *exprs;
	unsigned nexprs;
} tgi_sspread;

typedef struct tgi_layer_req {
	char *layer;
	unsigned a;	/* gather: tg_gather; slice: size; spread: max skew */
	bool hard;	/* spread only */
} tgi_layer_req;

struct tg_gang {
	char *name;
	int64_t priority;
	bool can_preempt;
	tgi_layer_req gather[TG_MAX_LAYERS + 2];
	unsigned ngather;
	tgi_layer_req slice[TG_MAX_LAYERS + 1];
	unsigned nslice;
	tgi_layer_req spread[TG_MAX_LAYERS + 1];
	unsigned nspread;
	tgi_sspread sspread[TG_MAX_SPREADS];
	unsigned nsspread;
	tgi_podset *ps[TG_MAX_PODSETS];
	unsigned nps;
	unsigned nmembers;
};

#endif /* TG_GANG_PRIV_H */
