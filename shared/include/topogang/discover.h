/*
 * topogang/discover.h - topology discovery and export (issue #8; being
 * written).
 */
#ifndef TOPOGANG_DISCOVER_H
#define TOPOGANG_DISCOVER_H

#include "topogang/topology.h"

#endif /* TOPOGANG_DISCOVER_H */
