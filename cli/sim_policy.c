/* placeholder: being written (issue #7) */
#include "config.h"
