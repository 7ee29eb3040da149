/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command line of every tenk program: getopt_long(3) with one message
 * for each kind of bad option, numbers and values with units checked
 * against a range, a backend name (or "list"), and the open-file limit
 * raised at start-up.
 *
 * A bad command line is one line on stderr, then exit status 2.  The line
 * names the program, the option as the user typed it (a long option by
 * its full name, a short one as "-t"), its value if it has one, and why:
 *
 *	tenkd: --threads 0: too small (1 to 256)
 *	tenkload: -d 5x: bad unit (1ms to 720h; units ms, s, m, h)
 *	tenkbench: --plot: takes no value
 *	tenkbench: --bogus: unknown option
 *
 * The value parsers come in two forms: tk_cli_num() and the like end
 * the program; tk_cli_get_num() and the like return -1 with the same
 * line, without the program's name, in a struct tk_cli_err, for a
 * parser that must not exit (tenkd's configuration, read again by a
 * reload).
 *
 * Start-up only, in the main thread: the option name lives in static
 * storage.  The tk_cli_get_* functions and tk_cli_errf(): any thread.
 */
#ifndef TENK_CLI_H
#define TENK_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdnoreturn.h>

struct tk_addr;

/*
 * getopt_long(3) that reports its own errors: an unknown or ambiguous
 * option, a missing value and a value given to an option that takes
 * none end the program as tk_cli_bad() does.  optstring must start with
 * ':'.  Returns the option's character or value, or -1 at the end.
 */
int		 tk_cli_getopt(int argc, char *argv[], const char *optstring,
		    const struct option *longopts);

/* The option tk_cli_getopt() returned last, as typed: "--threads", "-t". */
const char	*tk_cli_opt(void);

/*
 * "PROG: OPT ARG: WHY" on stderr, then exit 2.  Either of opt and arg
 * may be NULL ("PROG: OPT: WHY", "PROG: ARG: WHY"), or both ("PROG: WHY").
 */
noreturn void	 tk_cli_bad(const char *opt, const char *arg,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A bad option's line, "OPT ARG: WHY", escaped, without "PROG: ". */
#define TK_CLI_ERRMAX	1024
struct tk_cli_err {
	char		 msg[TK_CLI_ERRMAX];
};

/*
 * The line of tk_cli_bad() (opt and arg as there) into e, without the
 * program's name.  Returns -1, for "return tk_cli_errf(...);".
 */
int		 tk_cli_errf(struct tk_cli_err *e, const char *opt,
		    const char *arg, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));

/* "PROG: " and e's line on stderr, then exit 2. */
noreturn void	 tk_cli_die(const struct tk_cli_err *e);

/* tk_cli_errf() for an address, as tk_cli_bad_addr() says it. */
int		 tk_cli_errf_addr(struct tk_cli_err *e, const char *opt,
		    const char *arg, const char *err);

/*
 * The value parsers below without the exit: 0 with the value in *v, or
 * -1 with e set.
 */
int		 tk_cli_get_num(struct tk_cli_err *e, const char *opt,
		    const char *arg, long long min, long long max,
		    long long *v);
int		 tk_cli_get_duration(struct tk_cli_err *e, const char *opt,
		    const char *arg, uint64_t min, uint64_t max,
		    const char *range, uint64_t *v);
int		 tk_cli_get_size(struct tk_cli_err *e, const char *opt,
		    const char *arg, uint64_t min, uint64_t max, uint64_t *v);
int		 tk_cli_get_sources(struct tk_cli_err *e, const char *opt,
		    const char *arg, size_t max, struct tk_addr **list,
		    size_t *n);

/*
 * tk_cli_bad() for arg, an address tk_addr_parse() refused with err; a
 * port alone is "missing host (as in 127.0.0.1:PORT)".  opt may be NULL.
 */
noreturn void	 tk_cli_bad_addr(const char *opt, const char *arg,
		    const char *err);

/* arg as a number in [min, max] (strtonum(3)), or tk_cli_bad(). */
long long	 tk_cli_num(const char *opt, const char *arg, long long min,
		    long long max);

/*
 * arg as a duration in ns, in [min, max] (tk_parse_duration()), or
 * tk_cli_bad() naming range, or a range made of min and max when range
 * is NULL.
 */
uint64_t	 tk_cli_duration(const char *opt, const char *arg,
		    uint64_t min, uint64_t max, const char *range);

/* arg as a size in bytes, in [min, max] (tk_parse_size()). */
uint64_t	 tk_cli_size(const char *opt, const char *arg, uint64_t min,
		    uint64_t max);

/* arg as a rate per second, in [min, max] (tk_parse_rate()). */
uint64_t	 tk_cli_rate(const char *opt, const char *arg, uint64_t min,
		    uint64_t max);

/*
 * arg as the name of a compiled-in backend, returned from the registry's
 * own storage; NULL when arg is "list", for the caller to print the list
 * with tk_cli_backend_list() once the command line is read.  A backend
 * compiled in that the kernel refuses (io_uring: ENOSYS, EPERM) ends the
 * program with one line on stderr and exit status 1.
 */
const char	*tk_cli_backend(const char *opt, const char *arg);

/* The compiled-in backends, best first, one a line on stdout; exit 0. */
noreturn void	 tk_cli_backend_list(void);

/*
 * A source list, "ADDR[,ADDR|A-B...]": local addresses without ports,
 * ranges A-B IPv4 only, appended to *list (grown with reallocarray(3);
 * *n counts them), at most max in all.  Bad input ends through
 * tk_cli_bad().  Start-up.
 */
void		 tk_cli_sources(const char *opt, const char *arg, size_t max,
		    struct tk_addr **list, size_t *n);

/*
 * Bind a socket to each of the n addresses once, so that an address
 * that is not local is a usage error now, not a run of EADDRNOTAVAIL
 * connects that would read as exhausted ports.  Start-up.
 */
void		 tk_cli_sources_check(const char *opt,
		    const struct tk_addr *list, size_t n);

/*
 * Raise the soft RLIMIT_NOFILE to the hard limit (an unlimited one
 * counts as 2^20, the kernel's default nr_open) and store the soft limit
 * now in force, unlimited again as 2^20, in *nofile.  Returns 0, or -1
 * with errno set when the limit could not be read (*nofile is then 1024)
 * or not raised (*nofile is the old limit).
 */
int		 tk_nofile_raise(uint64_t *nofile);

#endif /* TENK_CLI_H */
