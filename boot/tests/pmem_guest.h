/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the in-guest programs (pmem_tests.c, pmem_bench.c) share: finding
 * the pmem devices boot/run-qemu.sh gives the guest by their nvdimm bus,
 * and making a DAX filesystem on one.
 */
#ifndef PMEM_GUEST_H
#define PMEM_GUEST_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

#define MIB (1024UL * 1024UL)
#define MAIN_MIN_BYTES (256 * MIB)
#define FS_SIZE_MIB 400			/* filesystems leave the tail free */
#define MNT "/mnt"

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

/* mkfs and mount with dax=always; returns 0 or a short reason. */
static inline const char *mount_dax(const char *fs, const struct pmem_dev *dev)
{
	mkdir(MNT, 0755);
	if (is_mounted())
		umount(MNT);
	if (make_fs(fs, dev->path))
		return "mkfs failed";
	if (mount(dev->path, MNT, fs, 0, "dax=always"))
		return "mount -o dax=always failed";
	return NULL;
}

static inline int file_is_dax(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx))
		return 0;
	return !!(stx.stx_attributes & STATX_ATTR_DAX);
}

#endif /* PMEM_GUEST_H */
