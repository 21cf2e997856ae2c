/* tgconf.c for the 24.11 SPANK plugin (see topogang_spank_2411.c). */
#include "../tgconf.c"
