// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insncount - count the guest's executed instructions per vCPU, split
 * kernel/user, and write the running totals whenever the guest executes a
 * marker instruction.  A TCG plugin for the kit's QEMU (lab/build-qemu.sh
 * builds it as plugins/libinsncount.so against QEMU 7.2's plugin API).
 *
 *   -plugin DIR/plugins/libinsncount.so,out=FILE[,prof=FILE][,turn_us=N]
 *
 * Counting: one exec callback per translated block adds the block's number
 * of instructions to the counter of the vCPU that runs it (each vCPU writes
 * only its own counters, so MTTCG cannot lose updates as a shared inline
 * counter would).  A block whose start address has bit 63 set counts as
 * kernel (the upper half on x86-64 and arm64), else as user.  A block is
 * counted whole when it starts: an exception in its middle counts the
 * instructions after it too (rare; the same for every run).  Instructions,
 * not cycles: x86 "rep" string instructions count once per iteration (each
 * iteration re-enters the block).
 *
 * Marker (x86-64): the 8-byte no-op "nopl 0x42514cCC(%rax,%rax,1)", i.e. the
 * bytes 0f 1f 84 00 CC 4c 51 42, where CC is the command:
 *   0x00  mark: write the totals
 *   0x01  mark, and begin a profile (per block start address, per vCPU)
 *   0x02  mark, and write the profile since the last 0x01 to prof=FILE
 *   0x03  mark; from here single-threaded TCG moves to the next vCPU at
 *         least every turn_us of guest time (the kit QEMU's
 *         qemu_plugin_set_rr_kick_us(); without turn_us nothing changes)
 *   0x04  mark; QEMU's own turns again (kicks every 100 ms)
 * Nothing else executes these bytes: a compiler emits multi-byte nops with a
 * zero displacement.  The guest's tests/vm/vmmark.c executes them.
 *
 * Output (out=FILE, appended; else QEMU's log), one line per marker:
 *   insncount mark seq=N cmd=C vcpu=V switches=S k0=K u0=U k1=K u1=U ...
 * seq counts the markers from 1 in the order they executed (the guest keeps
 * the same count, so a guest-side label pairs with seq); kV/uV are vCPU V's
 * kernel/user instructions since QEMU started; vcpu is the one that ran the
 * marker; switches how often the running vCPU changed (see below).  At exit: "insncount exit k0=... u0=...".  The profile file gets,
 * per 0x02 marker, "# profile seq=N begin=M vcpus=V" and then one line per
 * block start address that ran since the 0x01 marker seq=M:
 *   ADDR TOTAL CPU0 CPU1 ...      (hex address, instruction counts)
 * Map ADDR to symbols with the guest's System.map/kallsyms (boot the guest
 * with nokaslr so that the kernel's addresses are System.map's).
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_LEN	8
#define CMD_MARK	0x00
#define CMD_PROF_BEGIN	0x01
#define CMD_PROF_END	0x02
#define CMD_TURNS_SHORT	0x03
#define CMD_TURNS_QEMU	0x04

static const uint8_t mark_bytes[MARK_LEN] = {
	0x0f, 0x1f, 0x84, 0x00, 0x00 /* command */, 0x4c, 0x51, 0x42
};

/* One vCPU's totals, alone on a cache line: only that vCPU writes them. */
struct vcpu_count {
	uint64_t kernel;
	uint64_t user;
} __attribute__((aligned(64)));

/* One translated block (profile mode): per-vCPU executions x size. */
struct block {
	uint64_t vaddr;
	uint32_t n_insns;
	bool kernel;
	uint64_t *count;	/* [nvcpus]; written by the running vCPU only */
	uint64_t *base;		/* [nvcpus]; the counts at profile begin */
};

static struct vcpu_count *counts;
/*
 * Changes of the running vCPU between two blocks: with one TCG thread for
 * all vCPUs (-icount, or -accel tcg,thread=single) the number of turns the
 * vCPUs took, so instructions / switches is how finely their execution is
 * interleaved.  Meaningless with MTTCG (a racy, approximate count there).
 */
static unsigned int last_vcpu = ~0u;
static uint64_t switches;
static int nvcpus;
static FILE *out;
static FILE *prof;
static GMutex lock;		/* out, prof, blocks, seq, prof_begin */
static GPtrArray *blocks;	/* struct block *, profile mode only */
static uint64_t seq;
static uint64_t prof_begin;
static uint64_t turn_us;	/* turn_us=N: the vCPU turn at marker 0x03 */

static void say(const char *s)
{
	if (out) {
		fputs(s, out);
		fflush(out);
	} else {
		qemu_plugin_outs(s);
	}
}

/* udata without profile: n_insns << 1 | kernel, no allocation per block */
static inline void note_vcpu(unsigned int vcpu)
{
	if (vcpu != last_vcpu) {
		last_vcpu = vcpu;
		switches++;
	}
}

static void count_packed(unsigned int vcpu, void *udata)
{
	uintptr_t v = (uintptr_t)udata;

	note_vcpu(vcpu);
	if (v & 1)
		counts[vcpu].kernel += v >> 1;
	else
		counts[vcpu].user += v >> 1;
}

static void count_block(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	note_vcpu(vcpu);
	b->count[vcpu] += b->n_insns;
	if (b->kernel)
		counts[vcpu].kernel += b->n_insns;
	else
		counts[vcpu].user += b->n_insns;
}

static GString *totals(void)
{
	GString *s = g_string_new(NULL);
	int i;

	for (i = 0; i < nvcpus; i++)
		g_string_append_printf(s, " k%d=%" PRIu64 " u%d=%" PRIu64, i,
				       __atomic_load_n(&counts[i].kernel, __ATOMIC_RELAXED), i,
				       __atomic_load_n(&counts[i].user, __ATOMIC_RELAXED));
	return s;
}

/* Caller holds lock. */
static void prof_start(void)
{
	guint i;
	int c;

	for (i = 0; i < blocks->len; i++) {
		struct block *b = g_ptr_array_index(blocks, i);

		for (c = 0; c < nvcpus; c++)
			b->base[c] = __atomic_load_n(&b->count[c], __ATOMIC_RELAXED);
	}
	prof_begin = seq;
}

/* Caller holds lock: the counts since prof_start(), summed per address. */
static void prof_write(void)
{
	GHashTable *by_addr = g_hash_table_new_full(g_int64_hash, g_int64_equal,
						    NULL, g_free);
	GHashTableIter it;
	gpointer key, val;
	guint i;
	int c;

	for (i = 0; i < blocks->len; i++) {
		struct block *b = g_ptr_array_index(blocks, i);
		uint64_t *sum = g_hash_table_lookup(by_addr, &b->vaddr);

		if (!sum) {
			sum = g_new0(uint64_t, nvcpus + 1);
			sum[0] = b->vaddr;
			g_hash_table_insert(by_addr, &sum[0], sum);
		}
		for (c = 0; c < nvcpus; c++)
			sum[c + 1] += __atomic_load_n(&b->count[c], __ATOMIC_RELAXED) - b->base[c];
	}
	fprintf(prof, "# profile seq=%" PRIu64 " begin=%" PRIu64 " vcpus=%d\n",
		seq, prof_begin, nvcpus);
	g_hash_table_iter_init(&it, by_addr);
	while (g_hash_table_iter_next(&it, &key, &val)) {
		uint64_t *sum = val, tot = 0;
		GString *s;

		for (c = 0; c < nvcpus; c++)
			tot += sum[c + 1];
		if (!tot)
			continue;
		s = g_string_new(NULL);
		g_string_printf(s, "%" PRIx64 " %" PRIu64, sum[0], tot);
		for (c = 0; c < nvcpus; c++)
			g_string_append_printf(s, " %" PRIu64, sum[c + 1]);
		fprintf(prof, "%s\n", s->str);
		g_string_free(s, TRUE);
	}
	fflush(prof);
	g_hash_table_destroy(by_addr);
}

static void on_mark(unsigned int vcpu, void *udata)
{
	unsigned int cmd = (uintptr_t)udata;
	GString *s;

	g_mutex_lock(&lock);
	seq++;
	s = totals();
	{
		g_autofree char *line = g_strdup_printf("insncount mark seq=%" PRIu64 " cmd=%u vcpu=%u switches=%" PRIu64 "%s\n",
							seq, cmd, vcpu, switches, s->str);
		say(line);
	}
	g_string_free(s, TRUE);
	if (blocks && cmd == CMD_PROF_BEGIN)
		prof_start();
	else if (blocks && cmd == CMD_PROF_END)
		prof_write();
	else if (turn_us && cmd == CMD_TURNS_SHORT)
		qemu_plugin_set_rr_kick_us(turn_us);
	else if (turn_us && cmd == CMD_TURNS_QEMU)
		qemu_plugin_set_rr_kick_us(0);
	g_mutex_unlock(&lock);
}

static bool is_mark(struct qemu_plugin_insn *insn, unsigned int *cmd)
{
	const uint8_t *p = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != MARK_LEN)
		return false;
	if (memcmp(p, mark_bytes, 4) || memcmp(p + 5, mark_bytes + 5, 3))
		return false;
	*cmd = p[4];
	return *cmd <= CMD_TURNS_QEMU;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	bool kernel = vaddr >> 63;
	unsigned int cmd;

	if (blocks) {
		struct block *b = g_new0(struct block, 1);

		b->vaddr = vaddr;
		b->n_insns = n;
		b->kernel = kernel;
		b->count = g_new0(uint64_t, nvcpus);
		b->base = g_new0(uint64_t, nvcpus);
		g_mutex_lock(&lock);
		g_ptr_array_add(blocks, b);
		g_mutex_unlock(&lock);
		qemu_plugin_register_vcpu_tb_exec_cb(tb, count_block,
						     QEMU_PLUGIN_CB_NO_REGS, b);
	} else {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, count_packed, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)(n << 1 | kernel));
	}
	/* Markers run in user space only */
	if (kernel)
		return;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (is_mark(insn, &cmd))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)cmd);
	}
}

static void on_atexit(qemu_plugin_id_t id, void *p)
{
	GString *s;

	g_mutex_lock(&lock);
	s = totals();
	{
		g_autofree char *line = g_strdup_printf("insncount exit markers=%" PRIu64 "%s\n",
							seq, s->str);
		say(line);
	}
	g_string_free(s, TRUE);
	if (out)
		fclose(out);
	out = NULL;
	g_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	if (!info->system_emulation) {
		fprintf(stderr, "insncount: system emulation only\n");
		return -1;
	}
	nvcpus = info->system.max_vcpus;
	counts = g_new0(struct vcpu_count, nvcpus);
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (g_str_has_prefix(a, "out=")) {
			out = fopen(a + 4, "a");
			if (!out) {
				fprintf(stderr, "insncount: cannot open %s\n", a + 4);
				return -1;
			}
		} else if (g_str_has_prefix(a, "prof=")) {
			prof = fopen(a + 5, "a");
			if (!prof) {
				fprintf(stderr, "insncount: cannot open %s\n", a + 5);
				return -1;
			}
			blocks = g_ptr_array_new();
		} else if (g_str_has_prefix(a, "turn_us=")) {
			char *end;

			turn_us = g_ascii_strtoull(a + 8, &end, 10);
			if (*end || !turn_us || turn_us > 1000000) {
				fprintf(stderr, "insncount: turn_us must be 1..1000000 microseconds, not %s\n", a + 8);
				return -1;
			}
		} else {
			fprintf(stderr, "insncount: unknown argument %s (out=FILE, prof=FILE, turn_us=N)\n", a);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	return 0;
}
