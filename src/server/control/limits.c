/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the process may hold and who it runs as: RLIMIT_NOFILE raised
 * and the connections that fit in it (--max-conns, --splice-pipes, into
 * struct server), the paths --check tries, and --user and --group
 * given up after binding, for good.
 */
#include <sys/prctl.h>
#include <sys/types.h>

#include <grp.h>
#include <stdio.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenk/parse.h"
#include "../tenkd.h"

/*
 * Raise the soft RLIMIT_NOFILE to the hard one and derive how many
 * connections fit: the limit minus the descriptors tenkd itself holds
 * (stdio, listeners, each loop's backend and wake-up fds, the signal
 * pipe, logs, pidfile) and a small slack.
 */
void
limits_set(void)
{
	struct config	*cfg = &srv.cfg;
	uint64_t	 reserve, fit;

	if (tk_nofile_raise(&srv.nofile) == -1)
		log_warn("RLIMIT_NOFILE %llu not raised to the hard limit",
		    (unsigned long long)srv.nofile);
	reserve = 3 + 16 + (uint64_t)cfg->threads * (cfg->nlisten + 3) +
	    (cfg->access_log != NULL) + (cfg->pidfile != NULL);
	/* Under a master, the master serves the metrics, not a worker. */
	if (!config_master(cfg))
		reserve += metrics_fds();
	/* Two descriptors a splice pipe; pipes take at most a quarter. */
	srv.splice = cfg->splice;
	srv.splice_pipes = cfg->splice_pipes;
	if (srv.splice) {
		fit = srv.nofile / 4 / (2 * (uint64_t)cfg->threads);
		if ((uint64_t)srv.splice_pipes > fit) {
			log_warnx("--splice-pipes %d does not fit "
			    "RLIMIT_NOFILE %llu: using %llu", srv.splice_pipes,
			    (unsigned long long)srv.nofile,
			    (unsigned long long)fit);
			srv.splice_pipes = (int)fit;
			if (fit == 0)
				srv.splice = 0;
		}
		reserve += (uint64_t)cfg->threads * srv.splice_pipes * 2;
	}
	fit = srv.nofile > reserve ? srv.nofile - reserve : 1;
	if (cfg->max_conns == -1)
		srv.max_conns = fit;
	else if ((uint64_t)cfg->max_conns > fit) {
		log_warnx("--max-conns %lld does not fit RLIMIT_NOFILE %llu: "
		    "using %llu", cfg->max_conns,
		    (unsigned long long)srv.nofile, (unsigned long long)fit);
		srv.max_conns = fit;
	} else
		srv.max_conns = cfg->max_conns;
	log_info("RLIMIT_NOFILE %llu, max-conns %llu%s",
	    (unsigned long long)srv.nofile,
	    (unsigned long long)srv.max_conns,
	    srv.max_conns == 0 ? " (no cap: up to the fd limit)" : "");
}

/*
 * --check: whether path (NULL: not asked for) can be opened for writing
 * as tenkd will open it (safefile_check), before any privilege is
 * dropped.  Dies with one line otherwise.
 */
void
limits_check_path(const char *what, const char *path, int log)
{
	struct fowner	o;
	char		err[256];

	if (path == NULL)
		return;
	safefile_owner(&srv.cfg, &o);
	if (safefile_check(path, &o, log, err, sizeof(err)) == -1)
		fatalx("%s %s: %s", what, path, err);
}

/*
 * --user/--group, after binding: supplementary groups (only the target
 * group: none of root's stay), then the group, then the user (the other
 * way round the group could no longer be changed), then check that none
 * can be taken back.  PR_SET_NO_NEW_PRIVS (Linux 3.5) last: no execve(2)
 * of a set-user-ID or file-capability binary can give any back either.
 */
void
limits_drop(int upgraded)
{
	struct config	*cfg = &srv.cfg;
	uid_t		 ru, eu, su;
	gid_t		 rg, eg, sg;

	if (cfg->user == NULL && cfg->group == NULL)
		return;
	/*
	 * An upgrade's new master runs as the old one did after dropping
	 * them, with no way back: nothing left to drop.
	 */
	if (upgraded && getuid() != 0 && geteuid() != 0 &&
	    (cfg->user == NULL || getuid() == cfg->uid) &&
	    getgid() == cfg->gid) {
		log_info("running as user %s group %u (as the old master)",
		    cfg->user != NULL ? cfg->user : "(unchanged)",
		    (unsigned int)cfg->gid);
		return;
	}
	if (setgroups(1, &cfg->gid) == -1)
		fatal("setgroups");
	if (setresgid(cfg->gid, cfg->gid, cfg->gid) == -1)
		fatal("setresgid %u", (unsigned int)cfg->gid);
	if (cfg->user != NULL && setresuid(cfg->uid, cfg->uid, cfg->uid) == -1)
		fatal("setresuid %u", (unsigned int)cfg->uid);
	if (getresgid(&rg, &eg, &sg) == -1 || rg != cfg->gid ||
	    eg != cfg->gid || sg != cfg->gid)
		fatalx("group %u was not dropped", (unsigned int)cfg->gid);
	if (cfg->user != NULL) {
		if (getresuid(&ru, &eu, &su) == -1 || ru != cfg->uid ||
		    eu != cfg->uid || su != cfg->uid)
			fatalx("user %u was not dropped",
			    (unsigned int)cfg->uid);
		if (cfg->uid != 0 && setuid(0) != -1)
			fatalx("could regain root after dropping it");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl PR_SET_NO_NEW_PRIVS");
	log_info("running as user %s group %u",
	    cfg->user != NULL ? cfg->user : "(unchanged)",
	    (unsigned int)cfg->gid);
}
