/*
 * cli/cli.h - the topogang command's subcommands.
 */
#ifndef TG_CLI_H
#define TG_CLI_H

#include <stdio.h>

#include "topogang/topogang.h"

/* Each subcommand: argv[0] is the subcommand's name; returns the exit
 * status (0 ok, 1 a decision/check failed, 2 bad usage or input). */
int cli_place(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_draw(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_discover(int argc, char **argv);
int cli_export(int argc, char **argv);
/* `check` given both --topology-conf and --cluster: `discover compare`. */
int cli_compare(int argc, char **argv);
int cli_sim(int argc, char **argv);

/* Appends one decision as a JSON object (the documented schema) to the
 * cJSON array \p gangs (a cJSON *, void to keep cJSON out of this
 * header). */
int cli_json_decision(void *gangs, const tg_topology *t,
		      const tg_decision *d);

/* An option that takes a value: "--name VALUE" (or the alias) stores
 * VALUE in the const char * at offset \p off of the options struct. */
typedef struct cli_opt {
	const char *name;
	const char *alias;	/* or NULL */
	size_t off;
} cli_opt;

/*
 * If argv[*i] is one of \p tab's options, stores its value and moves *i
 * past it: 1.  Not one of them: 0.  No value after it: -1, with an error
 * line naming the command (argv[0]).
 */
int cli_opt_take(int argc, char **argv, int *i, const cli_opt *tab,
		 size_t n, void *opts);

/* Writes the pictures of \p t (tg_draw_render()) to \p svg and \p html
 * (each NULL = not wanted, "-" = stdout); 0, or 2 with a message. */
int cli_picture_write(const tg_topology *t, const tg_draw_opts *o,
		      const char *svg, const char *html);
/*
 * The gangs topogang-bridge bound in a kubectl dump (JSON; YAML gives
 * none): pods with spec.nodeName and the topogang.io/gang annotation,
 * ranked by topogang.io/rank, in name order; for the pictures.
 * \note *out is freed with cli_bound_free() (also on error: 2).
 */
typedef struct cli_bound cli_bound;
int cli_bound_load(const char *path, const tg_topology *t, cli_bound **out);
const tg_draw_gang *cli_bound_gangs(const cli_bound *b, unsigned *n);
/* Leaves gang \p gang out (a decision of this run says more). */
void cli_bound_skip(cli_bound *b, const char *gang);
void cli_bound_free(cli_bound *b);
/* `topogang draw --slurm`: topology.conf + `scontrol show nodes --json`
 * (+ `squeue --json`, may be NULL); see draw_pic.c.  Exit status. */
int cli_draw_slurm(const char *conf, const char *nodes, const char *jobs,
		   const char *title, const char *svg, const char *html);

/* Prints an error line "topogang: ..." to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The value of option \p name at argv[*i]: "--name=v", or "--name v"
 * (then *i moves to v).  *matched says whether argv[*i] is the option;
 * matched with NULL: the value is missing.
 */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name,
			  bool *matched);

/*
 * One subcommand's options, for cli_opts_parse(): flags[] take no value,
 * values[] one ("--name v" or "--name=v"); both NULL-terminated (flags
 * may be NULL).  flag(arg, k) and value(arg, k, v) set flags[k] and
 * values[k] (v never NULL) and return 0, or 2 having said what is wrong.
 */
typedef struct cli_opts {
	const char *cmd;		/* "bench": for the messages */
	const char *const *flags;
	const char *const *values;
	void (*usage)(FILE *f);
	int (*flag)(void *arg, unsigned k);
	int (*value)(void *arg, unsigned k, const char *v);
	void *arg;
} cli_opts;

/*
 * Reads argv[1 .. argc) with \p o: 0 when every option was set, 1 after
 * -h/--help printed the usage to stdout, 2 after one error line (an
 * unknown option, a missing value, or what a callback said).
 */
int cli_opts_parse(int argc, char **argv, const cli_opts *o);

#endif /* TG_CLI_H */
