/* placeholder: being written (issue #8) */
#include "config.h"
#include "internal.h"
