/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Traffic modes: when a connection sends its next message, and what a
 * finished message's latency is.  The engine owns the socket, the byte
 * stream and verification; this file only queues messages (engine_push)
 * and records them.
 *
 *	pingpong  --window messages in flight (default 1); the next
 *		  leaves when a reply is complete (closed loop)
 *	rate	  a fixed schedule per connection, interval = conns / rate,
 *		  with a random phase; at most --window messages in flight
 *		  (default 1), so a late reply delays the next send, which
 *		  then leaves at once.  Latency is counted from the
 *		  intended send time (corrected, as wrk2 does) and from
 *		  the actual one.  The schedule runs on across reconnects.
 *	stream	  --window messages in flight (default 8)
 *	idle	  one round trip, then silence
 *	connect	  one request (with a message; else none), then the
 *		  engine closes and connects again
 *
 * Every mode stops queueing when --conn-lifetime requests have left
 * (engine_room), or -n's have (engine_push fails); the engine reopens
 * the connection after the last reply.  --conn-rate gives the rate
 * schedule's interval per connection instead of from -R.
 */
#include <string.h>

#include "tenk/hist.h"
#include "tenk/loop.h"
#include "tenk/timer.h"
#include "loadgen.h"

/*
 * c has just connected (again), and answered its first message if it
 * had one.  A rate schedule starts at a random phase on the first
 * connect and runs on across the later ones.
 */
void
traffic_start(struct tk_loop *l, struct lg_conn *c)
{
	const struct lg_conf	*conf = engine_conf(c->th);
	uint64_t		 iv = c->th->interval;

	if (conf->mode == MODE_RATE && !c->idle && c->next_due == 0)
		c->next_due = tk_loop_now(l) + (iv > 0 ? c->rng % iv : 0);
	traffic_fill(l, c);
	engine_flush(l, c);
}

/* Queue what the mode allows now; the caller flushes. */
void
traffic_fill(struct tk_loop *l, struct lg_conn *c)
{
	const struct lg_conf	*conf = engine_conf(c->th);

	if (c->state != LG_CONN_RUN)
		return;
	if (c->idle) {
		if (c->queued == 0)
			(void)engine_push(l, c, 0);
		return;
	}
	switch (conf->mode) {
	case MODE_PINGPONG:
	case MODE_STREAM:
	case MODE_CONNECT:
		while (engine_room(c) && engine_push(l, c, 0) == 0)
			;
		break;
	case MODE_RATE:
		/*
		 * A full window is late: the next send waits for a reply.
		 * -n with nothing left: the schedule stops.
		 */
		while (engine_room(c) && tk_loop_now(l) >= c->next_due) {
			if (engine_push(l, c, c->next_due) == -1)
				return;
			c->next_due += c->th->interval;
		}
		if (engine_room(c) && !tk_timer_pending(&c->tm))
			(void)tk_timer_arm_at(l, &c->tm, c->next_due);
		break;
	default:
		break;
	}
}

/* Message m of c is fully echoed. */
void
traffic_done(struct tk_loop *l, struct lg_conn *c, const struct msgrec *m)
{
	struct lg_thread	*th = c->th;
	uint64_t		 now = tk_loop_now(l), from, lat, unc;

	from = m->due < m->sent ? m->due : m->sent;
	lat = now > from ? now - from : 0;
	unc = now > m->sent ? now - m->sent : 0;
	tk_hist_record(th->st.all, lat);
	if (th->rate)
		tk_hist_record(th->st.all_unc, unc);
	ctr_add(&th->prog.msgs, 1);
	if (th->nreq != 0 ? engine_retired(c, now) : engine_measuring(th)) {
		th->st.msgs++;
		c->wmsgs++;
		tk_hist_record(th->st.lat, lat);
		if (th->rate)
			tk_hist_record(th->st.lat_unc, unc);
	}
	if (c->idle)
		c->state = LG_CONN_QUIET;
}
