// SPDX-License-Identifier: GPL-2.0
/*
 * xdpload - load the XDP program in section "xdp" of a BPF object and pin
 * it, so that every attach of it is the same program:
 *
 *   xdpload <object.o> <pin path on a bpf filesystem>
 *   ip link set dev X xdp pinned <pin path>
 *
 * guest/init loads the test programs this way at boot and holds each in the
 * kernel's XDP dispatcher (see there).  Only what the test programs need: a
 * little-endian ELF64 object whose "xdp" section has no relocations (no maps,
 * no calls to other functions) and a "license" section.  Raw bpf(2), no
 * libbpf, so that it builds static for every guest architecture.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char log_buf[65536];

static void die(const char *what)
{
	fprintf(stderr, "xdpload: %s\n", what);
	exit(1);
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	const Elf64_Shdr *sh, *shstr, *prog = NULL, *lic = NULL;
	const char *names, *base;
	union bpf_attr attr;
	struct stat st;
	char *buf;
	int fd, i;

	if (argc != 3)
		die("usage: xdpload <object.o> <pin path>");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die("cannot open the object");
	buf = malloc(st.st_size);
	if (!buf || read(fd, buf, st.st_size) != st.st_size)
		die("cannot read the object");
	close(fd);

	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;

	if ((size_t)st.st_size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_BPF ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > (uint64_t)st.st_size ||
	    eh->e_shstrndx >= eh->e_shnum)
		die("not a 64-bit BPF ELF object");
	sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
	shstr = &sh[eh->e_shstrndx];
	names = buf + shstr->sh_offset;
	for (i = 0; i < eh->e_shnum; i++) {
		const char *n = names + sh[i].sh_name;

		if (sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size)
			die("a section lies outside the object");
		if (!strcmp(n, "xdp"))
			prog = &sh[i];
		else if (!strcmp(n, "license"))
			lic = &sh[i];
		else if (!strcmp(n, ".relxdp"))
			die("section xdp has relocations (maps, calls): not supported");
	}
	if (!prog || !prog->sh_size || prog->sh_size % sizeof(struct bpf_insn))
		die("no program in section xdp");
	if (!lic || !lic->sh_size || buf[lic->sh_offset + lic->sh_size - 1])
		die("no license section");

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.insns = (uintptr_t)(buf + prog->sh_offset);
	attr.insn_cnt = prog->sh_size / sizeof(struct bpf_insn);
	attr.license = (uintptr_t)(buf + lic->sh_offset);
	attr.log_buf = (uintptr_t)log_buf;
	attr.log_size = sizeof(log_buf);
	attr.log_level = 1;
	/* The program's name: the object's file name, up to its first dot. */
	base = strrchr(argv[1], '/');
	base = base ? base + 1 : argv[1];
	for (i = 0; i < BPF_OBJ_NAME_LEN - 1 && base[i] && base[i] != '.'; i++)
		attr.prog_name[i] = base[i];
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		fprintf(stderr, "xdpload: BPF_PROG_LOAD: %s\n%s", strerror(errno), log_buf);
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uintptr_t)argv[2];
	attr.bpf_fd = fd;
	if (sys_bpf(BPF_OBJ_PIN, &attr) < 0) {
		fprintf(stderr, "xdpload: BPF_OBJ_PIN %s: %s (is its directory on a bpf filesystem?)\n",
			argv[2], strerror(errno));
		return 1;
	}
	return 0;
}
