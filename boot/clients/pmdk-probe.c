// SPDX-License-Identifier: GPL-2.0
/*
 * What Debian's PMDK says about a file on a DAX filesystem: libpmem's
 * is_pmem for pmem_map_file() (1 only when the file could be mapped with
 * MAP_SYNC, so that CPU cache flushes alone make stores durable) and
 * libpmem2's store granularity (page: stores are durable only after
 * msync/fsync; cache line: after a cache flush). Then it persists TOKEN
 * at the start of the file through libpmem2's persist function, which is
 * msync on a page-granular mapping, for the host to find in the backing
 * file.
 *
 * Usage: pmdk-probe FILE TOKEN
 * Prints "is_pmem=N", "granularity=byte|cache-line|page" and
 * "persisted=TOKEN", a line each; exits 1 with the library's message when
 * a step fails.
 *
 * Usage: pmdk-probe --map-sync DEVICE
 * Maps the first 2 MiB of a device-dax character device shared with
 * MAP_SYNC, as an application would that flushes cache lines only, and
 * prints "map_sync=accepted" or "map_sync=refused" (EOPNOTSUPP); exits 1
 * for any other error. Dynamically linked on purpose: it runs in the guest from
 * the host's root (boot/clients/run-clients.sh), with Debian's libpmem and
 * libpmem2, not with a copy of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <libpmem2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PROBE_BYTES (4UL << 20)
#define DEVDAX_BYTES (2UL << 20)	/* device-dax's default alignment */

static const char *granularity_name(enum pmem2_granularity g)
{
	switch (g) {
	case PMEM2_GRANULARITY_BYTE:
		return "byte";
	case PMEM2_GRANULARITY_CACHE_LINE:
		return "cache-line";
	case PMEM2_GRANULARITY_PAGE:
		return "page";
	}
	return "unknown";
}

static int probe_libpmem(const char *file)
{
	size_t mapped;
	int is_pmem;
	void *addr;

	addr = pmem_map_file(file, PROBE_BYTES, PMEM_FILE_CREATE, 0600, &mapped, &is_pmem);
	if (!addr) {
		fprintf(stderr, "pmem_map_file %s: %s\n", file, pmem_errormsg());
		return -1;
	}
	printf("is_pmem=%d\n", is_pmem);
	pmem_unmap(addr, mapped);
	return 0;
}

/* map FILE with libpmem2, print its granularity, persist TOKEN through it */
static int probe_libpmem2(const char *file, const char *token)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct pmem2_map *map = NULL;
	pmem2_persist_fn persist;
	int fd, ret = -1;
	char *addr;

	fd = open(file, O_RDWR);
	if (fd < 0) {
		perror(file);
		return -1;
	}
	if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&src, fd) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_map_new(&map, cfg, src)) {
		fprintf(stderr, "libpmem2 on %s: %s\n", file, pmem2_errormsg());
		goto out;
	}
	printf("granularity=%s\n", granularity_name(pmem2_map_get_store_granularity(map)));
	addr = pmem2_map_get_address(map);
	persist = pmem2_get_persist_fn(map);
	memcpy(addr, token, strlen(token) + 1);
	persist(addr, strlen(token) + 1);
	printf("persisted=%s\n", token);
	ret = 0;
out:
	if (map)
		pmem2_map_delete(&map);
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	close(fd);
	return ret;
}

static int probe_map_sync(const char *device)
{
	int fd = open(device, O_RDWR);
	void *p;

	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", device, strerror(errno));
		return 1;
	}
	p = mmap(NULL, DEVDAX_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	close(fd);
	if (p != MAP_FAILED) {
		munmap(p, DEVDAX_BYTES);
		printf("map_sync=accepted\n");
		return 0;
	}
	if (errno == EOPNOTSUPP) {
		printf("map_sync=refused\n");
		return 0;
	}
	fprintf(stderr, "mmap of %s with MAP_SYNC: %s\n", device, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--map-sync"))
		return probe_map_sync(argv[2]);
	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE TOKEN | --map-sync DEVICE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (probe_libpmem(argv[1]) || probe_libpmem2(argv[1], argv[2]))
		return 1;
	return 0;
}
