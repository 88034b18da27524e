// SPDX-License-Identifier: GPL-2.0
/*
 * cx16flags - does the CPU (here: QEMU's TCG) keep the flags that
 * CMPXCHG8B and CMPXCHG16B leave alone?
 *
 * Both instructions write ZF only; CF, PF, AF, SF, OF and the system flags
 * keep their values.  QEMU 7.2's TCG computes the other flags in the
 * instructions' helpers from its lazily kept condition-code state without
 * first storing the translator's current CC_OP: after an instruction that
 * set the flags in the same translation block, the helper works from the
 * previous block's CC_OP, and if that was CC_OP_EFLAGS it takes CC_SRC --
 * here the ADD's source operand -- as the flags.  Pushed by an interrupt
 * and restored by IRET, such garbage (TF, NT, IOPL, VM, ...) kills a
 * kernel: a Linux guest died that way in SLUB's cmpxchg16b loop under
 * network load ("double fault", EFLAGS = a slab pointer | 0x202).
 *
 * Each check: POPF (ends the translation block, CC_OP_EFLAGS stored), then
 * in the next block an ADD with known flags whose source operand has bits
 * that are no arithmetic flags, the CMPXCHG (succeeding), PUSHF.  The
 * flags must be the ADD's with ZF set.
 *
 *   cx16flags     prints "CX16FLAGS ok" or one "CX16FLAGS bad ..." line per
 *                 wrong result; exit 0 iff all are right
 */
#include <stdint.h>
#include <stdio.h>

#define ARITH 0x8d5UL		/* CF PF AF ZF SF OF */
#define ZF 0x40UL
#define PF 0x04UL

struct pair {
	uint64_t lo, hi;
} __attribute__((aligned(16)));

/* The operand of the ADD: ID, AC, DF, TF and IF bits, no arithmetic flag. */
#define JUNK 0x240700UL

/*
 * POPF 0x202, ADD JUNK to 0, INSN on MEM (RDX:RAX equal to it, so it
 * succeeds), PUSHF: the flags after INSN.
 */
#define FLAGS_AFTER(insn, mem, a, d, b, c) ({				\
	uint64_t f_, s_ = 0;						\
	asm volatile("push %[f]\n\tpopfq\n\t"			\
		     "add %[junk], %[sum]\n\t"			\
		     insn " %[m]\n\t"					\
		     "pushfq\n\tpop %[f]"				\
		     : [f] "=&r"(f_), [m] "+m"(mem), "+a"(a), "+d"(d),	\
		       [sum] "+r"(s_)					\
		     : "0"(0x202UL), [junk] "r"(JUNK), "b"(b), "c"(c)	\
		     : "cc");						\
	f_;								\
})

static uint64_t flags_after_cx16(int locked)
{
	static struct pair mem = { 1, 2 };
	uint64_t rax = 1, rdx = 2;

	if (locked)
		return FLAGS_AFTER("lock cmpxchg16b", mem, rax, rdx, 1UL, 2UL);
	return FLAGS_AFTER("cmpxchg16b", mem, rax, rdx, 1UL, 2UL);
}

static uint64_t flags_after_cx8(void)
{
	static uint64_t mem = 0x0000000200000001ULL;
	uint32_t eax = 1, edx = 2;

	return FLAGS_AFTER("lock cmpxchg8b", mem, eax, edx, 1U, 2U);
}

int main(void)
{
	/* 0 + JUNK: CF=0, ZF=0, SF=0, OF=0, AF=0, PF of 0x00 = 1; then ZF=1. */
	const uint64_t want = 0x202UL | PF | ZF;
	const struct {
		const char *name;
		uint64_t got;
	} r[] = {
		{ "cmpxchg16b", flags_after_cx16(0) },
		{ "lock-cmpxchg16b", flags_after_cx16(1) },
		{ "lock-cmpxchg8b", flags_after_cx8() },
	};
	int bad = 0;
	unsigned int i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		/* RF (bit 16) and bit 1 aside, the flags must be exactly these. */
		if ((r[i].got & ~0x10000UL) != want) {
			printf("CX16FLAGS bad insn=%s flags=%#llx want=%#llx\n", r[i].name,
			       (unsigned long long)r[i].got, (unsigned long long)want);
			bad++;
		}
	}
	if (!bad)
		printf("CX16FLAGS ok\n");
	return bad != 0;
}
