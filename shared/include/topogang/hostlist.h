/*
 * topogang/hostlist.h - Slurm hostlist expressions.
 *
 * "node[001-012,20],gpu-[1-2]x,r[1-2]n[1-3]" names node001 .. node012,
 * node20, gpu-1x, gpu-2x and r1n1 .. r2n3: elements are separated by
 * commas (or white space) outside brackets; a bracket holds a comma list
 * of numbers and "lo-hi" ranges; the width of a range is the number of
 * digits of its lower bound ("001-012" pads to 3, "8-10" does not pad);
 * several brackets in one element are a cartesian product, the first one
 * varying slowest; text after a bracket is a suffix.  Used by the
 * topology.conf loader (topogang/topoconf.h), the fabric loader's switch
 * groups (topogang/fabric.h) and the hosts.
 *
 * Ownership: the names and strings handed out are the caller's, freed
 * as each function says; the expressions and names passed in stay the
 * caller's.
 */
#ifndef TOPOGANG_HOSTLIST_H
#define TOPOGANG_HOSTLIST_H

#include "topogang/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_MAX_HOSTLIST	(1u << 20)	/* names one hostlist expands to */

/*
 * Expands a Slurm hostlist ("node[0-3,7],gpu-[01-02]x") into *n names.
 * TG_EPARSE with a message quoting the expression for bad syntax,
 * TG_ELIMIT past TG_MAX_HOSTLIST names or a name past TG_MAX_NAME bytes.
 * \note *names is the caller's: free the array and each name with
 * tg_free(), or all of it with tg_hostlist_free().
 */
tg_err tg_hostlist_expand(const char *expr, char ***names, unsigned *n,
			  tg_errinfo *ei);

/* Frees what tg_hostlist_expand() gave: the \p n names and the array.
 * Accepts NULL. */
void tg_hostlist_free(char **names, unsigned n);

/*
 * Compresses names back into a hostlist expression ("node[0-3,7]"), in
 * the order given, merging runs of equal prefix and width.
 * \note The caller frees the string with tg_free(); NULL on ENOMEM.
 */
char *tg_hostlist_compress(const char *const *names, unsigned n);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_HOSTLIST_H */
