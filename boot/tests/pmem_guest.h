/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the in-guest programs (pmem_tests.c, pmem_debug.c)
 * share: finding the pmem devices boot/run-qemu.sh gives the guest by their
 * nvdimm bus, making a DAX filesystem on one, unbinding and binding the
 * virtio-pmem driver, the 64-writer flush storm, and judging the kernel log.
 * Include kselftest_harness.h first: the log judge reports with TH_LOG.
 */
#ifndef PMEM_GUEST_H
#define PMEM_GUEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

#define MIB (1024UL * 1024UL)
#define MAIN_MIN_BYTES (256 * MIB)
#define FS_SIZE_MIB 400			/* filesystems leave the tail free */
#define MNT "/mnt"
#define VIRTIO_PMEM_DRV "/sys/bus/virtio/drivers/virtio_pmem"
#define STORM_WRITERS 64
#define STORM_ROUNDS 8
#define BLOCK_BYTES 4096

enum pmem_kind { E820, VIRTIO_MAIN, VIRTIO_FAULTY };

struct pmem_dev {
	char name[32];		/* pmemN */
	char path[64];		/* /dev/pmemN */
	char virtio[32];	/* virtioN for virtio-pmem devices */
	unsigned long long bytes;
};

static inline int read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static inline int write_small_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Copy the path component starting with prefix (e.g. "ndbus") into out. */
static inline int path_component(const char *path, const char *prefix,
				 char *out, size_t len, size_t *end)
{
	const char *p = strstr(path, prefix);
	size_t n;

	while (p && p != path && p[-1] != '/')
		p = strstr(p + 1, prefix);
	if (!p)
		return -1;
	n = strcspn(p, "/");
	if (n >= len)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	if (end)
		*end = (size_t)(p - path) + n;
	return 0;
}

static inline enum pmem_kind classify(const char *provider,
				      unsigned long long bytes)
{
	if (strcmp(provider, "virtio-pmem"))
		return E820;
	return bytes >= MAIN_MIN_BYTES ? VIRTIO_MAIN : VIRTIO_FAULTY;
}

/* Find the pmem block device of a kind; 0 if found. */
static inline int find_pmem(enum pmem_kind kind, struct pmem_dev *dev)
{
	char link[PATH_MAX], real[PATH_MAX], buf[256], bus[32];
	DIR *dir = opendir("/sys/block");
	struct dirent *de;
	int found = -1;
	size_t end;

	if (!dir)
		return -1;
	while (found && (de = readdir(dir))) {
		if (strncmp(de->d_name, "pmem", 4))
			continue;
		snprintf(link, sizeof(link), "/sys/block/%s/device", de->d_name);
		if (!realpath(link, real) ||
		    path_component(real, "ndbus", bus, sizeof(bus), &end))
			continue;
		real[end] = '\0';
		snprintf(link, sizeof(link), "%s/provider", real);
		if (read_small_file(link, buf, sizeof(buf)))
			continue;
		snprintf(dev->name, sizeof(dev->name), "%s", de->d_name);
		snprintf(dev->path, sizeof(dev->path), "/dev/%s", de->d_name);
		snprintf(link, sizeof(link), "/sys/block/%s/size", de->d_name);
		{
			char size[64];

			if (read_small_file(link, size, sizeof(size)))
				continue;
			dev->bytes = strtoull(size, NULL, 10) * 512;
		}
		if (classify(buf, dev->bytes) != kind)
			continue;
		dev->virtio[0] = '\0';
		path_component(real, "virtio", dev->virtio, sizeof(dev->virtio), NULL);
		found = 0;
	}
	closedir(dir);
	return found;
}

static inline int run_cmd(char *const argv[])
{
	int status, fd;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline int make_fs(const char *fs, const char *dev)
{
	char size[32];

	if (!strcmp(fs, "xfs")) {
		char *argv[] = { "/sbin/mkfs.xfs", "-f", "-q", "-d", size,
				 (char *)dev, NULL };

		snprintf(size, sizeof(size), "size=%dm", FS_SIZE_MIB);
		return run_cmd(argv);
	} else {
		char *argv[] = { "/sbin/mke2fs", "-F", "-q", "-t", "ext4",
				 "-b", "4096", (char *)dev, size, NULL };

		snprintf(size, sizeof(size), "%dM", FS_SIZE_MIB);
		return run_cmd(argv);
	}
}

static inline int is_mounted(void)
{
	struct stat mnt, root;

	return !stat(MNT, &mnt) && !stat("/", &root) && mnt.st_dev != root.st_dev;
}

/* Mount the filesystem already on dev with dax=always; NULL or a short reason. */
static inline const char *mount_existing_dax(const char *fs, const struct pmem_dev *dev)
{
	mkdir(MNT, 0755);
	if (is_mounted())
		umount(MNT);
	if (mount(dev->path, MNT, fs, 0, "dax=always"))
		return "mount -o dax=always failed";
	return NULL;
}

/* mkfs and mount with dax=always; returns 0 or a short reason. */
static inline const char *mount_dax(const char *fs, const struct pmem_dev *dev)
{
	mkdir(MNT, 0755);
	if (is_mounted())
		umount(MNT);
	if (make_fs(fs, dev->path))
		return "mkfs failed";
	return mount_existing_dax(fs, dev);
}

static inline int file_is_dax(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx))
		return 0;
	return !!(stx.stx_attributes & STATX_ATTR_DAX);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The sysfs device (e.g. "region1", "namespace1.0") a pmem disk sits on. */
static inline int pmem_parent(const struct pmem_dev *dev, const char *prefix,
			      char *out, size_t len)
{
	char link[PATH_MAX], real[PATH_MAX];

	snprintf(link, sizeof(link), "/sys/block/%s/device", dev->name);
	if (!realpath(link, real))
		return -1;
	return path_component(real, prefix, out, len, NULL);
}

/*
 * Wait up to 10 s for a pmem disk of a kind to appear (found again in dev:
 * its name may have changed) or to go.
 */
static inline int wait_for_pmem(enum pmem_kind kind, struct pmem_dev *dev, int present)
{
	int i;

	for (i = 0; i < 100; i++) {
		if ((find_pmem(kind, dev) == 0) == present)
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}

static inline int wait_for_main(struct pmem_dev *dev, int present)
{
	return wait_for_pmem(VIRTIO_MAIN, dev, present);
}

/*
 * Unbind the virtio-pmem driver from virtioN and bind it again: the device
 * is reset in between. Finds the main device again in dev; NULL on
 * success, else what went wrong.
 */
static inline const char *rebind_virtio(const char *virtio, struct pmem_dev *dev)
{
	if (write_small_file(VIRTIO_PMEM_DRV "/unbind", virtio))
		return "unbind failed";
	if (wait_for_main(dev, 0))
		return "the pmem disk is still there after unbind";
	if (write_small_file(VIRTIO_PMEM_DRV "/bind", virtio))
		return "bind failed";
	if (wait_for_main(dev, 1))
		return "no pmem disk after bind";
	return NULL;
}

struct storm_writer {
	const char *path;
	off_t base;
	int index;
	int failures;
	int fsyncs;
};

static inline void *storm_write(void *arg)
{
	struct storm_writer *w = arg;
	char block[BLOCK_BYTES];
	int fd, round;

	fd = open(w->path, O_RDWR);
	if (fd < 0) {
		w->failures++;
		return NULL;
	}
	for (round = 0; round < STORM_ROUNDS; round++) {
		memset(block, w->index + round, sizeof(block));
		if (pwrite(fd, block, sizeof(block),
			   w->base + (off_t)w->index * sizeof(block)) != sizeof(block) ||
		    fsync(fd))
			w->failures++;
		else
			w->fsyncs++;
	}
	close(fd);
	return NULL;
}

/*
 * STORM_WRITERS threads, each STORM_ROUNDS times a 4 KiB pwrite at its own
 * block from base and an fsync, all at once: more concurrent flushes than
 * the virtqueue has slots. Returns the failed writes and fsyncs (-1 if a
 * thread could not start); *fsyncs counts the successful fsyncs.
 */
static inline int run_storm(const char *path, off_t base, int *fsyncs)
{
	struct storm_writer w[STORM_WRITERS];
	pthread_t t[STORM_WRITERS];
	int i, started, failures = 0;

	*fsyncs = 0;
	for (started = 0; started < STORM_WRITERS; started++) {
		w[started] = (struct storm_writer){ .path = path, .base = base,
						    .index = started };
		if (pthread_create(&t[started], NULL, storm_write, &w[started]))
			break;
	}
	for (i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		failures += w[i].failures;
		*fsyncs += w[i].fsyncs;
	}
	return started == STORM_WRITERS ? failures : -1;
}

/*
 * The kernel log. A test that owns what the kernel logs while it runs
 * watches from its start (kmsg_watch), judges what came since and claims
 * that range of records (kmsg_judge with claim); a later whole-log judge
 * skips claimed records, so each record is judged once, by the test that
 * was running when it was logged.
 */
#define KMSG_CLAIMED "/tmp/kmsg-claimed"
#define KMSG_MAX_CLAIMS 32

/* Open /dev/kmsg positioned after the last record logged so far. */
static inline int kmsg_watch(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int kmsg_claimed(unsigned long long seq)
{
	static unsigned long long first[KMSG_MAX_CLAIMS], last[KMSG_MAX_CLAIMS];
	static int n = -1;
	FILE *f;
	int i;

	if (n < 0) {
		n = 0;
		f = fopen(KMSG_CLAIMED, "r");
		while (f && n < KMSG_MAX_CLAIMS &&
		       fscanf(f, "%llu %llu", &first[n], &last[n]) == 2)
			n++;
		if (f)
			fclose(f);
	}
	for (i = 0; i < n; i++)
		if (seq >= first[i] && seq <= last[i])
			return 1;
	return 0;
}

/*
 * Judge the records readable from fd (a kmsg_watch() fd: those logged
 * since; a fresh open of /dev/kmsg: all), each bad one logged. With claim,
 * note the range read as judged; without, skip claimed records. Returns
 * the number of bad records, -1 if fd is not open.
 */
static inline int kmsg_judge(struct __test_metadata *_metadata, int fd, int claim)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "Oops", "list_add corruption",
		"list_del corruption", "circular locking", "inconsistent lock state",
		"recursive locking", "bad unlock balance", "held lock freed",
		"lock held when returning", "suspicious RCU usage",
		"sleeping function called from invalid context",
		"scheduling while atomic", "blocked for more than",
		"general protection fault", "Call Trace",
		/* slub_debug=FZP (the debug profile) */
		"Poison overwritten", "Redzone overwritten", "Padding overwritten",
		"padding overwritten", "Freepointer corrupt", "Object already free",
	};
	unsigned long long seq, first = 0, last = 0;
	char rec[2048], *text;
	int found = 0, any = 0;
	size_t i;
	ssize_t n;
	FILE *f;

	if (fd < 0)
		return -1;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = '\0';
		seq = strtoull(strchr(rec, ',') ? strchr(rec, ',') + 1 : rec, NULL, 10);
		if (!any)
			first = seq;
		last = seq;
		any = 1;
		if (!claim && kmsg_claimed(seq))
			continue;
		text = strchr(rec, ';') ? strchr(rec, ';') + 1 : rec;
		text[strcspn(text, "\n")] = '\0';
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			if (strstr(text, bad[i])) {
				TH_LOG("kernel log: %s", text);
				found++;
				break;
			}
		}
	}
	close(fd);
	if (claim && any) {
		f = fopen(KMSG_CLAIMED, "a");
		if (f) {
			fprintf(f, "%llu %llu\n", first, last);
			fclose(f);
		}
	}
	return found;
}

#endif /* PMEM_GUEST_H */
