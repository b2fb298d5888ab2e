// SPDX-License-Identifier: GPL-2.0
/*
 * The driver benchmark, run in the guest by boot/init when the kernel
 * command line has vpmem_mode=bench (ci/bench.sh --driver boots the series'
 * tip and the reference with it). On ext4 with dax=always on the main
 * virtio-pmem device:
 * - fsync latency: FSYNC_SAMPLES times a 4 KiB pwrite and an fsync, each
 *   fsync timed; median and 99th percentile;
 * - flush throughput: 1, 8 and 64 threads, each on its own file, doing
 *   pwrite + fsync for THROUGHPUT_MS; fsyncs per second;
 * - DAX bandwidth: memcpy into and out of a DAX_BYTES MAP_SHARED mapping.
 * Each figure is a TAP comment line "# bench: KEY VALUE" the host reads;
 * the tests fail if an fsync or a mapping fails, so a figure is never
 * taken from a run that went wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "kselftest_harness.h"
#include "pmem_guest.h"

#define FSYNC_SAMPLES 1000
#define BLOCK 4096
#define THROUGHPUT_MS 3000
#define MAX_WRITERS 64
#define DAX_BYTES (64 * MIB)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void report(const char *key, double value)
{
	printf("# bench: %s %.1f\n", key, value);
	fflush(stdout);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One 4 KiB pwrite and an fsync; the fsync's time in ns, 0 on error. */
static uint64_t write_and_fsync(int fd, const char *buf, off_t off)
{
	uint64_t start, elapsed;

	if (pwrite(fd, buf, BLOCK, off) != BLOCK)
		return 0;
	start = now_ns();
	if (fsync(fd))
		return 0;
	elapsed = now_ns() - start;
	return elapsed ? elapsed : 1;
}

struct writer {
	int fd;
	uint64_t deadline;
	long flushes;
	int failed;
	char buf[BLOCK];
};

static void *writer_loop(void *arg)
{
	struct writer *w = arg;
	off_t off = 0;

	while (now_ns() < w->deadline) {
		if (!write_and_fsync(w->fd, w->buf, off)) {
			w->failed = errno ? errno : EIO;
			break;
		}
		w->flushes++;
		off = (off + BLOCK) % (64 * BLOCK);
	}
	return NULL;
}

FIXTURE(bench) {
	struct pmem_dev dev;
};

FIXTURE_SETUP(bench)
{
	const char *why;

	if (find_pmem(VIRTIO_MAIN, &self->dev))
		SKIP(return, "no virtio-pmem device");
	why = mount_dax("ext4", &self->dev);
	ASSERT_EQ(NULL, why) TH_LOG("%s: %s", self->dev.path, why);
}

FIXTURE_TEARDOWN(bench)
{
	if (is_mounted())
		umount(MNT);
}

TEST_F_TIMEOUT(bench, fsync_latency, 300)
{
	static uint64_t ns[FSYNC_SAMPLES];
	char buf[BLOCK];
	int fd, i;

	memset(buf, 0xa5, sizeof(buf));
	fd = open(MNT "/latency.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	for (i = 0; i < FSYNC_SAMPLES; i++) {
		ns[i] = write_and_fsync(fd, buf, (off_t)(i % 64) * BLOCK);
		ASSERT_NE(0, ns[i]) TH_LOG("fsync %d failed: %s", i, strerror(errno));
	}
	close(fd);
	qsort(ns, FSYNC_SAMPLES, sizeof(ns[0]), cmp_u64);
	report("fsync_samples", FSYNC_SAMPLES);
	report("fsync_p50_us", ns[FSYNC_SAMPLES / 2] / 1000.0);
	report("fsync_p99_us", ns[FSYNC_SAMPLES * 99 / 100] / 1000.0);
}

static void run_writers(struct __test_metadata *_metadata, int nr)
{
	static struct writer w[MAX_WRITERS];
	pthread_t tid[MAX_WRITERS];
	uint64_t start, deadline;
	char path[64], key[32];
	long total = 0;
	int i;

	deadline = now_ns() + THROUGHPUT_MS * 1000000ULL;
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), MNT "/writer-%d.dat", i);
		w[i] = (struct writer){ .deadline = deadline };
		memset(w[i].buf, i, BLOCK);
		w[i].fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
		ASSERT_LE(0, w[i].fd);
	}
	start = now_ns();
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, writer_loop, &w[i]));
	for (i = 0; i < nr; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < nr; i++) {
		close(w[i].fd);
		EXPECT_EQ(0, w[i].failed) TH_LOG("writer %d: %s", i, strerror(w[i].failed));
		total += w[i].flushes;
	}
	snprintf(key, sizeof(key), "flushes_per_s_%d", nr);
	report(key, total * 1e9 / (double)(now_ns() - start));
}

TEST_F_TIMEOUT(bench, flush_throughput_1, 60)
{
	run_writers(_metadata, 1);
}

TEST_F_TIMEOUT(bench, flush_throughput_8, 60)
{
	run_writers(_metadata, 8);
}

TEST_F_TIMEOUT(bench, flush_throughput_64, 60)
{
	run_writers(_metadata, MAX_WRITERS);
}

TEST_F_TIMEOUT(bench, dax_bandwidth, 300)
{
	char *map, *buf;
	uint64_t t0, t1, t2;
	int fd;

	buf = malloc(DAX_BYTES);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, DAX_BYTES);
	fd = open(MNT "/bandwidth.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, DAX_BYTES));
	ASSERT_TRUE(file_is_dax(MNT "/bandwidth.dat"));
	map = mmap(NULL, DAX_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* The first pass faults the mapping in; time the second. */
	memcpy(map, buf, DAX_BYTES);
	t0 = now_ns();
	memcpy(map, buf, DAX_BYTES);
	t1 = now_ns();
	memcpy(buf, map, DAX_BYTES);
	t2 = now_ns();
	ASSERT_EQ(0, msync(map, DAX_BYTES, MS_SYNC));
	ASSERT_EQ(0x5a, map[DAX_BYTES - 1]);
	munmap(map, DAX_BYTES);
	close(fd);
	free(buf);
	report("dax_write_mib_s", DAX_BYTES / (double)MIB * 1e9 / (double)(t1 - t0));
	report("dax_read_mib_s", DAX_BYTES / (double)MIB * 1e9 / (double)(t2 - t1));
}

TEST_HARNESS_MAIN
