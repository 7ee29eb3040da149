/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The test runner.  Unit tests (registered by TEST() in test/unit/) and
 * integration scripts (test/integ/NAME.sh) each run in a forked child, in a
 * process group of its own, under a timeout; whatever the child leaves
 * behind in its group is killed when it ends.  Output is TAP, closed by
 * one line "N passed, N failed, N skipped"; the exit status is 1 when
 * anything failed.
 *
 * Jobs are named unit/NAME or integ/NAME, plus "/backend" for per-backend
 * ones; a filter picks the jobs whose name contains it.
 *
 * Per-backend tests (TEST_BE, and scripts without "# backends: none")
 * run once per compiled-in backend.  A script may narrow that with
 * "# backends: epoll poll" and set its timeout with "# timeout: 300".
 *
 * usage: run [-lv] [-j jobs] [-u | -i] [filter ...]
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/loop.h"
#include "tenk/rand.h"
#include "t.h"

#define UNIT_TIMEOUT	60
#define INTEG_TIMEOUT	180
#define MAXJOBS		16

const char *t_backend = "";

#if defined(__SANITIZE_THREAD__)
/* A data race fails the test instead of only printing a report. */
const char	*__tsan_default_options(void);

const char *
__tsan_default_options(void)
{
	return "halt_on_error=1:second_deadlock_stack=1";
}
#endif

static SLIST_HEAD(, t_test) registered = SLIST_HEAD_INITIALIZER(registered);

struct job {
	char		 name[256];
	void		(*fn)(void);	/* unit test, or NULL */
	char		 script[PATH_MAX];
	char		 backend[32];
	int		 timeout;
	pid_t		 pid;
	int		 outfd;
	char		 outpath[64];
	struct timespec	 start;
};

static struct job	*jobs;
static size_t		 njobs, jobcap;
static int		 verbose;

static uint64_t	rand_state = 0x2545f4914f6cdd1dULL;

uint64_t
t_rand(void)
{
	uint64_t	z = tk_mix64(rand_state);

	rand_state += TK_MIX64_STEP;
	return z;
}

void
t_srand(uint64_t seed)
{
	rand_state = seed;
}

void
t_sockpair(int sv[2])
{
	T_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv));
}

int
t_nfds(void)
{
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	T_PTR(d = opendir("/proc/self/fd"));
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

struct tk_loop *
t_uring_loop(int maxfds)
{
	struct tk_loop	*l;

	if (tk_backend_probe("io_uring") == -1) {
		if (errno == ENOENT)
			T_SKIP("io_uring is not compiled in");
		T_SKIP("the kernel refuses io_uring");
	}
	l = tk_loop_new("io_uring", maxfds);
	T_PTR(l);
	return l;
}

void
t_register(struct t_test *t)
{
	SLIST_INSERT_HEAD(&registered, t, link);
}

void
t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1);
}

void
t_skip(const char *why)
{
	fprintf(stderr, "SKIP %s\n", why);
	fflush(stderr);
	_exit(77);
}

static struct job *
job_add(const char *name, const char *backend)
{
	struct job	*j;

	if (njobs == jobcap) {
		jobcap = jobcap ? jobcap * 2 : 64;
		jobs = reallocarray(jobs, jobcap, sizeof(*jobs));
		if (jobs == NULL) {
			perror("reallocarray");
			exit(2);
		}
	}
	j = &jobs[njobs++];
	memset(j, 0, sizeof(*j));
	if (backend != NULL && *backend != '\0')
		snprintf(j->name, sizeof(j->name), "%s/%s", name, backend);
	else
		strlcpy(j->name, name, sizeof(j->name));
	if (backend != NULL)
		strlcpy(j->backend, backend, sizeof(j->backend));
	j->outfd = -1;
	return j;
}

static int
matches(const char *name, int nfilter, char **filter)
{
	int	i;

	if (nfilter == 0)
		return 1;
	for (i = 0; i < nfilter; i++)
		if (strstr(name, filter[i]) != NULL)
			return 1;
	return 0;
}

static int
cmp_test(const void *a, const void *b)
{
	const struct t_test *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static void
add_units(int nfilter, char **filter)
{
	const char *const	*be;
	struct t_test		*t, **v;
	struct job		*j;
	char			 name[256];
	size_t			 n = 0, i;

	SLIST_FOREACH(t, &registered, link)
		n++;
	if ((v = calloc(n + 1, sizeof(*v))) == NULL)
		exit(2);
	n = 0;
	SLIST_FOREACH(t, &registered, link)
		v[n++] = t;
	qsort(v, n, sizeof(*v), cmp_test);
	for (i = 0; i < n; i++) {
		t = v[i];
		/* "unit/", as scripts are "integ/": TESTS=unit picks these. */
		snprintf(name, sizeof(name), "unit/%s", t->name);
		if (!t->per_backend) {
			if (!matches(name, nfilter, filter))
				continue;
			j = job_add(name, NULL);
			j->fn = t->fn;
			j->timeout = t->timeout ? t->timeout : UNIT_TIMEOUT;
			continue;
		}
		for (be = tk_backend_names(); *be != NULL; be++) {
			j = job_add(name, *be);
			if (!matches(j->name, nfilter, filter)) {
				njobs--;
				continue;
			}
			j->fn = t->fn;
			j->timeout = t->timeout ? t->timeout : UNIT_TIMEOUT;
		}
	}
	free(v);
}

/* Read "# backends:" and "# timeout:" from a script's first lines. */
static void
script_header(const char *path, char *backends, size_t blen, int *timeout)
{
	FILE	*f;
	char	 line[256], *p;
	int	 n = 0;

	*backends = '\0';
	*timeout = INTEG_TIMEOUT;
	if ((f = fopen(path, "r")) == NULL)
		return;
	while (n++ < 20 && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strstr(line, "# backends:")) != NULL)
			strlcpy(backends, p + 11, blen);
		else if ((p = strstr(line, "# timeout:")) != NULL)
			*timeout = atoi(p + 10);
	}
	fclose(f);
	if (*timeout <= 0)
		*timeout = INTEG_TIMEOUT;
}

/* Whether word stands in the blank-separated list as a whole word. */
static int
has_word(const char *list, const char *word)
{
	size_t		 n = strlen(word);
	const char	*p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\t' ||
		    p[-1] == ',') && (p[n] == '\0' || p[n] == ' ' ||
		    p[n] == '\t' || p[n] == ','))
			return 1;
		p += n;
	}
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
add_scripts(const char *srcdir, int nfilter, char **filter)
{
	const char *const	*be;
	DIR			*d;
	struct dirent		*de;
	struct job		*j;
	char			 dir[PATH_MAX], path[PATH_MAX], bes[128];
	char			 base[256], **names = NULL;
	size_t			 n = 0, i, len;
	int			 timeout;

	snprintf(dir, sizeof(dir), "%s/test/integ", srcdir);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		/* lib.sh, lib_servers.sh: sourced by the scripts. */
		if (len < 4 || strcmp(de->d_name + len - 3, ".sh") != 0 ||
		    strncmp(de->d_name, "lib", 3) == 0)
			continue;
		names = reallocarray(names, n + 1, sizeof(*names));
		if (names == NULL || (names[n] = strdup(de->d_name)) == NULL)
			exit(2);
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    names[i]) >= sizeof(path)) {
			free(names[i]);
			continue;
		}
		snprintf(base, sizeof(base), "integ/%.*s",
		    (int)(strlen(names[i]) - 3), names[i]);
		script_header(path, bes, sizeof(bes), &timeout);
		if (has_word(bes, "none")) {
			if (matches(base, nfilter, filter)) {
				j = job_add(base, NULL);
				strlcpy(j->script, path, sizeof(j->script));
				j->timeout = timeout;
			}
			free(names[i]);
			continue;
		}
		for (be = tk_backend_names(); *be != NULL; be++) {
			if (*bes != '\0' && !has_word(bes, *be))
				continue;
			j = job_add(base, *be);
			if (!matches(j->name, nfilter, filter)) {
				njobs--;
				continue;
			}
			strlcpy(j->script, path, sizeof(j->script));
			j->timeout = timeout;
		}
		free(names[i]);
	}
	free(names);
}

static void
job_start(struct job *j)
{
	int	fd;

	snprintf(j->outpath, sizeof(j->outpath), "/tmp/tk-run.XXXXXX");
	if ((fd = mkstemp(j->outpath)) == -1) {
		perror("mkstemp");
		exit(2);
	}
	unlink(j->outpath);
	j->outfd = fd;
	clock_gettime(CLOCK_MONOTONIC, &j->start);
	fflush(NULL);
	switch (j->pid = fork()) {
	case -1:
		perror("fork");
		exit(2);
	case 0:
		setpgid(0, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		if (j->fn != NULL) {
			t_backend = j->backend;
			j->fn();
			/* exit(), not _exit(): LeakSanitizer runs at exit. */
			exit(0);
		}
		if (*j->backend != '\0')
			setenv("TK_BACKEND", j->backend, 1);
		else
			unsetenv("TK_BACKEND");
		execl("/bin/sh", "sh", j->script, (char *)NULL);
		perror("execl");
		_exit(127);
	}
	setpgid(j->pid, j->pid);
}

static void
dump(struct job *j, int all)
{
	char	 buf[4096], *p, *nl;
	ssize_t	 n;
	size_t	 have = 0;

	if (lseek(j->outfd, 0, SEEK_SET) == -1)
		return;
	/* Diagnostics as TAP comments; the tail when it is long. */
	while ((n = read(j->outfd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += n;
		buf[have] = '\0';
		p = buf;
		while ((nl = strchr(p, '\n')) != NULL) {
			*nl = '\0';
			if (all)
				printf("# %s\n", p);
			p = nl + 1;
		}
		have = strlen(p);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0;
	}
	if (have > 0) {
		buf[have] = '\0';
		if (all)
			printf("# %s\n", buf);
	}
}

int
main(int argc, char *argv[])
{
	struct timespec	 now;
	const char	*src;
	char		 self[PATH_MAX], bindir[PATH_MAX], *p;
	size_t		 next = 0, done = 0, i;
	int		 ch, list = 0, nrun = 0, maxjobs = 1, only = 0;
	int		 passed = 0, failed = 0, skipped = 0, status, n;
	pid_t		 pid;
	struct job	*running[MAXJOBS];

	while ((ch = getopt(argc, argv, "ij:luv")) != -1) {
		switch (ch) {
		case 'i':
			only = 'i';
			break;
		case 'j':
			maxjobs = atoi(optarg);
			if (maxjobs < 1 || maxjobs > MAXJOBS) {
				fprintf(stderr, "run: -j takes 1 to %d\n",
				    MAXJOBS);
				return 2;
			}
			break;
		case 'l':
			list = 1;
			break;
		case 'u':
			only = 'u';
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: run [-lv] [-j jobs] [-u | -i] "
			    "[filter ...]\n");
			return 2;
		}
	}
	argc -= optind;
	argv += optind;

	/* Scripts find the binaries next to this runner's directory. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		strlcpy(bindir, self, sizeof(bindir));
		if ((p = strrchr(bindir, '/')) != NULL)
			*p = '\0';
		if ((p = strrchr(bindir, '/')) != NULL)
			*p = '\0';		/* up from test/ */
		if (getenv("TK_BIN") == NULL)
			setenv("TK_BIN", bindir, 1);
	}
	if ((src = getenv("TK_SRC")) == NULL)
		src = ".";
#if defined(__SANITIZE_THREAD__)
	/* tenkd and tenkload die on a race, so the test that saw it fails. */
	setenv("TSAN_OPTIONS", "halt_on_error=1:exitcode=66", 0);
#endif

	if (only != 'i')
		add_units(argc, argv);
	if (only != 'u')
		add_scripts(src, argc, argv);
	if (list) {
		for (i = 0; i < njobs; i++)
			printf("%s\n", jobs[i].name);
		return 0;
	}

	signal(SIGPIPE, SIG_IGN);
	printf("1..%zu\n", njobs);
	fflush(stdout);
	while (done < njobs) {
		while (nrun < maxjobs && next < njobs) {
			job_start(&jobs[next]);
			running[nrun++] = &jobs[next++];
		}
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == 0) {
			usleep(20000);
			clock_gettime(CLOCK_MONOTONIC, &now);
			for (i = 0; i < (size_t)nrun; i++) {
				struct job *j = running[i];

				if (now.tv_sec - j->start.tv_sec > j->timeout) {
					fprintf(stdout, "# %s: timeout after "
					    "%d s\n", j->name, j->timeout);
					kill(-j->pid, SIGKILL);
				}
			}
			continue;
		}
		if (pid == -1) {
			if (errno == EINTR)
				continue;
			perror("waitpid");
			return 2;
		}
		for (i = 0; i < (size_t)nrun; i++)
			if (running[i]->pid == pid)
				break;
		if (i == (size_t)nrun)
			continue;
		{
			struct job	*j = running[i];
			double		 secs;

			running[i] = running[--nrun];
			/* Whatever the test left in its group goes now. */
			kill(-j->pid, SIGKILL);
			clock_gettime(CLOCK_MONOTONIC, &now);
			secs = (now.tv_sec - j->start.tv_sec) +
			    (now.tv_nsec - j->start.tv_nsec) / 1e9;
			done++;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
				passed++;
				printf("ok %zu - %s # %.2fs\n", done, j->name,
				    secs);
				dump(j, verbose);
			} else if (WIFEXITED(status) &&
			    WEXITSTATUS(status) == 77) {
				skipped++;
				printf("ok %zu - %s # SKIP\n", done, j->name);
				dump(j, 1);
			} else {
				failed++;
				if (WIFSIGNALED(status))
					printf("not ok %zu - %s # signal %d\n",
					    done, j->name, WTERMSIG(status));
				else
					printf("not ok %zu - %s # exit %d\n",
					    done, j->name,
					    WEXITSTATUS(status));
				dump(j, 1);
			}
			close(j->outfd);
			fflush(stdout);
		}
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
