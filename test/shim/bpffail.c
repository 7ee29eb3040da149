/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpffail.so: an LD_PRELOAD shim that makes bpf(2) map updates fail
 * with ENOMEM after the first BPFFAIL of them (libbpf calls bpf(2)
 * through syscall(3)), as when a map is full or the kernel is short of
 * memory, so that the proxy's fall-back from --fastpath in the middle of
 * a session is tested on the real binary.  Every other call, and all
 * calls without BPFFAIL, go to the real syscall(3).
 */
#include <sys/syscall.h>

#include <linux/bpf.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef long syscall_fn(long, ...);

long
syscall(long nr, ...)
{
	static syscall_fn	*real;
	static atomic_long	 updates;
	const char		*env;
	va_list			 ap;
	long			 a[6];
	int			 i;

	/* As glibc's own: the kernel takes six words, whatever was passed. */
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_bpf && a[0] == BPF_MAP_UPDATE_ELEM &&
	    (env = getenv("BPFFAIL")) != NULL &&
	    atomic_fetch_add(&updates, 1) >= atol(env)) {
		errno = ENOMEM;
		return -1;
	}
	if (real == NULL)
		real = (syscall_fn *)dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
