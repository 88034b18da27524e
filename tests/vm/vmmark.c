// SPDX-License-Identifier: GPL-2.0
/*
 * vmmark - execute the marker instruction of the insncount TCG plugin
 * (lab/qemu/plugins/insncount.c), so that the host-side instruction counts can
 * be cut at this point of the guest's run.
 *
 *   vmmark mark|begin|end|short-turns|qemu-turns
 *
 * mark: write the counts; begin: also start a profile; end: also write the
 * profile; short-turns: also make the emulator switch vCPUs at least every
 * turn_us (the plugin's argument); qemu-turns: also give the turns back to
 * QEMU (100 ms kicks).  Outside QEMU with the plugin the marker is a no-op.  Guests
 * call it through lib.sh's vm_mark, which numbers the markers as the
 * plugin does.  Exit status 3 where there is no marker instruction (only
 * x86-64 has one, see vmmark.h).
 */
#include <stdio.h>
#include <string.h>

#include "vmmark.h"

int main(int argc, char **argv)
{
	if (!VMMARK_SUPPORTED) {
		fprintf(stderr, "vmmark: no marker instruction on this architecture\n");
		return 3;
	}
	if (argc == 2 && !strcmp(argv[1], "mark"))
		VMMARK(0x00);
	else if (argc == 2 && !strcmp(argv[1], "begin"))
		VMMARK(0x01);
	else if (argc == 2 && !strcmp(argv[1], "end"))
		VMMARK(0x02);
	else if (argc == 2 && !strcmp(argv[1], "short-turns"))
		VMMARK(0x03);
	else if (argc == 2 && !strcmp(argv[1], "qemu-turns"))
		VMMARK(0x04);
	else {
		fprintf(stderr, "usage: vmmark mark|begin|end|short-turns|qemu-turns\n");
		return 2;
	}
	return 0;
}
