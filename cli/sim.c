/* placeholder: being written (issue #7): the simulation engine */
#include "config.h"
#include "sim.h"
