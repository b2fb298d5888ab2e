// SPDX-License-Identifier: GPL-2.0
/*
 * The debug profile's in-guest tests, run by boot/init when the kernel
 * command line has vpmem_mode=debug (boot/run-qemu.sh --profile debug adds
 * it, with slub_debug=FZP; the main device's backing file is on the host's
 * tmpfs, so a host fsync costs next to nothing). Static, TAP output from
 * the kselftest harness, in this order:
 *   flush_storm_debug      the 64-writer storm, under slab poisoning
 *   flush_soak_virtio      SOAK_FLUSHES flushes in one boot, all good
 *   needs_reset_injected   a stray notification sets NEEDS_RESET: flushes
 *                          fail with EIO in bounded time, unbind + bind
 *                          brings back a working device
 *   debug_kernel_log_clean no report anywhere else in the kernel log
 * Each test judges (and claims) the kernel log of its own run: lockdep,
 * might_sleep, slub poison and redzone reports, warnings.
 *
 * TAP comment lines for the host (boot/check-host.sh):
 *   "# vpmem-soak-flushes: N"    flushes the soak completed
 *   "# vpmem-stray-notifies: N"  stray notifications written: each makes
 *                                QEMU trace a request it never answers
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "pmem_guest.h"

/* Two wraps of the ring's 16-bit indices, and more. */
#define SOAK_FLUSHES (2 * 65536 + 1024)
#define STORM_BASE (256 * MIB)
#define RESET_WARMUP_US (300 * 1000)
#define EIO_WITHIN_S 10
#define FLUSHER_MAX_S 60
#define PCI_CAP_ID_VNDR 0x09
#define VIRTIO_PCI_CAP_NOTIFY_CFG 2

FIXTURE(pmem) {
	struct pmem_dev vmain;
	int have_main;
};

FIXTURE_SETUP(pmem)
{
	self->have_main = !find_pmem(VIRTIO_MAIN, &self->vmain);
}

FIXTURE_TEARDOWN(pmem)
{
}

#define NEED_MAIN() do { \
	if (!self->have_main) \
		SKIP(return, "no virtio-pmem device"); \
} while (0)

/*
 * The storm of the fast profile, with slab poisoning and redzones: no
 * request may be used after its submitter has gone.
 */
TEST_F_TIMEOUT(pmem, flush_storm_debug, 240)
{
	int failures, fsyncs, kfd;

	NEED_MAIN();
	kfd = kmsg_watch();
	failures = run_storm(self->vmain.path, STORM_BASE, &fsyncs);
	TH_LOG("%d fsyncs", fsyncs);
	ASSERT_EQ(0, kmsg_judge(_metadata, kfd, 1));
	ASSERT_EQ(0, failures) TH_LOG("%d of %d writes or fsyncs failed", failures,
				      STORM_WRITERS * STORM_ROUNDS);
}

/* Queue 0's notify register of a modern virtio-pci device. */
struct notify_reg {
	char pci[32];		/* the PCI device, e.g. 0000:00:04.0 */
	int bar;
	unsigned long long offset;
};

static uint32_t le32_at(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Find it from the PCI device above virtioN: its virtio notify capability
 * (vendor-specific, cfg_type 2) names a BAR, an offset and a multiplier;
 * QEMU 7.2 puts queue n's register at offset + n * multiplier.
 */
static const char *find_notify(const char *virtio, struct notify_reg *n)
{
	char link[128], real[PATH_MAX], path[PATH_MAX + 16];
	unsigned char cfg[256];
	int fd, pos, hops;
	ssize_t got;
	char *slash;

	snprintf(link, sizeof(link), "/sys/bus/virtio/devices/%s", virtio);
	if (!realpath(link, real))
		return "no such virtio device";
	slash = strrchr(real, '/');
	*slash = '\0';
	slash = strrchr(real, '/');
	snprintf(n->pci, sizeof(n->pci), "%s", slash + 1);
	snprintf(path, sizeof(path), "%s/config", real);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "cannot open the PCI config space";
	got = pread(fd, cfg, sizeof(cfg), 0);
	close(fd);
	if (got < (ssize_t)sizeof(cfg))
		return "short read of the PCI config space";
	if (!(cfg[0x06] & 0x10))
		return "no PCI capability list";
	for (pos = cfg[0x34] & ~3, hops = 0; pos >= 0x40 && pos <= 0xec && hops < 48;
	     pos = cfg[pos + 1] & ~3, hops++) {
		if (cfg[pos] != PCI_CAP_ID_VNDR || cfg[pos + 3] != VIRTIO_PCI_CAP_NOTIFY_CFG)
			continue;
		n->bar = cfg[pos + 4];
		/* queue 0: offset + 0 * notify_off_multiplier (cfg + pos + 16) */
		n->offset = le32_at(cfg + pos + 8);
		return NULL;
	}
	return "no virtio notify capability";
}

/*
 * Write queue 0's notify register through the BAR's sysfs resource file:
 * with nothing new on the queue, QEMU 7.2 logs "virtio-pmem missing
 * request data" and sets NEEDS_RESET.
 */
static const char *stray_notify(const struct notify_reg *n)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long base = n->offset & ~(unsigned long long)(page - 1);
	char path[128];
	void *map;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d", n->pci, n->bar);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0)
		return "cannot open the BAR's resource file";
	map = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
	close(fd);
	if (map == MAP_FAILED)
		return "cannot mmap the BAR";
	/* an MMIO store: volatile, so it happens, once, as one 16-bit write */
	*(volatile uint16_t *)((char *)map + (n->offset - base)) = 0;
	munmap(map, page);
	printf("# vpmem-stray-notifies: 1\n");
	fflush(stdout);
	return NULL;
}

/*
 * More flushes than two wraps of the virtqueue's 16-bit ring indices, one
 * at a time: every one must succeed. A driver that never lets the ring
 * reset its count of added buffers gets a "just in case" notification
 * from the ring at the 65,535th, and QEMU, which pops one request per
 * notification, then finds the queue empty and sets NEEDS_RESET. The host
 * checks that it answered every request (host_soak_flushes_answered).
 * An fsync of the block device is one flush request on every kernel (the
 * reference has no writable deep_flush on this region).
 */
TEST_F_TIMEOUT(pmem, flush_soak_virtio, 300)
{
	int fd, i, err = 0, kfd, bad;
	double start, secs;

	NEED_MAIN();
	kfd = kmsg_watch();
	fd = open(self->vmain.path, O_RDWR);
	ASSERT_LE(0, fd);
	start = now_s();
	for (i = 0; i < SOAK_FLUSHES; i++) {
		if (fsync(fd)) {
			err = errno;
			break;
		}
	}
	secs = now_s() - start;
	close(fd);
	printf("# vpmem-soak-flushes: %d\n", i);
	printf("# vpmem-soak-seconds: %.1f\n", secs);
	fflush(stdout);
	bad = kmsg_judge(_metadata, kfd, 1);
	ASSERT_EQ(0, err) TH_LOG("flush %d of %d failed after %.1f s: %s", i + 1,
				 SOAK_FLUSHES, secs, strerror(err));
	ASSERT_EQ(0, bad);
}

/* The state of /proc/PID/stat ('R', 'S', 'D', ...), '?' if unreadable. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small_file(path, buf, sizeof(buf)))
		return '?';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Lockdep still validates (no earlier report turned it off): 1, 0, or -1. */
static int lockdep_live(void)
{
	char buf[8192], *p;
	int fd = open("/proc/lockdep_stats", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "debug_locks:");
	return p ? atoi(p + strlen("debug_locks:")) == 1 : -1;
}

/*
 * The child: fsync the disk until it fails or FLUSHER_MAX_S passed, count
 * the good ones in *count, write the errno (0: none failed) to out.
 */
static void flusher(const char *path, int out, long *count)
{
	double end = now_s() + FLUSHER_MAX_S;
	int fd = open(path, O_RDWR), err = 0;

	if (fd < 0)
		err = errno;
	while (fd >= 0 && !err && now_s() < end) {
		if (fsync(fd))
			err = errno;
		else
			__atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
	}
	if (write(out, &err, sizeof(err)) != sizeof(err))
		_exit(1);
	_exit(0);
}

/* The errno a child wrote to in within secs; ETIMEDOUT if none came. */
static int child_result(int in, double secs)
{
	struct pollfd p = { .fd = in, .events = POLLIN };
	int err;

	if (poll(&p, 1, (int)(secs * 1000)) != 1 ||
	    read(in, &err, sizeof(err)) != sizeof(err))
		return ETIMEDOUT;	/* a child blocked in the kernel stays there */
	return err;
}

/* One fsync in a child, waited for at most secs: its errno, or ETIMEDOUT. */
static int bounded_fsync(const char *path, double secs)
{
	int p[2], fd, err;
	pid_t pid;

	if (pipe(p))
		return errno;
	pid = fork();
	if (pid == 0) {
		fd = open(path, O_RDWR);
		err = fd < 0 || fsync(fd) ? errno : 0;
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	err = pid < 0 ? errno : child_result(p[0], secs);
	close(p[0]);
	if (err != ETIMEDOUT && pid > 0)
		waitpid(pid, NULL, 0);
	return err;
}

/*
 * NEEDS_RESET the way it really arises: a notification that finds the
 * queue empty, written to the device's notify register while a flush is
 * in flight (a child fsyncs in a loop; the test waits until it sleeps in
 * the kernel, state D). Then that flush, and a fresh one, must fail with
 * EIO within EIO_WITHIN_S (not hang: the device takes no request and
 * completes none, though it still writes the response of the request it
 * holds), unbind + bind must bring back a device whose flush succeeds, and
 * the kernel log must have no lockdep, might_sleep or slab report; lockdep
 * must still be on to tell. Runs after the soak: a flush it leaves blocked
 * cannot hold up another test.
 */
TEST_F_TIMEOUT(pmem, needs_reset_injected, 180)
{
	int p[2], kfd, bad, live, err_flusher = -1, err_after = -1, err_rebound = -1;
	const char *why, *why_rebind = NULL;
	char state = '?';
	struct notify_reg reg;
	struct pmem_dev dev;
	long *count, before;
	double t0;
	pid_t pid;

	NEED_MAIN();
	live = lockdep_live();
	ASSERT_EQ(1, live) TH_LOG("%s", live < 0 ? "no /proc/lockdep_stats (PROVE_LOCKING?)" :
				  "lockdep was turned off by an earlier report: cannot judge");
	kfd = kmsg_watch();
	/* Start from a freshly reset device, whatever the tests before did. */
	why = rebind_virtio(self->vmain.virtio, &dev);
	ASSERT_EQ(NULL, why) TH_LOG("%s: %s", self->vmain.virtio, why);
	why = find_notify(dev.virtio, &reg);
	ASSERT_EQ(NULL, why) TH_LOG("%s: %s", dev.virtio, why);
	TH_LOG("%s: notify register at %s BAR %d + %#llx", dev.virtio, reg.pci, reg.bar,
	       reg.offset);
	count = mmap(NULL, sizeof(*count), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, count);
	ASSERT_EQ(0, pipe(p));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		flusher(dev.path, p[1], count);
	close(p[1]);
	ASSERT_LT(0, pid);
	usleep(RESET_WARMUP_US);
	for (t0 = now_s(); now_s() - t0 < 2 && state != 'D';)
		state = proc_state(pid);
	before = __atomic_load_n(count, __ATOMIC_RELAXED);
	t0 = now_s();
	why = stray_notify(&reg);
	if (!why)
		err_flusher = child_result(p[0], EIO_WITHIN_S);
	close(p[0]);
	kill(pid, SIGKILL);
	TH_LOG("the notification came after %ld flushes, the flusher %s", before,
	       state == 'D' ? "sleeping in one (D)" : "not seen in one");
	if (err_flusher == ETIMEDOUT)
		TH_LOG("no failed flush %.0f s after it; %ld flushes succeeded since",
		       now_s() - t0, __atomic_load_n(count, __ATOMIC_RELAXED) - before);
	/* A device with a flush blocked in it cannot be unbound: stop there. */
	if (err_flusher == EIO) {
		waitpid(pid, NULL, 0);
		err_after = bounded_fsync(dev.path, EIO_WITHIN_S);
		if (err_after == EIO)
			why_rebind = rebind_virtio(dev.virtio, &dev);
		if (err_after == EIO && !why_rebind)
			err_rebound = bounded_fsync(dev.path, EIO_WITHIN_S);
	}
	bad = kmsg_judge(_metadata, kfd, 1);
	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
	ASSERT_EQ(EIO, err_flusher) TH_LOG("the flush in flight at NEEDS_RESET: %s, want EIO",
					   strerror(err_flusher));
	ASSERT_EQ(EIO, err_after) TH_LOG("a flush after NEEDS_RESET: %s, want EIO",
					 strerror(err_after));
	ASSERT_EQ(NULL, why_rebind) TH_LOG("%s: %s", dev.virtio, why_rebind);
	ASSERT_EQ(0, err_rebound) TH_LOG("a flush after unbind + bind: %s",
					 strerror(err_rebound));
	ASSERT_EQ(0, bad) TH_LOG("the kernel complained around NEEDS_RESET");
	ASSERT_EQ(1, lockdep_live()) TH_LOG("lockdep turned itself off");
}

/* Run last: no report outside the tests' own runs (boot, late reports). */
TEST_F_TIMEOUT(pmem, debug_kernel_log_clean, 30)
{
	ASSERT_EQ(0, kmsg_judge(_metadata, open("/dev/kmsg", O_RDONLY | O_NONBLOCK), 0));
}

TEST_HARNESS_MAIN
