// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest tests of virtio-pmem and of MAP_SYNC on pmem, built static and
 * run from the initramfs by boot/init. TAP output comes from the kernel's
 * kselftest harness.
 *
 * The guest has, set up by boot/run-qemu.sh:
 * - a legacy e820 pmem region (memmap=), a synchronous device: "e820";
 * - a virtio-pmem device of at least 256 MiB: the main device;
 * - a virtio-pmem device under 256 MiB whose host fsync always fails.
 * The tests check the final state of the series; boot/expected.tsv says
 * which of them are expected to fail or skip at earlier bisect points.
 *
 * Lines "# vpmem-fsyncs: N" count successful fsyncs of the main device that
 * each need a host flush of their own, issued one after another, so the
 * host can check that each reached it (QEMU trace). Concurrent fsyncs may
 * share a flush (group commit): a storm counts its rounds.
 * Tests that flush the two virtio-pmem devices never run at the same time:
 * the host's trace does not say which device a request was for.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dm-ioctl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "pmem_guest.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define BLK_PATTERN_OFFSET (508 * MIB)	/* raw block write, past the fs */
#define PATTERN_LEN MIB
#define COUNTED_FSYNCS 32
#define BTT_SECTOR "4096"
#define BTT_WRITE_BYTES (64 * 1024)
#define ND_PMEM_DRV "/sys/bus/nd/drivers/nd_pmem"
#define ND_DEVICES "/sys/bus/nd/devices"
#define PERSIST_FILE MNT "/persist.dat"

/* mmap a fresh file with MAP_SYNC: 0 on success, else errno. */
static int try_map_sync(const char *path)
{
	int fd, err = 0;
	void *p;

	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0)
		return errno;
	if (ftruncate(fd, 2 * MIB)) {
		err = errno;
		close(fd);
		return err;
	}
	p = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE,
		 MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	if (p == MAP_FAILED)
		err = errno;
	else
		munmap(p, 2 * MIB);
	close(fd);
	unlink(path);
	return err;
}

/* The token on the kernel command line makes every boot's data unique. */
static void boot_token(char *buf, size_t len)
{
	char cmdline[4096], *p;

	snprintf(buf, len, "none");
	if (read_small_file("/proc/cmdline", cmdline, sizeof(cmdline)))
		return;
	p = strstr(cmdline, "vpmem_token=");
	if (p)
		snprintf(buf, len, "%.*s", (int)strcspn(p + 12, " "), p + 12);
}

/* The bytes of `yes WORD | head -c PATTERN_LEN`, which the host rebuilds. */
static void fill_pattern(char *buf, const char *what)
{
	char token[64], line[128];
	size_t n, off = 0;

	boot_token(token, sizeof(token));
	n = snprintf(line, sizeof(line), "vpmem-%s-%s\n", what, token);
	while (off < PATTERN_LEN) {
		size_t take = PATTERN_LEN - off < n ? PATTERN_LEN - off : n;

		memcpy(buf + off, line, take);
		off += take;
	}
}

/* n fsyncs of the main device, one after another, all successful */
static void report_fsyncs(struct __test_metadata *_metadata, int n)
{
	TH_LOG("counted fsyncs on the main device: %d", n);
	printf("# vpmem-fsyncs: %d\n", n);
	fflush(stdout);
}

FIXTURE(pmem) {
	struct pmem_dev e820, vmain, vfaulty;
	int have_e820, have_main, have_faulty;
};

FIXTURE_SETUP(pmem)
{
	self->have_e820 = !find_pmem(E820, &self->e820);
	self->have_main = !find_pmem(VIRTIO_MAIN, &self->vmain);
	self->have_faulty = !find_pmem(VIRTIO_FAULTY, &self->vfaulty);
}

FIXTURE_TEARDOWN(pmem)
{
}

#define NEED_MAIN() do { \
	if (!self->have_main) \
		SKIP(return, "no virtio-pmem device"); \
} while (0)

TEST_F_TIMEOUT(pmem, virtio_pmem_probed, 30)
{
	ASSERT_TRUE(self->have_main) TH_LOG("no pmem device on a virtio-pmem nvdimm bus");
	ASSERT_GE(self->vmain.bytes, MAIN_MIN_BYTES);
	ASSERT_NE(self->vmain.virtio[0], '\0') TH_LOG("%s has no virtio parent", self->vmain.name);
	TH_LOG("%s on %s, %llu MiB", self->vmain.name, self->vmain.virtio,
	       self->vmain.bytes / MIB);
}

TEST_F_TIMEOUT(pmem, e820_pmem_probed, 30)
{
	ASSERT_TRUE(self->have_e820) TH_LOG("no pmem device on the e820 bus (memmap=)");
}

/*
 * The virtio-pmem region has a valid NUMA node and target node, as the
 * reference derives them from the physical address: dev_to_node() of a
 * virtio-pci device is NUMA_NO_NODE, with which dax_kmem refuses the
 * region ("invalid node"). libnvdimm hides target_node when it is
 * NUMA_NO_NODE, and both attributes without CONFIG_NUMA.
 */
TEST_F_TIMEOUT(pmem, virtio_region_numa_node, 30)
{
	static const char *const attrs[] = { "numa_node", "target_node" };
	char region[32], path[128], buf[32];
	size_t i;

	NEED_MAIN();
	ASSERT_EQ(0, pmem_parent(&self->vmain, "region", region, sizeof(region)))
		TH_LOG("no region above %s", self->vmain.name);
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		snprintf(path, sizeof(path), ND_DEVICES "/%s/%s", region, attrs[i]);
		ASSERT_EQ(0, read_small_file(path, buf, sizeof(buf)))
			TH_LOG("%s: no such attribute (NUMA_NO_NODE, or no CONFIG_NUMA)", path);
		TH_LOG("%s: %s", path, buf);
		ASSERT_LE(0, atoi(buf)) TH_LOG("%s is %s, not a valid node", path, buf);
	}
}

static void check_dax_mount(struct __test_metadata *_metadata, const char *fs,
			    const struct pmem_dev *dev)
{
	const char *why = mount_dax(fs, dev);
	int fd;

	ASSERT_EQ(NULL, why) TH_LOG("%s on %s: %s", fs, dev->path, why);
	fd = open(MNT "/dax-probe", O_CREAT | O_RDWR, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_TRUE(file_is_dax(MNT "/dax-probe")) TH_LOG("%s on %s: file is not DAX", fs, dev->path);
}

static void check_map_sync(struct __test_metadata *_metadata, const char *fs,
			   const struct pmem_dev *dev, int want)
{
	int err;

	ASSERT_TRUE(is_mounted()) TH_LOG("%s is not mounted on %s", fs, dev->path);
	err = try_map_sync(MNT "/map-sync");
	umount(MNT);
	ASSERT_EQ(want, err) TH_LOG("%s on %s: MAP_SYNC gave %s, want %s", fs, dev->path,
				    err ? strerror(err) : "success",
				    want ? strerror(want) : "success");
}

TEST_F_TIMEOUT(pmem, xfs_dax_mount_e820, 120)
{
	ASSERT_TRUE(self->have_e820);
	check_dax_mount(_metadata, "xfs", &self->e820);
}

TEST_F_TIMEOUT(pmem, xfs_map_sync_allowed_e820, 60)
{
	ASSERT_TRUE(self->have_e820);
	check_map_sync(_metadata, "xfs", &self->e820, 0);
}

TEST_F_TIMEOUT(pmem, ext4_dax_mount_e820, 120)
{
	ASSERT_TRUE(self->have_e820);
	check_dax_mount(_metadata, "ext4", &self->e820);
}

TEST_F_TIMEOUT(pmem, ext4_map_sync_allowed_e820, 60)
{
	ASSERT_TRUE(self->have_e820);
	check_map_sync(_metadata, "ext4", &self->e820, 0);
}

TEST_F_TIMEOUT(pmem, xfs_dax_mount_virtio, 120)
{
	NEED_MAIN();
	check_dax_mount(_metadata, "xfs", &self->vmain);
}

TEST_F_TIMEOUT(pmem, xfs_map_sync_refused_virtio, 60)
{
	NEED_MAIN();
	check_map_sync(_metadata, "xfs", &self->vmain, EOPNOTSUPP);
}

TEST_F_TIMEOUT(pmem, ext4_dax_mount_virtio, 120)
{
	NEED_MAIN();
	check_dax_mount(_metadata, "ext4", &self->vmain);
}

TEST_F_TIMEOUT(pmem, ext4_map_sync_refused_virtio, 60)
{
	NEED_MAIN();
	check_map_sync(_metadata, "ext4", &self->vmain, EOPNOTSUPP);
}

/* Wait up to 10 s for /sys/block/NAME to appear (present) or to go. */
static int wait_for_disk(const char *name, int present)
{
	char path[128];
	int i;

	snprintf(path, sizeof(path), "/sys/block/%s", name);
	for (i = 0; i < 100; i++) {
		if ((access(path, F_OK) == 0) == present)
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}

static int nd_attr_write(const char *dev, const char *attr, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), ND_DEVICES "/%s/%s", dev, attr);
	return write_small_file(path, val);
}

struct btt_setup {
	char region[32], ns[32], btt[32];
	char raw[32], disk[40];		/* pmemN and pmemNs */
	int step;			/* how far btt_enable() got */
};

/*
 * Sector mode on the main device's label-less namespace, as "ndctl
 * create-namespace -m sector -l 4k" does it through sysfs: take the
 * namespace from nd_pmem, give the region's btt seed a uuid, the sector
 * size and the namespace, and bind the btt to nd_pmem, which makes the
 * disk pmemNs. NULL on success, else what failed.
 */
static const char *btt_enable(const struct pmem_dev *dev, struct btt_setup *b)
{
	char path[128], uuid[64];

	b->step = 0;
	if (pmem_parent(dev, "region", b->region, sizeof(b->region)) ||
	    pmem_parent(dev, "namespace", b->ns, sizeof(b->ns)))
		return "no region or namespace above the main pmem disk";
	snprintf(b->raw, sizeof(b->raw), "%s", dev->name);
	snprintf(b->disk, sizeof(b->disk), "%ss", dev->name);
	snprintf(path, sizeof(path), ND_DEVICES "/%s/btt_seed", b->region);
	if (read_small_file(path, b->btt, sizeof(b->btt)) || !b->btt[0])
		return "the region has no btt seed (CONFIG_BTT?)";
	if (read_small_file("/proc/sys/kernel/random/uuid", uuid, sizeof(uuid)))
		return "no uuid from /proc/sys/kernel/random/uuid";
	if (write_small_file(ND_PMEM_DRV "/unbind", b->ns) || wait_for_disk(b->raw, 0))
		return "cannot unbind the namespace from nd_pmem";
	b->step = 1;
	if (nd_attr_write(b->btt, "uuid", uuid) ||
	    nd_attr_write(b->btt, "sector_size", BTT_SECTOR) ||
	    nd_attr_write(b->btt, "namespace", b->ns))
		return "cannot configure the btt seed";
	b->step = 2;
	if (write_small_file(ND_PMEM_DRV "/bind", b->btt) || wait_for_disk(b->disk, 1))
		return "binding the btt to nd_pmem gave no sector-mode disk";
	return NULL;
}

/*
 * Back to the raw namespace: unbind the btt and detach it from the
 * namespace, bind the namespace with force_raw (the btt info block on the
 * media would claim it again), wipe that info block (4 KiB at 4 KiB)
 * through the raw disk, and bind it once more without force_raw (which
 * also leaves out the struct pages DAX needs). Later tests find pmemN, DAX
 * capable, as before. Undoes as much as btt_enable() did; NULL, or the
 * first failure.
 */
static const char *btt_disable(struct btt_setup *b)
{
	static const char zero[BLOCK_BYTES];
	const char *why = NULL;
	char path[64];
	int fd, bad;

	snprintf(path, sizeof(path), ND_DEVICES "/%s/driver", b->btt);
	if (b->step >= 2 && access(path, F_OK) == 0 &&
	    (write_small_file(ND_PMEM_DRV "/unbind", b->btt) || wait_for_disk(b->disk, 0)))
		why = "cannot unbind the btt";
	if (b->step >= 1 && nd_attr_write(b->btt, "namespace", "\n") && !why)
		why = "cannot detach the btt from the namespace";
	if (b->step < 1)
		return why;
	if (nd_attr_write(b->ns, "force_raw", "1") ||
	    write_small_file(ND_PMEM_DRV "/bind", b->ns) || wait_for_disk(b->raw, 1))
		return why ? why : "cannot bind the raw namespace again";
	snprintf(path, sizeof(path), "/dev/%s", b->raw);
	fd = open(path, O_RDWR);
	bad = fd < 0 || pwrite(fd, zero, sizeof(zero), BLOCK_BYTES) != sizeof(zero) ||
	      fsync(fd);
	if (fd >= 0)
		close(fd);
	if (bad && !why)
		why = "cannot wipe the btt info block";
	/* force_raw also means no struct pages, hence no DAX: bind once more */
	if ((write_small_file(ND_PMEM_DRV "/unbind", b->ns) || wait_for_disk(b->raw, 0) ||
	     nd_attr_write(b->ns, "force_raw", "0") ||
	     write_small_file(ND_PMEM_DRV "/bind", b->ns) || wait_for_disk(b->raw, 1)) && !why)
		why = "cannot bind the namespace again without force_raw";
	return why;
}

/*
 * Sector mode (BTT) on virtio-pmem is refused. BTT writes its data, log
 * and map with preemption disabled, each write persistent before the
 * next; virtio-pmem's flush is a host request that sleeps, so BTT can
 * neither flush there nor keep its order without it. The reference binds
 * the BTT, and its first write through pmemNs flushes in atomic context
 * ("sleeping function called from invalid context"): that write is made
 * here when the bind succeeds, so the log shows what the acceptance
 * costs. Passes when binding the btt fails, no pmemNs appears, the kernel
 * does not complain and the namespace is back in raw mode. Judges (and
 * claims) the kernel log of its own run; runs before the tests that leave
 * data on the main device for the host.
 */
TEST_F_TIMEOUT(pmem, btt_refused_virtio, 180)
{
	const char *why, *undo;
	struct btt_setup b;
	char *buf;
	int fd, kfd, bad, attached, refused;
	double start = now_s();
	char path[64];

	NEED_MAIN();
	if (is_mounted())
		umount(MNT);
	ASSERT_EQ(0, posix_memalign((void **)&buf, BLOCK_BYTES, BTT_WRITE_BYTES));
	memset(buf, 0x5a, BTT_WRITE_BYTES);
	kfd = kmsg_watch();
	why = btt_enable(&self->vmain, &b);
	attached = !why;
	/* only the bind itself may fail: every step before it must work */
	refused = why && b.step == 2;
	if (attached) {
		snprintf(path, sizeof(path), "/dev/%s", b.disk);
		fd = open(path, O_RDWR | O_DIRECT);
		if (fd < 0 || pwrite(fd, buf, BTT_WRITE_BYTES, 0) != BTT_WRITE_BYTES ||
		    fsync(fd))
			TH_LOG("write through %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	undo = btt_disable(&b);
	bad = kmsg_judge(_metadata, kfd, 1);
	TH_LOG("%s: sector mode %s in %.1f s", b.ns,
	       attached ? "attached" : refused ? "refused" : "not tried", now_s() - start);
	free(buf);
	ASSERT_FALSE(attached) TH_LOG("%s became %s in sector mode on a region whose flush sleeps",
				      b.ns, b.disk);
	ASSERT_TRUE(refused) TH_LOG("%s (%s on %s)", why, b.btt, b.ns);
	ASSERT_EQ(NULL, undo) TH_LOG("%s (%s on %s)", undo, b.btt, b.ns);
	ASSERT_EQ(0, bad) TH_LOG("the kernel complained while %s was offered to BTT", b.ns);
}

/* Leaves ext4 on the main device with PERSIST_FILE for the host to read. */
TEST_F_TIMEOUT(pmem, dax_write_persists_virtio, 120)
{
	const char *why;
	char *buf, *map;
	int fd;

	NEED_MAIN();
	why = mount_dax("ext4", &self->vmain);
	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
	buf = malloc(PATTERN_LEN);
	ASSERT_NE(NULL, buf);
	fill_pattern(buf, "dax");
	fd = open(PERSIST_FILE, O_CREAT | O_RDWR | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, PATTERN_LEN));
	ASSERT_TRUE(file_is_dax(PERSIST_FILE));
	map = mmap(NULL, PATTERN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	memcpy(map, buf, PATTERN_LEN);
	ASSERT_EQ(0, msync(map, PATTERN_LEN, MS_SYNC));
	ASSERT_EQ(0, munmap(map, PATTERN_LEN));
	ASSERT_EQ(0, fsync(fd));
	report_fsyncs(_metadata, 1);
	close(fd);
	ASSERT_EQ(0, umount(MNT)) TH_LOG("umount: %s", strerror(errno));
	free(buf);
}

TEST_F_TIMEOUT(pmem, bdev_write_persists_virtio, 60)
{
	char *buf;
	int fd;

	NEED_MAIN();
	buf = malloc(PATTERN_LEN);
	ASSERT_NE(NULL, buf);
	fill_pattern(buf, "blk");
	fd = open(self->vmain.path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(PATTERN_LEN, pwrite(fd, buf, PATTERN_LEN, BLK_PATTERN_OFFSET));
	ASSERT_EQ(0, fsync(fd)) TH_LOG("fsync: %s", strerror(errno));
	report_fsyncs(_metadata, 1);
	close(fd);
	free(buf);
}

/* Each successful fsync of the block device must send a flush to the host. */
TEST_F_TIMEOUT(pmem, fsyncs_reach_host_virtio, 120)
{
	char block[4096];
	int fd, i;

	NEED_MAIN();
	fd = open(self->vmain.path, O_RDWR);
	ASSERT_LE(0, fd);
	for (i = 0; i < COUNTED_FSYNCS; i++) {
		memset(block, i, sizeof(block));
		ASSERT_EQ(sizeof(block), pwrite(fd, block, sizeof(block),
						BLK_PATTERN_OFFSET + PATTERN_LEN));
		ASSERT_EQ(0, fsync(fd)) TH_LOG("fsync %d: %s", i, strerror(errno));
	}
	report_fsyncs(_metadata, COUNTED_FSYNCS);
	close(fd);
}

/*
 * Write a block at off of the faulty device and fsync it: 0 if the fsync
 * succeeded, else its errno; -1 if the device cannot be opened or written.
 */
static int faulty_write_fsync(const struct pmem_dev *dev, const char *text, off_t off)
{
	char block[4096] = "";
	int fd, err;

	snprintf(block, sizeof(block), "%s", text);
	fd = open(dev->path, O_RDWR);
	if (fd < 0)
		return -1;
	if (pwrite(fd, block, sizeof(block), off) != sizeof(block)) {
		close(fd);
		return -1;
	}
	err = fsync(fd) ? errno : 0;
	close(fd);
	return err;
}

TEST_F_TIMEOUT(pmem, host_flush_error_reaches_guest, 60)
{
	int err;

	if (!self->have_faulty)
		SKIP(return, "no faulty virtio-pmem device");
	err = faulty_write_fsync(&self->vfaulty, "must fail", 0);
	ASSERT_NE(-1, err) TH_LOG("cannot write %s: %s", self->vfaulty.path, strerror(errno));
	ASSERT_NE(0, err) TH_LOG("fsync succeeded although the host fsync failed");
	ASSERT_EQ(EIO, err) TH_LOG("fsync: %s, want EIO", strerror(err));
}

/*
 * After host_flush_error_reaches_guest: the faulty device's host fsync
 * failed once and syncs again (a transient error). The host may have
 * dropped what it failed to write back, and no later flush vouches for
 * it: a second write and fsync must fail too. The host counts one failed
 * fsync only (host_fsync_error_traced), so this EIO is the driver's.
 */
TEST_F_TIMEOUT(pmem, host_flush_error_sticks, 60)
{
	int err;

	if (!self->have_faulty)
		SKIP(return, "no faulty virtio-pmem device");
	err = faulty_write_fsync(&self->vfaulty, "must fail too", 4096);
	ASSERT_NE(-1, err) TH_LOG("cannot write %s: %s", self->vfaulty.path, strerror(errno));
	ASSERT_NE(0, err) TH_LOG("fsync succeeded after a failed host fsync");
	ASSERT_EQ(EIO, err) TH_LOG("fsync: %s, want EIO", strerror(err));
}

/*
 * More concurrent flushes than the virtqueue has slots: all must succeed.
 * The host checks from its trace that at most one flush request was
 * outstanding at any time (host_flush_outstanding_max_one).
 */
TEST_F_TIMEOUT(pmem, flush_storm_virtio, 240)
{
	int failures, fsyncs;

	NEED_MAIN();
	failures = run_storm(self->vmain.path, BLK_PATTERN_OFFSET + 2 * PATTERN_LEN, &fsyncs);
	TH_LOG("%d fsyncs in %d rounds of %d writers", fsyncs, STORM_ROUNDS, STORM_WRITERS);
	/* each writer's rounds follow each other: that many flushes at least */
	if (!failures)
		report_fsyncs(_metadata, STORM_ROUNDS);
	ASSERT_EQ(0, failures) TH_LOG("%d of %d writes or fsyncs failed", failures,
				      STORM_WRITERS * STORM_ROUNDS);
}

TEST_F_TIMEOUT(pmem, unbind_rebind_virtio, 120)
{
	char block[4096] = "after rebind";
	struct pmem_dev again;
	const char *why;
	int fd;

	NEED_MAIN();
	ASSERT_NE(self->vmain.virtio[0], '\0');
	why = rebind_virtio(self->vmain.virtio, &again);
	ASSERT_EQ(NULL, why) TH_LOG("%s: %s", self->vmain.virtio, why);
	fd = open(again.path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(block), pwrite(fd, block, sizeof(block), BLK_PATTERN_OFFSET + PATTERN_LEN));
	ASSERT_EQ(0, fsync(fd)) TH_LOG("fsync after rebind: %s", strerror(errno));
	report_fsyncs(_metadata, 1);
	close(fd);
}

/*
 * map_sync_follows_reenable: disable and enable the e820 namespace and the
 * main virtio-pmem one (nd_pmem unbind and bind, as ndctl
 * disable-namespace and enable-namespace do for a raw namespace) in
 * seeded random orders; after every step each enabled disk must offer
 * MAP_SYNC exactly when its device is synchronous. A dax_device comes from
 * a slab cache whose constructor zeroes an object only once: a new one
 * must not keep the flags of the one freed before it, e.g. virtio-pmem
 * enabled after the e820 namespace was disabled must not inherit its
 * DAXDEV_SYNC. The faulty device is never touched.
 *
 * vpmem_seed=N on the kernel command line runs the sequences of seeds N,
 * N+1, ...; each starts with every namespace enabled, so a failed run
 * replays from the vpmem_seed=N it names. The default seeds 6..9 give the
 * reproducer order (virtio disabled, e820 disabled, virtio enabled) in
 * three of the four sequences: 6 at steps 1-3, 7 at 5-7, 8 at 5-7. The
 * later ones matter: the objects allocated at boot may sit in another
 * CPU's slab, so the first free and reuse on CPU 0 may not meet.
 *
 * RECYCLE_DM_SEQS more sequences also create and remove a dm-linear
 * device over each namespace (its own dax_device, marked synchronous by
 * its table when the device under it is): while one exists, the check
 * mounts it instead of the namespace under it, which must give the same
 * answer. A namespace is disabled only without a dm device over it, and a
 * dm device made only over an enabled one.
 */
#define RECYCLE_SEED 6
#define RECYCLE_SEQS 4
#define RECYCLE_DM_SEQS 4
#define RECYCLE_STEPS 8
#define RECYCLE_NS 2
/*
 * A disabled namespace's dax_device is freed from an RCU callback: without
 * a grace period after every disable, the next bind does not get the freed
 * object, and what it left in the object goes unseen.
 */
#define RCU_WAIT_US (500 * 1000)

struct toggled_ns {
	const char *label;	/* e820, virtio */
	enum pmem_kind kind;
	int want;		/* what MAP_SYNC must give: 0 or EOPNOTSUPP */
	char ns[32];		/* namespaceX.Y */
	struct pmem_dev dev;	/* its disk, while enabled */
	int enabled;
	unsigned int disabled;	/* when it was last disabled */
	int dm_on;		/* a dm-linear device over the disk exists */
	struct pmem_dev dm;	/* that device: dm-N, /dev/dm-N */
};

/* One DM ioctl on /dev/mapper/control: 0 or -1 with errno. */
static int dm_ioctl_run(unsigned long cmd, struct dm_ioctl *io)
{
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC), ret, err;

	if (fd < 0)
		return -1;
	io->version[0] = DM_VERSION_MAJOR;
	io->version[1] = 0;
	io->version[2] = 0;
	ret = ioctl(fd, cmd, io);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

static void dm_name(const struct toggled_ns *n, struct dm_ioctl *io)
{
	snprintf(io->name, sizeof(io->name), "vpmem-linear-%s", n->label);
}

/*
 * DM_DEV_REMOVE of n's dm device; a few tries while something that saw the
 * new disk (blkid, a udev rule) still holds it open: 0 or -1.
 */
static int dm_remove_named(struct toggled_ns *n)
{
	struct dm_ioctl io;
	int tries;

	for (tries = 0; tries < 20; tries++) {
		memset(&io, 0, sizeof(io));
		io.data_size = sizeof(io);
		dm_name(n, &io);
		if (!dm_ioctl_run(DM_DEV_REMOVE, &io))
			return 0;
		if (errno != EBUSY)
			return -1;
		usleep(100 * 1000);
	}
	return -1;
}

/* A dm-linear device over all of n's disk; NULL or what failed. */
static const char *dm_linear_create(struct toggled_ns *n)
{
	struct {
		struct dm_ioctl io;
		struct dm_target_spec spec;
		char params[64];
	} t;
	struct stat st;
	unsigned int minor;

	if (stat(n->dev.path, &st))
		return "no block device node for the namespace's disk";
	memset(&t, 0, sizeof(t));
	t.io.data_size = sizeof(t.io);
	dm_name(n, &t.io);
	if (dm_ioctl_run(DM_DEV_CREATE, &t.io))
		return "DM_DEV_CREATE failed";
	minor = minor(t.io.dev);
	memset(&t, 0, sizeof(t));
	t.io.data_size = sizeof(t);
	t.io.data_start = offsetof(typeof(t), spec);
	t.io.target_count = 1;
	dm_name(n, &t.io);
	t.spec.length = n->dev.bytes / 512;
	strcpy(t.spec.target_type, "linear");
	snprintf(t.params, sizeof(t.params), "%u:%u 0", major(st.st_rdev), minor(st.st_rdev));
	if (dm_ioctl_run(DM_TABLE_LOAD, &t.io)) {
		dm_remove_named(n);
		return "DM_TABLE_LOAD of a linear table failed";
	}
	memset(&t.io, 0, sizeof(t.io));
	t.io.data_size = sizeof(t.io);
	dm_name(n, &t.io);
	if (dm_ioctl_run(DM_DEV_SUSPEND, &t.io)) {	/* no suspend flag: resume */
		dm_remove_named(n);
		return "resuming the dm device failed";
	}
	snprintf(n->dm.name, sizeof(n->dm.name), "dm-%u", minor);
	snprintf(n->dm.path, sizeof(n->dm.path), "/dev/dm-%u", minor);
	n->dm.bytes = n->dev.bytes;
	n->dm_on = 1;	/* removed by ns_enable_all even when its disk is missing */
	if (wait_for_disk(n->dm.name, 1) || access(n->dm.path, F_OK))
		return "the dm device has no disk";
	return NULL;
}

/* Remove n's dm-linear device, then wait for its dax_device to be freed. */
static const char *dm_linear_remove(struct toggled_ns *n)
{
	if (dm_remove_named(n))
		return "DM_DEV_REMOVE failed";
	if (wait_for_disk(n->dm.name, 0))
		return "the dm device's disk stayed";
	n->dm_on = 0;
	usleep(RCU_WAIT_US);
	return NULL;
}

/* The first seed: vpmem_seed=N on the kernel command line, else RECYCLE_SEED. */
static unsigned int recycle_seed(void)
{
	char cmdline[4096], *p;

	if (read_small_file("/proc/cmdline", cmdline, sizeof(cmdline)))
		return RECYCLE_SEED;
	p = strstr(cmdline, "vpmem_seed=");
	return p ? (unsigned int)strtoul(p + 11, NULL, 10) : RECYCLE_SEED;
}

/*
 * A 32-bit LCG (Numerical Recipes' constants), its high bits: the same
 * steps on every libc, unlike rand().
 */
static unsigned int recycle_next(unsigned int *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state >> 16;
}

/* Disable n if enabled, else enable it (its disk found again); NULL or what failed. */
static const char *ns_toggle(struct toggled_ns *n, unsigned int when)
{
	if (n->enabled) {
		if (write_small_file(ND_PMEM_DRV "/unbind", n->ns) || wait_for_disk(n->dev.name, 0))
			return "cannot unbind the namespace from nd_pmem";
		n->enabled = 0;
		n->disabled = when;
		usleep(RCU_WAIT_US);
		return NULL;
	}
	if (write_small_file(ND_PMEM_DRV "/bind", n->ns) || wait_for_pmem(n->kind, &n->dev, 1))
		return "binding the namespace to nd_pmem gave no disk";
	n->enabled = 1;
	return NULL;
}

/*
 * Enable every namespace, the one disabled last first: with nothing else
 * freed in between, each then gets its own dax_device back. NULL or what
 * failed.
 */
static const char *ns_enable_all(struct toggled_ns *ns)
{
	struct toggled_ns *last;
	const char *why;
	int i;

	for (i = 0; i < RECYCLE_NS; i++) {
		why = ns[i].dm_on ? dm_linear_remove(&ns[i]) : NULL;
		if (why)
			return why;
	}
	for (;;) {
		last = NULL;
		for (i = 0; i < RECYCLE_NS; i++)
			if (!ns[i].enabled && (!last || ns[i].disabled > last->disabled))
				last = &ns[i];
		if (!last)
			return NULL;
		why = ns_toggle(last, 0);
		if (why)
			return why;
	}
}

/*
 * Mount each enabled namespace's ext4 with DAX and try MAP_SYNC. NULL when
 * every answer is right, else what was wrong, in buf.
 */
static const char *ns_check_map_sync(struct toggled_ns *ns, char *buf, size_t len)
{
	const struct pmem_dev *dev;
	const char *why;
	int i, err, fd, dax;

	for (i = 0; i < RECYCLE_NS; i++) {
		if (!ns[i].enabled)
			continue;
		dev = ns[i].dm_on ? &ns[i].dm : &ns[i].dev;
		why = mount_existing_dax("ext4", dev);
		if (why) {
			snprintf(buf, len, "%s (%s): %s", ns[i].label, dev->path, why);
			return buf;
		}
		/* a file that is not DAX would refuse MAP_SYNC too: a false pass */
		fd = open(MNT "/dax-probe", O_CREAT | O_RDWR, 0644);
		dax = fd >= 0 && file_is_dax(MNT "/dax-probe");
		if (fd >= 0)
			close(fd);
		unlink(MNT "/dax-probe");
		err = dax ? try_map_sync(MNT "/map-sync") : 0;
		if (umount(MNT)) {
			snprintf(buf, len, "%s (%s): umount: %s", ns[i].label, dev->path,
				 strerror(errno));
			return buf;
		}
		if (!dax) {
			snprintf(buf, len, "%s (%s): a new file on the -o dax mount is not DAX",
				 ns[i].label, dev->path);
			return buf;
		}
		if (err != ns[i].want) {
			snprintf(buf, len, "%s (%s, %s): MAP_SYNC %s%s, want %s", ns[i].label,
				 dev->path, ns[i].ns, err ? "refused: " : "offered (the mmap succeeded)",
				 err ? strerror(err) : "", ns[i].want ? "refused with EOPNOTSUPP" : "offered");
			return buf;
		}
	}
	return NULL;
}

/*
 * Action a of a sequence with dm devices: 0..RECYCLE_NS-1 toggles that
 * namespace, the rest the dm device over namespace a - RECYCLE_NS. Legal:
 * no namespace disabled under a dm device, no dm device over a disabled
 * namespace.
 */
static int recycle_legal(const struct toggled_ns *ns, int a)
{
	if (a < RECYCLE_NS)
		return !ns[a].dm_on;
	return ns[a - RECYCLE_NS].enabled;
}

/* One step's action: drawn from the seed, the next legal one when not. */
static int recycle_action(const struct toggled_ns *ns, unsigned int *state, int with_dm)
{
	int n = with_dm ? 2 * RECYCLE_NS : RECYCLE_NS;
	int a = recycle_next(state) % n;

	while (!recycle_legal(ns, a))
		a = (a + 1) % n;
	return a;
}

/* Do action a; its step's label in step; NULL or what failed. */
static const char *recycle_do(struct toggled_ns *ns, int a, unsigned int when,
			      char *step, size_t len)
{
	struct toggled_ns *n = &ns[a % RECYCLE_NS];
	const char *why;

	if (a < RECYCLE_NS) {
		why = ns_toggle(n, when);
		snprintf(step, len, "%s%c", n->label, n->enabled ? '+' : '-');
	} else {
		why = n->dm_on ? dm_linear_remove(n) : dm_linear_create(n);
		snprintf(step, len, "dm/%s%c", n->label, n->dm_on ? '+' : '-');
	}
	return why;
}

/*
 * One sequence: every namespace enabled and no dm device, then
 * RECYCLE_STEPS actions from seed, each followed by the MAP_SYNC check.
 * NULL, or in buf what went wrong at which step.
 */
static const char *recycle_sequence(struct __test_metadata *_metadata,
				    struct toggled_ns *ns, unsigned int seed, int with_dm,
				    unsigned int *when, char *buf, size_t len)
{
	char wrong[256], label[16], done[RECYCLE_STEPS * 16] = "";
	unsigned int state = seed;
	const char *why;
	int a, step, at = 0;

	TH_LOG("seed %u (%d steps%s): every namespace enabled", seed, RECYCLE_STEPS,
	       with_dm ? ", dm-linear too" : "");
	why = ns_enable_all(ns);
	if (!why)
		why = ns_check_map_sync(ns, wrong, sizeof(wrong));
	for (step = 1; !why && step <= RECYCLE_STEPS; step++) {
		a = recycle_action(ns, &state, with_dm);
		at = step;
		why = recycle_do(ns, a, ++*when, label, sizeof(label));
		TH_LOG("seed %u step %d: %s", seed, step, label);
		snprintf(done + strlen(done), sizeof(done) - strlen(done), "%s%s",
			 done[0] ? " " : "", label);
		if (!why)
			why = ns_check_map_sync(ns, wrong, sizeof(wrong));
	}
	if (!why)
		return NULL;
	snprintf(buf, len, "seed %u%s step %d (every namespace enabled, then: %s): %s",
		 seed, with_dm ? " (dm)" : "", at, done[0] ? done : "nothing", why);
	return buf;
}

TEST_F_TIMEOUT(pmem, map_sync_follows_reenable, 240)
{
	struct toggled_ns ns[RECYCLE_NS] = {
		{ .label = "e820", .kind = E820, .want = 0 },
		{ .label = "virtio", .kind = VIRTIO_MAIN, .want = EOPNOTSUPP },
	};
	unsigned int seed = recycle_seed(), when = 0;
	char report[768], wrong[256];
	const char *why = NULL, *undo;
	cpu_set_t cpu0;
	int i, s;

	NEED_MAIN();
	ASSERT_TRUE(self->have_e820) TH_LOG("no pmem device on the e820 bus (memmap=)");
	ns[0].dev = self->e820;
	ns[1].dev = self->vmain;
	/*
	 * Unbind frees the dax_device from an RCU callback on the CPU that
	 * unbound, bind allocates on the CPU that binds: on one CPU, the
	 * slab's per-CPU free list hands the object freed last to the next bind.
	 */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0))
		TH_LOG("cannot run on CPU 0 only: %s", strerror(errno));
	if (is_mounted())
		umount(MNT);
	/*
	 * ext4 on each disk, made once (it outlives disable and enable); on
	 * the main device only when it has none: the ext4 there holds
	 * dax_write_persists_virtio's file, which the host reads after the boot.
	 */
	for (i = 0; i < RECYCLE_NS; i++) {
		ASSERT_EQ(0, pmem_parent(&ns[i].dev, "namespace", ns[i].ns, sizeof(ns[i].ns)))
			TH_LOG("no namespace above %s", ns[i].dev.name);
		ns[i].enabled = 1;
		if (ns[i].kind == VIRTIO_MAIN && !mount_existing_dax("ext4", &ns[i].dev)) {
			umount(MNT);
			continue;
		}
		ASSERT_EQ(0, make_fs("ext4", ns[i].dev.path))
			TH_LOG("mkfs.ext4 on %s failed", ns[i].dev.path);
	}
	for (s = 0; !why && s < RECYCLE_SEQS + RECYCLE_DM_SEQS; s++)
		why = recycle_sequence(_metadata, ns, seed + s, s >= RECYCLE_SEQS, &when, report,
				       sizeof(report));
	/* every namespace back, also after a failure, for the tests after this one */
	undo = ns_enable_all(ns);
	if (!why && !undo && ns_check_map_sync(ns, wrong, sizeof(wrong))) {
		snprintf(report, sizeof(report), "every namespace enabled after the last sequence: %s",
			 wrong);
		why = report;
	}
	ASSERT_EQ(NULL, why) TH_LOG("%s (replay the run: vpmem_seed=%u)", why, seed);
	ASSERT_EQ(NULL, undo) TH_LOG("enabling every namespace again: %s", undo);
}

/*
 * Run last: nothing above may have warned, oopsed, corrupted a list or
 * slept in atomic context. Records a test already judged (claimed) are
 * not judged again.
 */
TEST_F_TIMEOUT(pmem, kernel_log_clean, 30)
{
	ASSERT_EQ(0, kmsg_judge(_metadata, open("/dev/kmsg", O_RDONLY | O_NONBLOCK), 0));
}

TEST_HARNESS_MAIN
