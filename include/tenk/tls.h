/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS for libtenk's connections, over OpenSSL 3: a context holds what
 * the connections of one side share (client or server, versions,
 * ciphers, certificates, verification, ALPN, session tickets), and a
 * struct tk_tls runs one connection's handshake, records and close
 * inside its watcher's handler, never blocking: where the library says
 * SSL_ERROR_WANT_READ or _WANT_WRITE, the direction is blocked on the
 * watcher (tk_io_block) and the operation waits for it (rwant, wwant),
 * whichever operation asked.
 *
 * The contract is recv(2)'s and send(2)'s:
 *
 * - tk_tls_read() returns plaintext, 0 at the peer's end (close_notify,
 *   or its FIN without one), or -1: EAGAIN when it must wait for
 *   t->rwant, EPROTO when TLS failed (t->fail says why), a socket
 *   error otherwise.  Like a short recv on a plain socket, a read that
 *   drained the socket blocks READ itself, so the caller stops when
 *   READ is no longer ready, without the recv that would only say
 *   EAGAIN.
 * - tk_tls_write() takes at most one record's plaintext (16 KiB) a call
 *   and returns how much; -1 with EAGAIN when it must wait for
 *   t->wwant.  After EAGAIN the record is sealed and partly sent: the
 *   next call must offer the same bytes again, at least t->wpend of
 *   them, from wherever they now are.
 * - tk_tls_shutdown() sends close_notify and then the FIN, so a
 *   half-close passes through TLS as it does through TCP.
 *
 * Records go through a BIO of our own over the socket, recv and send
 * straight into and out of the library's record buffers (no copy, as a
 * socket BIO), which also tells a short recv, so that a drained socket
 * costs no further call.  A connection's record buffers (2 x 17 KiB)
 * go at the end of its handshake, and once it has been quiet for a
 * whole interval of tk_tls_sweep(), not after every record as with
 * SSL_MODE_RELEASE_BUFFERS, whose malloc and free of both buffers on
 * every message cost 7.6% of a proxied TLS message's instructions: an
 * idle TLS connection keeps the library's state (some 15 KiB) and no
 * buffer.  tk_tls_trim() gives back what handshakes left in the
 * heap.
 *
 * kTLS: where the kernel has it and the context asks for it
 * (tk_tls_ctx_ktls), the connection uses OpenSSL's socket BIO instead,
 * which hands the record layer to the kernel (TCP_ULP "tls") after the
 * handshake; reads and writes keep the same contract.
 *
 * Contexts are made at start-up, read by any thread after; a struct
 * tk_tls belongs to the thread of its watcher.  Functions return -1
 * with errno set unless said otherwise; those that take err fill it
 * with one line naming what failed.  Without OpenSSL (tlsnone.c),
 * tk_tls_ctx_new() fails with ENOTSUP, saying so.
 */
#ifndef TENK_TLS_H
#define TENK_TLS_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct tk_io;
struct tk_tls_ctx;
struct tk_tls_sess;		/* a session to resume: SSL_SESSION */

/* Protocol versions, as on the wire. */
#define TK_TLS_1_2	0x0303
#define TK_TLS_1_3	0x0304

/* Why a handshake or a connection failed (t->fail), by kind. */
enum tk_tls_fail {
	TK_TLS_F_NONE = 0,
	TK_TLS_F_EOF,		/* the peer closed during the handshake */
	TK_TLS_F_NOTTLS,	/* its first bytes were no TLS record */
	TK_TLS_F_NOSHARED,	/* no version, cipher, group, ALPN shared */
	TK_TLS_F_VERIFY,	/* the peer's certificate failed verification */
	TK_TLS_F_ALERT,		/* the peer sent a fatal alert */
	TK_TLS_F_PROTOCOL,	/* any other malformed or unexpected message */
	TK_TLS_F_SOCKET,	/* a socket error (reset) */
	TK_TLS_F_TIMEOUT,	/* the caller's: the handshake took too long */
	TK_TLS_F_MAX
};

/* "eof", "not-tls", ... by enum tk_tls_fail. */
extern const char *const tk_tls_fail_names[TK_TLS_F_MAX];

/*
 * One connection, allocated by tk_tls_new().  Fields are read-only to
 * the caller.
 */
struct tk_tls {
	void			*ssl;		/* the library's SSL */
	struct tk_io		*io;		/* the socket's watcher */
	const void		*sess_last;	/* last taken or offered */
	unsigned long		 err;		/* the library's error code */
	TAILQ_ENTRY(tk_tls)	 warm;		/* holds buffers (sweep) */
	const void		*warmhead;	/* that list's, a thread's */
	uint32_t		 gen;		/* the sweep it last ran in */
	uint32_t		 wpend;		/* see tk_tls_write */
	uint8_t			 rwant;		/* a read waits for this */
	uint8_t			 wwant;		/* a write waits for this */
	uint8_t			 fail;		/* enum tk_tls_fail */
	unsigned int		 done:1;	/* handshake complete */
	unsigned int		 drained:1;	/* the last recv was short */
	unsigned int		 fin:1;		/* recv has returned 0 */
	unsigned int		 seen:1;	/* a first byte was read */
	unsigned int		 nottls:1;	/* ... and it was no record's */
	unsigned int		 notify:1;	/* EOF came as close_notify */
	unsigned int		 shut:1;	/* close_notify sent */
	unsigned int		 ktls_tx:1;	/* the kernel seals records */
	unsigned int		 ktls_rx:1;	/* the kernel opens them */
	unsigned int		 warmed:1;	/* on the thread's warm list */
};

/* What a finished handshake agreed on, for reports and logs. */
struct tk_tls_info {
	const char	*version;	/* "TLSv1.3" */
	const char	*cipher;	/* "TLS_AES_256_GCM_SHA384" */
	const char	*alpn;		/* "" when none */
	const char	*sni;		/* server: the name asked for, or "" */
	int		 proto;		/* TK_TLS_1_2, TK_TLS_1_3 */
	int		 resumed;
};

/* The library and its version ("OpenSSL 3.0.19 ..."), or "none". */
const char	*tk_tls_library(void);

/*
 * "1.2" and "1.3" to TK_TLS_1_2 and TK_TLS_1_3; -1 for anything else.
 * tk_tls_version_name() gives the name back.
 */
int		 tk_tls_version_parse(const char *s);
const char	*tk_tls_version_name(int v);

/*
 * A context for connections that accept (server != 0) or connect.  It
 * starts at TLS 1.2 and 1.3 only, no renegotiation, no compression, the
 * library's default ciphers, no client certificates; a client verifies
 * nothing until tk_tls_ctx_verify().
 */
struct tk_tls_ctx *tk_tls_ctx_new(int server, char *err, size_t len);
void		 tk_tls_ctx_free(struct tk_tls_ctx *ctx);

/* Only versions min to max (TK_TLS_1_2, TK_TLS_1_3). */
int		 tk_tls_ctx_versions(struct tk_tls_ctx *ctx, int min, int max,
		    char *err, size_t len);

/*
 * A colon-separated list of TLS 1.2 cipher names (OpenSSL's syntax) and
 * TLS 1.3 suites (TLS_*): each version takes the names of its own and
 * keeps its defaults when the list names none.
 */
int		 tk_tls_ctx_ciphers(struct tk_tls_ctx *ctx, const char *list,
		    char *err, size_t len);

/*
 * A comma-separated ALPN list ("h2,http/1.1"): a client offers it, a
 * server picks the first of the client's that it names (and refuses a
 * client that offers none of them).
 */
int		 tk_tls_ctx_alpn(struct tk_tls_ctx *ctx, const char *list,
		    char *err, size_t len);

/*
 * Verify the peer's certificate chain against the PEM file cafile, or
 * the system's trusted certificates when cafile is NULL; a client also
 * checks the name given to tk_tls_new().
 */
int		 tk_tls_ctx_verify(struct tk_tls_ctx *ctx, const char *cafile,
		    char *err, size_t len);

/*
 * Server: a certificate chain and its private key, both PEM files,
 * read now; the key must match the certificate.  Several pairs may be
 * added: a client is served the first whose certificate names the
 * server name it asks for (SNI, wildcards as RFC 6125), else the first
 * added.
 */
int		 tk_tls_ctx_cert(struct tk_tls_ctx *ctx, const char *cert,
		    const char *key, char *err, size_t len);

/*
 * Server: issue session tickets, whose keys derive from secret (32
 * bytes) and the wall clock's period of period seconds: a key seals the
 * tickets of its period and opens those of the next, so keys rotate
 * every period and a ticket lives one to two.  Processes given the same
 * secret share the keys without talking (a master's workers).
 * Without this, a server issues no tickets.
 */
int		 tk_tls_ctx_tickets(struct tk_tls_ctx *ctx,
		    const unsigned char *secret, uint64_t period);

/*
 * Hand records to the kernel where it takes them (TCP_ULP "tls", Linux
 * 4.13 and CONFIG_TLS, probed once at run time).  Returns 1 if the
 * context will, else 0 with the reason in why.  Any thread.
 */
int		 tk_tls_ctx_ktls(struct tk_tls_ctx *ctx, char *why,
		    size_t len);

/*
 * TLS on io's socket, connected or accepted, for a handshake to come.
 * A client names the server it wants (SNI, and the name verification
 * checks; an IP address is checked as one and not sent), or NULL, and
 * may offer sess to resume (still the caller's).  Returns NULL with
 * errno ENOMEM.  The watcher must live as long as t.
 */
struct tk_tls	*tk_tls_new(struct tk_tls_ctx *ctx, struct tk_io *io,
		    const char *name, struct tk_tls_sess *sess);

/*
 * Free t, not its socket.  A connection that ended cleanly is shut
 * quietly, so its session stays good to resume.
 */
void		 tk_tls_free(struct tk_tls *t);

/*
 * Advance the handshake: 1 once it is complete, 0 while it waits for
 * t->rwant, -1 when it failed (errno EPROTO, or the socket's; t->fail
 * says why).
 */
int		 tk_tls_handshake(struct tk_tls *t);

ssize_t		 tk_tls_read(struct tk_tls *t, void *buf, size_t len);
ssize_t		 tk_tls_write(struct tk_tls *t, const void *buf, size_t len);

/*
 * Send close_notify, then shutdown(SHUT_WR).  Returns 0, or -1: EAGAIN
 * while it waits for t->wwant (call again), or the error.
 */
int		 tk_tls_shutdown(struct tk_tls *t);

/* What the handshake agreed on; valid while t lives. */
void		 tk_tls_info(const struct tk_tls *t, struct tk_tls_info *i);

/*
 * The library's words for t's failure ("certificate verify failed:
 * self-signed certificate"), in buf.
 */
const char	*tk_tls_why(const struct tk_tls *t, char *buf, size_t len);

/*
 * Client: the session t holds, for a later connection to resume (to
 * offer to tk_tls_new()), when it is one that can be resumed and was
 * neither taken nor offered before; NULL otherwise.  A TLS 1.2 session
 * comes with the handshake, a TLS 1.3 ticket with a read after it.
 * Sessions are not single use: OpenSSL's client cache would retire a
 * TLS 1.3 ticket once used, and servers on OpenSSL send a new one only
 * after a full handshake, so none is kept there.  The caller frees it.
 */
struct tk_tls_sess *tk_tls_sess_take(struct tk_tls *t);
void		 tk_tls_sess_free(struct tk_tls_sess *s);

/*
 * The calling thread's TLS connections that used no buffer since the
 * sweep before this one give their buffers back.  Call it about once a
 * second in every thread that runs TLS connections.  Cost: one look at
 * each connection that held buffers.
 */
void		 tk_tls_sweep(void);

/*
 * Give back to the kernel the memory that handshakes and swept buffers
 * left free in the heap (malloc_trim), once a burst is over: when some
 * ended (or were swept) since the last trim and none in the interval
 * since the last call.  A handshake allocates and frees some 100 KiB in
 * small pieces, which leave the heap at the high-water mark of the
 * handshakes in flight: 2,000 idle TLS connections held 34 KiB of
 * resident memory each, 15 KiB of it in use.  Call it about once a
 * second.  Any thread.
 */
void		 tk_tls_trim(void);

#endif /* TENK_TLS_H */
