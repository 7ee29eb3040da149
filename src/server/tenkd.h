/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkd, private: the configuration, the worker threads with their
 * listeners, connections, and the per-protocol step functions.  The main
 * thread (main.c) owns signals and talks to workers only through
 * tk_loop_post(); a worker (worker.c) owns one loop, one listener per
 * address, its connections (conn.c) and its counters (stats.c).  The
 * protocol (echo.c, proxy.c) sees a connection only through its step
 * function.
 */
#ifndef TENK_SERVER_TENKD_H
#define TENK_SERVER_TENKD_H

#include <sys/queue.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include "tenk/buf.h"
#include "tenk/cli.h"
#include "tenk/loop.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "tenk/tls.h"

#define MAXLISTEN	16		/* --listen addresses */
#define MAXTHREADS	256		/* --threads */
#define MAXWORKERS	64		/* --workers */
#define CONNCAP_MAX	10000000LL	/* --max-conns, --max-conns-per-ip */

#define SCRATCH_SIZE	(64 * 1024)	/* per-thread read buffer */
#define POOL_BUFSIZE	(16 * 1024 - 64) /* a pool buffer, header apart */
#define MEM_MIN_BUDGET	(64 * 1024)	/* --max-memory, unless 0 */
#define POOL_MAXFREE	64		/* spare buffers kept per thread */
/*
 * On io_uring's completions a queue that starts with at most POOL_SMALL
 * bytes takes a small buffer (512 bytes with its header and malloc's):
 * every message is queued there until its send completes, and a
 * 64-byte one held 16k of the pool for that time.
 */
#define POOL_SMALL	(512 - 32)
#define POOL_MAXSFREE	256		/* spare small ones kept */
#define ACCEPT_BATCH	64		/* accepts per listener turn */
#define ACCEPT_BATCH_MAX 1024		/* ... doubled while it fills */
#define PARK_MIN	256		/* accepted, waiting: first room */
#define ACCESS_BUFSIZE	(32 * 1024)	/* access-log records per thread */

/* Why a connection closed: counted per thread, named in the access log. */
enum conn_reason {
	CONN_EOF = 0,		/* the peer finished, everything echoed */
	CONN_RESET,		/* ECONNRESET, EPIPE */
	CONN_ERROR,		/* any other socket error */
	CONN_TIMEOUT,		/* --idle-timeout */
	CONN_SHUTDOWN,		/* force-closed at the drain deadline */
	CONN_NOMEM,		/* no buffer for the unsent tail */
	CONN_MEMORY,		/* shed at the --max-memory budget */
	CONN_PROXYHDR,		/* --accept-proxy: no good header in time */
	CONN_PROXYFROM,		/* its peer not in --accept-proxy-from */
	CONN_TLS,		/* TLS: a handshake or ClientHello failed */
	CONN_NREASONS
};

/*
 * The configuration: every option, as the command line and the -f file
 * give it (config.c builds it, and nothing else writes it).  A process
 * runs on one, srv.cfg; a reload builds a new one and swaps it in.
 * What start-up fits to the limits it meets lives in struct server.
 */
#define DEFAULT_LISTEN	"127.0.0.1:7777"
#define MAXUPSTREAMS	64
#define UPS_NAMEMAX	64		/* name=, its NUL included */
#define PIN_MAXFROM	64		/* --accept-proxy-from networks */

enum balance {
	BALANCE_RR = 0,
	BALANCE_LEASTCONN,
	BALANCE_HASH,		/* and "source" (chash.c) */
};

/* What --balance hash hashes: --hash-key. */
enum hash_key {
	HKEY_SOURCE = 0,	/* the client's address */
	HKEY_SOURCE_PORT,	/* its address and port */
};

/* The proxy's own. */
struct pxconf {
	enum balance	 balance;
	uint64_t	 connect_timeout;	/* ns */
	uint64_t	 fin_timeout;		/* ns */
	int		 retries;
	int		 fail_max;
	uint64_t	 fail_timeout;		/* ns */
	long long	 max_per_ip;		/* 0 = no cap */
	int		 send_proxy;		/* 0, 1 or 2 */
	enum hash_key	 hash_key;
};

/*
 * An upstream: -u HOST:PORT[,weight=N][,backup][,name=NAME], and over
 * TLS ([,tls][,sni=NAME][,ca=FILE][,noverify]: tlsorig.c).
 */
struct upconf {
	struct tk_addr	 addr;
	char		 name[TK_ADDRSTRLEN];	/* the address, as written */
	char		 hname[UPS_NAMEMAX];	/* name=, or the address */
	int		 weight;
	int		 backup;
	int		 tls;			/* any of the TLS ones */
	int		 noverify;
	char		*sni;			/* sni=, else its host */
	char		*ca;			/* ca=, or NULL */
	/* Made by config_check() from ca=: its client context. */
	struct tk_tls_ctx *tctx;
};

/*
 * --sni-route NAME=HOST:PORT (sniroute.c): a name ("a.test",
 * "*.a.test" or "*") and the upstream it routes to.
 */
struct sniroute {
	char		*name;
	char		*to;			/* HOST:PORT as given */
	int		 up;			/* into ups[], once finished */
};

/*
 * TLS toward clients: --tls-cert and the rest (tlsterm.c).  The
 * certificate files and keys pair by order.
 */
#define TLS_MAXPAIRS	16

struct tlsconf {
	char		*cert[TLS_MAXPAIRS];	/* --tls-cert */
	char		*key[TLS_MAXPAIRS];	/* --tls-key */
	int		 ncert;
	int		 nkey;
	char		*ciphers;		/* --tls-ciphers */
	int		 version;		/* 0: 1.2 and 1.3 */
	uint64_t	 hs_timeout;		/* ns */
	uint64_t	 ticket_period;		/* ns, 0: no tickets */
	int		 given;			/* any but the timeout */
	/*
	 * Made by config_check() from the files, before privileges go:
	 * the server context, and why it has no kTLS ("" if it has).
	 */
	struct tk_tls_ctx *ctx;
	char		 ktls_why[600];
};

/* Active health checks: --check-interval and the rest. */
struct hcconf {
	uint64_t	 interval;		/* ns, 0 = no checks */
	int		 rise;			/* successes to come back */
	int		 fall;			/* failures to go */
	char		*send;			/* a line, CRLF included */
	char		*expect;		/* the reply's first bytes */
	uint64_t	 timeout;		/* ns (its default: config.c) */
};

/*
 * --accept-proxy and --accept-proxy-from, the peers that may send one
 * (IPv4 as IPv4-mapped IPv6, the prefix counted so too).
 */
struct pinnet {
	uint8_t		 addr[16];
	uint8_t		 bits;
};

struct pinconf {
	int		 on;			/* --accept-proxy */
	uint64_t	 timeout;		/* ns, for the whole header */
	int		 nfrom;			/* 0: any peer */
	struct pinnet	 from[PIN_MAXFROM];
};

struct config {
	const char	*mode;			/* "echo", "proxy" */
	char		*conf;			/* -f, or NULL */
	struct tk_addr	 listen[MAXLISTEN];	/* as given, port 0 too */
	int		 nlisten;
	int		 listen_given;		/* not the default */
	int		 threads;
	const char	*backend;		/* NULL: the best one */
	long long	 max_conns;		/* -1: by the fd limit */
	int		 backlog;		/* as asked; 0 = somaxconn */
	uint64_t	 idle_timeout;		/* ns, 0 = never */
	uint64_t	 drain_timeout;		/* ns */
	size_t		 buffer_limit;		/* queued bytes per conn */
	unsigned int	 ring_bufs;		/* io_uring receive buffers */
	long long	 max_memory;		/* bytes, -1 = by default */
	int		 log_level;
	int		 syslog;
	int		 facility;		/* -1: the default */
	char		*access_log;
	int		 access_json;		/* --access-log-format json */
	size_t		 access_buffer;		/* bytes waiting, at most */
	char		*pidfile;
	char		*user;
	char		*group;
	uid_t		 uid;
	gid_t		 gid;
	int		 check;
	int		 workers;		/* processes under a master */
	uint64_t	 ready_timeout;		/* ns, new workers, master */
	int		 metrics_on;		/* --metrics given */
	struct tk_addr	 metrics;
	int		 metrics_clients;	/* at once, at most */
	int		 splice;		/* proxy: --splice auto */
	int		 splice_pipes;		/* pipes per thread */
	int		 fastpath;		/* proxy: --fastpath sockmap */
	struct pxconf	 px;
	struct upconf	 ups[MAXUPSTREAMS];
	int		 nups;
	struct tk_addr	*sources;		/* --source, in turn */
	size_t		 nsources;
	struct hcconf	 hc;
	struct pinconf	 pin;
	struct tlsconf	 tls;
	struct sniroute	*routes;		/* --sni-route */
	int		 nroutes;
};

/*
 * The two sides of a session, which byte counts keep apart: its client
 * (every mode) and, in proxy mode, its upstream.
 */
enum side {
	SIDE_CLIENT = 0,
	SIDE_UPSTREAM,
	SIDE_N
};

/* Counters of one worker; only its own thread writes them. */
struct stats {
	uint64_t	 accepted;
	uint64_t	 active;
	uint64_t	 closed[CONN_NREASONS];
	uint64_t	 bytes_in[SIDE_N];	/* received, by side */
	uint64_t	 bytes_out[SIDE_N];	/* sent, by side */
	uint64_t	 bufs_inuse;		/* pool buffers in queues */
	uint64_t	 bufs_free;		/* spare pool buffers */
	uint64_t	 noport;		/* proxy: no local port */
	uint64_t	 spliced;		/* bytes out by splice(2) */
	uint64_t	 fpbytes;		/* by the kernel (--fastpath) */
	uint64_t	 fpsess;		/* sessions it forwarded */
	uint64_t	 nopipe;		/* bulk flows left copying */
	uint64_t	 pipes;			/* pipes in use */
	uint64_t	 piped;			/* bytes in them */
	uint64_t	 iterations;		/* of the worker's loop */
	uint64_t	 ring_dry;		/* io_uring: recvs re-armed */
	uint64_t	 cq_overflow;		/* io_uring: CQ was full */
	uint64_t	 ms_accepted;		/* io_uring: by ms accept */
	uint64_t	 accept_dropped;	/* io_uring: closed unserved */
	uint64_t	 tls_new;		/* full TLS handshakes */
	uint64_t	 tls_resumed;		/* resumed ones */
	uint64_t	 tls_fail[TK_TLS_F_MAX]; /* failed, by kind */
	uint64_t	 log_dropped;		/* access-log records */
};

struct worker;
struct dp_flow;
struct dp_pipe;
struct pin;
struct upstream;
struct acct_rec;

/*
 * A connection, kept small: an idle one holds no data buffer, so this
 * struct (88 bytes) is most of what it costs in user space.  The
 * watcher comes first, so the handler finds the conn from its tk_io; its
 * arg is the worker.  When the access log is on, or the protocol wants
 * its peer's address (proto->peer), a struct conn_acct follows the
 * protocol's struct (proto->size bytes) in the same allocation; then,
 * when the protocol has one in this process (proto->tail), its tail.
 */
struct conn {
	struct tk_io		 io;		/* arg: the worker */
	LIST_ENTRY(conn)	 slot;		/* idle wheel slot */
	struct tk_bufq		 outq;		/* bytes not yet sent */
	uint32_t		 last;		/* activity, see CONN_TSHIFT */
	uint8_t			 state;		/* protocol's own */
	uint8_t			 acct:1;	/* a conn_acct follows */
	uint8_t			 tail:1;	/* then proto->tail()'s */
};

/*
 * Per-connection figures for the access log; a proxy session keeps its
 * client's address here for its options too (proto->peer), and its own
 * byte count (in unused).
 */
struct conn_acct {
	uint64_t		 start;		/* monotonic ns */
	uint64_t		 in;		/* out: less what is queued */
	struct sockaddr_in6	 peer;		/* or a sockaddr_in */
	uint32_t		 tc;		/* proxy: connect, in us */
};

#define CONN_ACCT(w, c)	\
	((struct conn_acct *)((char *)(c) + (w)->proto->size))

/*
 * conn->last is in units of 2^20 ns (about 1.05 ms): a shift, not a
 * division, on the read path, and 32 bits wrap only after 52 days, which
 * unsigned differences absorb for any idle timeout below 26 days.  The
 * truncation may make a timeout fire up to one unit early.
 */
#define CONN_TSHIFT	20

/* Activity on c at now (ns): the one store a read or write costs. */
static inline void
conn_touch(struct conn *c, uint64_t now)
{
	c->last = (uint32_t)(now >> CONN_TSHIFT);
}

/* When c was last active, in ns, from c->last and the time now. */
static inline uint64_t
conn_last_ns(const struct conn *c, uint64_t now)
{
	uint64_t	nowu = now >> CONN_TSHIFT;
	uint32_t	age = (uint32_t)nowu - c->last;

	return (nowu - age) << CONN_TSHIFT;
}

/*
 * A protocol: the size of its connection struct (at least struct conn),
 * what to do with a fresh connection, and the step function that the
 * run queue calls when the connection is runnable.  The step function
 * does I/O until EAGAIN or its budget, sets the watcher's want, and may
 * close the connection.
 */
struct proto {
	const char	*name;
	size_t		 size;
	/* Optional: set up from srv.cfg, in the process that serves. */
	void		(*init)(void);
	/*
	 * A fresh connection.  Its peer's address is kept (CONN_ACCT) for
	 * the access log, or when peer() asks for it.
	 */
	void		(*start)(struct worker *, struct conn *);
	void		(*step)(struct worker *, struct conn *);
	/* Optional: called by conn_close() after its access-log record. */
	void		(*close)(struct worker *, struct conn *,
			    enum conn_reason);
	/* Optional: the protocol's own lines of /stats (stats.c), */
	void		(*stats)(FILE *);
	/* ... and its part of a thread's line. */
	void		(*stats_line)(FILE *, const struct stats *);
	/*
	 * Optional: the bytes c holds queued in every direction, for the
	 * memory budget's choice of whom to close; NULL: c->outq alone.
	 */
	size_t		(*queued)(const struct conn *);
	/*
	 * For the completion data path: the connection io belongs to, and
	 * in f the flow whose source (role DP_SRC) or destination (DP_DST)
	 * io is, as the step describes it.
	 */
	struct conn	*(*flow)(struct tk_io *io, int role, struct dp_flow *f);
	/*
	 * Optional: whether start uses the peer's address for more than
	 * the access log; on completions, where accepting gives none,
	 * the worker reads it (getpeername) only then.
	 */
	int		(*peer)(void);
	/*
	 * Optional: bring c->last up to date with activity the step did
	 * not see (the kernel's, --fastpath); before the idle wheel
	 * closes c.
	 */
	void		(*idle)(struct worker *, struct conn *);
	int		 own_log;	/* writes its own access-log line */
	int		 sides;		/* SIDE_N: an upstream side too */
	int		 units;		/* --max-conns units a session */
	const char	*noun[2];	/* a session, sessions, in messages */
	/* Optional: the TLS fields of c's access-log record. */
	void		(*acct_tls)(const struct conn *, struct acct_rec *);
	/*
	 * Optional: the bytes every connection of this process keeps
	 * after its conn_acct (the proxy's TLS state), or 0; the same
	 * from start to exit.
	 */
	size_t		(*tail)(void);
};

/* A listening socket of one worker, one per --listen address. */
struct listener {
	struct tk_io		 io;		/* arg: this listener */
	struct worker		*w;
	int			 idx;		/* into cfg.listen */
	unsigned int		 batch;		/* accept4s this turn */
	unsigned int		 ms:1;		/* by multishot accept */
};

/* The idle wheel: see conn.c. */
#define WHEEL_SLOTS	1024

/*
 * The caps that hold clients back, each counted for the whole process
 * and logged at most once a second (worker_cap); /stats shows the
 * counts as "stats caps: max-conns N ip-limit N".  A new cap adds its
 * kind before CAP_NKINDS and its name to cap_names in stats.c, and
 * calls worker_cap() where it bites.  The memory budget has a line of
 * its own ("stats memory", mem.c), since it counts episodes and the
 * connections it closed, not refusals.
 */
enum cap_kind {
	CAP_MAXCONNS = 0,	/* accepting paused at --max-conns */
	CAP_PERIP,		/* a session refused at --max-conns-per-ip */
	CAP_NKINDS
};

struct capcount {
	atomic_ullong		 n;		/* times reached */
	atomic_ullong		 last;		/* last line, monotonic ns */
	atomic_ullong		 skipped;	/* reached since, not logged */
};

/* Warnings a worker rate-limits, each kind on its own (worker_warn_ok). */
enum warn_kind {
	WARN_EMFILE = 0,	/* accept4: out of descriptors */
	WARN_ACCEPT,		/* accept4, or watching its fd, failed */
	WARN_NOMEM,		/* no memory for a connection */
	WARN_NOPORT,		/* proxy: connect found no local port */
	WARN_TLSUP,		/* proxy: an upstream's TLS failed */
	WARN_ALOG,		/* access-log records dropped */
	WARN_NKINDS
};

LIST_HEAD(connlist, conn);

struct worker {
	int			 id;
	pthread_t		 thread;
	struct tk_loop		*l;
	const struct proto	*proto;
	struct listener		 ls[MAXLISTEN];
	int			 nls;

	char			*scratch;	/* SCRATCH_SIZE bytes */
	struct tk_bufpool	 pool;
	int			 cq;		/* completion data path */
	struct stats		 st;
	uint64_t		 nconns;	/* open connections */

	/* Idle wheel. */
	struct connlist		 wheel[WHEEL_SLOTS];
	uint64_t		 wheel_done;	/* last tick swept */
	struct tk_timer		 wheel_timer;

	/* Accepting. */
	unsigned int		 draining:1;	/* listeners closed */
	unsigned int		 done:1;	/* reported to main */
	unsigned int		 emfile:1;	/* paused: out of fds */
	unsigned int		 capped:1;	/* paused: --max-conns */
	uint64_t		 backoff;	/* EMFILE pause, ns */
	struct tk_timer		 pause_timer;
	atomic_int		 resume_posted;
	uint64_t		 turn_iter;	/* the loop iteration of turn */
	unsigned int		 turn;		/* connections set up in it */

	/* Multishot accept: connections waiting to be served (accept.c). */
	int			*park;		/* a ring of park_cap fds */
	unsigned int		 park_cap;
	unsigned int		 park_head;
	unsigned int		 npark;
	struct tk_timer		 park_timer;	/* the next turn serves */

	/* The memory budget (mem.c). */
	unsigned int		 mempaused:1;	/* not accepting meanwhile */
	struct tk_timer		 mem_timer;	/* while an episode is on */
	struct tk_msg		 m_mem;		/* an episode began */
	atomic_int		 mem_posted;

	/* Splicing (dpath.c): spare pipes, and how many are open. */
	SLIST_HEAD(, dp_pipe)	 pipes;
	int			 npipes;
	int			 npipes_free;
	struct tk_timer		 pipe_timer;	/* closes idle spares */
	uint64_t		 piped;		/* bytes in the pipes */

	/* Rate-limited warnings: when the last one went out, how many since. */
	uint64_t		 warn_last[WARN_NKINDS];
	uint64_t		 warn_skipped[WARN_NKINDS];

	/* TLS to upstreams: the newest session of each (tlsorig.c). */
	struct tk_tls_sess	*upsess[MAXUPSTREAMS];
	struct tk_timer		 tls_timer;	/* tk_tls_sweep (tlsterm.c) */

	/* Messages from main, and replies to it. */
	struct tk_msg		 m_drain;
	struct tk_msg		 m_force;
	struct tk_msg		 m_stop;
	struct tk_msg		 m_stats;
	struct tk_msg		 m_resume;
	struct tk_msg		 m_done;	/* to main */
	struct tk_msg		 m_stats_reply;	/* to main */
	struct stats		 snap;		/* for m_stats_reply */

	/* The access log's records, written out whole (conn.c). */
	char			*alog;		/* ACCESS_BUFSIZE, or NULL */
	size_t			 alog_len;
	struct tk_timer		 alog_timer;	/* while alog_len > 0 */

	LIST_HEAD(, pin)	 pins;		/* PROXY headers due (pin.c) */
};

/* The process. */
struct server {
	struct config		 cfg;
	const struct proto	*proto;		/* by mode */
	struct tk_loop		*l;		/* main thread's loop */
	struct worker		*workers;
	int			 nworkers;

	/* What start-up fitted to the limits it met. */
	struct tk_addr		 listen[MAXLISTEN];	/* as bound */
	int			 nlisten;
	uint64_t		 max_conns;	/* effective, 0 = no cap */
	uint64_t		 nofile;	/* RLIMIT_NOFILE */
	int			 splice;	/* cfg's, if pipes fit */
	int			 splice_pipes;
	int			 fastpath;	/* cfg's, if it loaded */

	atomic_ullong		 nconns;	/* all threads */
	atomic_int		 ncapped;	/* workers paused at the cap */
	struct capcount		 caps[CAP_NKINDS];
	int			 access_fd;	/* -1 when off */
	int			 ndone;		/* workers drained (main) */
	int			 nstats;	/* replies this round (main) */
	unsigned int		 draining:1;
	unsigned int		 forcing:1;
	unsigned int		 stopping:1;
	unsigned int		 stats_busy:1;
	unsigned int		 stats_again:1;
	struct tk_timer		 drain_timer;

	/*
	 * The memory budget (mem.c): fixed at start, but the gauge, which
	 * every worker's pool adds to per buffer, on a cache line of its
	 * own, and the flag that the data path reads on the next.
	 */
	size_t			 mem_budget;	/* bytes, 0 = none */
	size_t			 mem_rings;	/* of it, held: rings, maps */
	size_t			 mem_cap;	/* for queues: budget - rings */
	size_t			 mem_high;	/* an episode from here */
	size_t			 mem_low;	/* until below here */
	_Alignas(64) atomic_size_t mem_held;	/* bytes in handed-out bufs */
	_Alignas(64) atomic_int	 mem_tight;	/* an episode: 1, 2 starting */
	atomic_ullong		 mem_since;	/* when it began, ns */
	atomic_ullong		 mem_episodes;
	atomic_ullong		 mem_shed;	/* closed in this episode */
};

extern struct server	 srv;

/*
 * The most a connection holding queued bytes may queue before it stops
 * reading: --buffer-limit, or what it holds already while the memory
 * budget is tight (global backpressure).  The flag is read only when
 * the queue is not empty, so a connection that keeps up never reads it.
 */
static inline size_t
conn_limit(size_t queued)
{
	if (queued > 0 && atomic_load_explicit(&srv.mem_tight,
	    memory_order_relaxed))
		return queued;
	return srv.cfg.buffer_limit;
}

/* worker.c */
void		 worker_init(struct worker *, int, const int *);
void		 worker_start(struct worker *);
void		 worker_free(struct worker *);
const struct proto *worker_proto(const struct config *);
void		 worker_snapshot(struct worker *, struct stats *);

/* accept.c */
void		 accept_init(struct worker *, const int *);
void		 accept_close(struct worker *);
void		 accept_free(struct worker *);
void		 worker_reserve_more(void);
void		 worker_conn_gone(struct worker *);
void		 worker_mem_resume(struct worker *);

/* srv.c */
int		 worker_warn_ok(struct worker *, enum warn_kind, uint64_t *);
const char	*worker_sessions(uint64_t);
int		 worker_cap(enum cap_kind, uint64_t *);

/* mem.c */
void		 mem_init(void);
unsigned int	 mem_ring_bufs(void);
void		 mem_fixed(size_t);
void		 mem_worker_init(struct worker *);
void		 mem_check(struct worker *);
int		 mem_watch(struct worker *);

/* conn.c */
extern const char *const conn_reasons[CONN_NREASONS];
struct conn	*conn_new(struct worker *, int, const struct sockaddr *,
		    socklen_t);
void		 conn_close(struct worker *, struct conn *, enum conn_reason);
void		 conn_step(struct worker *, struct conn *);
void		 conn_warn_nomem(struct worker *);
void		 conn_warn_watch(struct worker *, int, const char *);
void		 conn_wheel_init(struct worker *);
void		 conn_close_all(struct worker *, enum conn_reason);
/* One access-log record: conn_access_record() writes it. */
struct acct_rec {
	const struct sockaddr_in6 *peer;	/* the client */
	const char		*upstream;	/* proxy's, or NULL */
	uint64_t		 start;		/* monotonic ns */
	uint64_t		 in;		/* bytes from the client */
	uint64_t		 out;		/* bytes to it */
	int			 tries;		/* proxy: connect attempts */
	const char		*term;		/* proxy: who/phase, or NULL */
	const char		*why;		/* how it closed */
	uint64_t		 tc;		/* proxy: ns to connect */
	int			 connected;	/* proxy: tc is set */
	const char		*sni;		/* TLS: the name asked */
	const char		*tls_version;	/* TLS: agreed, or NULL */
	const char		*tls_cipher;
	const char		*tls_fail;	/* TLS: the failure's kind */
};
void		 conn_access_record(struct worker *, const struct acct_rec *);
void		 conn_access_init(struct worker *);
void		 conn_access_flush(struct worker *);
void		 conn_access_free(struct worker *);

/* alog.c: the access log's writer thread */
void		 alog_start(void);
int		 alog_put(char **, size_t);
void		 alog_stop(void);

/*
 * dpath.c: the data path (see there).  A flow is one direction of a
 * stream, described by the protocol from the fields of its session for
 * the time of a call: bytes read from src are sent to dst, and what dst
 * did not take waits in q (or, spliced, in a pipe).  flags (DP_F_*),
 * pipe and spl are the direction's own state in the session; nin, when
 * not NULL, counts the bytes read (what was sent is what was read less
 * what is left in q and the pipe).
 */
#define DP_F_EOF	0x01	/* the source finished (read 0) */
#define DP_F_SHUT	0x02	/* and its FIN was passed on */
#define DP_F_SENDING	0x04	/* completions: a send of q is in flight */
/* Failures noted for dp_pump to report (dp_fail, dpath.c). */
#define DP_F_SRCERR	0x08	/* reading the source failed */
#define DP_F_DSTERR	0x10	/* sending to the destination failed */
#define DP_F_NOMEM	0x20	/* no buffer for bytes read */
#define DP_F_RESET	0x40	/* the first failure was a reset */
#define DP_F_ERR	(DP_F_SRCERR | DP_F_DSTERR | DP_F_NOMEM)
#define DP_F_END	(DP_F_EOF | DP_F_SRCERR)	/* no more reads */
#define DP_F_FINWAIT	0x80	/* TLS: close_notify waits to be sent */

#define DP_SRC		0	/* roles for proto->flow */
#define DP_DST		1

enum dp_err {
	DP_ERR_SRC = 1,		/* reading the source failed: errno */
	DP_ERR_DST,		/* sending to the destination failed */
	DP_ERR_NOMEM,		/* no buffer for the tail */
};

/*
 * A pipe of a thread's splicing pool (dpath.c) and the bytes it holds
 * on their way.  A direction's splice state is a pointer to the pipe it
 * splices through (&dp_nopipe while copying) and a byte of DP_S_* bits,
 * zero for "copying, may splice".
 */
struct dp_pipe {
	int			 rfd;
	int			 wfd;
	uint32_t		 len;	/* bytes in it */
	uint64_t		 since;	/* a spare since, monotonic ns */
	SLIST_ENTRY(dp_pipe)	 link;
};

#define DP_S_STREAK	0x03	/* full copy reads in a row */
#define DP_S_OFF	0x04	/* splice(2) refused: copy */
#define DP_S_DENIED	0x08	/* found no pipe, counted */

extern struct dp_pipe	 dp_nopipe;	/* none: holds no bytes */

struct dp_flow {
	struct tk_io		*src;
	struct tk_io		*dst;
	struct tk_tls		*tsrc;	/* TLS on src, or NULL */
	struct tk_tls		*tdst;	/* TLS on dst, or NULL */
	struct tk_bufq		*q;
	uint8_t			*flags;	/* DP_F_* */
	struct dp_pipe	       **pipe;	/* its pipe, or &dp_nopipe */
	uint8_t			*spl;	/* DP_S_*: DP_S_OFF never splices */
	uint64_t		*nin;	/* bytes read from src, or NULL */
	struct conn		*c;	/* stamped on activity */
	/*
	 * Optional: whether a read of 0 from src is not yet the end, and
	 * when to look again (the fast path's bytes on their way).
	 */
	int			(*more)(struct dp_flow *);
	enum dp_err		 err;	/* after a -1 */
	int			 stop;	/* dp_pump's own */
};

void		 dp_init(void);
void		 dp_fail(struct dp_flow *, unsigned int, int);
int		 dp_settle(struct worker *, struct dp_flow *);
int		 dp_pump(struct worker *, struct dp_flow *, size_t *);
int		 dp_send(struct worker *, struct dp_flow *, const void *,
		    size_t);
enum conn_reason dp_reason(int);
void		 dp_splice_end(struct worker *, struct dp_pipe **, uint8_t *);
void		 dp_pipes_free(struct worker *);
void		 dp_discard(struct worker *, struct tk_io *);

/*
 * dpcq.c: the completion data path, under dp_pump and dp_send.  Each
 * thread's receive ring: 4 MiB, whatever the number of connections, or
 * less where the memory budget is tight (mem_ring_bufs).
 */
#define DP_RING_BUFS	256
#define DP_RING_BUFSIZE	(16 * 1024)
#define DP_RING_MIN	8		/* when the budget sizes it */

int		 dp_cq_pump(struct worker *, struct dp_flow *);

/*
 * n bytes read from f's source: count them on its side (the client, or
 * the proxy's upstream), stamp the activity.
 */
static inline void
dp_count_in(struct worker *w, struct dp_flow *f, size_t n)
{
	w->st.bytes_in[f->src == &f->c->io ? SIDE_CLIENT : SIDE_UPSTREAM] +=
	    n;
	if (f->nin != NULL)
		*f->nin += n;
	conn_touch(f->c, tk_loop_now(w->l));
}

/* n bytes sent to f's destination: count them on its side. */
static inline void
dp_count_out(struct worker *w, struct dp_flow *f, size_t n)
{
	w->st.bytes_out[f->dst == &f->c->io ? SIDE_CLIENT : SIDE_UPSTREAM] +=
	    n;
}

/* Bytes f holds for its destination, queued or in its pipe. */
static inline size_t
dp_pending(const struct dp_flow *f)
{
	return f->q->len + (*f->pipe)->len;
}

/*
 * What f's source socket waits for: READ unless finished or full, and
 * not while a pipe holds bytes (a flow splices into an empty pipe only,
 * so reading waits for the pipe; wanting it would keep the step
 * runnable with nothing to do).
 */
static inline unsigned int
dp_want_src(const struct dp_flow *f)
{
	size_t	n = dp_pending(f);

	if ((*f->flags & DP_F_END) || n >= conn_limit(n) ||
	    (*f->pipe)->len > 0)
		return 0;
	return f->tsrc != NULL ? f->tsrc->rwant : TK_EV_READ;
}

/*
 * What f's destination socket waits for: WRITE while bytes wait, or a
 * TLS close_notify (with TLS, what its writes wait for).
 */
static inline unsigned int
dp_want_dst(const struct dp_flow *f)
{
	if (dp_pending(f) == 0 && !(*f->flags & DP_F_FINWAIT))
		return 0;
	return f->tdst != NULL ? f->tdst->wwant : TK_EV_WRITE;
}

/* echo.c */
extern const struct proto proto_echo;
extern const struct proto proto_echo_tls;

/*
 * tlsterm.c: TLS toward clients (the server context is the
 * configuration's, srv.cfg.tls), and the checks of tenkd's TLS.
 */
int		 tlsterm_load(struct config *, struct tk_cli_err *);
int		 tlsterm_any(void);
void		 tlsterm_log(void);
void		 tlsterm_start(struct tk_loop *);
void		 tlsterm_stop(struct tk_loop *);
void		 tlsterm_worker_init(struct worker *);
void		 tlsterm_worker_free(struct worker *);
struct tk_tls	*tlsterm_new(struct tk_io *);
int		 tlsterm_handshake(struct worker *, struct tk_tls *);
void		 tlsterm_timeout(struct worker *, struct tk_tls *);
void		 tlsterm_acct(const struct tk_tls *, struct acct_rec *);

/*
 * tlsorig.c: TLS toward upstreams marked "tls" (-u HOST:PORT,tls
 * [,sni=NAME][,ca=FILE][,noverify]), verified by default.
 */
int		 tlsorig_load(struct config *, struct tk_cli_err *);
int		 tlsorig_any(void);
int		 tlsorig_on(const struct upstream *);
struct tk_tls	*tlsorig_new(struct worker *, const struct upstream *,
		    struct tk_io *);
int		 tlsorig_handshake(struct worker *, const struct upstream *,
		    struct tk_tls *);
void		 tlsorig_end(struct worker *, const struct upstream *,
		    struct tk_tls *);
void		 tlsorig_worker_free(struct worker *);

/*
 * sniroute.c: --sni-route NAME=HOST:PORT,...: the ClientHello read
 * without TLS, never past it, and the upstream its name routes to.
 */
struct sni_peek {
	unsigned char	*buf;		/* the records read, while peeking */
	size_t		 len;
	uint8_t		 fail;		/* enum tk_tls_fail, once failed */
	char		 sni[256];	/* once read; "" without a name */
};
int		 sniroute_on(void);
int		 sniroute_read(struct worker *, struct tk_io *,
		    struct sni_peek *);
struct upstream	*sniroute_pick(const char *);

/* stats.c */
extern const char *const cap_names[CAP_NKINDS];
void		 stats_request(void);
void		 stats_add(struct stats *, const struct stats *, int);

/* stats.c, for the metrics listener (issue 14) */
struct msnap;
void		 stats_fill(struct msnap *);

/* pxfast.c: --fastpath sockmap, for proxy.c */
struct pxfast;
void		 pxfast_load(void);
size_t		 pxfast_mem(void);
struct pxfast	*pxfast_new(struct worker *, struct conn *,
		    const struct dp_flow *);
int		 pxfast_more(struct worker *, struct pxfast *, int,
		    struct dp_flow *);
int		 pxfast_pump(struct worker *, struct pxfast *, int,
		    struct dp_flow *);
void		 pxfast_grant(struct worker *, struct pxfast *, int,
		    const struct dp_flow *);
unsigned int	 pxfast_want(const struct pxfast *, int);
void		 pxfast_touch(struct worker *, struct pxfast *, struct conn *);
void		 pxfast_end(struct worker *, struct pxfast *, uint64_t *);

/* proxy.c */
extern const struct proto proto_proxy;

/*
 * proxyproto.c.  The longest PROXY protocol header (haproxy's
 * proxy-protocol.txt): a version 1 line takes at most 107 bytes and
 * snprintf's NUL (2.1); a version 2 header is 16 bytes and an address
 * block of up to 216, two AF_UNIX paths (2.2).  We send TCP4 or TCP6,
 * but size for the spec.
 */
#define PP2_HDRLEN	16
#define PP2_ADDRMAX	216
#define PP_MAXLEN	(PP2_HDRLEN + PP2_ADDRMAX)
int		 pp_header(int, const struct sockaddr_in6 *, int, char *,
		    size_t);

/*
 * Reading a header (pp_parse): the most a v2 header may take, its TLVs
 * included (the spec allows 16 + 65535; this leaves room for TLVs of
 * TLS details and cloud endpoint ids), and what the parser says.
 */
#define PP_IN_MAXLEN	4096
#define PP_BAD		(-1)		/* pi->why says why */
#define PP_MORE		0		/* read up to pi->want bytes more */
#define PP_DONE		1		/* the header is pi->len bytes */

struct pp_info {
	size_t			 want;		/* PP_MORE: at most this */
	size_t			 len;		/* PP_DONE: header bytes */
	const char		*why;		/* PP_BAD: a constant */
	int			 version;	/* 1 or 2, once known */
	int			 family;	/* AF_UNSPEC: use the fd's */
	struct sockaddr_in6	 src;		/* or a sockaddr_in */
	struct sockaddr_in6	 dst;
};

int		 pp_parse(const void *, size_t, struct pp_info *);

/*
 * pin.c: --accept-proxy, the PROXY header read before conn_new() lets
 * a connection through, from the peers of --accept-proxy-from.
 */
int		 pin_take(struct worker *, int, const struct sockaddr *,
		    socklen_t);
void		 pin_close_all(struct worker *, enum conn_reason);

/* perip.c */
int		 perip_take(const struct sockaddr_in6 *, long long);
void		 perip_put(const struct sockaddr_in6 *);

/* upstream.c */
struct upstream;

void		 upstream_init(void);
int		 upstream_connect(const struct upstream *);
int		 upstream_port_error(int);
struct upstream	*upstream_pick(uint32_t, uint64_t, uint64_t);
int		 upstream_index(const struct upstream *);
struct upstream	*upstream_pick_this(struct upstream *, uint64_t);
const char	*upstream_name(const struct upstream *);
void		 upstream_connected(struct upstream *);
void		 upstream_failed(struct upstream *, uint64_t, int);
void		 upstream_release(struct upstream *, uint64_t, uint64_t);
void		 upstream_stats(FILE *);
void		 upstream_check_start(struct tk_loop *);
void		 upstream_check_stop(void);

/*
 * chash.c: the table of --balance hash (issue 28).  2^18 slots, 256
 * KiB: a fifth's share of them is 20% to within 0.4% of it (one sigma).
 */
#define CHASH_BITS	18
#define CHASH_SLOTS	(1U << CHASH_BITS)

struct chash_member {
	uint64_t	 seed;			/* chash_seed() of its name */
	int		 weight;		/* 0: owns no slot */
};

struct chash {
	uint8_t		*slot;			/* each slot's owner */
	uint32_t	 owned[MAXUPSTREAMS];	/* slots of each member */
};

uint64_t	 chash_seed(const char *);
uint32_t	 chash_addr(const struct sockaddr_in6 *, int);
int		 chash_better(const struct chash_member *,
		    const struct chash_member *, uint32_t);
int		 chash_build(struct chash *, const struct chash_member *, int);
void		 chash_free(struct chash *);

/*
 * metrics.c, promtext.c and http.c (issue 14): the metrics listener.
 * A struct msnap is one process's figures after a stats round: what a
 * worker process sends its master, whole, in one datagram.
 */
#define MHIST_N		14		/* connect-time buckets, +Inf last */
#define MSNAP_TEXTMAX	16384		/* the /stats lines */
#define METRICS_MAXCLIENTS 1024		/* --metrics-max-clients */

struct msnap {
	int32_t		 pid;
	uint32_t	 nups;
	struct stats	 st;
	uint64_t	 caps[CAP_NKINDS];
	uint64_t	 mem_held;
	struct {
		uint64_t	 up;
		uint64_t	 active;
		uint64_t	 sessions;
		uint64_t	 fails;
		uint64_t	 tx;
		uint64_t	 rx;
		uint64_t	 slots;		/* of the hash table */
	}		 ups[MAXUPSTREAMS];
	uint64_t	 hist[MHIST_N];		/* per bucket, not cumulative */
	uint64_t	 hist_sum;		/* ns */
	double		 cpu;			/* seconds */
	double		 start;			/* Unix time */
	uint64_t	 rss;			/* bytes */
	uint64_t	 fds;
	uint64_t	 maxfds;
	uint32_t	 textlen;
	char		 text[MSNAP_TEXTMAX];
};

struct http_srv;
struct http_client;
typedef void	 http_fn(struct http_srv *, struct http_client *,
		    const char *);

struct http_srv {
	struct tk_loop		*l;
	struct tk_io		 io;		/* the listener */
	http_fn			*fn;
	LIST_HEAD(, http_client) clients;
	int			 nclients;
	int			 max;		/* clients at once */
	uint64_t		 refused;	/* closed at once, at max */
};

int		 http_start(struct http_srv *, struct tk_loop *, int,
		    http_fn *, int);
void		 http_stop(struct http_srv *, int);
void		 http_reply(struct http_client *, int, const char *,
		    const char *, size_t);
/* A plain-text reply whose body is the string literal s. */
#define HTTP_TEXT(c, status, s) \
	http_reply((c), (status), "text/plain", (s), sizeof(s) - 1)
void		 http_answer(struct http_srv *);

extern const double mhist_bounds[MHIST_N - 1];
int		 metrics_open(void);
void		 metrics_start(struct tk_loop *);
void		 metrics_forget(void);
void		 metrics_child_fd(int);
void		 metrics_stop(void);
void		 metrics_collected(void);
void		 metrics_answer(const struct msnap *, int, int);
void		 metrics_self(struct msnap *);
uint64_t	 metrics_fds(void);
void		 promtext_write(FILE *, const struct msnap *, int, int);

/* systemd.c (issue 14) */
void		 systemd_notify(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
void		 systemd_quiet(void);
int		 systemd_listen_fds(int **, char ***);

/* reopen.c (issue 14) */
void		 reopen_init(void);
void		 reopen_access_open(void);
int		 reopen_logs(void);
int		 reopen_opener(void);
void		 reopen_pass(int);
void		 reopen_adopt(void);

/*
 * safefile.c (issue 22): opening the files the operator names, for
 * ourselves or, as root, for the user the descriptor goes to (name
 * NULL: ourselves).
 */
struct fowner {
	const char	*name;
	uid_t		 uid;
	gid_t		 gid;
};
void		 safefile_owner(const struct config *, struct fowner *);
int		 safefile_open(const char *, int, mode_t, const struct fowner *,
		    char *, size_t);
int		 safefile_open_log(const char *, const struct fowner *, char *,
		    size_t);
int		 safefile_check(const char *, const struct fowner *, int,
		    char *, size_t);

/* pidfile.c (issue 22) */
void		 pidfile_start(const char *, const struct fowner *, int);
int		 pidfile_put(pid_t);
void		 pidfile_handover(pid_t);
int		 pidfile_take(void);
void		 pidfile_end(int);

/* upstream.c, for the metrics listener (issue 14) */
void		 upstream_connect_time(uint64_t);
void		 upstream_metrics(struct msnap *);
struct upstream	*upstream_at(int);

/*
 * config.c: the configuration (struct config) from the command line and
 * the -f file.  The command line is read once, into a struct cmdline of
 * the options as typed; each configuration is built from it and the
 * file as it is then (at start, and at each reload).
 */
struct cmdopt {
	int		 idx;		/* in config.c's table */
	char		*opt;		/* as typed, or "FILE:LINE: NAME" */
	char		*arg;		/* its value, or NULL */
};

struct cmdline {
	int		 argc;
	char	       **argv;		/* as typed, for an upgrade */
	struct cmdopt	*v;		/* the options, in order */
	size_t		 n;
	char		*conf;		/* -f FILE */
	int		 nmodes;	/* operands */
	const char	*modes[2];	/* the first two, copied */
	int		 help;
	int		 version;
	int		 list;		/* --backend list */
};

typedef void	 config_warn_fn(const char *);
void		 cmdline_read(struct cmdline *, int, char *[]);
int		 config_load(struct config *, const struct cmdline *,
		    config_warn_fn *, struct tk_cli_err *);
int		 config_check(struct config *, struct tk_cli_err *);
const char	*config_fixed(const struct config *, const struct config *);
int		 config_master(const struct config *);
void		 config_free(struct config *);

/* conffile.c: the -f file's text, cut into options */
typedef int	 conf_fn(void *, const char *, const char *, const char *,
		    struct tk_cli_err *);
int		 conf_parse(const char *, size_t, const char *, conf_fn *,
		    void *, struct tk_cli_err *);
int		 conf_load(const char *, char **, size_t *,
		    struct tk_cli_err *);

/* cfgval.c: the values of config.c with a syntax of their own */
int		 cfgval_upstream(struct config *, const char *, const char *,
		    struct tk_cli_err *);
int		 cfgval_nets(struct config *, const char *, const char *,
		    struct tk_cli_err *);
int		 cfgval_listen(struct config *, const char *, const char *,
		    struct tk_cli_err *);
int		 cfgval_metrics(const struct config *, struct tk_cli_err *);
int		 cfgval_sniroute(struct config *, const char *, const char *,
		    struct tk_cli_err *);
int		 cfgval_tls(struct config *, struct tk_cli_err *);

/* listen.c, limits.c and help.c: start-up */
int		*listen_open(void);
void		 listen_check(const char *, const struct tk_addr *);
noreturn void	 listen_fail(const char *, const struct tk_addr *);
void		 limits_set(void);
void		 limits_check_path(const char *, const char *, int);
void		 limits_drop(int);
noreturn void	 help_usage(int);

/* chan.c: the master's and a worker's socket pair */
ssize_t		 chan_recv(struct tk_io *, void *, size_t, int);

/* master.c */
#define LISTEN_FDS(cfg)	((cfg)->threads * ((cfg)->workers > 1 ? \
			    (cfg)->workers : 1))	/* per address */
void		 master_collect(void);

/*
 * master.c and main.c: reload (SIGHUP) and binary upgrade (SIGUSR2),
 * issue 15.  An upgrade passes the listeners as systemd would, named
 * UPGRADE_FDNAME, and the descriptor the new master says it is ready
 * on in $UPGRADE_ENV.
 */
#define UPGRADE_FDNAME	"tenkd-upgrade"
#define UPGRADE_ENV	"TENKD_UPGRADE_FD"
#define UPGRADE_OPENER_ENV "TENKD_UPGRADE_OPENER"	/* reopen.c */
int		 master_run(const struct cmdline *, const char *, const int *,
		    int, int, int *);
int		 master_role(void);
void		 master_worker_signals(void);
void		 master_worker_ready(void);
void		 master_worker_final(void);

#endif /* TENK_SERVER_TENKD_H */
