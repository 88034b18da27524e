// SPDX-License-Identifier: GPL-2.0
/*
 * rthog - keep one CPU busy at real-time priority for a while, so that
 * every normal thread bound to that CPU (a NAPI thread, say) makes no
 * progress meanwhile.
 *
 *   rthog CPU SECS
 *
 * Binds itself to CPU, takes SCHED_FIFO priority 50 and spins for SECS
 * seconds (fractions allowed).  The kernel still gives normal threads
 * sched_rt_runtime_us out of every sched_rt_period_us unless the caller
 * set /proc/sys/kernel/sched_rt_runtime_us to -1 (guest/mana-dev.sh's
 * rxstall phase does, for the hog's run).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 50 };
	cpu_set_t set;
	double end;
	volatile unsigned long spins = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: rthog CPU SECS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("rthog: sched_setaffinity");
		return 1;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("rthog: sched_setscheduler");
		return 1;
	}
	end = now() + atof(argv[2]);
	while (now() < end)
		spins++;
	return 0;
}
