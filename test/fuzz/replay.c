/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fuzz corpora as unit tests: every file under test/fuzz/corpus/NAME
 * (found through TK_SRC, which make test sets) goes through the target's
 * function once, built by the normal compiler, so that a finding kept in
 * the corpus stays fixed without clang.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#define REPLAY_MAX	(1 << 20)	/* bytes of one input */

void
fuzz_replay(const char *name, fuzz_fn *fn)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[1024];
	uint8_t		*buf;
	const char	*src;
	ssize_t		 n;
	int		 fd, nfiles = 0;

	if ((src = getenv("TK_SRC")) == NULL)
		src = ".";
	snprintf(path, sizeof(path), "%s/test/fuzz/corpus/%s", src, name);
	T_PTR(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/test/fuzz/corpus/%s/%s",
		    src, name, de->d_name);
		T_SYS(fd = open(path, O_RDONLY | O_CLOEXEC));
		/* An exact-size copy, so reads past the input stand out. */
		T_PTR(buf = malloc(REPLAY_MAX));
		T_SYS(n = read(fd, buf, REPLAY_MAX));
		close(fd);
		T_PTR(buf = realloc(buf, n > 0 ? (size_t)n : 1));
		fn(buf, (size_t)n);
		free(buf);
		nfiles++;
	}
	closedir(d);
	T_GT(nfiles, 0);
}
