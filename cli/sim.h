/* placeholder: being written (issue #7) */
#ifndef TG_SIM_H
#define TG_SIM_H
#endif
