// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for QEMU only: fsync() and fdatasync() of the file named
 * by VPMEM_FAIL_FSYNC fail with EIO, as a failing host disk would; with
 * VPMEM_FAIL_FSYNC_TIMES=N only the first N of them do (a transient
 * error), the later ones sync. Every other file is synced as usual. Never
 * loaded into anything but QEMU.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_faulty(int fd)
{
	const char *target = getenv("VPMEM_FAIL_FSYNC");
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (!target || !*target)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return 0;
	path[n] = '\0';
	return strcmp(path, target) == 0;
}

/* Whether this sync of the faulty file fails (QEMU syncs from worker threads). */
static int fails_now(void)
{
	static unsigned long calls;
	const char *times = getenv("VPMEM_FAIL_FSYNC_TIMES");
	unsigned long limit = times ? strtoul(times, NULL, 10) : 0;

	return !limit || __atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST) < limit;
}

typedef int (*sync_fn)(int);

/* Fail for the faulty file, else call the libc function named sym. */
static int sync_or_fail(int fd, const char *sym, sync_fn *real)
{
	if (is_faulty(fd) && fails_now()) {
		errno = EIO;
		return -1;
	}
	if (!*real)
		*real = (sync_fn)dlsym(RTLD_NEXT, sym);
	return (*real)(fd);
}

int fsync(int fd)
{
	static sync_fn real_fsync;

	return sync_or_fail(fd, "fsync", &real_fsync);
}

int fdatasync(int fd)
{
	static sync_fn real_fdatasync;

	return sync_or_fail(fd, "fdatasync", &real_fdatasync);
}
