/*
 * shared/src/load/fabric/fabric_int.h - the fabric loader's inside: the
 * format interface every input format implements, and the builder the
 * formats parse into.
 *
 * Files of shared/src/load/fabric/:
 *
 *   fabric.c         the tg_fabric object: create / destroy, the format
 *                    table, tg_fabric_add() (one dispatch through the
 *                    table), tg_fabric_detect(), accessors, and the
 *                    builder primitives below;
 *   hostmap.c        host-map rules (tg_fabric_set_hostmap());
 *   build.c          tg_fabric_build(): hosts, host tables and NVLink
 *                    domains into the topology;
 *   graph.c          a switch graph into a tree of switch groups;
 *   ibnetdiscover.c, netq.c, netq_nvl.c, csv.c
 *                    one input format each, behind tgi_fabric_fmt.
 *
 * The loader shape (one for every format, see fabric.h): a format's parse
 * function adds what one input holds to the fabric, in one of the three
 * shapes below; tg_fabric_build() then adds layers and nodes to an empty
 * topology that the caller created and later builds, as
 * tg_topoconf_load() does.  Formats never touch a tg_topology.
 *
 *   TGI_FAB_GRAPH    devices (switches, hosts' ports) and links:
 *                    tgi_fab_dev_get(), tgi_fab_link_add(), a device's
 *                    kind and description set directly (fdev);
 *   TGI_FAB_TABLE    one row per host with its switch on every level,
 *                    farthest first: tgi_fab_set_levels(),
 *                    tgi_fab_row_add();
 *   TGI_FAB_OVERLAY  NVLink domains of hosts, with either shape or
 *                    alone: tgi_fab_nvl_add().
 *
 * A fabric holds inputs of one shape (the overlay goes with both).  Host
 * names go through the host-map rule (tgi_fab_host_map()) before they are
 * recorded; graph hosts are named at build time from their ports'
 * descriptions (graph.c), table and overlay hosts by the parser.
 */
#ifndef TG_FABRIC_INT_H
#define TG_FABRIC_INT_H

#include "internal.h"

#define FAB_MAX_DESC	256	/* bytes of a node description */
#define FAB_MAX_PORT	255	/* InfiniBand port numbers are 8 bits */
#define FAB_MAX_LINE	65536	/* bytes of one input line */
#define FAB_MAX_STEPS	32	/* steps of a host-map rule */
#define FAB_MAX_ALTS	16	/* globs of one match= or drop= */
#define FAB_MAX_WARN	1000	/* warnings kept; the rest counted */
#define FAB_MAX_SOURCES	4096	/* tg_fabric_add() calls */
#define FAB_SHOW	80	/* bytes of a value quoted in messages */

/* Device kinds of a switch graph. */
enum { DEV_SWITCH = 1, DEV_HOST, DEV_OTHER };

/* The shape a format parses into (see above). */
typedef enum tgi_fab_shape {
	TGI_FAB_OVERLAY = 0,
	TGI_FAB_GRAPH,
	TGI_FAB_TABLE
} tgi_fab_shape;

typedef struct hm_step {
	int op;
	char *arg;		/* owned; globs are '|'-separated */
	char *arg2;		/* replace= target */
} hm_step;

typedef struct fdev {
	uint32_t id;		/* strtab id in ids */
	uint32_t desc;		/* strtab id in strs, 0 = none */
	uint8_t kind;
	bool defined;		/* has a block (or a NetQ node entry) */
	unsigned nports;
	unsigned line;		/* where defined, or first referenced */
	uint32_t src;
} fdev;

typedef struct flink {
	uint32_t a, b;		/* device indices */
	uint16_t pa, pb;	/* ports (0 for NetQ) */
	unsigned line;
	uint32_t src;
} flink;

typedef struct frow {
	uint32_t host;		/* strtab id in strs (mapped name) */
	uint32_t path[TG_MAX_LAYERS];
	unsigned line;
	uint32_t src;
} frow;

typedef struct fnvl {
	uint32_t host;		/* strtab id in strs (mapped name) */
	uint32_t domain;	/* strtab id in strs */
	unsigned idx;		/* entry in its input */
	uint32_t src;
	bool used;		/* build: a host of the switch fabric */
} fnvl;

typedef struct fgroup {
	uint32_t name;		/* strtab id in strs */
	const char *sname;	/* its text, for sorting */
	unsigned level;
	unsigned nmembers;
	char *members;		/* compressed hostlist, owned */
} fgroup;

struct tg_fabric {
	bool failed;
	tgi_fab_shape shape;	/* TGI_FAB_OVERLAY until a graph or table */
	hm_step steps[FAB_MAX_STEPS];
	unsigned nsteps;
	bool any_input;

	char **srcs;		/* source names, by src index */
	size_t nsrcs, srccap;

	/* graph shape */
	tgi_strtab ids;		/* device ids */
	uint32_t *dev_of;	/* ids id -> device index + 1 */
	size_t ndevof, devofcap;
	fdev *devs;
	size_t ndevs, devcap;
	flink *links;
	size_t nlinks, linkcap;

	tgi_strtab strs;	/* descriptions, names, values */

	/* table shape */
	char *layer_name[TG_MAX_LAYERS];
	unsigned nlayers;
	frow *rows;
	size_t nrows, rowcap;
	uint32_t *row_of;	/* strs id of a host -> row index + 1 */
	size_t nrowof, rowofcap;

	/* overlay: NVLink domains (NetQ compute nodes) */
	fnvl *nvl;
	size_t nnvl, nvlcap;
	uint32_t *nvl_of;	/* strs id of a host -> nvl index + 1 */
	size_t nnvlof, nvlofcap;

	char **warn;
	size_t nwarn, warncap, nmore;

	tg_fabric_summary sum;
	fgroup *groups;
	size_t ngroups;
};

/* ---- the format interface ----------------------------------------------- */

/* One input as tg_fabric_add() hands it to a format. */
typedef struct tgi_fab_in {
	const char *buf;	/* len bytes; never NULL ("" when empty) */
	char *text;		/* copy_text formats: a writable copy of buf,
				 * NUL-terminated (lines may be cut in
				 * place); NULL for the others */
	size_t len;
	uint32_t src;		/* index of the source name (f->srcs) */
	const char *source;	/* the source name, for messages */
} tgi_fab_in;

/*
 * An input format.  tg_fabric_add() finds the row whose fmt is asked for
 * in the table (fabric.c), checks the shape against what the fabric
 * holds, and calls parse().
 *
 *   fmt        the public tg_fabric_format value;
 *   name       the format's name ("ibnetdiscover"): the source name in
 *              messages when the caller gives none, and
 *              tg_fabric_format_name();
 *   shape      what parse() adds (see above);
 *   copy_text  parse() wants in->text (line parsers cut lines in place);
 *   sniff      how sure (0 = not this format .. 100) that the first
 *              bytes of an input (at most TG_FABRIC_SNIFF_BYTES) are
 *              this format; pure, never fails;
 *   parse      adds the input to the fabric; on error it returns the
 *              tg_err with \p ei saying "source[:line]: what" and may
 *              leave part of the input added (the fabric is then marked
 *              failed and takes no more).
 */
typedef struct tgi_fabric_fmt {
	tg_fabric_format fmt;
	const char *name;
	tgi_fab_shape shape;
	bool copy_text;
	unsigned (*sniff)(const char *buf, size_t len);
	tg_err (*parse)(tg_fabric *f, const tgi_fab_in *in, tg_errinfo *ei);
} tgi_fabric_fmt;

extern const tgi_fabric_fmt tgi_fab_ibnetdiscover;
extern const tgi_fabric_fmt tgi_fab_netq;
extern const tgi_fabric_fmt tgi_fab_csv;
extern const tgi_fabric_fmt tgi_fab_netq_nvl;

/* ---- helpers for the formats (fabric.c) --------------------------------- */

/* Adds a warning (kept up to FAB_MAX_WARN, the rest counted); TG_ENOMEM. */
tg_err tgi_fab_warn(tg_fabric *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

bool tgi_fab_blank(char c);	/* space, tab, CR, VT, FF */
bool tgi_fab_digit(char c);
bool tgi_fab_alnum(char c);

/* A node name the exports can write: [A-Za-z0-9._-], 1..TG_MAX_NAME. */
bool tgi_fab_name_ok(const char *s);

/* Copies [s, s + n) into out (cap bytes) for a message, non-printable
 * bytes as '?', cut with "..."; returns out. */
const char *tgi_fab_show(const char *s, size_t n, char *out, size_t cap);

/* The name of source \p src; "?" when out of range.  Valid until
 * tg_fabric_destroy(). */
const char *tgi_fab_src(const tg_fabric *f, uint32_t src);

/*
 * The slot of string id \p id in an index array (*arr of *n entries,
 * *cap allocated) that maps ids to entry + 1, grown with zeros to hold
 * it.  *slot is valid until the array grows again.  TG_ENOMEM.
 */
tg_err tgi_fab_slot(uint32_t **arr, size_t *n, size_t *cap, uint32_t id,
		    uint32_t **slot);

/* JSON helpers (netq.c): the string member \p key of object \p o, NULL
 * when absent or not a string (valid as long as the tree); how sure the
 * first bytes are JSON holding a "key" member (80 or 0). */
struct cJSON;
const char *tgi_fab_json_str(const struct cJSON *o, const char *key);
unsigned tgi_fab_json_sniff(const char *buf, size_t len, const char *key);

/* ---- the builder: graph shape ------------------------------------------- */

/* Finds or creates the device with id \p id (first seen at src:line):
 * its index in *out.  TG_ELIMIT past TG_MAX_FABRIC_DEVICES, TG_ENOMEM;
 * no message.  f->devs may move. */
tg_err tgi_fab_dev_get(tg_fabric *f, const char *id, uint32_t src,
		       unsigned line, uint32_t *out);

/* Records a link between devices a (port pa) and b (port pb).  TG_ELIMIT
 * past 4 * TG_MAX_FABRIC_DEVICES links, TG_ENOMEM; no message. */
tg_err tgi_fab_link_add(tg_fabric *f, uint32_t a, unsigned pa, uint32_t b,
			unsigned pb, uint32_t src, unsigned line);

/* ---- the builder: table shape ------------------------------------------- */

/* Names the \p n levels (farthest first) of the first table; the format
 * checks later inputs against f->layer_name.  TG_ENOMEM. */
tg_err tgi_fab_set_levels(tg_fabric *f, char *const *names, unsigned n);

/*
 * Records host \p hid (strs id, after the host-map rule) under switches
 * \p path (f->nlayers strs ids) from src:line.  The same host with the
 * same path again is TG_OK and adds nothing; with another path
 * TG_EEXIST and *clash is the first row.  TG_ELIMIT past TG_MAX_NODES
 * hosts, TG_ENOMEM; no message.
 */
tg_err tgi_fab_row_add(tg_fabric *f, uint32_t hid, const uint32_t *path,
		       uint32_t src, unsigned line, const frow **clash);

/* ---- the builder: NVLink overlay ---------------------------------------- */

/*
 * Records host \p hid (strs id, after the host-map rule) in NVLink domain
 * \p did (strs id), entry \p idx of input \p src.  The same pair again is
 * TG_OK; the host in another domain is TG_EEXIST with *clash the first
 * entry.  TG_ELIMIT past TG_MAX_NODES entries, TG_ENOMEM; no message.
 */
tg_err tgi_fab_nvl_add(tg_fabric *f, uint32_t hid, uint32_t did,
		       unsigned idx, uint32_t src, const fnvl **clash);

/* ---- host-map rules (hostmap.c) ------------------------------------------ */

/*
 * Applies the host-map rule to \p in; out (TG_MAX_NAME + 1 bytes) gets
 * the name.  Returns 1 kept, 0 dropped, -1 the result is too long.
 */
int tgi_fab_host_map(const tg_fabric *f, const char *in, char *out);
/* Frees the rule's steps (tg_fabric_destroy()). */
void tgi_fab_hostmap_free(tg_fabric *f);

/* ---- building (build.c, graph.c) ---------------------------------------- */

/* Sorts string ids of \p st in tg_name_cmp() order of their text. */
tg_err tgi_fab_sort_ids(const tgi_strtab *st, uint32_t *ids, size_t n);

/* Frees the group table of the last build. */
void tgi_fab_groups_free(tg_fabric *f);

/* A path filler: the switch values of host \p h, farthest first. */
typedef void (*tgi_fab_path_fn)(void *ctx, uint32_t h, const char **path);

/*
 * Adds the hosts to \p t in tg_name_cmp() order (see build.c): \p hosts
 * (nh strs ids, sorted) of the switch fabric, whose \p nlev switch
 * values \p fn fills, and the hosts only the NVLink list names.
 */
tg_err tgi_fab_add_hosts(tg_fabric *f, tg_topology *t, const uint32_t *hosts,
			 size_t nh, unsigned nlev, tgi_fab_path_fn fn,
			 void *ctx, tg_errinfo *ei);

/* The graph shape's build (graph.c): switch levels and groups, then the
 * hosts through tgi_fab_add_hosts(). */
tg_err tgi_fab_build_graph(tg_fabric *f, tg_topology *t, tg_errinfo *ei);

#endif /* TG_FABRIC_INT_H */
