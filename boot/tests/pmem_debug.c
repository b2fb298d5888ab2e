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
 *   suspend_resume_under_storm  suspend to RAM (S3) with 64 writers
 *                          fsyncing; the host wakes the guest
 *                          (boot/wake-guest.py); every writer goes on
 *                          flushing and stops in bounded time
 *   debug_kernel_log_clean no report anywhere else in the kernel log
 * Each test judges (and claims) the kernel log of its own run: lockdep,
 * might_sleep, slub poison and redzone reports, warnings.
 *
 * TAP comment lines for the host (boot/check-host.sh):
 *   "# vpmem-soak-flushes: N"    flushes the soak completed
 *   "# vpmem-stray-notifies: N"  stray notifications written: each makes
 *                                QEMU trace a request it never answers
 *   "# vpmem-resume-fsyncs: N"   fsyncs begun and completed after resume
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
#define RESUMED_RUN_S 2
#define WRITERS_STOP_S 15
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

/* One writer of the suspend test, in shared memory: it is a process. */
struct sleep_writer {
	long fsyncs;
	long failures;
	long resumed_fsyncs;	/* begun after resume, and good */
	int done;
};

struct sleep_storm {
	int stop;
	int resumed;
	struct sleep_writer w[STORM_WRITERS];
};

static void sleep_writer_run(const char *path, off_t off, struct sleep_storm *s,
			     struct sleep_writer *w)
{
	char block[BLOCK_BYTES];
	int fd = open(path, O_RDWR), resumed;

	while (fd >= 0 && !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		resumed = __atomic_load_n(&s->resumed, __ATOMIC_ACQUIRE);
		memset(block, (int)(w->fsyncs & 0xff), sizeof(block));
		if (pwrite(fd, block, sizeof(block), off) != sizeof(block) || fsync(fd)) {
			__atomic_fetch_add(&w->failures, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_fetch_add(&w->fsyncs, 1, __ATOMIC_RELAXED);
		if (resumed)
			__atomic_fetch_add(&w->resumed_fsyncs, 1, __ATOMIC_RELAXED);
	}
	if (fd < 0)
		w->failures++;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	_exit(0);
}

/* Writers that did not stop, that failed a write or fsync, or never flushed after resume */
static void sleep_storm_tally(const struct sleep_storm *s, int n, int *stuck, long *failures,
			      int *idle, long *resumed)
{
	int i;

	*stuck = *idle = 0;
	*failures = *resumed = 0;
	for (i = 0; i < n; i++) {
		*stuck += !__atomic_load_n(&s->w[i].done, __ATOMIC_ACQUIRE);
		*failures += s->w[i].failures;
		*idle += !s->w[i].resumed_fsyncs;
		*resumed += s->w[i].resumed_fsyncs;
	}
}

static int sleep_storm_all(const struct sleep_storm *s, int n, int done)
{
	int i;

	for (i = 0; i < n; i++)
		if (done ? !__atomic_load_n(&s->w[i].done, __ATOMIC_ACQUIRE) :
			   !__atomic_load_n(&s->w[i].fsyncs, __ATOMIC_RELAXED))
			return 0;
	return 1;
}

static void wait_for_writers(const struct sleep_storm *s, int n, int done, double secs)
{
	double end = now_s() + secs;

	while (!sleep_storm_all(s, n, done) && now_s() < end)
		usleep(10 * 1000);
}

/*
 * Suspend to RAM with STORM_WRITERS processes each writing and fsyncing
 * its own block of the main device in a loop. Without no_soft_reset
 * (QEMU 7.2 offers none) the device is reset on the way down and again on
 * the way up: a driver without freeze and restore kicks its next flush
 * into a queue the device no longer knows and waits forever. The host
 * wakes the guest (boot/wake-guest.py, system_wakeup on the monitor);
 * every writer must flush again after resume and stop within
 * WRITERS_STOP_S, no write or fsync may fail, the kernel log stays clean.
 * Writers are processes, so that one stuck in the kernel cannot keep this
 * test from ending; then the hung-task detector is turned off, this test
 * having reported them. Runs late: a stuck device stays stuck.
 */
TEST_F_TIMEOUT(pmem, suspend_resume_under_storm, 180)
{
	int i, n, kfd, bad, stuck, idle, suspend_err = 0;
	char states[64] = "";
	struct sleep_storm *s;
	long failures, resumed;
	double t0, asleep;
	pid_t pid;

	NEED_MAIN();
	ASSERT_EQ(0, read_small_file("/sys/power/state", states, sizeof(states)));
	ASSERT_NE(NULL, strstr(states, "mem")) TH_LOG("/sys/power/state offers \"%s\"", states);
	kfd = kmsg_watch();
	/* a stuck writer is this test's finding, not a reason to panic */
	write_small_file("/proc/sys/kernel/hung_task_panic", "0");
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	fflush(stdout);
	fflush(stderr);
	for (n = 0; n < STORM_WRITERS; n++) {
		pid = fork();
		if (pid == 0)
			sleep_writer_run(self->vmain.path, STORM_BASE + (off_t)n * BLOCK_BYTES, s,
					 &s->w[n]);
		if (pid < 0)
			break;
	}
	wait_for_writers(s, n, 0, 10);
	t0 = now_s();
	if (write_small_file("/sys/power/state", "mem"))
		suspend_err = errno;
	asleep = now_s() - t0;
	__atomic_store_n(&s->resumed, 1, __ATOMIC_RELEASE);
	sleep(RESUMED_RUN_S);
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	wait_for_writers(s, n, 1, WRITERS_STOP_S);
	sleep_storm_tally(s, n, &stuck, &failures, &idle, &resumed);
	if (stuck)
		write_small_file("/proc/sys/kernel/hung_task_timeout_secs", "0");
	else
		write_small_file("/proc/sys/kernel/hung_task_panic", "1");
	for (i = 0; i < n; i++)
		waitpid(-1, NULL, WNOHANG);
	TH_LOG("%d writers; suspend and resume took %.1f s; %ld fsyncs after resume", n, asleep,
	       resumed);
	printf("# vpmem-resume-fsyncs: %ld\n", resumed);
	bad = kmsg_judge(_metadata, kfd, 1);
	ASSERT_EQ(STORM_WRITERS, n) TH_LOG("only %d writers started", n);
	ASSERT_EQ(0, suspend_err) TH_LOG("echo mem > /sys/power/state: %s", strerror(suspend_err));
	ASSERT_EQ(0, stuck) TH_LOG("%d writers still in a write or fsync %d s after resume", stuck,
				   RESUMED_RUN_S + WRITERS_STOP_S);
	ASSERT_EQ(0, failures) TH_LOG("%ld writes or fsyncs failed", failures);
	ASSERT_EQ(0, idle) TH_LOG("%d writers completed no fsync after resume", idle);
	ASSERT_EQ(0, bad) TH_LOG("the kernel complained around suspend and resume");
}

/* Run last: no report outside the tests' own runs (boot, late reports). */
TEST_F_TIMEOUT(pmem, debug_kernel_log_clean, 30)
{
	ASSERT_EQ(0, kmsg_judge(_metadata, open("/dev/kmsg", O_RDONLY | O_NONBLOCK), 0));
}

TEST_HARNESS_MAIN
