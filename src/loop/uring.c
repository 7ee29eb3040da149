/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The io_uring backend in poll mode: readiness through the ring, behind
 * the same interface as epoll.  Each fd gets one multishot poll
 * (IORING_OP_POLL_ADD with IORING_POLL_ADD_MULTI, Linux 5.13) for
 * POLLIN|POLLOUT|POLLRDHUP, which the kernel runs edge-triggered unless
 * IORING_POLL_ADD_LEVEL is given: a completion per wake-up, mapped onto
 * the watcher's ready bits exactly as epoll.c maps its events.  The data
 * itself still moves with recv(2) and send(2); this file does not save
 * those system calls, only epoll_ctl and epoll_wait's.
 *
 * Completions never carry a pointer.  user_data holds the fd, a
 * generation and an operation tag; slot[fd] holds the watcher's pointer
 * and the current generation, and a completion whose generation is not
 * the slot's belongs to a watcher already stopped (its memory may be
 * gone) and is dropped.  del() bumps the generation and submits a
 * cancel for the request in flight: a poll holds a reference to the
 * file, so the socket a caller closes is really released (and the peer
 * sees the FIN) only when the poll ends, at the next io_uring_enter.
 *
 * The ring is set up with IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN (Linux
 * 6.1), else COOP_TASKRUN (5.19), else neither.  Single issuer binds the
 * ring to the task that first submits, and the registered ring fd lives
 * in a thread's own table, while tenkd creates its workers' loops on the
 * main thread and runs them on others: so the ring starts disabled
 * (IORING_SETUP_R_DISABLED) and add() only notes an fd as pending; the
 * first wait(), on the owner thread, enables the ring, registers its fd
 * and submits.  Each wait() is one io_uring_enter that submits what is
 * pending and waits with the timer heap's deadline (IORING_ENTER_EXT_ARG,
 * 5.11).
 *
 * A completion-queue overflow (more completions than the CQ holds before
 * we reap them) is kept by the kernel (IORING_FEAT_NODROP, 5.5) and
 * flushed when we next enter; a multishot poll whose completion could not
 * be posted ends without IORING_CQE_F_MORE, and is armed again here.
 * Both are counted (tk_loop_stats).
 *
 * A listening socket accepts through one multishot accept (Linux 5.19)
 * under the same slot and generation: each connection comes as a
 * completion carrying the new fd.  Those fds are ours the moment the
 * kernel posts them, so a completion that finds its watcher stopped
 * (tk_io_stop, tk_io_close) cannot be dropped like a recv's: its fd is
 * closed here and counted, never leaked.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "backend.h"

/* user_data: op (8 bits) | generation (24) | fd (32). */
#define UR_OP_NONE	0		/* cancels and the like: ignored */
#define UR_OP_POLL	1
#define UR_OP_RECV	2		/* multishot recv, completion I/O */
#define UR_OP_SEND	3		/* send or sendmsg, completion I/O */
#define UR_OP_ACCEPT	4		/* multishot accept, completion I/O */
#define UR_GENMASK	0xffffffu
#define UR_UDATA(op, gen, fd) \
	((uint64_t)(op) << 56 | (uint64_t)((gen) & UR_GENMASK) << 32 | \
	    (uint32_t)(fd))
#define UR_UD_OP(u)	((unsigned int)((u) >> 56))
#define UR_UD_GEN(u)	((uint32_t)((u) >> 32) & UR_GENMASK)
#define UR_UD_FD(u)	((int)(uint32_t)(u))

#define UR_POLLMASK	(POLLIN | POLLOUT | POLLRDHUP)

/* Incremental buffer consumption (Linux 6.12), beyond liburing 2.3. */
#ifndef IOU_PBUF_RING_INC
#define IOU_PBUF_RING_INC	2
#endif
#ifndef IORING_CQE_F_BUF_MORE
#define IORING_CQE_F_BUF_MORE	(1U << 4)
#endif

/*
 * An accept flag no kernel knows, which it refuses with EINVAL as a
 * kernel before 5.19 refuses IORING_ACCEPT_MULTISHOT: the tests' way to
 * that refusal (TK_IO_URING_NOACCEPT).
 */
#define UR_ACCEPT_UNKNOWN	(1U << 15)

/* Ring sizes: completions may outnumber fds (two wake-ups before a reap). */
#define UR_SQ_MAX	256
#define UR_CQ_MIN	16
#define UR_CQ_MAX	32768

struct ur_slot {
	void		*udata;		/* the struct tk_io */
	union {
		tk_recv_fn	*recv_fn;
		tk_accept_fn	*accept_fn;	/* a listener's (UR_ACC_*) */
	};
	tk_send_fn	*send_fn;
	uint32_t	 gen;
	uint32_t	 recv_left;	/* bytes the recv may take (MAX) */
	uint32_t	 send_seq;	/* ur->nsubmit when the send was made */
	uint16_t	 send_idx;	/* its SQE's index in the SQ */
	uint16_t	 flags;
#define UR_ACTIVE	0x01		/* registered by add() */
#define UR_ARMED	0x02		/* a poll for gen is in flight */
#define UR_PENDING	0x04		/* listed in pend[] */
#define UR_CQ		0x08		/* a completion watcher */
#define UR_RECV_ON	0x10		/* the caller wants to receive */
#define UR_RECV_ARMED	0x20		/* a multishot recv is in flight */
#define UR_RECV_CANCEL	0x40		/* ... and its cancel too */
#define UR_SEND		0x80		/* a send is in flight */
#define UR_RECV_MAX	0x100		/* the recv takes recv_left at most */
#define UR_SEND_POLL	0x200		/* the last send said EAGAIN */
#define UR_ACC_ON	0x400		/* the caller wants to accept */
#define UR_ACC_ARMED	0x800		/* a multishot accept is in flight */
#define UR_ACC_CANCEL	0x1000		/* ... and its cancel too */
#define UR_ACC_END	0x2000		/* its end is owed to a stop */
};

/* A completion taken by wait() for dispatch(). */
struct ur_cqe {
	uint64_t	 udata;
	int32_t		 res;
	uint32_t	 flags;
};

/* sendmsg's header, alive until its SQE is submitted (FEAT_SUBMIT_STABLE). */
struct ur_sendrec {
	struct msghdr	 msg;
	struct iovec	 iov[TK_SEND_IOVMAX];
};

#define UR_NCQE		1024		/* completions dispatched per wait */
#define UR_BUFS		256		/* default receive ring */
#define UR_BUFSIZE	16384

struct ur_state {
	struct io_uring	 ring;
	unsigned int	 setup;		/* IORING_SETUP_* that took */
	unsigned int	 features;	/* IORING_FEAT_* */
	int		 started;
	int		 enter_fd;	/* registered index, or ring fd */
	unsigned int	 enter_flags;	/* IORING_ENTER_REGISTERED_RING */
	struct ur_slot	*slot;
	int		 nslot;
	int		*pend;		/* fds to arm at the next wait */
	int		 npend;
	int		 cappend;
	struct tk_loop_stats st;

	/* Completion I/O. */
	uint32_t	 nsubmit;	/* submissions made, for send_seq */
	struct ur_cqe	*cqes;		/* taken by wait, run by dispatch */
	int		 ncqe;
	struct ur_sendrec *sendrec;	/* one per SQ entry */
	struct io_uring_buf_ring *br;
	char		*bufs;
	unsigned int	 nbuf;
	size_t		 bufsize;
	int		 brmade;
	int		 brwant;	/* tk_loop_bufring: make it at start */
	int		 no_cap;	/* multishot recv takes no byte cap */
	int		 no_accept;	/* TK_IO_URING_NOACCEPT: refused */
	uint32_t	*boff;	/* incremental ring: bytes used, a buffer */
};

/*
 * TK_IO_URING_REFUSE set in the environment makes the backend act as a
 * kernel without io_uring (ENOSYS): the tests check the refusal path of
 * each program with it, as no unprivileged test can turn the kernel's
 * io_uring off.
 */
static int
ur_refused(void)
{
	const char	*e = getenv("TK_IO_URING_REFUSE");

	if (e != NULL && *e != '\0') {
		errno = ENOSYS;
		return 1;
	}
	return 0;
}

static unsigned int
ur_pow2(unsigned int n)
{
	unsigned int	p = 1;

	while (p < n && p < UR_CQ_MAX)
		p <<= 1;
	return p;
}

/*
 * Set up the ring with the best flags the kernel takes.  EINVAL means an
 * unknown flag: try the next set.  Returns 0 or -1 with errno set
 * (ENOSYS, EPERM from kernel.io_uring_disabled or a seccomp filter,
 * ENOMEM from RLIMIT_MEMLOCK before 5.12).
 */
static int
ur_setup(struct ur_state *ur, unsigned int cq)
{
	static const unsigned int tries[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		    IORING_SETUP_R_DISABLED,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring_params	 p;
	unsigned int		 sq = cq < UR_SQ_MAX ? cq : UR_SQ_MAX;
	size_t			 i;
	int			 rv = -EINVAL;

	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = tries[i] | IORING_SETUP_CQSIZE;
		p.cq_entries = cq;
		rv = io_uring_queue_init_params(sq, &ur->ring, &p);
		if (rv == 0) {
			ur->setup = tries[i];
			ur->features = p.features;
			return 0;
		}
		if (rv != -EINVAL)
			break;
	}
	errno = -rv;
	return -1;
}

static int
ur_probe(void)
{
	struct io_uring	ring;
	int		rv;

	if (ur_refused())
		return -1;
	if ((rv = io_uring_queue_init(2, &ring, 0)) != 0) {
		errno = -rv;
		return -1;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

static int	ur_ring_make(struct ur_state *);

/*
 * Room in the slot table for fd.  The first table, sized for the fds
 * the loop expects, comes zeroed from calloc and untouched, so that its
 * memory is resident only as fds are used (40 bytes each; touched at
 * once, 1.3 MiB a thread at 32,768 fds, before any connection).
 */
static int
ur_grow_slots(struct ur_state *ur, int fd)
{
	return array_grow(&ur->slot, &ur->nslot, 256, fd, INT_MAX,
	    sizeof(*ur->slot));
}

/*
 * The state and every array it owns, the ring apart: what a failed init
 * and ur_free both let go, named once.  The lazy arrays (sendrec, the
 * buffer ring) are NULL until first used.
 */
static void
ur_state_free(struct ur_state *ur)
{
	free(ur->slot);
	free(ur->pend);
	free(ur->cqes);
	free(ur->sendrec);
	free(ur->br);
	free(ur->bufs);
	free(ur->boff);
	free(ur);
}

static int
ur_init(struct tk_loop *l, int maxfds)
{
	struct ur_state	*ur;
	const char	*e;

	if (ur_refused())
		return -1;
	if ((ur = calloc(1, sizeof(*ur))) == NULL)
		return -1;
	if (ur_grow_slots(ur, maxfds < 1 << 16 ? maxfds : 1 << 16) == -1)
		goto fail;
	if ((ur->cqes = calloc(UR_NCQE, sizeof(*ur->cqes))) == NULL)
		goto fail;
	/*
	 * The pending list sized for the fds at once: doubled while
	 * thousands of connections arrive, its old copies stayed in the
	 * worker's heap, 7 bytes a connection at 10,000.
	 */
	ur->cappend = maxfds < 64 ? 64 : maxfds < 1 << 16 ? maxfds : 1 << 16;
	if ((ur->pend = reallocarray(NULL, ur->cappend, sizeof(*ur->pend))) ==
	    NULL)
		goto fail;
	ur->nbuf = UR_BUFS;
	ur->bufsize = UR_BUFSIZE;
	/* The tests' way to the path of kernels before 6.17. */
	e = getenv("TK_IO_URING_NOCAP");
	ur->no_cap = e != NULL && *e != '\0';
	e = getenv("TK_IO_URING_NOACCEPT");
	ur->no_accept = e != NULL && *e != '\0';
	if (ur_setup(ur, ur_pow2(2 * (unsigned int)maxfds < UR_CQ_MIN ?
	    UR_CQ_MIN : 2 * (unsigned int)maxfds)) == -1)
		goto fail;
	l->be = ur;
	return 0;
 fail:
	ur_state_free(ur);
	return -1;
}

static void
ur_free(struct tk_loop *l)
{
	struct ur_state	*ur = l->be;

	/*
	 * Closing the ring ends every request still in flight.  XXX A
	 * multishot accept's connections whose completions were never
	 * reaped stay open, unknown to anyone, until the process exits: a
	 * caller stops accepting and runs the loop to the accept's end
	 * before freeing it (tenkd's drain does), or exits soon after.
	 */
	io_uring_queue_exit(&ur->ring);
	ur_state_free(ur);
	l->be = NULL;
}

/*
 * The first wait, on the thread that runs the loop: enable the ring
 * (single issuer binds it to this task) and register its fd in this
 * thread's table (5.18; without it every enter looks the fd up).
 */
static void
ur_start(struct ur_state *ur)
{
	int	rv;

	if (ur->setup & IORING_SETUP_R_DISABLED) {
		/* liburing 2.3's .so lacks io_uring_enable_rings(). */
		rv = io_uring_register(ur->ring.ring_fd,
		    IORING_REGISTER_ENABLE_RINGS, NULL, 0);
		if (rv != 0) {
			errno = -rv;
			log_warn("io_uring_enable_rings");
			abort();
		}
	}
	ur->enter_fd = ur->ring.ring_fd;
	if (io_uring_register_ring_fd(&ur->ring) == 1) {
		ur->enter_fd = ur->ring.enter_ring_fd;
		ur->enter_flags = IORING_ENTER_REGISTERED_RING;
	}
	ur->started = 1;
	/* Failing here, it fails again, with ENOMEM, at the first recv. */
	if (ur->brwant)
		(void)ur_ring_make(ur);
}

/*
 * An SQE, submitting what is queued when the SQ is full.  Only on the
 * thread that runs the loop once it started; NULL when even that fails.
 */
static struct io_uring_sqe *
ur_sqe(struct ur_state *ur)
{
	struct io_uring_sqe	*sqe;

	if ((sqe = io_uring_get_sqe(&ur->ring)) != NULL)
		return sqe;
	ur->st.sq_full++;
	if (!ur->started || io_uring_submit(&ur->ring) < 0)
		return NULL;
	ur->nsubmit++;
	return io_uring_get_sqe(&ur->ring);
}

static int
ur_pend(struct ur_state *ur, int fd)
{
	if (ur->slot[fd].flags & UR_PENDING)
		return 0;
	if (ur->npend == ur->cappend && array_grow(&ur->pend,
	    &ur->cappend, 64, ur->npend, INT_MAX, sizeof(*ur->pend)) == -1)
		return -1;
	ur->pend[ur->npend++] = fd;
	ur->slot[fd].flags |= UR_PENDING;
	return 0;
}

static int
ur_add(struct tk_loop *l, int fd, unsigned int ev, void *udata)
{
	struct ur_state	*ur = l->be;
	struct ur_slot	*s;

	(void)ev;
	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (fd >= ur->nslot && ur_grow_slots(ur, fd) == -1)
		return -1;
	s = &ur->slot[fd];
	if (s->flags & (UR_ACTIVE | UR_CQ)) {
		errno = EEXIST;
		return -1;
	}
	if (ur_pend(ur, fd) == -1)
		return -1;
	s->gen++;
	s->udata = udata;
	s->flags |= UR_ACTIVE;
	return 0;
}

static int
ur_del(struct tk_loop *l, int fd)
{
	struct ur_state		*ur = l->be;
	struct io_uring_sqe	*sqe;
	struct ur_slot		*s;

	if (fd < 0 || fd >= ur->nslot ||
	    ((s = &ur->slot[fd])->flags & UR_ACTIVE) == 0) {
		errno = ENOENT;
		return -1;
	}
	if (s->flags & UR_ARMED) {
		/*
		 * XXX Should the SQ be full and the submit fail (the loop
		 * freed from another thread), the poll stays until the ring
		 * is closed; the generation bump below keeps it harmless.
		 */
		if ((sqe = ur_sqe(ur)) != NULL) {
			/*
			 * ASYNC_CANCEL, not POLL_REMOVE: the latter gives up
			 * with -EALREADY when a wake-up's task work owns the
			 * poll, and a multishot poll then runs on for ever.
			 */
			io_uring_prep_cancel64(sqe,
			    UR_UDATA(UR_OP_POLL, s->gen, fd), 0);
			io_uring_sqe_set_data64(sqe, UR_UDATA(UR_OP_NONE, 0,
			    0));
		}
	}
	/* A pending entry stays listed; the flush skips it. */
	s->flags &= ~(UR_ACTIVE | UR_ARMED);
	s->gen++;
	s->udata = NULL;
	return 0;
}

/*
 * A recv for s: multishot, capped at s->recv_left bytes with UR_RECV_MAX.
 * The kernel's cap of a multishot recv is the SQE's optlen (Linux 6.17,
 * in file_index's place: older kernels refuse it with EINVAL), and it
 * ends the recv at the first completion that reaches it, which may bring
 * a whole buffer: up to a buffer less a byte past the cap.  (A cap a
 * buffer short of what is left would end it exactly, but costs single
 * shots for the last buffer's worth, each arming a poll: a quarter of
 * the recvs at 64k, all of them at the proxy's 16k.)  Without the
 * kernel's cap, each recv is a single shot of at most a buffer and what
 * is left, which is exact.  Each completion takes its bytes off
 * recv_left; a recv that ended short of it is armed again
 * (ur_recv_done).
 */
static void
ur_prep_recv(struct ur_state *ur, struct io_uring_sqe *sqe,
    struct ur_slot *s, int fd)
{
	uint32_t	left = s->recv_left;

	if (!(s->flags & UR_RECV_MAX))
		io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
	else if (!ur->no_cap) {
		io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
		sqe->file_index = left;			/* optlen */
	} else
		io_uring_prep_recv(sqe, fd, NULL, left < ur->bufsize ? left :
		    (uint32_t)ur->bufsize, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
}

/*
 * A multishot accept on listener fd.  Its connections come nonblocking
 * and close-on-exec, as accept4 gave them; no address (NULL): a
 * multishot request has one place for it, which each accept overwrites.
 */
static void
ur_prep_accept(struct ur_state *ur, struct io_uring_sqe *sqe,
    struct ur_slot *s, int fd)
{
	io_uring_prep_multishot_accept(sqe, fd, NULL, NULL,
	    SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (ur->no_accept)
		sqe->ioprio |= UR_ACCEPT_UNKNOWN;
	io_uring_sqe_set_data64(sqe, UR_UDATA(UR_OP_ACCEPT, s->gen, fd));
	s->flags |= UR_ACC_ARMED;
}

/* Turn the pending list into poll, recv and accept SQEs. */
static void
ur_flush(struct ur_state *ur)
{
	struct io_uring_sqe	*sqe;
	struct ur_slot		*s;
	int			 i, fd;

	for (i = 0; i < ur->npend; i++) {
		fd = ur->pend[i];
		s = &ur->slot[fd];
		s->flags &= ~UR_PENDING;
		if ((s->flags & (UR_CQ | UR_ACC_ON | UR_ACC_ARMED)) ==
		    (UR_CQ | UR_ACC_ON)) {
			if ((sqe = ur_sqe(ur)) == NULL)
				goto full;
			ur_prep_accept(ur, sqe, s, fd);
			continue;
		}
		if ((s->flags & (UR_CQ | UR_RECV_ON | UR_RECV_ARMED)) ==
		    (UR_CQ | UR_RECV_ON)) {
			if ((sqe = ur_sqe(ur)) == NULL)
				goto full;
			ur_prep_recv(ur, sqe, s, fd);
			sqe->buf_group = 0;
			io_uring_sqe_set_data64(sqe,
			    UR_UDATA(UR_OP_RECV, s->gen, fd));
			s->flags |= UR_RECV_ARMED;
			continue;
		}
		if ((s->flags & (UR_ACTIVE | UR_ARMED)) != UR_ACTIVE)
			continue;
		if ((sqe = ur_sqe(ur)) == NULL)
			goto full;
		io_uring_prep_poll_multishot(sqe, fd, UR_POLLMASK);
		io_uring_sqe_set_data64(sqe, UR_UDATA(UR_OP_POLL, s->gen, fd));
		s->flags |= UR_ARMED;
	}
	ur->npend = 0;
	return;
 full:
	log_warn("io_uring_submit");
	abort();
}

/*
 * One poll completion: the ready bits for out, or 0 when there is nothing
 * to report.  A poll that ended (no IORING_CQE_F_MORE) while its watcher
 * is still registered is armed again at the next wait: the multishot
 * request ends on a CQ overflow, or when cancelled by anything but our
 * own del().  A failed poll reports an error once and is not re-armed,
 * as the next read or write will meet the fault.
 */
static unsigned int
ur_poll_done(struct ur_state *ur, const struct io_uring_cqe *cqe,
    void **udata)
{
	struct ur_slot	*s;
	struct tk_io	*io;
	int		 fd = UR_UD_FD(cqe->user_data);
	unsigned int	 ev;

	if (fd < 0 || fd >= ur->nslot)
		return 0;
	s = &ur->slot[fd];
	if ((s->flags & UR_ACTIVE) == 0 ||
	    (s->gen & UR_GENMASK) != UR_UD_GEN(cqe->user_data))
		return 0;
	*udata = s->udata;
	if (cqe->res < 0 && cqe->res != -ECANCELED) {
		s->flags &= ~UR_ARMED;
		return TK_EV_READ | TK_EV_WRITE | TK_EV_ERR;
	}
	ev = cqe->res > 0 ? backend_poll_events((unsigned int)cqe->res) : 0;
	/*
	 * The mask is the wake-up's own key (io_poll_wake stashes it): a
	 * socket wakes readers with POLLIN and writers with POLLOUT, where
	 * epoll reports all the file's readiness at each event.  A handler
	 * that cleared WRITE without meeting EAGAIN (nothing to send, say)
	 * sees WRITE again at its next event on epoll; so that it does here
	 * too, a read wake-up also offers WRITE to a watcher that wants it
	 * and does not hold it.  At worst the send meets EAGAIN.  The other
	 * way round is not needed: a socket wakes writers only after a
	 * send found it full (SOCK_NOSPACE), and READ is cleared on EAGAIN.
	 */
	if ((ev & (TK_EV_READ | TK_EV_WRITE)) == TK_EV_READ) {
		io = s->udata;
		ev |= io->want & ~io->ready & TK_EV_WRITE;
	}
	if ((cqe->flags & IORING_CQE_F_MORE) == 0) {
		s->flags &= ~UR_ARMED;
		ur->st.rearms++;
		(void)ur_pend(ur, fd);
	}
	return ev;
}

/*
 * Submit what is queued and take up to want completions, waiting for at
 * least one for timeout ns (-1: for ever) unless timeout is 0.  A wait
 * that asks for more completions than have arrived, with a zero timeout,
 * returns at once (-ETIME) after the kernel ran up to that many pending
 * completions: with DEFER_TASKRUN it runs only max(20, wanted) per enter
 * since Linux 6.13 ("io_uring: limit local tw done"), and asking for 1
 * would leave a busy loop 20 events per pass.
 */
/*
 * liburing's __io_uring_flush_sq, which it keeps private: publish the
 * SQEs prepared since the last flush; return how many await submission.
 */
static unsigned int
ur_flush_sq(struct io_uring *ring)
{
	struct io_uring_sq	*sq = &ring->sq;
	unsigned int		 tail = sq->sqe_tail;

	if (sq->sqe_head != tail) {
		sq->sqe_head = tail;
		io_uring_smp_store_release(sq->ktail, tail);
	}
	return tail - IO_URING_READ_ONCE(*sq->khead);
}

static int
ur_enter(struct ur_state *ur, unsigned int want, int64_t timeout)
{
	struct io_uring_getevents_arg	 arg;
	struct io_uring_cqe		*cqe;
	struct __kernel_timespec	 ts;
	unsigned int			 min = timeout == 0 ? want : 1;
	int				 rv;

	ts.tv_sec = timeout > 0 ? timeout / 1000000000 : 0;
	ts.tv_nsec = timeout > 0 ? timeout % 1000000000 : 0;
	if (ur->features & IORING_FEAT_EXT_ARG) {
		/*
		 * Our own enter: io_uring_submit_and_wait_timeout() enters a
		 * second time when fewer than min completions came.
		 */
		memset(&arg, 0, sizeof(arg));
		arg.sigmask_sz = _NSIG / 8;
		arg.ts = timeout >= 0 ? (uint64_t)(uintptr_t)&ts : 0;
		rv = io_uring_enter2(ur->enter_fd, ur_flush_sq(&ur->ring), min,
		    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG |
		    ur->enter_flags, (sigset_t *)&arg, sizeof(arg));
	} else
		rv = io_uring_submit_and_wait_timeout(&ur->ring, &cqe, min,
		    timeout >= 0 ? &ts : NULL, NULL);
	ur->nsubmit++;
	if (rv >= 0)
		return 0;
	switch (rv) {
	case -ETIME:
	case -EINTR:
		break;
	case -EBUSY:
	case -EAGAIN:
		/* Kernels before 5.19 refuse to submit in overflow. */
		ur->st.cq_overflow++;
		break;
	default:
		errno = -rv;
		log_warn("io_uring_enter");
		abort();
	}
	return 0;
}

/* Move up to nout completions into out[]; returns how many CQEs it took. */
static unsigned int
ur_reap(struct ur_state *ur, struct tk_event *out, int nout, int *np)
{
	struct io_uring_cqe	*cqe;
	unsigned int		 head, seen = 0, ev, op;
	void			*udata;
	int			 n = *np;

	if (IO_URING_READ_ONCE(*ur->ring.sq.kflags) & IORING_SQ_CQ_OVERFLOW)
		ur->st.cq_overflow++;
	io_uring_for_each_cqe(&ur->ring, head, cqe) {
		if (n == nout || ur->ncqe == UR_NCQE)
			break;
		seen++;
		op = UR_UD_OP(cqe->user_data);
		if (op == UR_OP_RECV || op == UR_OP_SEND ||
		    op == UR_OP_ACCEPT) {
			ur->cqes[ur->ncqe].udata = cqe->user_data;
			ur->cqes[ur->ncqe].res = cqe->res;
			ur->cqes[ur->ncqe].flags = cqe->flags;
			ur->ncqe++;
			continue;
		}
		if (op != UR_OP_POLL)
			continue;
		udata = NULL;
		if ((ev = ur_poll_done(ur, cqe, &udata)) == 0)
			continue;
		out[n].udata = udata;
		out[n].ev = ev;
		n++;
	}
	io_uring_cq_advance(&ur->ring, seen);
	*np = n;
	return seen;
}

/* At least this many completions from one enter: there may be more. */
#define UR_TW_BATCH	20

static int
ur_wait(struct tk_loop *l, struct tk_event *out, int nout, int64_t timeout)
{
	struct ur_state	*ur = l->be;
	unsigned int	 seen, room;
	int		 n = 0;

	if (!ur->started)
		ur_start(ur);
	ur_flush(ur);
	(void)ur_enter(ur, (unsigned int)nout, timeout);
	seen = ur_reap(ur, out, nout, &n);
	/*
	 * A blocking wait returned as soon as one completion was there:
	 * when it brought a full batch, more may be waiting to run, so
	 * take them too at the cost of a second enter (never blocking),
	 * asking for as many as there is room for, readiness events and
	 * completions alike: the kernel runs that many at the most, and
	 * 10,000 busy sockets want thousands an iteration.
	 */
	room = (unsigned int)(nout - n) + (unsigned int)(UR_NCQE - ur->ncqe);
	if (timeout != 0 && seen >= UR_TW_BATCH && n < nout &&
	    ur->ncqe < UR_NCQE && (ur->setup & IORING_SETUP_DEFER_TASKRUN)) {
		(void)ur_enter(ur, room, 0);
		(void)ur_reap(ur, out, nout, &n);
	}
	return n;
}

/*
 * Completion I/O (tenk/uring.h).  A completion watcher's slot holds its
 * callbacks; its recv and send carry the slot's generation like a poll,
 * so that stopping one (ur_cq_stop bumps the generation) makes any late
 * completion of its requests fall on the floor.  Completions are copied
 * out of the CQ by wait() and run by dispatch(), from the loop, so that
 * wait() itself never calls out.
 */

/*
 * Multishot recv (6.0), buffer rings (5.19) and the synchronous cancel
 * (6.0) are all there when the ring took DEFER_TASKRUN (6.1).
 */
static int
ur_completion(struct tk_loop *l)
{
	struct ur_state	*ur = l->be;

	return (ur->setup & IORING_SETUP_DEFER_TASKRUN) != 0;
}

static int
ur_bufring(struct tk_loop *l, unsigned int count, size_t size)
{
	struct ur_state	*ur = l->be;

	if (ur->brmade) {
		errno = EBUSY;
		return -1;
	}
	if (count == 0 || count > 32768 || (count & (count - 1)) != 0 ||
	    size == 0 || size > 1U << 30) {
		errno = EINVAL;
		return -1;
	}
	ur->nbuf = count;
	ur->bufsize = size;
	ur->brwant = 1;
	return 0;
}

/* Give buffer bid back to the kernel. */
static void
ur_buf_put(struct ur_state *ur, unsigned int bid)
{
	io_uring_buf_ring_add(ur->br, ur->bufs + (size_t)bid * ur->bufsize,
	    (unsigned int)ur->bufsize, (unsigned short)bid,
	    io_uring_buf_ring_mask(ur->nbuf), 0);
	io_uring_buf_ring_advance(ur->br, 1);
}

/*
 * The provided-buffer ring (IORING_REGISTER_PBUF_RING, Linux 5.19), made
 * at the first recv: group 0, nbuf buffers of bufsize bytes.
 */
static int
ur_ring_make(struct ur_state *ur)
{
	struct io_uring_buf_reg	 reg;
	const char		*e;
	unsigned int		 i;
	int			 rv;

	if (ur->brmade)
		return 0;
	if (posix_memalign((void **)&ur->br, 4096,
	    ur->nbuf * sizeof(struct io_uring_buf)) != 0)
		goto nomem;
	/*
	 * Written: its memory is resident from the start, a fixed cost of
	 * the loop rather than one that creeps up as the kernel goes round
	 * the ring; and valgrind cannot see the kernel write into it.  Not
	 * with zeroes, which the compiler turns into a calloc that leaves
	 * the pages untouched.
	 */
	if ((ur->bufs = malloc(ur->nbuf * ur->bufsize)) == NULL)
		goto nomem;
	memset(ur->bufs, 0xa5, ur->nbuf * ur->bufsize);
	io_uring_buf_ring_init(ur->br);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uint64_t)(uintptr_t)ur->br;
	reg.ring_entries = ur->nbuf;
	reg.bgid = 0;
	/*
	 * Incremental consumption (Linux 6.12): a recv takes only the bytes
	 * it needs of a buffer, which serves the next ones until it is full,
	 * so that 16k buffers carry hundreds of small messages each.  Without
	 * it every message takes a whole buffer, and ten thousand sockets
	 * with a message each drain a 256-buffer ring again and again.
	 */
	e = getenv("TK_IO_URING_NOINC");
	if (e == NULL || *e == '\0') {
		reg.pad = IOU_PBUF_RING_INC;		/* flags */
		if ((ur->boff = calloc(ur->nbuf, sizeof(*ur->boff))) ==
		    NULL)
			goto nomem;
		if (io_uring_register_buf_ring(&ur->ring, &reg, 0) == 0)
			goto made;
		free(ur->boff);
		ur->boff = NULL;
		reg.pad = 0;
	}
	if ((rv = io_uring_register_buf_ring(&ur->ring, &reg, 0)) != 0) {
		errno = -rv;
		goto fail;
	}
 made:
	for (i = 0; i < ur->nbuf; i++)
		ur_buf_put(ur, i);
	ur->brmade = 1;
	return 0;
 nomem:
	errno = ENOMEM;
 fail:
	free(ur->boff);
	ur->boff = NULL;
	free(ur->br);
	free(ur->bufs);
	ur->br = NULL;
	ur->bufs = NULL;
	return -1;
}

/* The slot of completion watcher io, made one if it is not yet. */
static struct ur_slot *
ur_cq_slot(struct ur_state *ur, struct tk_io *io)
{
	struct ur_slot	*s;

	if (io->fd < 0) {
		errno = EBADF;
		return NULL;
	}
	if (io->fd >= ur->nslot && ur_grow_slots(ur, io->fd) == -1)
		return NULL;
	s = &ur->slot[io->fd];
	if (!io->cq) {
		if (s->flags & (UR_ACTIVE | UR_CQ)) {
			errno = EEXIST;
			return NULL;
		}
		s->gen++;
		s->flags = (s->flags & UR_PENDING) | UR_CQ;
		s->udata = io;
		s->recv_fn = NULL;
		s->send_fn = NULL;
	}
	return s;
}

/* A first request that failed leaves no completion watcher behind. */
static void
ur_cq_undo(struct ur_slot *s, struct tk_io *io)
{
	if (!io->cq) {
		s->flags &= UR_PENDING;
		s->udata = NULL;
	}
}

static int
ur_recv_start(struct tk_loop *l, struct tk_io *io, tk_recv_fn *fn,
    size_t max)
{
	struct ur_state	*ur = l->be;
	struct ur_slot	*s;

	if (ur_ring_make(ur) == -1 || (s = ur_cq_slot(ur, io)) == NULL)
		return -1;
	if (s->flags & (UR_ACC_ON | UR_ACC_ARMED)) {
		errno = EBUSY;
		return -1;
	}
	s->recv_fn = fn;
	if (s->flags & UR_RECV_ON)
		return 0;
	if (ur_pend(ur, io->fd) == -1) {
		ur_cq_undo(s, io);
		return -1;
	}
	s->flags &= ~UR_RECV_MAX;
	s->flags |= UR_RECV_ON | (max > 0 ? UR_RECV_MAX : 0);
	s->recv_left = max < UINT32_MAX ? (uint32_t)max : UINT32_MAX;
	return 0;
}

static int
ur_recv_on(struct tk_loop *l, struct tk_io *io)
{
	struct ur_state	*ur = l->be;

	return (ur->slot[io->fd].flags & UR_RECV_ON) != 0;
}

/*
 * Cancel the request op of s in flight (flag armed), once (flag cancel).
 * The cancel is submitted at the next wait, before the kernel runs any
 * completion work (DEFER_TASKRUN), so a multishot request brings
 * nothing it had not brought when that wait began.
 */
static void
ur_cancel(struct ur_state *ur, struct ur_slot *s, int fd, unsigned int op,
    unsigned int armed, unsigned int cancel)
{
	struct io_uring_sqe	*sqe;

	if ((s->flags & (armed | cancel)) != armed)
		return;
	/* XXX With the SQ full before the loop ever ran, it runs on. */
	if ((sqe = ur_sqe(ur)) == NULL)
		return;
	io_uring_prep_cancel64(sqe, UR_UDATA(op, s->gen, fd), 0);
	io_uring_sqe_set_data64(sqe, UR_UDATA(UR_OP_NONE, 0, 0));
	s->flags |= cancel;
}

static void
ur_recv_cancel(struct ur_state *ur, struct ur_slot *s, int fd)
{
	ur_cancel(ur, s, fd, UR_OP_RECV, UR_RECV_ARMED, UR_RECV_CANCEL);
}

static void
ur_recv_stop(struct tk_loop *l, struct tk_io *io)
{
	struct ur_state	*ur = l->be;
	struct ur_slot	*s = &ur->slot[io->fd];

	s->flags &= ~UR_RECV_ON;
	ur_recv_cancel(ur, s, io->fd);
}

static int
ur_send(struct tk_loop *l, struct tk_io *io, const struct iovec *iov,
    int iovcnt, tk_send_fn *done)
{
	struct ur_state		*ur = l->be;
	struct io_uring_sqe	*sqe;
	struct ur_sendrec	*r;
	struct ur_slot		*s;
	unsigned int		 idx;

	if (iovcnt > 1 && ur->sendrec == NULL &&
	    (ur->sendrec = calloc(ur->ring.sq.ring_entries,
	    sizeof(*ur->sendrec))) == NULL)
		return -1;
	if ((s = ur_cq_slot(ur, io)) == NULL)
		return -1;
	if (s->flags & (UR_SEND | UR_ACC_ON | UR_ACC_ARMED)) {
		errno = EBUSY;
		return -1;
	}
	if ((sqe = ur_sqe(ur)) == NULL) {
		ur_cq_undo(s, io);
		errno = EAGAIN;
		return -1;
	}
	idx = (unsigned int)(sqe - ur->ring.sq.sqes);
	/*
	 * MSG_WAITALL: io_uring retries a short send itself (Linux 5.18),
	 * so one completion means the whole request.
	 */
	if (iovcnt == 1)
		io_uring_prep_send(sqe, io->fd, iov[0].iov_base,
		    iov[0].iov_len, MSG_NOSIGNAL | MSG_WAITALL);
	else {
		/* One record per SQ entry: it lives until submission. */
		r = &ur->sendrec[idx];
		memset(&r->msg, 0, sizeof(r->msg));
		memcpy(r->iov, iov, (size_t)iovcnt * sizeof(*iov));
		r->msg.msg_iov = r->iov;
		r->msg.msg_iovlen = (size_t)iovcnt;
		io_uring_prep_sendmsg(sqe, io->fd, &r->msg,
		    MSG_NOSIGNAL | MSG_WAITALL);
	}
	/* After an EAGAIN, wait for room before trying: no busy loop. */
	if (s->flags & UR_SEND_POLL)
		sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
	s->flags &= ~UR_SEND_POLL;
	io_uring_sqe_set_data64(sqe, UR_UDATA(UR_OP_SEND, s->gen, io->fd));
	s->send_fn = done;
	s->send_seq = ur->nsubmit;
	s->send_idx = (uint16_t)idx;
	s->flags |= UR_SEND;
	return 0;
}

/*
 * The send of s must be over before its caller frees the data.  Not yet
 * submitted: its SQE becomes a no-op.  Submitted: a synchronous cancel
 * (IORING_REGISTER_SYNC_CANCEL, Linux 6.0) returns once the request is
 * done, cancelled or completed.
 */
static void
ur_send_cancel(struct ur_state *ur, struct ur_slot *s, int fd)
{
	struct io_uring_sync_cancel_reg	reg;
	struct io_uring_sqe		*sqe;

	if (s->send_seq == ur->nsubmit) {
		sqe = &ur->ring.sq.sqes[s->send_idx];
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, UR_UDATA(UR_OP_NONE, 0, 0));
		return;
	}
	memset(&reg, 0, sizeof(reg));
	reg.addr = UR_UDATA(UR_OP_SEND, s->gen, fd);
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	/*
	 * XXX Before Linux 6.0 (EINVAL) a send waiting for socket space
	 * may still read the data after the caller freed it.
	 */
	(void)io_uring_register_sync_cancel(&ur->ring, &reg);
}

static void
ur_cq_stop(struct tk_loop *l, struct tk_io *io)
{
	struct ur_state	*ur = l->be;
	struct ur_slot	*s;

	if (io->fd < 0 || io->fd >= ur->nslot)
		return;
	s = &ur->slot[io->fd];
	if ((s->flags & UR_CQ) == 0 || s->udata != io)
		return;
	ur_recv_cancel(ur, s, io->fd);
	if (s->flags & UR_SEND)
		ur_send_cancel(ur, s, io->fd);
	/* What it accepted meanwhile is closed by ur_accept_done. */
	ur_cancel(ur, s, io->fd, UR_OP_ACCEPT, UR_ACC_ARMED, UR_ACC_CANCEL);
	s->flags &= UR_PENDING;
	s->gen++;
	s->udata = NULL;
}

/* One recv completion. */
static void
ur_recv_done(struct tk_loop *l, struct ur_state *ur, const struct ur_cqe *c)
{
	struct ur_slot	*s;
	struct tk_io	*io;
	tk_recv_fn	*fn;
	uint32_t	 gen = UR_UD_GEN(c->udata);
	int		 fd = UR_UD_FD(c->udata), bid = -1, live;

	if (c->flags & IORING_CQE_F_BUFFER)
		bid = (int)(c->flags >> IORING_CQE_BUFFER_SHIFT);
	s = &ur->slot[fd];
	live = (s->flags & UR_CQ) && (s->gen & UR_GENMASK) == gen;
	if (live && (c->flags & IORING_CQE_F_MORE) == 0)
		s->flags &= ~(UR_RECV_ARMED | UR_RECV_CANCEL);
	if (live && c->res == -EINVAL && (s->flags & UR_RECV_MAX) &&
	    !ur->no_cap) {
		/* A kernel without the cap: single shots from now on. */
		ur->no_cap = 1;
		if (s->flags & UR_RECV_ON)
			(void)ur_pend(ur, fd);
		return;
	}
	/* EAGAIN, as for a send (ur_send_done): armed again, not told. */
	if (live && c->res != -ENOBUFS && c->res != -ECANCELED &&
	    c->res != -EAGAIN) {
		io = s->udata;
		fn = s->recv_fn;
		if (c->res <= 0)
			s->flags &= ~UR_RECV_ON;
		else if (s->flags & UR_RECV_MAX) {
			s->recv_left -= (uint32_t)c->res < s->recv_left ?
			    (uint32_t)c->res : s->recv_left;
			/* Its max reached: the recv is over, quietly. */
			if (s->recv_left == 0)
				s->flags &= ~UR_RECV_ON;
		}
		fn(l, io, bid >= 0 ? ur->bufs + (size_t)bid * ur->bufsize +
		    (ur->boff != NULL ? ur->boff[bid] : 0) : NULL, c->res);
		/* fn may have closed io, or grown the slot table. */
		s = &ur->slot[fd];
		live = (s->flags & UR_CQ) && (s->gen & UR_GENMASK) == gen;
		if (live)
			loop_io_ready(l, io, TK_EV_READ);
	}
	if (c->res == -ENOBUFS)
		ur->st.nobufs++;
	if (bid >= 0 && ur->boff != NULL) {
		/*
		 * Incremental: the kernel keeps a buffer it has not filled
		 * (BUF_MORE) and the next recv goes on after these bytes.  A
		 * recv of nothing (EOF) consumed nothing, though kernels
		 * before a 2025 fix leave BUF_MORE out there: never give such
		 * a buffer back, the kernel still holds it.
		 */
		if (c->res > 0) {
			if (c->flags & IORING_CQE_F_BUF_MORE)
				ur->boff[bid] += (uint32_t)c->res;
			else {
				ur->boff[bid] = 0;
				ur_buf_put(ur, (unsigned int)bid);
			}
		}
	} else if (bid >= 0)
		ur_buf_put(ur, (unsigned int)bid);
	if (live && (s->flags & (UR_RECV_ON | UR_RECV_ARMED)) == UR_RECV_ON)
		(void)ur_pend(ur, fd);
}

static int
ur_live(const struct ur_slot *s, uint64_t udata)
{
	return (s->flags & UR_CQ) && (s->gen & UR_GENMASK) == UR_UD_GEN(udata);
}

static void
ur_send_done(struct tk_loop *l, struct ur_state *ur, const struct ur_cqe *c)
{
	struct ur_slot	*s;
	struct tk_io	*io;
	int		 fd = UR_UD_FD(c->udata);

	s = &ur->slot[fd];
	if ((s->flags & (UR_CQ | UR_SEND)) != (UR_CQ | UR_SEND) ||
	    (s->gen & UR_GENMASK) != UR_UD_GEN(c->udata))
		return;
	s->flags &= ~UR_SEND;
	/*
	 * The kernel retries a send that found the socket full itself,
	 * through its poll; yet once in a while (a half-closed peer, under
	 * load) a send ends with EAGAIN and nothing sent.  The caller sends
	 * again, and that send waits for room first.
	 */
	if (c->res == -EAGAIN) {
		s->flags |= UR_SEND_POLL;
		ur->st.send_again++;
	}
	io = s->udata;
	s->send_fn(l, io, c->res);
	/* send_fn may have closed io, or grown the slot table. */
	if (ur_live(&ur->slot[fd], c->udata))
		loop_io_ready(l, io, TK_EV_WRITE);
}

static int
ur_accept_start(struct tk_loop *l, struct tk_io *lio, tk_accept_fn *fn)
{
	struct ur_state	*ur = l->be;
	struct ur_slot	*s;

	if ((s = ur_cq_slot(ur, lio)) == NULL)
		return -1;
	if (s->flags & (UR_RECV_ON | UR_RECV_ARMED | UR_SEND)) {
		errno = EBUSY;
		return -1;
	}
	if ((s->flags & (UR_ACC_ON | UR_ACC_ARMED)) == 0 &&
	    ur_pend(ur, lio->fd) == -1) {
		ur_cq_undo(s, lio);
		return -1;
	}
	/* Armed still (stopped, its end not in yet): armed again then. */
	s->accept_fn = fn;
	s->flags |= UR_ACC_ON;
	s->flags &= ~UR_ACC_END;
	return 0;
}

static int
ur_accept_stop(struct tk_loop *l, struct tk_io *lio)
{
	struct ur_state	*ur = l->be;
	struct ur_slot	*s = &ur->slot[lio->fd];

	s->flags &= ~UR_ACC_ON;
	if ((s->flags & UR_ACC_ARMED) == 0)
		return 0;
	ur_cancel(ur, s, lio->fd, UR_OP_ACCEPT, UR_ACC_ARMED, UR_ACC_CANCEL);
	s->flags |= UR_ACC_END;
	return 1;
}

/*
 * Errors of accept(2) about one client only (gone before it was
 * accepted, refused by a firewall rule), after which accept(2) says to
 * try again: they end a multishot accept, which is armed again.
 */
static int
ur_accept_retry(int err)
{
	switch (err) {
	case ECONNABORTED:
	case EPROTO:
	case EPERM:
	case EINTR:
	case EAGAIN:
		return 1;
	}
	return 0;
}


/*
 * One accept completion.  A connection goes to fn.  A request that
 * ended is armed again while the caller accepts and the end was not an
 * error for it to hear; after a stop, fn hears the end (-ECANCELED).
 */
static void
ur_accept_done(struct tk_loop *l, struct ur_state *ur, const struct ur_cqe *c)
{
	struct ur_slot	*s;
	int		 fd = UR_UD_FD(c->udata), res = c->res, more;

	more = (c->flags & IORING_CQE_F_MORE) != 0;
	s = &ur->slot[fd];
	if (!ur_live(s, c->udata)) {
		/* Its watcher is stopped, maybe freed: nobody takes res. */
		if (res >= 0) {
			(void)close(res);
			ur->st.accept_closed++;
		}
		return;
	}
	if (!more)
		s->flags &= ~(UR_ACC_ARMED | UR_ACC_CANCEL);
	if (res >= 0) {
		ur->st.accepts++;
		s->accept_fn(l, s->udata, res);
		/* fn may have closed lio, or grown the slot table. */
		s = &ur->slot[fd];
		if (more || !ur_live(s, c->udata))
			return;
	} else if (more)
		return;
	else if (res != -ECANCELED && !ur_accept_retry(-res) &&
	    (s->flags & UR_ACC_ON)) {
		s->flags &= ~UR_ACC_ON;
		s->accept_fn(l, s->udata, res);
		return;
	}
	if (s->flags & UR_ACC_ON) {
		ur->st.rearms++;
		(void)ur_pend(ur, fd);
	} else if (s->flags & UR_ACC_END) {
		s->flags &= ~UR_ACC_END;
		s->accept_fn(l, s->udata, -ECANCELED);
	}
}

static void
ur_dispatch(struct tk_loop *l)
{
	struct ur_state	*ur = l->be;
	int		 i, n = ur->ncqe;

	/* Callbacks may run the loop's functions, never wait(): no reentry. */
	for (i = 0; i < n; i++) {
		if (UR_UD_FD(ur->cqes[i].udata) >= ur->nslot)
			continue;
		switch (UR_UD_OP(ur->cqes[i].udata)) {
		case UR_OP_RECV:
			ur_recv_done(l, ur, &ur->cqes[i]);
			break;
		case UR_OP_ACCEPT:
			ur_accept_done(l, ur, &ur->cqes[i]);
			break;
		default:
			ur_send_done(l, ur, &ur->cqes[i]);
			break;
		}
	}
	ur->ncqe = 0;
}

/*
 * The counters, and the memory the ring holds for good: its submission
 * and completion queues and, with completion I/O, the receive buffers
 * (made at the first wait or recv, counted from the start).
 */
static void
ur_stats(struct tk_loop *l, struct tk_loop_stats *st)
{
	struct ur_state	*ur = l->be;

	*st = ur->st;
	st->ring_bytes = (uint64_t)ur->ring.sq.ring_entries *
	    (sizeof(struct io_uring_sqe) + sizeof(uint32_t)) +
	    (uint64_t)ur->ring.cq.ring_entries * sizeof(struct io_uring_cqe);
	if (ur_completion(l))
		st->ring_bytes += (uint64_t)ur->nbuf * (ur->bufsize +
		    sizeof(struct io_uring_buf));
}

const struct tk_backend tk_backend_io_uring = {
	.name = "io_uring",
	.flags = TK_BE_EDGE | TK_BE_DELCLOSE | TK_BE_EXPLICIT,
	.probe = ur_probe,
	.init = ur_init,
	.free = ur_free,
	.add = ur_add,
	.del = ur_del,
	.wait = ur_wait,
	.stats = ur_stats,
	.completion = ur_completion,
	.bufring = ur_bufring,
	.recv_start = ur_recv_start,
	.recv_stop = ur_recv_stop,
	.recv_on = ur_recv_on,
	.send = ur_send,
	.accept_start = ur_accept_start,
	.accept_stop = ur_accept_stop,
	.cq_stop = ur_cq_stop,
	.dispatch = ur_dispatch,
};
