/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The marker instruction of the insncount TCG plugin (lab/qemu/plugins/
 * insncount.c): "nopl 0x42514cCC(%rax,%rax,1)" on x86-64, CC = the command
 * (0x00 mark, 0x01 mark and begin a profile, 0x02 mark and write it, 0x03
 * mark and make single-threaded TCG's vCPU turns short, 0x04 mark and
 * give them back to QEMU).  A
 * no-op without the plugin; elsewhere than x86-64 VMMARK_SUPPORTED is 0 and
 * VMMARK() does nothing.
 */
#ifndef VMMARK_H
#define VMMARK_H

#define VMMARK_MARK	0x00
#define VMMARK_BEGIN	0x01
#define VMMARK_END	0x02
#define VMMARK_TURNS_SHORT	0x03
#define VMMARK_TURNS_QEMU	0x04

#if defined(__x86_64__)
#define VMMARK_SUPPORTED 1
#define VMMARK_(cmd) \
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, " #cmd ", 0x4c, 0x51, 0x42" ::: "memory")
#define VMMARK(cmd) VMMARK_(cmd)
#else
#define VMMARK_SUPPORTED 0
#define VMMARK(cmd) do { } while (0)
#endif

#endif
