// SPDX-License-Identifier: GPL-2.0
/*
 * manactl - the guest's view of bqlkit's emulated MANA VF test port.
 *
 *   manactl DEV dump              every knob and counter, key=value lines,
 *                                 then one line per queue ever created:
 *                                 "sq3 live=1 created=2 doorbells=N ..."
 *   manactl DEV get NAME          one knob or counter
 *   manactl DEV set NAME VALUE    one knob (rate_mbps, tx_cqe_delay_us,
 *                                 drop_tx_cqes)
 *   manactl DEV list              PCI address of each emulated MANA VF
 *
 * DEV is a network interface (eth0; looked up in this network namespace's
 * /sys) or a PCI address (0000:00:03.0).  The port is a vendor-specific
 * capability in PCI config space (lab/qemu/hw/net/mana_debug.h describes it):
 * config space stays reachable while the mana driver owns the BARs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lab/qemu/hw/net/mana_debug.h"
#include "../../lab/qemu/hw/net/mana_gdma.h"

#define PCI_DIR "/sys/bus/pci/devices"
#define USAGE "usage: manactl DEV dump | get NAME | set NAME VALUE | ring TYPE ID PAGE; manactl list"

static int cfg_fd = -1;
static int cap;

static void die(const char *msg)
{
	fprintf(stderr, "manactl: %s\n", msg);
	exit(1);
}

static uint32_t cfg_read32(int off)
{
	uint32_t v;

	if (pread(cfg_fd, &v, 4, off) != 4)
		die("cannot read PCI config space");
	return v;
}

static uint8_t cfg_read8(int off)
{
	uint8_t v;

	if (pread(cfg_fd, &v, 1, off) != 1)
		die("cannot read PCI config space");
	return v;
}

static void cfg_write32(int off, uint32_t v)
{
	if (pwrite(cfg_fd, &v, 4, off) != 4)
		die("cannot write PCI config space (root?)");
}

static uint64_t port_get(uint32_t index)
{
	uint64_t lo, hi;

	cfg_write32(cap + MANA_DBG_INDEX, index);
	lo = cfg_read32(cap + MANA_DBG_DATA_LO);
	hi = cfg_read32(cap + MANA_DBG_DATA_HI);
	return hi << 32 | lo;
}

static void port_set(uint32_t index, uint32_t val)
{
	cfg_write32(cap + MANA_DBG_INDEX, index);
	cfg_write32(cap + MANA_DBG_DATA_LO, val);
}

static int read_hex(const char *path, unsigned int *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return 0;
	ok = fscanf(f, "%x", v) == 1;
	fclose(f);
	return ok;
}

static int is_mana(const char *addr)
{
	char p[PATH_MAX + 64];
	unsigned int vendor, device;

	snprintf(p, sizeof(p), PCI_DIR "/%s/vendor", addr);
	if (!read_hex(p, &vendor))
		return 0;
	snprintf(p, sizeof(p), PCI_DIR "/%s/device", addr);
	if (!read_hex(p, &device))
		return 0;
	return vendor == 0x1414 && device == 0x00ba;
}

static void list(void)
{
	DIR *d = opendir(PCI_DIR);
	struct dirent *e;

	if (!d)
		die("no " PCI_DIR);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && is_mana(e->d_name))
			printf("%s\n", e->d_name);
	closedir(d);
}

/* The PCI address of DEV: itself, or where /sys/class/net/DEV/device points. */
static const char *resolve(const char *dev)
{
	static char buf[PATH_MAX];
	char link[PATH_MAX];
	const char *slash;
	ssize_t n;

	if (strchr(dev, ':'))
		return dev;
	snprintf(link, sizeof(link), "/sys/class/net/%s/device", dev);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		die("no such interface (or it has no PCI device)");
	buf[n] = 0;
	slash = strrchr(buf, '/');
	return slash ? slash + 1 : buf;
}

static void open_port(const char *dev)
{
	const char *addr = resolve(dev);
	char p[PATH_MAX + 64];
	int guard = 48;

	if (!is_mana(addr))
		die("not an emulated MANA VF (vendor 0x1414, device 0x00ba)");
	snprintf(p, sizeof(p), PCI_DIR "/%s/config", addr);
	cfg_fd = open(p, O_RDWR);
	if (cfg_fd < 0)
		die("cannot open the device's PCI config space (root?)");
	/* Walk the capability list for the vendor capability. */
	cap = cfg_read8(0x34) & ~3;
	while (cap && guard--) {
		if (cfg_read8(cap) == 0x09 && cfg_read8(cap + 2) == MANA_DBG_CAP_LEN)
			break;
		cap = cfg_read8(cap + 1) & ~3;
	}
	if (!cap || port_get(0) != MANA_DBG_MAGIC)
		die("no bqlkit test port on this device (not the kit's QEMU model?)");
}

struct name {
	uint32_t index;
	const char *name;
	int knob;
};

static const struct name names[] = {
#define KNOB(i, n, d) { i, #n, 1 },
	MANA_DBG_KNOBS(KNOB)
#undef KNOB
#define COUNTER(i, n) { i, #n, 0 },
	MANA_DBG_COUNTERS(COUNTER)
#undef COUNTER
};

static const struct name *lookup(const char *n)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].name, n))
			return &names[i];
	return NULL;
}

static void dump(void)
{
	static const char *const qnames[] = MANA_DBG_QTYPE_NAMES;
	static const char *const fields[] = {
#define FIELD(f, n) [f] = #n,
		MANA_DBG_QUEUE_FIELDS(FIELD)
#undef FIELD
	};
	size_t i;
	int t, id, f;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("%s=%" PRIu64 "\n", names[i].name, port_get(names[i].index));
	for (t = 0; t < MANA_DBG_QTYPES; t++) {
		for (id = 0; id < MANA_DBG_QIDS; id++) {
			if (!port_get(MANA_DBG_QUEUE(t, id, 1)))
				continue;
			printf("%s%d", qnames[t], id);
			for (f = 0; f < (int)(sizeof(fields) / sizeof(fields[0])); f++)
				printf(" %s=%" PRIu64, fields[f],
				       port_get(MANA_DBG_QUEUE(t, id, f)));
			printf("\n");
		}
	}
}

/*
 * A doorbell write through BAR0 (sysfs resource0), at the GDMA layout's
 * offsets the model decodes (mana_gdma.h): the doorbell pages start at
 * the u64 register MANA_REG_DB_PAGE_OFFSET, each MANA_REG_DB_PAGE_SIZE's
 * u32 long.
 */
static void ring(const char *dev, const char *type, unsigned long id,
		 unsigned long page)
{
	static const struct { const char *name; uint32_t off, idbits; int arm; } t[] = {
		{ "sq", MANA_DB_SQ, 24, 0 }, { "rq", MANA_DB_RQ, 24, 0 },
		{ "cq", MANA_DB_CQ, 24, 1 }, { "eq", MANA_DB_EQ, 16, 1 },
	};
	char p[PATH_MAX + 64];
	volatile uint8_t *bar;
	uint64_t base, size, val;
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].name, type))
			break;
	if (i == sizeof(t) / sizeof(t[0]))
		die("ring: TYPE is sq, rq, cq or eq");
	if (id >> t[i].idbits)
		die("ring: ID too large for that queue type");
	snprintf(p, sizeof(p), PCI_DIR "/%s/resource0", resolve(dev));
	fd = open(p, O_RDWR | O_SYNC);
	if (fd < 0 || fstat(fd, &st))
		die("cannot open the device's BAR0 (root?)");
	bar = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (bar == MAP_FAILED)
		die("cannot map the device's BAR0");
	base = *(volatile uint64_t *)(bar + MANA_REG_DB_PAGE_OFFSET);
	size = *(volatile uint32_t *)(bar + MANA_REG_DB_PAGE_SIZE);
	if (!size || base + (page + 1) * size > (uint64_t)st.st_size)
		die("ring: PAGE is beyond BAR0's doorbell pages");
	val = id | (uint64_t)t[i].arm << 63;
	*(volatile uint64_t *)(bar + base + page * size + t[i].off) = val;
	munmap((void *)bar, st.st_size);
	close(fd);
}

int main(int argc, char **argv)
{
	const struct name *n;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		list();
		return 0;
	}
	if (argc < 3)
		die(USAGE);
	open_port(argv[1]);
	if (!strcmp(argv[2], "dump") && argc == 3) {
		dump();
	} else if (!strcmp(argv[2], "get") && argc == 4) {
		n = lookup(argv[3]);
		if (!n)
			die("unknown knob or counter");
		printf("%" PRIu64 "\n", port_get(n->index));
	} else if (!strcmp(argv[2], "set") && argc == 5) {
		n = lookup(argv[3]);
		if (!n || !n->knob)
			die("not a knob (rate_mbps, tx_cqe_delay_us, drop_tx_cqes)");
		port_set(n->index, strtoul(argv[4], NULL, 0));
	} else if (!strcmp(argv[2], "ring") && argc == 6) {
		ring(argv[1], argv[3], strtoul(argv[4], NULL, 0),
		     strtoul(argv[5], NULL, 0));
	} else {
		die(USAGE);
	}
	return 0;
}
