/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "memcache": one reply of memcached's text protocol (its
 * doc/protocol.txt), classic and meta commands alike:
 *
 *	STORED, NOT_STORED, EXISTS, NOT_FOUND, DELETED, TOUCHED, OK,
 *	ERROR, END				one line, nothing after the word
 *	CLIENT_ERROR text, SERVER_ERROR text, VERSION text,
 *	HD, NS, EX, NF, EN, MN [flags]		one line
 *	a number (incr, decr)			one line
 *	VALUE key flags bytes [cas] CRLF data CRLF ... END
 *						a get: any number of values
 *	STAT name value ... END			stats
 *	VA size [flags] CRLF data CRLF		a meta get's hit
 *
 * Lines end in CRLF, as the protocol says the server's do.  The first
 * word is matched as it comes, so a reply is a mismatch at the first
 * byte that no reply of the protocol can have there ("STX" at the X);
 * inside a get only VALUE and END may follow, inside stats only STAT and
 * END.  The numbers of VALUE and VA say how many data bytes follow,
 * which are skipped by count, not read, as the HTTP body is.  Beyond
 * FR_MC_MAXLINE bytes a line, or FR_MC_MAXVALUE bytes a value, a reply
 * is a mismatch.
 */
#include <string.h>

#include "framing.h"

enum mc_phase {
	MC_WORD = 0,		/* the line's first word */
	MC_ARGS,		/* the rest of the line */
	MC_LF,			/* the LF after the line's CR */
	MC_DATA			/* a value's bytes and the CRLF after them */
};

enum mc_kind {
	MK_BARE = 0,		/* no argument */
	MK_TEXT,		/* any text after a space */
	MK_NUM,			/* a number, spaces after it */
	MK_VALUE,
	MK_VA,
	MK_STAT,
	MK_END
};

/* Where in a reply a line comes. */
enum mc_ctx {
	MC_FIRST = 0,
	MC_GET,			/* after a VALUE's data */
	MC_STATS		/* after a STAT line */
};

static const struct {
	const char	*word;
	uint8_t		 kind;
} mc_words[] = {
	{ "VALUE", MK_VALUE },
	{ "END", MK_END },
	{ "STAT", MK_STAT },
	{ "VA", MK_VA },
	{ "STORED", MK_BARE },
	{ "NOT_STORED", MK_BARE },
	{ "EXISTS", MK_BARE },
	{ "NOT_FOUND", MK_BARE },
	{ "DELETED", MK_BARE },
	{ "TOUCHED", MK_BARE },
	{ "OK", MK_BARE },
	{ "ERROR", MK_BARE },
	{ "CLIENT_ERROR", MK_TEXT },
	{ "SERVER_ERROR", MK_TEXT },
	{ "VERSION", MK_TEXT },
	{ "HD", MK_TEXT },
	{ "NS", MK_TEXT },
	{ "EX", MK_TEXT },
	{ "NF", MK_TEXT },
	{ "EN", MK_TEXT },
	{ "MN", MK_TEXT },
};

#define MC_NWORDS	(sizeof(mc_words) / sizeof(mc_words[0]))

/* Whether word i may open a line in context ctx. */
static int
mc_allowed(size_t i, unsigned int ctx)
{
	switch (ctx) {
	case MC_GET:
		return mc_words[i].kind == MK_VALUE ||
		    mc_words[i].kind == MK_END;
	case MC_STATS:
		return mc_words[i].kind == MK_STAT ||
		    mc_words[i].kind == MK_END;
	default:
		return 1;
	}
}

/*
 * The word so far, and c after it: NULL when some word of the context
 * still begins so (or, on the first line, a number does), else why not.
 */
static const char *
mc_word_byte(struct fr_mc *m, unsigned char c)
{
	size_t	 i;

	if (m->ntok == 0 && c >= '0' && c <= '9' && m->ctx == MC_FIRST)
		m->kind = MK_NUM;
	if (m->kind == MK_NUM && m->ntok > 0) {
		if (c < '0' || c > '9')
			return "bad number";
		if (++m->ntok > 20)
			return "number too long";
		return NULL;
	}
	if (m->kind == MK_NUM) {
		m->ntok++;
		return NULL;
	}
	if (m->ntok == sizeof(m->tok))
		return "not a memcached reply";
	m->tok[m->ntok++] = (char)c;
	for (i = 0; i < MC_NWORDS; i++)
		if (mc_allowed(i, m->ctx) &&
		    strncmp(mc_words[i].word, m->tok, m->ntok) == 0)
			return NULL;
	return m->ctx == MC_FIRST ? "not a memcached reply" :
	    m->ctx == MC_GET ? "neither VALUE nor END in a get" :
	    "neither STAT nor END in stats";
}

/* The first word ended: which it is, or why it is none. */
static const char *
mc_word_end(struct fr_mc *m)
{
	size_t	 i;

	if (m->kind == MK_NUM)
		return NULL;
	for (i = 0; i < MC_NWORDS; i++)
		if (mc_allowed(i, m->ctx) &&
		    strlen(mc_words[i].word) == m->ntok &&
		    memcmp(mc_words[i].word, m->tok, m->ntok) == 0) {
			m->kind = mc_words[i].kind;
			return NULL;
		}
	return "not a memcached reply";
}

/*
 * One byte of the arguments, not CR or LF.  VALUE's fields are key,
 * flags, bytes and an optional cas; VA's the size, then flags.
 */
static const char *
mc_arg_byte(struct fr_mc *m, unsigned char c)
{
	int	 num;

	if (c == ' ') {
		m->inarg = 0;
		return NULL;
	}
	if (c < ' ' || c == 0x7f)
		return "control byte in a line";
	switch (m->kind) {
	case MK_BARE:
	case MK_END:
		return "text after a reply that takes none";
	case MK_NUM:
		return "text after a number";
	case MK_TEXT:
	case MK_STAT:
		m->field += !m->inarg;
		m->inarg = 1;
		return NULL;
	default:
		break;
	}
	if (!m->inarg) {
		m->field++;
		m->inarg = 1;
		m->ntok = 0;
	}
	num = m->kind == MK_VALUE ? m->field >= 2 : m->field == 1;
	if (m->kind == MK_VALUE && m->field > 4)
		return "VALUE with more than four fields";
	if (!num)
		return NULL;
	if (c < '0' || c > '9')
		return "bad number";
	if (++m->ntok > 20)
		return "number too long";
	if ((m->kind == MK_VALUE && m->field == 3) ||
	    (m->kind == MK_VA && m->field == 1)) {
		if (m->ntok == 1)
			m->num = 0;
		m->num = m->num * 10 + (uint64_t)(c - '0');
		if (m->num > FR_MC_MAXVALUE)
			return "value too large";
	}
	return NULL;
}

/* The CR of a line came: whether the line is whole. */
static const char *
mc_line_end(struct fr_mc *m)
{
	if (m->phase == MC_WORD) {
		if (m->ntok == 0)
			return "empty line";
		if (mc_word_end(m) != NULL)
			return "not a memcached reply";
	}
	switch (m->kind) {
	case MK_VALUE:
		return m->field >= 3 ? NULL : "VALUE without its size";
	case MK_VA:
		return m->field >= 1 ? NULL : "VA without its size";
	case MK_STAT:
		return m->field >= 1 ? NULL : "STAT without a name";
	default:
		return NULL;
	}
}

/* The LF of a line came: 1 when the reply is complete, else 0. */
static int
mc_line_done(struct fr_mc *m)
{
	m->linelen = 0;
	switch (m->kind) {
	case MK_VALUE:
	case MK_VA:
		m->left = m->num + 2;
		m->phase = MC_DATA;
		return 0;
	case MK_STAT:
		m->ctx = MC_STATS;
		break;
	default:
		return 1;
	}
	m->phase = MC_WORD;
	m->kind = MK_BARE;
	m->ntok = m->field = m->inarg = 0;
	return 0;
}

static enum fr_res
mc_feed(const struct framing *fr, struct fr_state *st,
    const unsigned char *buf, size_t n, size_t *used)
{
	struct fr_mc	*m = &st->u.mc;
	const char	*why = NULL;
	unsigned char	 c;
	size_t		 i;

	(void)fr;
	for (i = 0; i < n; i++) {
		c = buf[i];
		switch (m->phase) {
		case MC_DATA:
			if (framing_crlf(&m->left, buf, n, &i,
			    "value longer than its size", &why) != 1)
				break;
			if (m->kind == MK_VA) {
				*used = i + 1;
				return FR_DONE;
			}
			m->phase = MC_WORD;
			m->ctx = MC_GET;
			m->kind = MK_BARE;
			m->ntok = m->field = m->inarg = 0;
			break;
		case MC_LF:
			if (c != '\n') {
				why = "CR without LF";
				break;
			}
			if (mc_line_done(m)) {
				*used = i + 1;
				return FR_DONE;
			}
			break;
		default:
			if (++m->linelen > FR_MC_MAXLINE)
				why = "line too long";
			else if (c == '\n')
				why = "LF without CR";
			else if (c == '\r') {
				why = mc_line_end(m);
				m->phase = MC_LF;
			} else if (m->phase == MC_WORD && c == ' ') {
				if (m->ntok == 0)
					why = "space before the reply";
				else if ((why = mc_word_end(m)) == NULL)
					m->phase = MC_ARGS;
				/* A bare word's space is its first bad byte. */
				if (why == NULL && (m->kind == MK_BARE ||
				    m->kind == MK_END))
					why = "text after a reply that takes "
					    "none";
			} else if (m->phase == MC_WORD)
				why = mc_word_byte(m, c);
			else
				why = mc_arg_byte(m, c);
			break;
		}
		if (why != NULL) {
			*used = i;
			st->why = why;
			return FR_MISMATCH;
		}
	}
	*used = n;
	return FR_MORE;
}

const struct framing_ops framing_memcache = {
	"memcache",
	"memcache takes no argument",
	NULL,
	NULL,
	mc_feed,
	NULL
};
