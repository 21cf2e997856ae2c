/*
 * tg_slurm_gres.h - where the Slurm tree being built against keeps its
 * GRES interface: src/common/gres.h up to 22.05, src/interfaces/gres.h
 * from 23.02 on (the only header the version-independent files need
 * that moved).
 */
#ifndef _TOPOGANG_TG_SLURM_GRES_H
#define _TOPOGANG_TG_SLURM_GRES_H
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/gres.h"
#else
#include "src/common/gres.h"
#endif
#endif
