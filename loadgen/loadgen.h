/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload's private header: the run configuration, the report that a
 * run produces (and that JSON files carry and merge), the engine that
 * runs the connections, and the traffic modes.  tenkbench links the
 * report's files (report*.c, json.c, mode.c) and not the engine, so
 * nothing in those may call engine.c or traffic.c.
 */
#ifndef TENK_LOADGEN_H
#define TENK_LOADGEN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "tenk/loop.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "framing.h"

struct tk_hist;
struct tk_tls;
struct tk_tls_ctx;
struct tk_tls_sess;
struct engine;

/* What an operand names (target.c). */
enum lg_scheme {
	SCHEME_TCP = 0,		/* HOST:PORT */
	SCHEME_UNIX,		/* unix:PATH */
	SCHEME_HTTP,		/* http://HOST[:PORT][/PATH] */
	SCHEME_HTTPS
};

/* A URL operand, pointing into the command line. */
struct lg_url {
	enum lg_scheme	 scheme;
	const char	*text;		/* the URL as typed */
	char		 authority[280];	/* HOST[:PORT], for Host: */
	const char	*path;		/* from its '/', or NULL */
	const char	*query;		/* from its '?' when no path */
	size_t		 pathlen;	/* up to a '#' */
	size_t		 path_col;	/* the column before the path */
};

/* The request options of a URL: -H, --method, --body, --body-file. */
struct lg_http {
	const char	*method;	/* NULL: GET, POST with a body */
	const char	**hdrs;
	size_t		 nhdrs;
	const char	*body;
	const char	*body_file;
};

enum lg_mode {
	MODE_PINGPONG = 0,
	MODE_RATE,
	MODE_STREAM,
	MODE_IDLE,
	MODE_CONNECT,
	MODE_MAX
};

/* Error kinds; a failed connect counts here and in the failed total. */
enum lg_err {
	ERR_MISMATCH = 0,	/* a reply that is none of its framing's */
	ERR_RESET,		/* ECONNRESET, EPIPE */
	ERR_REFUSED,		/* ECONNREFUSED */
	ERR_TIMEOUT,		/* connect or reply timeout, ETIMEDOUT */
	ERR_CLOSED,		/* EOF from the server during the run */
	ERR_PORTS,		/* EADDRNOTAVAIL: source ports exhausted */
	ERR_FDLIMIT,		/* EMFILE, ENFILE */
	ERR_TLS,		/* a TLS handshake or record failed */
	ERR_OTHER,
	ERR_MAX
};

#define LG_MAXPCT	16		/* --percentiles entries */
#define LG_MAXPROCS	64
/*
 * Ephemeral ports for connect(2) when /proc cannot tell: Linux's
 * default net.ipv4.ip_local_port_range, 32768 to 60999.
 */
#define LG_DEFAULT_PORTS	(60999 - 32768 + 1)

/* What to run: filled by tenkload.c (or tenkbench), read-only after. */
struct lg_conf {
	struct tk_addr	*targets;
	size_t		 ntargets;
	const struct lg_url *url;	/* the URL operand, or NULL */
	struct tk_addr	*sources;	/* NULL: the kernel chooses */
	size_t		 nsources;
	enum lg_mode	 mode;
	uint64_t	 conns;		/* active connections */
	uint64_t	 idle;		/* extra idle connections */
	uint64_t	 id_base;	/* first connection id (children) */
	uint64_t	 connect_rate;	/* connects per second */
	uint64_t	 connect_timeout;	/* ns */
	uint64_t	 reply_timeout;	/* ns, 0 for none */
	uint64_t	 duration;	/* ns of measurement */
	uint64_t	 warmup;	/* ns excluded after the ramp */
	uint64_t	 rate;		/* rate mode: messages per second */
	uint64_t	 window;	/* messages in flight per connection */
	uint64_t	 size_min;	/* message size, bytes */
	uint64_t	 size_max;
	uint64_t	 max_errors;
	uint64_t	 max_unserved;
	uint64_t	 conn_life;	/* requests per connection, 0: no end */
	uint64_t	 requests;	/* -n: replies in all, 0: no limit */
	_Atomic uint64_t *tickets;	/* -n: requests taken, all processes */
	double		 conn_rate;	/* --conn-rate, per second; 0: -R */
	uint64_t	 seed;		/* of the connections' random states */
	uint64_t	 start_at;	/* --start-at, epoch ns; 0: none */
	const char	*reply;		/* --reply as typed; NULL: echo */
	const char	*message;	/* -m TEXT or "@PATH"; NULL: pattern */
	const char	*hgrm;		/* --hgrm PATH; NULL: none */
	const char	*csv;		/* --csv PATH; NULL: none */
	const char	*plot;		/* --plot DIR; NULL: none */
	int		 series;	/* keep each second's latencies */
	/*
	 * Parsed from the strings above: the framing (NULL: echo of the
	 * pattern, checked by the engine's own fast path), the requests
	 * (NULL: the pattern, sized by size_min and size_max) and the
	 * first message (NULL: none).
	 */
	const struct framing *fr;
	const struct tmpl_set *req;
	const unsigned char *first;
	size_t		 firstlen;
	int		 threads;
	int		 procs;		/* 0: automatic */
	const char	*backend;	/* NULL: best */
	int		 verify;
	int		 quiet;
	int		 signals;	/* watch SIGINT/SIGTERM */
	double		 pct[LG_MAXPCT];
	int		 npct;
	const char	*json;
	char		 args[1024];	/* the command line, for the header */
	/* TLS (--tls and the rest, tlsopt.c); tls NULL: plain TCP. */
	struct tk_tls_ctx *tls;
	const char	*tls_sni;	/* --tls-sni; NULL: the target's */
	char		**tls_hosts;	/* each target's host, as typed */
	int		 tls_resume;	/* --tls-resume */
	int		 tls_verify;	/* --tls-verify */
};

/*
 * Progress counters of one process, written by its engine once a second
 * and read by whoever prints the progress line (the same process, or
 * the parent through shared memory).  Totals since the start.
 */
struct lg_prog {
	_Atomic uint64_t	 target;
	_Atomic uint64_t	 established;
	_Atomic uint64_t	 open;
	_Atomic uint64_t	 msgs;
	_Atomic uint64_t	 bytes_in;
	_Atomic uint64_t	 bytes_out;
	_Atomic uint64_t	 errors;
	_Atomic uint64_t	 p99;		/* ns, of the last second */
	_Atomic uint64_t	 sec;		/* its epoch second + 1 */
	_Atomic uint64_t	 done;
};

/* A histogram and the figures that the buckets alone do not keep. */
struct lg_hist {
	struct tk_hist	*h;
	double		 mean;
};

/* A non-empty histogram bucket: its lowest value and its count. */
struct lg_bkt {
	uint64_t	 lo;
	uint64_t	 n;
};

/*
 * One second of a run's latencies, as buckets: b[0..nlat) corrected,
 * then b[nlat..nlat + nunc) uncorrected (rate mode only).  Seconds are
 * the wall clock's, so that the series of several processes and hosts
 * merge second by second.
 */
struct lg_sec {
	uint64_t	 t;		/* epoch second it starts */
	struct lg_bkt	*b;
	uint32_t	 nlat;
	uint32_t	 nunc;
};

struct lg_series {
	struct lg_sec	*s;
	size_t		 n;
	size_t		 cap;
};

/*
 * The result of a run, or of merging several.  Times are wall-clock
 * microseconds since the epoch, so reports from several hosts merge.
 * report.c owns the model, report_text.c the text, report_json.c the
 * JSON file, report_hgrm.c the percentile spectrum.
 */
struct report {
	/* Header. */
	char		 version[16];
	char		 mode[16];
	char		 backend[16];
	char		 targets[512];
	char		 args[1024];
	char		 kernel[64];
	char		 ports[32];
	uint64_t	 nofile;
	uint64_t	 threads;
	uint64_t	 procs;
	uint64_t	 merged;	/* reports folded into this one */
	uint64_t	 size_min;
	uint64_t	 size_max;
	uint64_t	 rate;
	uint64_t	 window;
	uint64_t	 connect_rate;
	uint64_t	 duration;	/* ns asked for */
	uint64_t	 warmup;	/* ns asked for */
	uint64_t	 requests;	/* -n, 0: none */
	uint64_t	 seed;
	uint64_t	 start_at;	/* --start-at, epoch us; 0: none */
	int		 verify;
	char		 reply[64];	/* the framing, as typed */
	char		 message[128];	/* escaped, truncated; "": pattern */
	char		 machine[160];	/* host, kernel, CPUs, memory */

	/* Times. */
	uint64_t	 t_start;
	uint64_t	 t_ramp_first;	/* first connect started */
	uint64_t	 t_ramp_last;	/* last connect started */
	uint64_t	 t_ramp_end;	/* every connect resolved */
	uint64_t	 t_meas_start;
	uint64_t	 t_meas_end;
	uint64_t	 t_end;
	uint64_t	 measured;	/* us in the windows; 0: the span */
	int		 interrupted;	/* the signal that ended it, or 0 */
	uint64_t	 interrupted_at_us;
	char		 stopped[64];	/* why it stopped early, or "" */

	/* Connections. */
	uint64_t	 requested;	/* active + idle */
	uint64_t	 idle;		/* of which idle */
	uint64_t	 attempted;
	uint64_t	 established;
	uint64_t	 failed;	/* connects that failed */
	uint64_t	 lost;		/* established, closed by an error */
	uint64_t	 open_end;	/* still open at the end */
	uint64_t	 unserved;	/* active, no message in the window */
	uint64_t	 reconnects;	/* closed on purpose and reopened */

	/* Traffic in the measured window. */
	uint64_t	 msgs;
	uint64_t	 bytes_in;
	uint64_t	 bytes_out;
	uint64_t	 verified;	/* bytes checked, whole run */
	double		 msgs_rate;	/* per second (report_windows) */
	double		 in_rate;	/* bytes per second */
	double		 out_rate;

	uint64_t	 errs[ERR_MAX];

	struct lg_hist	 lat;		/* corrected in rate mode */
	struct lg_hist	 lat_unc;	/* rate mode: from the actual send */
	struct lg_hist	 conn_lat;	/* connect latency */

	/* TLS: what the first handshake agreed on, and the handshakes. */
	int		 tls;
	char		 tls_version[16];
	char		 tls_cipher[64];
	char		 tls_alpn[32];
	uint64_t	 hs_new;	/* full handshakes, whole run */
	uint64_t	 hs_resumed;	/* resumed ones */
	uint64_t	 hs_new_w;	/* ... of them in the window */
	uint64_t	 hs_resumed_w;
	struct lg_hist	 hs_lat;	/* handshake latency */

	double		 pct[LG_MAXPCT];
	int		 npct;

	struct lg_series series;	/* each second, with --plot */
};

/* One message in flight: where it ends in the byte stream, and when. */
struct msgrec {
	uint64_t	 end;		/* stream offset just past it */
	uint64_t	 sent;		/* ns, the actual send */
	uint64_t	 due;		/* ns, the intended send (rate mode) */
};

enum lg_conn_state {
	LG_CONN_NEW = 0,	/* not started yet */
	LG_CONN_CONNECTING,
	LG_CONN_HANDSHAKE,	/* TLS, after the connect */
	LG_CONN_TICKET,		/* TLS 1.3: for the ticket to resume */
	LG_CONN_HELLO,		/* --first-message and its reply */
	LG_CONN_RUN,		/* exchanging messages */
	LG_CONN_QUIET,		/* idle after its one round trip */
	LG_CONN_DEAD		/* failed or closed */
};

/*
 * One client connection.  The byte stream it sends is the request
 * source (the pattern, or the fixed requests one after the other, or
 * its own ring "obuf" of requests rendered from templates) from offset
 * "pat" on;
 * "queued" bytes of it have been handed to the traffic mode, "sent"
 * written to the socket.  "rcvd" is how far replies have come: the
 * bytes echoed and checked on the pattern's own path, the end of the
 * last request answered when a framing reads the replies (fst).
 * Messages in flight sit in a ring of "cap" records, --window of them.
 * "pushed" counts the requests of this connection since it connected,
 * against --conn-lifetime; "reconn" marks a connection reopened on
 * purpose, which the ramp counted once already.  "seq" counts its
 * requests for {seq}, across reconnects; "mi" is the request it sends
 * next; "tin" counts those of its requests in flight that -n counts
 * (the newest ones).  Over TLS, "tls" holds its session, and "t_start"
 * is when the handshake began once the connect is done.
 */
struct lg_conn {
	struct tk_io		 io;
	struct tk_timer		 tm;		/* connect timeout, rate mode */
	struct lg_thread	*th;
	struct fr_state		*fst;		/* NULL on the pattern's path */
	struct tk_tls		*tls;		/* NULL: plain TCP */
	uint64_t		 id;
	uint64_t		 pat;
	uint64_t		 queued;
	uint64_t		 sent;
	uint64_t		 rcvd;
	uint64_t		 pushed;
	uint64_t		 t_start;	/* ns, connect started */
	uint64_t		 next_due;	/* rate mode: next send due */
	uint64_t		 rng;		/* sizes, templates */
	uint64_t		 seq;
	unsigned char		*obuf;		/* templates: rendered */
	struct msgrec		*ring;
	struct msgrec		 one;
	uint32_t		 head;
	uint32_t		 inflight;
	uint32_t		 cap;
	uint32_t		 wmsgs;		/* messages in the window */
	uint32_t		 mi;
	uint32_t		 tin;
	uint8_t			 state;
	unsigned int		 idle:1;	/* one round trip, then quiet */
	unsigned int		 wblocked:1;	/* the last send met EAGAIN */
	unsigned int		 in_reply:1;	/* fst holds the head's reply */
	unsigned int		 reconn:1;	/* reopened since its first */
	unsigned int		 retry:1;	/* a unix: connect to retry */
};

/* Counters of one thread; the measured ones only count in the window. */
struct lg_stats {
	uint64_t	 msgs;		/* measured */
	uint64_t	 bytes_in;	/* measured */
	uint64_t	 bytes_out;	/* measured */
	uint64_t	 verified;
	uint64_t	 attempted;
	uint64_t	 established;
	uint64_t	 failed;
	uint64_t	 lost;
	uint64_t	 open_end;
	uint64_t	 unserved;
	uint64_t	 reconnects;	/* measured */
	uint64_t	 hs_new;	/* TLS handshakes */
	uint64_t	 hs_resumed;
	uint64_t	 hs_new_w;	/* ... in the window */
	uint64_t	 hs_resumed_w;
	uint64_t	 errs[ERR_MAX];
	uint64_t	 t_first;	/* ns, first connect started */
	uint64_t	 t_last;	/* ns, last connect started */
	uint64_t	 t_lastrep;	/* ns, -n: the last counted reply */
	struct tk_hist	*lat;		/* measured */
	struct tk_hist	*lat_unc;	/* measured, rate mode */
	struct tk_hist	*conn_lat;
	struct tk_hist	*hs_lat;	/* TLS handshakes */
	struct tk_hist	*all;		/* this second's, for progress */
	struct tk_hist	*all_unc;	/* this second's, rate mode */
	char		 tls_version[16];	/* of the first handshake */
	char		 tls_cipher[64];
	char		 tls_alpn[32];
};

/* One thread with its own loop and its share of the connections. */
struct lg_thread {
	struct engine	*e;
	pthread_t	 tid;
	struct tk_loop	*l;
	struct lg_conn	*conns;
	size_t		 nconns;
	size_t		 started;
	size_t		 resolved;	/* established or failed */
	uint64_t	 ramp_t0;	/* ns */
	double		 ramp_rate;	/* connects per ns */
	uint64_t	 interval;	/* rate mode: ns between sends */
	uint64_t	 life;		/* requests per connection */
	const _Atomic int *phase;	/* the engine's (enum phase) */
	unsigned int	 rate:1;	/* --mode rate: uncorrected too */
	struct tk_timer	 ramp;
	struct tk_timer	 tick;
	struct tk_msg	 m_ramp;	/* to the main loop: ramp done */
	struct tk_msg	 m_stop;	/* from the main loop: stop */
	struct tk_msg	 m_sec;		/* from the main loop: a second */
	struct tk_msg	 m_secd;	/* to the main loop: here it is */
	struct tk_msg	 m_done;	/* to the main loop: -n done here */
	struct tk_msg	 m_go;		/* from the main loop: -n may send */
	struct tk_hist	*pub;		/* the second handed over */
	struct tk_hist	*pub_unc;
	char		*scratch;
	unsigned char	*rbuf;		/* a request rendered past a wrap */
	unsigned char	*obufs;		/* the connections' rings */
	struct fr_state	*fst;		/* one per connection, or NULL */
	struct tk_tls_sess *sess;	/* --tls-resume: the newest */
	uint64_t	 nreq;		/* -n */
	_Atomic uint64_t *tickets;
	_Atomic uint64_t tin;		/* -n: counted requests in flight */
	int		 done_posted;
	struct lg_stats	 st;
	struct lg_prog	 prog;
};

enum phase {
	PHASE_RAMP = 0,
	PHASE_WARMUP,
	PHASE_MEASURE,
	PHASE_DONE
};

/* engine.c */
void		 engine_run(const struct lg_conf *, struct report *,
		    struct lg_prog *);
uint64_t	 engine_fds_needed(const struct lg_conf *);
size_t		 engine_ring_size(const struct lg_conf *);
const struct lg_conf *engine_conf(const struct lg_thread *);
int		 engine_push(struct tk_loop *, struct lg_conn *, uint64_t);
int		 engine_retired(struct lg_conn *, uint64_t);
void		 engine_flush(struct tk_loop *, struct lg_conn *);

/* target.c */
enum lg_scheme	 target_parse(const char *, struct tk_addr *, struct lg_url *);
void		 target_request(struct tmpl_set *, const struct lg_url *,
		    const struct lg_http *);

/* traffic.c */
void		 traffic_start(struct tk_loop *, struct lg_conn *);
void		 traffic_fill(struct tk_loop *, struct lg_conn *);
void		 traffic_done(struct tk_loop *, struct lg_conn *,
		    const struct msgrec *);

/* tlsopt.c */
struct tlsopt {
	int		 on;		/* --tls, or any --tls-* */
	const char	*alpn;
	const char	*ca;
	const char	*ciphers;
	int		 version;	/* TK_TLS_1_2 or _1_3; 0: both */
};
void		 tlsopt_set(struct tlsopt *, struct lg_conf *, const char *,
		    const char *);
void		 tlsopt_apply(struct tlsopt *, struct lg_conf *, int, char **);
void		 tlsopt_free(struct lg_conf *);

/* mode.c */
const char	*mode_name(enum lg_mode);
int		 mode_parse(const char *);

/* A measured window, for report_windows(); times in us. */
struct lg_window {
	uint64_t	 start;
	uint64_t	 end;
	uint64_t	 measured;	/* us inside [start, end] */
};

/* report.c */
extern const char *const report_err_names[ERR_MAX];
int		 report_init(struct report *);
void		 report_free(struct report *);
void		 report_header(struct report *, const struct lg_conf *);
int		 report_mergeable(const struct report *, const struct report *,
		    char *, size_t);
void		 report_merge(struct report *, const struct report *);
int		 report_series_add(struct report *, uint64_t,
		    const struct tk_hist *, const struct tk_hist *);
double		 report_stdev(const struct lg_hist *);
int		 report_windows(struct report *, struct lg_window *, size_t);
void		 report_window(const struct report *, struct lg_window *);
uint64_t	 report_errors(const struct report *);
uint64_t	 report_measured(const struct report *);
int		 report_result(const struct report *, uint64_t, uint64_t,
		    char *, size_t);
const char	*report_signame(int, char *, size_t);
const char	*report_pct_name(double, char *, size_t);
double		 report_secs(uint64_t, uint64_t);
double		 report_ramp_rate(const struct report *);
double		 report_hs_rate(const struct report *);
double		 report_hs_new_rate(const struct report *);
double		 report_hs_resumed_rate(const struct report *);
uint64_t	 report_epoch_us(void);
void		 report_machine(char *, size_t, int);

/* report_text.c */
void		 report_print(FILE *, const struct report *);
void		 report_progress(FILE *, uint64_t, const struct lg_prog *,
		    const struct lg_prog *, double);
void		 report_prog_sum(struct lg_prog *, const struct lg_prog *);

/* report_json.c */
int		 report_json_write(FILE *, const struct report *);
int		 report_json_load(const char *, struct report *);
int		 report_json_fd(int, struct report *);

/* report_hgrm.c */
int		 report_hgrm_write(FILE *, const struct report *);
double		 report_hgrm_next(double);

/* report_csv.c */
int		 report_csv_write(FILE *, const struct report *);
void		 report_csv_str(FILE *, const char *);

/* report_plot.c */
int		 report_plot(const char *, const struct report *, int);

/* json.c: a tree of values read from JSON text. */
enum jv_type {
	JV_NULL = 0,
	JV_BOOL,
	JV_NUM,
	JV_STR,
	JV_ARR,
	JV_OBJ
};

struct jv {
	enum jv_type	 t;
	char		*key;		/* member name, in an object */
	char		*s;		/* JV_STR */
	double		 d;		/* JV_NUM, JV_BOOL */
	uint64_t	 u;		/* JV_NUM when a whole number >= 0 */
	int		 isint;
	struct jv	*kid;		/* JV_ARR, JV_OBJ */
	size_t		 n;
	size_t		 cap;		/* kid's room, grown by doubling */
};

void		 json_u(FILE *, const char *, const char *, uint64_t, int);
void		 json_d(FILE *, const char *, const char *, double, int);
void		 json_s(FILE *, const char *, const char *, const char *, int);
int		 json_parse(const char *, size_t, struct jv *, char *, size_t);
void		 json_free(struct jv *);
const struct jv	*json_get(const struct jv *, const char *);
uint64_t	 json_get_u(const struct jv *, const char *);
double		 json_get_d(const struct jv *, const char *);
void		 json_get_s(const struct jv *, const char *, char *, size_t);

/*
 * A counter with one writer and readers in other threads: a relaxed
 * load and store, which compile to plain moves.
 */
static inline void
ctr_add(_Atomic uint64_t *p, uint64_t n)
{
	atomic_store_explicit(p, atomic_load_explicit(p,
	    memory_order_relaxed) + n, memory_order_relaxed);
}

static inline uint64_t
ctr_get(const _Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

/* Whether th's engine is in its measured window.  Owner thread. */
static inline int
engine_measuring(const struct lg_thread *th)
{
	return atomic_load_explicit(th->phase, memory_order_relaxed) ==
	    PHASE_MEASURE;
}

/*
 * Whether c may queue one more request: its --window has room and its
 * --conn-lifetime is not spent.
 */
static inline int
engine_room(const struct lg_conn *c)
{
	return c->inflight < c->cap && c->pushed < c->th->life;
}

#endif /* TENK_LOADGEN_H */
