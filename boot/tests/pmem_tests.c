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
 * Lines "# vpmem-fsyncs: N" count the successful fsyncs issued to the main
 * device, so the host can check that each reached the host (QEMU trace).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
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
#define STORM_WRITERS 64
#define STORM_ROUNDS 8
#define COUNTED_FSYNCS 32
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

TEST_F_TIMEOUT(pmem, host_flush_error_reaches_guest, 60)
{
	char block[4096] = "must fail";
	int fd, rc, err;

	if (!self->have_faulty)
		SKIP(return, "no faulty virtio-pmem device");
	fd = open(self->vfaulty.path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(block), pwrite(fd, block, sizeof(block), 0));
	rc = fsync(fd);
	err = errno;
	close(fd);
	ASSERT_EQ(-1, rc) TH_LOG("fsync succeeded although the host fsync failed");
	ASSERT_EQ(EIO, err) TH_LOG("fsync: %s, want EIO", strerror(err));
}

struct storm_writer {
	const char *path;
	int index;
	int failures;
	int fsyncs;
};

static void *storm_write(void *arg)
{
	struct storm_writer *w = arg;
	char block[4096];
	int fd, round;

	fd = open(w->path, O_RDWR);
	if (fd < 0) {
		w->failures++;
		return NULL;
	}
	for (round = 0; round < STORM_ROUNDS; round++) {
		memset(block, w->index + round, sizeof(block));
		if (pwrite(fd, block, sizeof(block),
			   BLK_PATTERN_OFFSET + 2 * PATTERN_LEN +
			   (off_t)w->index * sizeof(block)) != sizeof(block) ||
		    fsync(fd))
			w->failures++;
		else
			w->fsyncs++;
	}
	close(fd);
	return NULL;
}

/* More concurrent flushes than the virtqueue has slots, all must succeed. */
TEST_F_TIMEOUT(pmem, flush_storm_virtio, 240)
{
	struct storm_writer w[STORM_WRITERS];
	pthread_t t[STORM_WRITERS];
	int i, failures = 0, fsyncs = 0;

	NEED_MAIN();
	for (i = 0; i < STORM_WRITERS; i++) {
		w[i] = (struct storm_writer){ .path = self->vmain.path, .index = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, storm_write, &w[i]));
	}
	for (i = 0; i < STORM_WRITERS; i++) {
		pthread_join(t[i], NULL);
		failures += w[i].failures;
		fsyncs += w[i].fsyncs;
	}
	report_fsyncs(_metadata, fsyncs);
	ASSERT_EQ(0, failures) TH_LOG("%d of %d writes or fsyncs failed", failures,
				      STORM_WRITERS * STORM_ROUNDS);
}

static int wait_for_main(struct pmem_dev *dev, int present)
{
	int i;

	for (i = 0; i < 100; i++) {
		if ((find_pmem(VIRTIO_MAIN, dev) == 0) == present)
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}

TEST_F_TIMEOUT(pmem, unbind_rebind_virtio, 120)
{
	const char *drv = "/sys/bus/virtio/drivers/virtio_pmem";
	char path[128], block[4096] = "after rebind";
	struct pmem_dev again;
	int fd;

	NEED_MAIN();
	ASSERT_NE(self->vmain.virtio[0], '\0');
	snprintf(path, sizeof(path), "%s/unbind", drv);
	ASSERT_EQ(0, write_small_file(path, self->vmain.virtio)) TH_LOG("unbind %s", self->vmain.virtio);
	ASSERT_EQ(0, wait_for_main(&again, 0)) TH_LOG("%s still there after unbind", self->vmain.name);
	snprintf(path, sizeof(path), "%s/bind", drv);
	ASSERT_EQ(0, write_small_file(path, self->vmain.virtio)) TH_LOG("bind %s", self->vmain.virtio);
	ASSERT_EQ(0, wait_for_main(&again, 1)) TH_LOG("no virtio-pmem device after rebind");
	fd = open(again.path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(block), pwrite(fd, block, sizeof(block), BLK_PATTERN_OFFSET + PATTERN_LEN));
	ASSERT_EQ(0, fsync(fd)) TH_LOG("fsync after rebind: %s", strerror(errno));
	report_fsyncs(_metadata, 1);
	close(fd);
}

/* Run last: nothing above may have warned, oopsed or corrupted a list. */
TEST_F_TIMEOUT(pmem, kernel_log_clean, 30)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "Oops", "list_add corruption",
		"list_del corruption", "circular locking", "inconsistent lock state",
		"sleeping function called from invalid context", "blocked for more than",
		"general protection fault", "Call Trace",
	};
	char rec[2048];
	int fd, found = 0;
	size_t i;
	ssize_t n;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = '\0';
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(rec, bad[i])) {
				TH_LOG("kernel log: %s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
				found++;
				break;
			}
		}
	}
	close(fd);
	ASSERT_EQ(0, found);
}

TEST_HARNESS_MAIN
