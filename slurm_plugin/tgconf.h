/*****************************************************************************\
 *  tgconf.h - topogang.conf and per-job request parsing for the Slurm
 *  plugins (select/topogang and the topogang SPANK plugin).
 *
 *  Pure C: no Slurm header, so the parser is unit tested without Slurm
 *  and shared by both plugins.  The requests (DefaultGather=, Gather=,
 *  --topo-gather, --topo-spread, --topo-slice) are read by the core's
 *  grammar (topogang/request.h, shared/src/core/request.c, which the
 *  SPANK plugin builds too).  Every name is prefixed tgs_ (topogang,
 *  Slurm side).
\*****************************************************************************/

#ifndef _TOPOGANG_TGCONF_H
#define _TOPOGANG_TGCONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topogang/request.h"

/* Upper bounds on what is read from outside; hitting one is an error. */
#define TGS_MAX_LINE		4096	/* bytes of one logical line */
#define TGS_MAX_FILE		(1u << 20) /* bytes of topogang.conf */
#define TGS_MAX_ALIASES		16	/* LayerName= records */
#define TGS_MAX_PARTITIONS	1024	/* PartitionName= records */
#define TGS_MAX_NAME		128	/* a layer or partition name */
#define TGS_MAX_PATH		4096	/* a file name */
#define TGS_ERRLEN		512

/* The environment variable the SPANK plugin sets in the job's control
 * environment (job_desc->spank_job_env); the select plugin reads it.
 * The values are requests in the core's grammar (topogang/request.h). */
#define TGS_SPANK_GATHER_VAR	"TOPOGANG_GATHER"
#define TGS_SPANK_SPREAD_VAR	"TOPOGANG_SPREAD"
#define TGS_SPANK_SLICE_VAR	"TOPOGANG_SLICE"

typedef struct tgs_alias {
	char name[TGS_MAX_NAME + 1];	/* what users write: "spine" */
	char layer[TGS_MAX_NAME + 1];	/* the topology's: "switch-l1" */
} tgs_alias;

typedef struct tgs_part {
	char name[TGS_MAX_NAME + 1];
	tg_request gather;
	bool has_gather;
} tgs_part;

typedef struct tgs_conf {
	char topology_file[TGS_MAX_PATH];	/* "" = beside slurm.conf */
	tg_request default_gather;
	bool has_default_gather;
	unsigned nalias;
	tgs_alias alias[TGS_MAX_ALIASES];
	unsigned npart;
	tgs_part *part;			/* npart entries */
	uint32_t reserve_time;		/* s a preemptor holds nodes */
	bool fallback;			/* core error: cons_tres picks */
	bool debug;			/* log every decision at info */
} tgs_conf;

/* Sets the defaults (no aliases, 120 s reservations, fallback on). */
extern void tgs_conf_init(tgs_conf *c);

/*
 * Parses topogang.conf text (slurm.conf style: Key=Value pairs, '#'
 * comments, '\' continues a line, keys case-insensitive).  \p source
 * names the file in messages: "topogang.conf:7: unknown key 'Foo'".
 * Returns 0, or -1 with the message in \p err; \p c is then left as
 * tgs_conf_init() made it, with nothing to free.
 * \note Free with tgs_conf_free().
 */
extern int tgs_conf_parse(tgs_conf *c, const char *text, size_t len,
			  const char *source, char *err, size_t errlen);

/* Same, reading \p path.  A missing file is not an error when
 * \p missing_ok (the defaults stand). */
extern int tgs_conf_load(tgs_conf *c, const char *path, bool missing_ok,
			 char *err, size_t errlen);

extern void tgs_conf_free(tgs_conf *c);

/* Maps a user's layer name through the LayerName aliases (case
 * insensitive); returns \p name itself when no alias matches. */
extern const char *tgs_conf_layer(const tgs_conf *c, const char *name);

/* The partition's default gather, else DefaultGather, else NULL. */
extern const tg_request *tgs_conf_part_gather(const tgs_conf *c,
					      const char *partition);

#endif /* _TOPOGANG_TGCONF_H */
