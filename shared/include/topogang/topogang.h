/*
 * topogang/topogang.h - the umbrella header of libtopogang.
 */
#ifndef TOPOGANG_H
#define TOPOGANG_H

#define TOPOGANG_VERSION "0.1.0"

#include "topogang/common.h"
#include "topogang/util.h"
#include "topogang/topology.h"
#include "topogang/gang.h"
#include "topogang/request.h"
#include "topogang/place.h"
#include "topogang/hostlist.h"
#include "topogang/topoconf.h"
#include "topogang/k8s.h"
#include "topogang/fabric.h"
#include "topogang/export.h"
#include "topogang/discover.h"
#include "topogang/draw.h"

#endif /* TOPOGANG_H */
