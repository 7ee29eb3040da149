/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fuzz targets (test/fuzz/fuzz_*.c), each one function
 * fuzz_NAME(data, size) that feeds the bytes to a parser and checks
 * what the parser promises, aborting when a promise breaks.
 *
 * FUZZ_TARGET(NAME) turns it into a program's entry point:
 *
 *	make fuzz	libFuzzer's LLVMFuzzerTestOneInput, built by clang
 *			with -DTK_FUZZ_MAIN and ASan+UBSan, run on
 *			test/fuzz/corpus/NAME/
 *	make test	a unit test, unit/fuzz_corpus_NAME, that replays
 *			every file of that corpus through the same function,
 *			built by the normal compiler (replay.c)
 */
#ifndef TENK_TEST_FUZZ_H
#define TENK_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void fuzz_fn(const uint8_t *, size_t);

/*
 * A broken promise: say which on stderr and abort, which libFuzzer
 * reports as a crash with the input that caused it.
 */
#define FUZZ_CHECK(c) do {						\
	if (!(c)) {							\
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);	\
		abort();						\
	}								\
} while (0)

/* An incremental parser's three results, in its own values. */
struct fuzz_results {
	int	 bad;		/* refused, with a reason */
	int	 more;		/* wants more bytes, at least one */
	int	 done;
};

/*
 * What every incremental parser here (pp_parse, tk_hello_parse)
 * promises of its result r for size bytes: r is one of its three; a
 * refusal names its reason (why); a request for more asks for at least
 * one byte (want), and never for more than max in all.  Returns whether
 * the parser was done, for the caller to check what it parsed.
 */
static inline int
fuzz_parsed(const struct fuzz_results *rs, int r, const char *why,
    size_t want, size_t size, size_t max)
{
	if (r == rs->bad) {
		FUZZ_CHECK(why != NULL);
		return 0;
	}
	if (r == rs->more) {
		FUZZ_CHECK(want >= 1);
		FUZZ_CHECK(size + want <= max);
		return 0;
	}
	FUZZ_CHECK(r == rs->done);
	return 1;
}

#ifdef TK_FUZZ_MAIN
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_TARGET(name)						\
int									\
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)		\
{									\
	fuzz_##name(data, size);					\
	return 0;							\
}
#else
#include "../t.h"

/* Every file of test/fuzz/corpus/NAME through fn; test/fuzz/replay.c. */
void	fuzz_replay(const char *name, fuzz_fn *fn);

#define FUZZ_TARGET(name)						\
TEST(fuzz_corpus_##name)						\
{									\
	fuzz_replay(#name, fuzz_##name);				\
}
#endif

#endif /* TENK_TEST_FUZZ_H */
