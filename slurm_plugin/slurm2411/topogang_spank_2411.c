/*
 * The SPANK plugin for Slurm 24.11: the same source as for 22.05,
 * compiled here against the 24.11 tree (a wrapper, so that its objects
 * do not share a name with the 22.05 build's in ../).
 */
#include "../topogang_spank.c"
