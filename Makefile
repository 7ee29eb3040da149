# SPDX-License-Identifier: BSD-2-Clause
# tenk: GNU make.  make [all|test|check|demo|bench|loopbench|install|
# uninstall|clean|man-lint|valgrind|deps] [SAN=asan|tsan]
# [SANITIZE=address,undefined|thread] [WERROR=1] [V=1]

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
MANDIR	?= $(PREFIX)/share/man
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

ifeq ($(V),1)
Q	 =
else
Q	 = @
endif

NOCONFIG := $(filter clean deps,$(MAKECMDGOALS))
ifeq ($(NOCONFIG),)
-include $(B)/config.mk
endif

TK_CFLAGS = -std=c11 -D_GNU_SOURCE -DTENK_VERSION='"$(VERSION)"' \
	    -Iinclude $(BSD_CFLAGS) $(WARN) -MMD -MP
ALL_CFLAGS = $(TK_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
ALL_LIBS = $(BSD_LIBS) -lpthread -lm $(LDLIBS)

LIB_SRCS	:= $(wildcard src/loop/*.c src/net/*.c src/util/*.c)
TENKD_SRCS	:= $(wildcard src/server/*.c)
LOAD_SRCS	:= $(filter-out loadgen/tenkbench.c loadgen/loopbench.c, \
		    $(wildcard loadgen/*.c))
BENCH_SRCS	:= $(wildcard loadgen/tenkbench.c)
LOOPB_SRCS	:= $(wildcard loadgen/loopbench.c)
UNIT_SRCS	:= test/run.c $(wildcard test/unit/*.c)
TOOL_SRCS	:= $(wildcard test/tools/*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

LIB	:= $(B)/libtenk.a
PROGS	:= $(if $(TENKD_SRCS),$(B)/tenkd) $(if $(LOAD_SRCS),$(B)/tenkload) \
	   $(if $(BENCH_SRCS),$(B)/tenkbench)
TOOLS	:= $(patsubst test/tools/%.c,$(B)/test/%,$(TOOL_SRCS))
RUNNER	:= $(B)/test/run
LOOPBENCH := $(if $(LOOPB_SRCS),$(B)/loopbench)

.PHONY: all test check demo bench loopbench install uninstall clean \
	man-lint valgrind deps
.DEFAULT_GOAL := all
# Keep the test tools' objects: they are intermediate to a pattern rule.
.SECONDARY:

all: $(PROGS) $(TOOLS) $(RUNNER) $(LOOPBENCH)

$(B)/config.mk: mk/deps.sh
	@mkdir -p $(@D)
	$(Q)sh mk/deps.sh > $@.tmp && mv $@.tmp $@

deps:
	@sh mk/deps.sh >/dev/null && echo "deps: libbsd-overlay found"

$(B)/obj/%.o: %.c $(B)/config.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(call obj,$(LIB_SRCS))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(B)/tenkd: $(call obj,$(TENKD_SRCS)) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LIBS)

$(B)/tenkload: $(call obj,$(LOAD_SRCS)) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LIBS)

$(B)/tenkbench: $(call obj,$(BENCH_SRCS)) \
	    $(call obj,$(filter-out loadgen/tenkload.c,$(LOAD_SRCS))) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LIBS)

$(B)/loopbench: $(call obj,$(LOOPB_SRCS)) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LIBS)

$(B)/test/%: $(B)/obj/test/tools/%.o $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LIBS)

FRAME_SRCS	:= $(wildcard loadgen/escape.c loadgen/fram*.c)
$(RUNNER): $(call obj,$(UNIT_SRCS)) $(call obj,$(FRAME_SRCS)) $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LIBS)

# Tests: unit and integration in one runner; TESTS= narrows by name.
TEST_JOBS ?= 2
test check: all
	$(Q)TK_SRC=$(CURDIR) $(RUNNER) -j $(TEST_JOBS) $(TESTS)

# Each unit test runs in a forked child, which valgrind follows: a memory
# error or a leak there makes that child, and so that test, fail.
valgrind: all
	$(Q)TK_SRC=$(CURDIR) TK_VALGRIND=1 valgrind -q --error-exitcode=1 \
	    --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    --trace-children=no $(RUNNER) -u $(TESTS)

loopbench: $(LOOPBENCH)
	$(Q)$(LOOPBENCH)

demo: all
	$(Q)TK_BIN=$(CURDIR)/$(B) sh test/demo.sh

BENCHFLAGS ?= --plot --syscalls
bench: all
	$(Q)$(B)/tenkbench $(BENCHFLAGS)

MANS	:= $(wildcard docs/*.[18])
man-lint:
	$(Q)for m in $(MANS); do \
		if command -v mandoc >/dev/null 2>&1; then \
			mandoc -Tlint -Wwarning $$m || exit 1; \
		else \
			groff -mandoc -ww -z $$m || exit 1; \
		fi; \
	done

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 755 $(PROGS) $(DESTDIR)$(BINDIR)/
	for m in $(filter %.1,$(MANS)); do \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man1/; done
	for m in $(filter %.8,$(MANS)); do \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man8/; done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MANS))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(filter %.8,$(MANS))))

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
