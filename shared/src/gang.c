/* placeholder: being written */
#include "config.h"
#include "internal.h"
