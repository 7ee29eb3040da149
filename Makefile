# SPDX-License-Identifier: BSD-2-Clause
# tenk: GNU make.  make [all|test|check|demo|bench|loopbench|install|
# uninstall|clean|lint|man-lint|valgrind|deps|test-deps|test-stress|fuzz|
# deb|test-deb]
# [SAN=asan|tsan] [SANITIZE=address,undefined|thread] [WERROR=1] [V=1]
# [TLS=no]

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
SBINDIR	?= $(PREFIX)/sbin
MANDIR	?= $(PREFIX)/share/man
SYSCONFDIR ?= $(PREFIX)/etc
DOCDIR	?= $(PREFIX)/share/doc/tenk
UNITDIR	?= $(PREFIX)/lib/systemd/system
CFLAGS	?= -O2 -g
CC	?= cc
INSTALL	?= install

VERSION	 = 0.1.0

WARN	 = -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes \
	   -Wmissing-prototypes -Wformat=2 -Wwrite-strings -Wundef

comma	:= ,

# Sanitizers: SAN=asan|tsan, or SANITIZE=<list> as given to -fsanitize.
ifeq ($(SAN),asan)
SANITIZE := address,undefined
else ifeq ($(SAN),tsan)
SANITIZE := thread
else ifneq ($(SAN),)
$(error SAN is asan or tsan)
endif
ifneq ($(SANITIZE),)
SANFLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer
B	:= build/$(subst $(comma),-,$(SANITIZE))
else
SANFLAGS :=
B	:= build
endif
ifeq ($(WERROR),1)
WARN	+= -Werror
endif
# TLS=no: a build without OpenSSL, beside the others (mk/deps.sh).
ifeq ($(TLS),no)
B	:= $(B)/notls
endif

ifeq ($(V),1)
Q	 =
else
Q	 = @
endif

NOCONFIG := $(filter clean deps test-deps deb test-deb,$(MAKECMDGOALS))
ifeq ($(NOCONFIG),)
-include $(B)/config.mk
endif

TK_CFLAGS = -std=c11 -D_GNU_SOURCE -DTENK_VERSION='"$(VERSION)"' \
	    -Iinclude $(BSD_CFLAGS) $(URING_CFLAGS) $(TLS_CFLAGS) $(WARN) \
	    -MMD -MP
ALL_CFLAGS = $(TK_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
ALL_LIBS = $(BSD_LIBS) $(URING_LIBS) $(TLS_LIBS) -lpthread -lm $(LDLIBS)

# What each program links.  libtenk is an archive, so a program takes
# only the members it calls; the other lists name objects, so keep them to
# the files a program needs.  tenkbench reads tenkload's reports
# (REPORT_SRCS) and never runs the engine.
LIB_SRCS	:= $(wildcard src/loop/*.c src/net/*.c src/util/*.c)
# The io_uring backend only where mk/deps.sh found liburing.
ifeq ($(URING_LIBS),)
LIB_SRCS	:= $(filter-out src/loop/uring.c,$(LIB_SRCS))
endif
# TLS over OpenSSL where mk/deps.sh found it, else the stubs that say
# it is not built in.
TLS_SRCS	:= src/net/tls.c src/net/tlsctx.c src/net/tlsticket.c
ifeq ($(TLS_LIBS),)
LIB_SRCS	:= $(filter-out $(TLS_SRCS),$(LIB_SRCS))
else
LIB_SRCS	:= $(filter-out src/net/tlsnone.c,$(LIB_SRCS))
endif
# tenkd: the control plane (start-up, config, master, pidfile, metrics,
# stats) calls into the data plane (workers, connections, echo, proxy),
# never back.
TENKD_SRCS	:= $(filter-out %.bpf.c,$(wildcard src/server/control/*.c \
		   src/server/data/*.c))
FRAME_SRCS	:= loadgen/framing.c loadgen/frame_bytes.c loadgen/frame_http.c \
		   loadgen/frame_prefix.c loadgen/frame_redis.c \
		   loadgen/frame_until.c loadgen/frame_memcache.c \
		   loadgen/escape.c loadgen/template.c
REPORT_SRCS	:= loadgen/report.c loadgen/report_text.c \
		   loadgen/report_json.c loadgen/report_hgrm.c loadgen/json.c \
		   loadgen/mode.c loadgen/report_csv.c
TENKLOAD_SRCS	:= loadgen/tenkload.c loadgen/engine.c loadgen/traffic.c \
		   loadgen/target.c loadgen/report_plot.c loadgen/tlsopt.c \
		   $(REPORT_SRCS) $(FRAME_SRCS)
TENKBENCH_SRCS	:= loadgen/tenkbench.c loadgen/bench_cell.c \
		   loadgen/bench_child.c loadgen/bench_out.c loadgen/bench_proc.c \
		   loadgen/bench_sweep.c $(REPORT_SRCS)
LOOPBENCH_SRCS	:= loadgen/loopbench.c
# What the fuzz targets of test/fuzz/ link besides libtenk; the runner
# links them too, to replay their corpora.
FUZZ_LINK	:= src/server/data/proxyproto.c src/server/control/conffile.c \
		   src/server/control/safefile.c \
		   $(FRAME_SRCS)
FUZZ_SRCS	:= $(wildcard test/fuzz/fuzz_*.c)
RUNNER_SRCS	:= test/run.c $(wildcard test/unit/*.c) loadgen/json.c \
		   src/server/data/chash.c \
		   $(FUZZ_LINK) $(FUZZ_SRCS) test/fuzz/replay.c \
		   src/server/data/fastpath.c
TOOL_SRCS	:= $(wildcard test/tools/*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

LIB	:= $(B)/libtenk.a
PROGS	:= $(B)/tenkd $(B)/tenkload $(B)/tenkbench
tool	= $(patsubst test/tools/%.c,$(B)/test/%,$(1))
TOOLS	:= $(call tool,$(TOOL_SRCS))
# LD_PRELOAD shims of the tests (fault injection at the system call);
# built without the sanitizers, which must come first in a process.
SHIM_SRCS := $(wildcard test/shim/*.c)
SHIMS	:= $(patsubst test/shim/%.c,$(B)/test/%.so,$(SHIM_SRCS))
RUNNER	:= $(B)/test/run
LOOPBENCH := $(B)/loopbench

.PHONY: all test check demo bench c100k c1m loopbench install uninstall \
	clean man-lint lint valgrind deps test-deps test-stress fuzz deb test-deb \
	FORCE
.DEFAULT_GOAL := all

all: $(PROGS) $(TOOLS) $(SHIMS) $(RUNNER) $(LOOPBENCH)

$(B)/config.mk: mk/deps.sh
	@mkdir -p $(@D)
	$(Q)TLS=$(TLS) sh mk/deps.sh > $@.tmp && mv $@.tmp $@

deps:
	@sh mk/deps.sh >/dev/null && echo "deps: libbsd-overlay found"

# The real servers and peer clients of the tests and the benchmark
# against them: redis-server, redis-benchmark, nginx, wrk, haproxy,
# iperf3, promtool.  Installing
# them starts system services on the user's machine, so only this
# explicit target installs them (make test skips those tests, saying
# why); when it runs apt-get as root, mk/test-deps.sh keeps the services
# from starting with a policy-rc.d of its own for the time of the
# installation.
test-deps:
	@sh mk/test-deps.sh

$(B)/obj/%.o: %.c $(B)/config.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# A binary depends on the objects it links and on $(B)/link/<name>, a
# file holding their list: it is rewritten only when the list changes, so
# that removing a source file relinks too (its object is no prerequisite
# any more, and nothing else would be newer than the binary).
link_name = $(subst /,-,$(patsubst $(B)/%,%,$(1)))

$(B)/link/%: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(LINK_$*) >$@.$$$$ && \
	    if cmp -s $@.$$$$ $@; then rm -f $@.$$$$; else mv -f $@.$$$$ $@; fi

# $(call archive,LIBRARY,SOURCES) and $(call program,BINARY,SOURCES):
# the rules for a library or a binary built from SOURCES.
define archive
LINK_$(call link_name,$(1)) := $(call obj,$(2))
$(1): $(call obj,$(2)) $(B)/link/$(call link_name,$(1))
	@$$(if $$(Q),echo "  AR      $$@")
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$(filter %.o,$$^)
endef

define program
LINK_$(call link_name,$(1)) := $(call obj,$(2)) $(LIB)
$(1): $(call obj,$(2)) $(LIB) $(B)/link/$(call link_name,$(1))
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo "  LD      $$@")
	$$(Q)$$(CC) $$(ALL_LDFLAGS) -o $$@ $$(filter %.o %.a,$$^) $$(ALL_LIBS)
endef

$(eval $(call archive,$(LIB),$(LIB_SRCS)))
$(eval $(call program,$(B)/tenkd,$(TENKD_SRCS)))
$(eval $(call program,$(B)/tenkload,$(TENKLOAD_SRCS)))
$(eval $(call program,$(B)/tenkbench,$(TENKBENCH_SRCS)))
$(eval $(call program,$(LOOPBENCH),$(LOOPBENCH_SRCS)))
$(eval $(call program,$(RUNNER),$(RUNNER_SRCS)))
$(foreach t,$(TOOL_SRCS),$(eval $(call program,$(call tool,$(t)),$(t))))

# The proxy's fast path (src/server/data/fastpath.c): its BPF program
# built by clang's BPF target into a bpftool skeleton, where mk/deps.sh
# found clang, libbpf and bpftool (FP_LIBS); else fastpath.c builds
# without it and says so when asked.  Only tenkd and the runner link libbpf.
ifneq ($(FP_LIBS),)
FP_SKEL	:= $(B)/gen/fastpath.skel.h
$(B)/gen/fastpath.bpf.o: src/server/data/fastpath.bpf.c \
    src/server/data/fastpath_bpf.h $(B)/config.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  BPF     $<")
	$(Q)$(BPF_CLANG) -O2 -g -target bpf $(BPF_CFLAGS) -Wall -c -o $@ $<

$(FP_SKEL): $(B)/gen/fastpath.bpf.o
	@$(if $(Q),echo "  GEN     $@")
	$(Q)$(BPFTOOL) gen skeleton $< name fastpath >$@.tmp && mv $@.tmp $@

$(B)/obj/src/server/data/fastpath.o: $(FP_SKEL)
$(B)/obj/src/server/data/fastpath.o: ALL_CFLAGS += $(FP_CFLAGS) -I$(B)/gen
$(B)/tenkd $(RUNNER): ALL_LIBS += $(FP_LIBS)
endif

$(B)/test/%.so: test/shim/%.c $(B)/config.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TK_CFLAGS) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -o $@ $< -ldl

# Tests: unit and integration in one runner; TESTS= narrows by name.
TEST_JOBS ?= 2
test check: all
	$(Q)sh mk/deps.sh test
	$(Q)TK_SRC=$(CURDIR) $(RUNNER) -j $(TEST_JOBS) $(TESTS)

# The same suite on a loaded machine, as CI's shared one can be: beside
# stress-ng --cpu 4 (installed like shellcheck for lint, by deps.sh),
# which mk/test-stress.sh stops by its pid when the suite ends; the exit
# status is the suite's.
test-stress: all
	$(Q)sh mk/deps.sh test
	$(Q)sh mk/deps.sh stress
	$(Q)TK_SRC=$(CURDIR) sh mk/test-stress.sh $(RUNNER) -j $(TEST_JOBS) \
	    $(TESTS)

# Each unit test runs in a forked child, which valgrind follows: a memory
# error or a leak there makes that child, and so that test, fail.
valgrind: all
	$(Q)TK_SRC=$(CURDIR) TK_VALGRIND=1 valgrind -q --error-exitcode=1 \
	    --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    --trace-children=no $(RUNNER) -u $(TESTS)

# make fuzz: the libFuzzer targets test/fuzz/fuzz_NAME.c, built by clang
# with ASan and UBSan under $(FUZZ_B), each run for FUZZ_TIME seconds on
# test/fuzz/corpus/NAME/ (new inputs go to $(FUZZ_B)/corpus/NAME/, the
# tree's corpus stays as it is); FUZZ="NAME ..." picks targets.  make test
# never runs them, it only replays the corpora (test/fuzz/replay.c).
FUZZ_TIME ?= 30
FUZZ_CC	?= clang
FUZZ_SAN := fuzzer-no-link,address,undefined
FUZZ_B	:= build/$(subst $(comma),-,$(FUZZ_SAN))
FUZZ	?= $(patsubst test/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))

# Without clang, one line (make's "*** ... Stop.") and make's failure
# status, 2.
fuzz:
	$(if $(shell command -v $(FUZZ_CC)),,$(error no $(FUZZ_CC) for \
	    make fuzz (apt-get install clang)))
	$(Q)$(MAKE) --no-print-directory CC=$(FUZZ_CC) SANITIZE=$(FUZZ_SAN) \
	    $(addprefix $(FUZZ_B)/fuzz/,$(FUZZ))
	$(Q)sh mk/fuzz.sh $(FUZZ_B) $(FUZZ_TIME) $(FUZZ)

.PRECIOUS: $(B)/obj/fuzzmain/%.o
$(B)/obj/fuzzmain/%.o: %.c $(B)/config.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (fuzz)")
	$(Q)$(CC) $(ALL_CFLAGS) -DTK_FUZZ_MAIN -c -o $@ $<

$(B)/fuzz/%: $(B)/obj/fuzzmain/test/fuzz/fuzz_%.o $(call obj,$(FUZZ_LINK)) \
    $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $(filter %.o %.a,$^) \
	    $(ALL_LIBS)

loopbench: $(LOOPBENCH)
	$(Q)$(LOOPBENCH)

demo: all
	$(Q)TK_BIN=$(CURDIR)/$(B) sh test/demo.sh

# gnuplot and strace installed as make installs libbsd (mk/deps.sh bench).
BENCHFLAGS ?= --plot --syscalls
bench: all
	$(Q)sh mk/deps.sh bench
	$(Q)$(B)/tenkbench $(BENCHFLAGS)

# N concurrent verified echo connections with traffic, and what they cost
# (test/bench/c1m.sh; README "A million connections").  PROXY=1: the
# clients go through tenkd proxy to a tenkd echo upstream.
C1MFLAGS ?=
c100k: all
	$(Q)sh test/bench/c1m.sh -b $(B) -n 100000 \
	    $(if $(filter 1,$(PROXY)),-p) $(C1MFLAGS)
c1m: all
	$(Q)sh test/bench/c1m.sh -b $(B) \
	    $(if $(filter 1,$(PROXY)),-p -n 250000,-n 1000000) $(C1MFLAGS)

MANS	:= $(wildcard docs/*.[18])
man-lint:
	$(Q)for m in $(MANS); do \
		if command -v mandoc >/dev/null 2>&1; then \
			mandoc -Tlint -Wwarning $$m || exit 1; \
		else \
			groff -mandoc -ww -z $$m || exit 1; \
		fi; \
	done

# make lint: each finding one line, "file:line: what"; every check runs,
# and any finding fails.  shellcheck and mandoc come from deps.sh lint.
LINT_OBJS = $(sort $(call obj,$(LIB_SRCS) $(TENKD_SRCS) $(TENKLOAD_SRCS) \
	    $(TENKBENCH_SRCS) $(LOOPBENCH_SRCS) $(RUNNER_SRCS) $(TOOL_SRCS)))
LINT_C	  = $(shell find include src loadgen test -name '*.[ch]' | sort)
LINT_SH	  = $(shell find mk test contrib -name '*.sh' | sort) .ci/run
# Not SC2317 (unreachable command) nor SC2119 (a function reads arguments
# none of these calls pass): the tests hand functions to wait_for and to
# loops by name, and lib.sh's take optional arguments.
SHELLCHECK = shellcheck -x -P SCRIPTDIR -e SC2317,SC2119 -f gcc
# shellcheck takes about 0.3 s a script here, so the scripts are checked
# in batches of 8 on every CPU.
# "file:line:col: what" and "mandoc: file:line:col: what" to "file:line: what".
LINT_SED  = sed -e 's/^mandoc: //' -e 's/^\([^:]*:[0-9]*\):[0-9]*:/\1:/'

lint: all
	$(Q)sh mk/deps.sh lint
	$(Q)st=0; \
	sh mk/lint-unused.sh $(LINT_OBJS) || st=1; \
	sh mk/lint-planes.sh $(B)/obj || st=1; \
	sh mk/lint-circles.sh $(LINT_OBJS) || st=1; \
	sh mk/lint-width.sh $(LINT_C) || st=1; \
	out=$$(printf '%s\n' $(LINT_SH) | \
	    xargs -P "$$(nproc 2>/dev/null || echo 2)" -n 8 $(SHELLCHECK) \
	    2>&1) || { printf '%s\n' "$$out" | $(LINT_SED); st=1; }; \
	out=$$(mandoc -Tlint -Wwarning $(MANS) 2>&1) || \
	    { printf '%s\n' "$$out" | $(LINT_SED); st=1; }; \
	sh mk/lint-help.sh $(B) || st=1; \
	exit $$st

# tenkd is a daemon (sbin, as nginx and haproxy); the load generator and
# the benchmark are user commands (bin).  The units get the installed
# paths; the environment file and the -f file are examples, installed as
# the real ones only where none exists, so an upgrade never overwrites a
# setting.
UNITS	:= contrib/systemd/tenkd.service contrib/systemd/tenkd.socket
USER_PROGS := $(B)/tenkload $(B)/tenkbench
UNIT_SED = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)/examples \
	    $(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(SYSCONFDIR)/tenk
	$(INSTALL) -m 755 $(USER_PROGS) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 755 $(B)/tenkd $(DESTDIR)$(SBINDIR)/
	for m in $(filter %.1,$(MANS)); do \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man1/; done
	for m in $(filter %.8,$(MANS)); do \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man8/; done
	for u in $(UNITS); do \
		$(UNIT_SED) $$u >$(DESTDIR)$(UNITDIR)/$${u##*/} && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; done
	$(UNIT_SED) contrib/tenkd.env >$(DESTDIR)$(DOCDIR)/examples/tenkd.env
	$(UNIT_SED) contrib/tenkd.conf >$(DESTDIR)$(DOCDIR)/examples/tenkd.conf
	$(INSTALL) -m 644 contrib/logrotate.tenkd $(DESTDIR)$(DOCDIR)/examples/
	test -e $(DESTDIR)$(SYSCONFDIR)/default/tenkd || \
	    $(INSTALL) -m 644 $(DESTDIR)$(DOCDIR)/examples/tenkd.env \
	    $(DESTDIR)$(SYSCONFDIR)/default/tenkd
	test -e $(DESTDIR)$(SYSCONFDIR)/tenk/tenkd.conf || \
	    $(INSTALL) -m 644 $(DESTDIR)$(DOCDIR)/examples/tenkd.conf \
	    $(DESTDIR)$(SYSCONFDIR)/tenk/tenkd.conf

# make deb: the Debian package of this tree, built by dpkg-buildpackage
# in a copy under build/deb/ (as from a clean clone) and checked by
# lintian (mk/deb.sh); its tools and build dependencies installed as
# make installs libbsd.  make test-deb installs it with dpkg, uses,
# removes and purges it, as root (test/deb.sh).
DEB_OUT	:= build/deb
deb:
	$(Q)sh mk/deps.sh deb
	$(Q)sh mk/deb.sh $(DEB_OUT)

test-deb: deb
	$(Q)sh test/deb.sh \
	    $(DEB_OUT)/tenk_$(VERSION)_$$(dpkg --print-architecture).deb

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(USER_PROGS)))
	rm -f $(DESTDIR)$(SBINDIR)/tenkd
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MANS))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(filter %.8,$(MANS))))
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(notdir $(UNITS)))
	rm -rf $(DESTDIR)$(DOCDIR)/examples
	@echo "kept $(DESTDIR)$(SYSCONFDIR)/default/tenkd and" \
	    "$(DESTDIR)$(SYSCONFDIR)/tenk/tenkd.conf, your settings"

clean:
	rm -rf build

-include $(shell find $(B)/obj $(B)/test -name '*.d' 2>/dev/null)
