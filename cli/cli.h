/*
 * cli/cli.h - the topogang command's subcommands.
 */
#ifndef TG_CLI_H
#define TG_CLI_H

#include <stddef.h>
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

/* What an option of cli_opts_parse() takes after it. */
typedef enum cli_takes {
	CLI_FLAG = 0,		/* nothing */
	CLI_VALUE,		/* a value: "needs a value" when missing */
	CLI_FILE,		/* a file name: "needs a file" */
} cli_takes;

/*
 * One option: its name, another name or NULL (either matches; messages
 * name the one given), what it takes, and \p off: where in the caller's
 * options struct cli_opt_store() puts its value (a const char *), for
 * a set() that keeps it as given.
 */
typedef struct cli_opt {
	const char *name;
	const char *alias;
	cli_takes takes;
	size_t off;
} cli_opt;

/* Rows of a cli_opt table; CLI_OPT_END ends it. */
#define CLI_OPT_FLAG(name)	{ (name), NULL, CLI_FLAG, 0 }
#define CLI_OPT_VALUE(name)	{ (name), NULL, CLI_VALUE, 0 }
#define CLI_OPT_FILE(name)	{ (name), NULL, CLI_FILE, 0 }
/* a value kept in field \p f of struct type \p type (cli_opt_store()) */
#define CLI_OPT_FIELD(name, type, f) \
	{ (name), NULL, CLI_VALUE, offsetof(type, f) }
#define CLI_OPT_END		{ NULL, NULL, CLI_FLAG, 0 }

/*
 * One subcommand's options, for cli_opts_parse(): \p opts ends with a
 * NULL name.  set(co, k, v) is called for each option given, in order
 * (a repeated one each time): co->opts[k], with its value \p v (NULL
 * for a flag, never NULL otherwise); it returns 0, or 2 having said what
 * is wrong (a repeatable option past its limit, a bad value).
 *
 * Two wordings: bench and sim take "--name v" and "--name=v", say
 * "sim: --seed needs a value" and point at --help after an unknown
 * option; \p classic is the older commands' (place, check, draw,
 * discover, export), kept as it was: "--name v" only, "place: option
 * --cluster needs a value" (or "needs a file"), and no pointer.
 */
typedef struct cli_opts {
	const char *cmd;		/* "bench": for the messages */
	const cli_opt *opts;
	void (*usage)(FILE *f);
	int (*set)(const struct cli_opts *co, unsigned k, const char *v);
	void *arg;			/* for set() */
	bool classic;
} cli_opts;

/*
 * Reads argv[1 .. argc) with \p o: 0 when every option was set, 1 after
 * -h/--help printed the usage to stdout, 2 after one error line (an
 * unknown option, a missing value, or what set() said).
 */
int cli_opts_parse(int argc, char **argv, const cli_opts *o);

/* Stores \p v in the const char * at \p op's offset in \p opts. */
void cli_opt_store(void *opts, const cli_opt *op, const char *v);

#endif /* TG_CLI_H */
