/*
 * k8s_bridge/leader.h - leader election on a coordination.k8s.io/v1 Lease
 * (client-go's leaderelection, research/k8s-api.md §1.7).
 *
 * Every retry period: GET the Lease (404: create it, holding it; a 409
 * on create means another replica won).  Another holder whose record
 * has not changed for a lease duration, measured on the local clock
 * from when this replica saw it change, has expired: take over with a
 * PUT that carries the resourceVersion read (optimistic concurrency: a
 * 409 means someone else was faster).  A leader renews the same way and
 * stops leading at once when no renewal succeeded within the renew
 * deadline; it then campaigns again like any standby.
 */
#ifndef BR_LEADER_H
#define BR_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "bconfig.h"
#include "http.h"

typedef struct br_leader br_leader;

/*
 * \p on_change is called with true on becoming leader and false on
 * losing it.  Without leader election (cfg->leader_elect false) the
 * replica leads from the start.
 * \note Destroy with br_leader_destroy(); \p h and \p cfg outlive it.
 */
br_leader *br_leader_create(br_http *h, const br_config *cfg,
			    void (*on_change)(void *ud, bool leading),
			    void *ud);
void br_leader_destroy(br_leader *l);

void br_leader_tick(br_leader *l, int64_t now_ms);
/* Leading, and the last renewal is within the renew deadline. */
bool br_leader_leading(br_leader *l, int64_t now_ms);
/* The holder last seen ("" when none). */
const char *br_leader_holder(const br_leader *l);
uint64_t br_leader_transitions(const br_leader *l);

/* Gives the lease up (shutdown): holder "" and a 1 s duration. */
void br_leader_release(br_leader *l);

#endif /* BR_LEADER_H */
