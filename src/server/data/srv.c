/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every file of the data plane shares: the server's state (srv)
 * and the rate limits of the warnings they log.  A leaf: it calls
 * nothing of the data plane, so that a file may read srv or log a
 * limited warning without depending on the worker that runs it.
 */
#include <stdint.h>

#include "tenk/clock.h"
#include "../tenkd.h"

#define CAP_WARN_EVERY	((long long)TK_SEC) /* a line per cap and second */
#define WARN_EVERY	TK_SEC		/* rate limit of repeated warnings */

/*
 * The server's state: the control plane fills it at start and swaps its
 * config on reload; the workers read it.  Defined in the data plane, so
 * that nothing here refers to the control plane's objects (make lint
 * checks).
 */
struct server	 srv;

/*
 * Whether a warning of this kind may be logged now (at most one a
 * second per thread); *skipped gets how many were held back since the
 * last one that went out.
 */
int
worker_warn_ok(struct worker *w, enum warn_kind kind, uint64_t *skipped)
{
	uint64_t	now = tk_loop_now(w->l);

	if (w->warn_last[kind] != 0 && now - w->warn_last[kind] < WARN_EVERY) {
		w->warn_skipped[kind]++;
		return 0;
	}
	w->warn_last[kind] = now;
	*skipped = w->warn_skipped[kind];
	w->warn_skipped[kind] = 0;
	return 1;
}

/*
 * Count one more time cap k was reached, and say whether its line may
 * be logged now: at most one a second for the whole process, whichever
 * thread gets there first.  *skipped gets how many were held back since
 * the last line.  Any thread.
 */
int
worker_cap(enum cap_kind k, uint64_t *skipped)
{
	struct capcount		*cc = &srv.caps[k];
	unsigned long long	 now = tk_clock_mono(), last;

	atomic_fetch_add(&cc->n, 1);
	last = atomic_load(&cc->last);
	/* Signed: another thread may have stored a later now. */
	if ((last != 0 && (long long)(now - last) < CAP_WARN_EVERY) ||
	    !atomic_compare_exchange_strong(&cc->last, &last, now)) {
		atomic_fetch_add(&cc->skipped, 1);
		return 0;
	}
	*skipped = atomic_exchange(&cc->skipped, 0);
	return 1;
}


/*
 * What messages call n of the protocol's sessions: a worker counts one
 * per session in nconns, which is a connection in echo but a client and
 * its upstream in proxy.  Any thread.
 */
const char *
worker_sessions(uint64_t n)
{
	return srv.proto->noun[n != 1];
}
