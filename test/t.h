/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The test harness: tests are plain functions registered in a list at
 * start-up, each run by test/run.c in a forked child in a process group
 * of its own.  The runner kills the whole group when the test ends or
 * outlives its timeout (TEST_T's seconds, else run.c's UNIT_TIMEOUT), so
 * whatever a test started dies with it.  Assertions print file, line and
 * both operands, then exit the child.
 *
 *	TEST(heap_order) { T_EQ(1 + 1, 2); }
 *	TEST_BE(loop_readable) { l = tk_loop_new(t_backend, 0); }
 *
 * TEST_BE tests run once per compiled backend with t_backend set.
 * T_SKIP("why") ends the test as skipped.
 */
#ifndef TENK_TEST_T_H
#define TENK_TEST_T_H

#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct t_test {
	const char	*name;
	void		(*fn)(void);
	int		 per_backend;
	int		 timeout;	/* seconds, 0 for the default */
	SLIST_ENTRY(t_test) link;	/* the registry, run.c's */
};

void	t_register(struct t_test *);
void	t_fail(const char *file, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4), __noreturn__));
void	t_skip(const char *why) __attribute__((__noreturn__));

/*
 * A seeded pseudo-random generator (splitmix64) for tests that check
 * random operations against a reference: the same sequence every run,
 * so a failure reproduces.  t_srand() restarts it from a seed.
 */
uint64_t	t_rand(void);
void		t_srand(uint64_t seed);

/*
 * A connected AF_UNIX stream pair, both ends non-blocking and
 * close-on-exec, in sv; the test fails if there is none.
 */
void		t_sockpair(int sv[2]);

/* The descriptors open in this process (leak checks compare two). */
int		t_nfds(void);

/*
 * A loop on io_uring of tk_loop_new's maxfds; the test is skipped, saying
 * why, where io_uring is not compiled in or the kernel refuses it.
 */
struct tk_loop;
struct tk_loop	*t_uring_loop(int maxfds);

/* The backend a TEST_BE test is running on. */
extern const char *t_backend;

#define T_DEFINE(name, pb, secs)					\
	static void t_fn_##name(void);					\
	static struct t_test t_t_##name = {				\
		#name, t_fn_##name, pb, secs, { NULL }			\
	};								\
	__attribute__((constructor)) static void			\
	t_reg_##name(void)						\
	{								\
		t_register(&t_t_##name);				\
	}								\
	static void t_fn_##name(void)

#define TEST(name)		T_DEFINE(name, 0, 0)
#define TEST_T(name, secs)	T_DEFINE(name, 0, secs)
#define TEST_BE(name)		T_DEFINE(name, 1, 0)
#define TEST_BE_T(name, secs)	T_DEFINE(name, 1, secs)

#define T_CMP(a, op, b) do {						\
	intmax_t t_a_ = (intmax_t)(a), t_b_ = (intmax_t)(b);		\
	if (!(t_a_ op t_b_))						\
		t_fail(__FILE__, __LINE__, "%s %s %s: %jd vs %jd",	\
		    #a, #op, #b, t_a_, t_b_);				\
} while (0)

#define T_EQ(a, b)	T_CMP(a, ==, b)
#define T_NE(a, b)	T_CMP(a, !=, b)
#define T_LT(a, b)	T_CMP(a, <, b)
#define T_LE(a, b)	T_CMP(a, <=, b)
#define T_GT(a, b)	T_CMP(a, >, b)
#define T_GE(a, b)	T_CMP(a, >=, b)

#define T_UEQ(a, b) do {						\
	uintmax_t t_a_ = (uintmax_t)(a), t_b_ = (uintmax_t)(b);	\
	if (t_a_ != t_b_)						\
		t_fail(__FILE__, __LINE__, "%s == %s: %ju vs %ju",	\
		    #a, #b, t_a_, t_b_);				\
} while (0)

#define T_OK(c) do {							\
	if (!(c))							\
		t_fail(__FILE__, __LINE__, "%s", #c);			\
} while (0)

#define T_PTR(p) do {							\
	if ((p) == NULL)						\
		t_fail(__FILE__, __LINE__, "%s is NULL: %s", #p,	\
		    strerror(errno));					\
} while (0)

/* A system call that must not return -1. */
#define T_SYS(x) do {							\
	if ((x) == -1)							\
		t_fail(__FILE__, __LINE__, "%s: %s", #x,		\
		    strerror(errno));					\
} while (0)

#define T_STREQ(a, b) do {						\
	const char *t_a_ = (a), *t_b_ = (b);				\
	if (t_a_ == NULL || t_b_ == NULL || strcmp(t_a_, t_b_) != 0)	\
		t_fail(__FILE__, __LINE__,				\
		    "%s == %s: \"%s\" vs \"%s\"",			\
		    #a, #b, t_a_ ? t_a_ : "(null)",			\
		    t_b_ ? t_b_ : "(null)");				\
} while (0)

#define T_FAIL(...)	t_fail(__FILE__, __LINE__, __VA_ARGS__)
#define T_SKIP(why)	t_skip(why)

#endif /* TENK_TEST_T_H */
