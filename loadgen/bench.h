/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkbench's private header: the sweep as the command line gave it, its
 * cells and their runs.  tenkbench.c reads the command line, bench_sweep.c
 * walks the cells, bench_cell.c runs one from server start to server stop,
 * bench_child.c starts and reaps the children, bench_proc.c measures them
 * from /proc and strace, bench_out.c writes the results.
 */
#ifndef TENK_LOADGEN_BENCH_H
#define TENK_LOADGEN_BENCH_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAXBACKENDS	8
#define MAXIDLE		32		/* idle counts in the sweep */
#define MAXREPEAT	50
#define MAXHOLDERS	64		/* idle holder processes */
#define MAXSYS		8		/* syscalls kept per cell */
#define TICK_MS		20		/* between looks at a child */

/* The sweep, as the command line gave it, and this machine's limits. */
struct bconf {
	const char	*backends[MAXBACKENDS];
	int		 nbackends;
	uint64_t	 idle[MAXIDLE];
	int		 nidle;
	uint64_t	 active;
	uint64_t	 duration;	/* ns */
	uint64_t	 warmup;	/* ns */
	uint64_t	 systime;	/* ns, the strace run */
	uint64_t	 size;
	uint64_t	 connect_rate;
	int		 repeat;
	int		 threads;	/* tenkd --threads */
	int		 load_threads;	/* tenkload --threads */
	int		 syscalls;
	int		 plot;
	int		 quiet;
	const char	*out;
	char		 tenkd[PATH_MAX];
	char		 tenkload[PATH_MAX];
	const char	*tls_cert;	/* --tls-cert: over TLS; or NULL */
	const char	*tls_key;
	char		 args[1024];	/* our command line */
	uint64_t	 nofile;	/* RLIMIT_NOFILE, raised */
	uint64_t	 nports;	/* local ports for connect(2) */
};

/* One active run of a cell. */
struct run {
	double		 rate;		/* msgs/s */
	double		 p50;		/* us */
	double		 p99;		/* us */
	double		 cpu;		/* server CPU us per msg */
	double		 ccpu;		/* client CPU us per msg */
	uint64_t	 msgs;
	uint64_t	 errors;
};

enum cell_status {
	CELL_PENDING = 0,
	CELL_OK,
	CELL_ERRORS,		/* finished, with errors */
	CELL_FAILED,		/* could not finish */
	CELL_SKIPPED
};

struct sysent {
	char		 name[32];
	uint64_t	 calls;
};

/* One backend at one idle count. */
struct cell {
	const char	*backend;
	uint64_t	 idle;
	enum cell_status status;
	char		 note[256];
	struct run	 runs[MAXREPEAT];
	int		 nruns;
	uint64_t	 errors;	/* active runs and idle holders */
	double		 plan;		/* s, estimated length */
	double		 took;		/* s */
	uint64_t	 sys_msgs;	/* --syscalls: messages counted */
	uint64_t	 sys_total;	/* calls in the strace window */
	struct sysent	 sys[MAXSYS];	/* the most frequent calls */
	int		 nsys;
};

/* A CPU-time sample: wall-clock us, clock ticks of utime + stime. */
struct sample {
	uint64_t	 t;
	uint64_t	 ticks;
};

struct samples {
	struct sample	*v;
	size_t		 n;
	size_t		 cap;
};

/* tenkbench.c */
extern struct bconf	 conf;

/* bench_sweep.c */
extern struct cell	*cells;
extern int		 ncells;
void		 sweep_plan(void);
void		 sweep_run(const char *);
int		 sweep_failed(void);
void		 sweep_progress(int);
void		 sweep_doing(double, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/* bench_cell.c */
void		 cell_run(struct cell *, const char *);

/* bench_child.c */
void		 child_init(void);
void		 child_quit(void);
void		 child_nap(int);
pid_t		 child_spawn(const char *const [], const char *,
		    const char *);
int		 child_done(pid_t, int *);
int		 child_stop(pid_t, int, int, int *);
void		 child_wait(pid_t, int *);
int		 child_failed(int);
const char	*child_log_tail(const char *, char *, size_t);

/* bench_proc.c */
long		 proc_nfds(pid_t);
uint64_t	 proc_ports(void);
void		 samples_add(struct samples *, pid_t);
double		 samples_cpu_us(const struct samples *, uint64_t, uint64_t);
void		 samples_free(struct samples *);
int		 strace_parse(const char *, struct cell *);

/* bench_out.c */
const char	*out_status(enum cell_status);
void		 out_table(FILE *);
void		 out_csv(void);
void		 out_json(void);
void		 out_plot(const char *);

#endif /* TENK_LOADGEN_BENCH_H */
