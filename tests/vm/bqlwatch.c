// SPDX-License-Identifier: GPL-2.0
/*
 * bqlwatch: sample a device's BQL inflight/limit for one TX queue as fast as
 * the kernel answers, and print the largest values seen.
 *
 *   bqlwatch <ifname> <queue> <seconds> [interval_us]
 *
 * Reads queues/tx-N/byte_queue_limits/{inflight,limit} from sysfs where the
 * kernel shows them, else the ethtool stats tx_queue_N_bql_{inflight,limit}
 * that the kit's veth adds.  Prints one line:
 *   BQLWATCH source=sysfs|ethtool|none reads=N nonzero=N max_inflight=N max_limit=N
 *            sum_inflight=N last_limit=N torn=N (sysfs reads of a negative inflight)
 * One read rarely finds the ring non-empty (the peer's NAPI drains it within
 * a poll); thousands of reads a second do.  Without interval_us it reads in
 * a busy loop (one vCPU spent on it); with it, it sleeps that long between
 * reads, so that a benchmark costs the same whether BQL data exist or not.
 */
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long read_long(const char *path)
{
	char buf[32];
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

struct ethtool_src {
	int fd;
	struct ifreq ifr;
	struct ethtool_stats *stats;
	int i_inflight, i_limit;
};

/* Find the two stats by name; 0 when the device has them. */
static int ethtool_open(struct ethtool_src *e, const char *ifname, int q)
{
	struct ethtool_sset_info *ss;
	struct ethtool_gstrings *gs;
	char want_i[ETH_GSTRING_LEN], want_l[ETH_GSTRING_LEN];
	unsigned int n, k;

	e->fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (e->fd < 0)
		return -1;
	memset(&e->ifr, 0, sizeof(e->ifr));
	snprintf(e->ifr.ifr_name, IFNAMSIZ, "%s", ifname);

	ss = calloc(1, sizeof(*ss) + sizeof(__u32));
	ss->cmd = ETHTOOL_GSSET_INFO;
	ss->sset_mask = 1ULL << ETH_SS_STATS;
	e->ifr.ifr_data = (void *)ss;
	if (ioctl(e->fd, SIOCETHTOOL, &e->ifr) < 0 || !ss->sset_mask)
		return -1;
	n = ss->data[0];

	gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	e->ifr.ifr_data = (void *)gs;
	if (ioctl(e->fd, SIOCETHTOOL, &e->ifr) < 0)
		return -1;
	snprintf(want_i, sizeof(want_i), "tx_queue_%d_bql_inflight", q);
	snprintf(want_l, sizeof(want_l), "tx_queue_%d_bql_limit", q);
	e->i_inflight = e->i_limit = -1;
	for (k = 0; k < n; k++) {
		const char *s = (const char *)gs->data + k * ETH_GSTRING_LEN;

		if (!strncmp(s, want_i, ETH_GSTRING_LEN))
			e->i_inflight = k;
		if (!strncmp(s, want_l, ETH_GSTRING_LEN))
			e->i_limit = k;
	}
	if (e->i_inflight < 0 || e->i_limit < 0)
		return -1;

	e->stats = calloc(1, sizeof(*e->stats) + (size_t)n * sizeof(__u64));
	e->stats->cmd = ETHTOOL_GSTATS;
	e->stats->n_stats = n;
	return 0;
}

static int ethtool_read(struct ethtool_src *e, long *inflight, long *limit)
{
	e->ifr.ifr_data = (void *)e->stats;
	if (ioctl(e->fd, SIOCETHTOOL, &e->ifr) < 0)
		return -1;
	*inflight = (long)e->stats->data[e->i_inflight];
	*limit = (long)e->stats->data[e->i_limit];
	return 0;
}

int main(int argc, char **argv)
{
	char p_inflight[256], p_limit[256];
	long inflight, limit, max_i = 0, max_l = 0, reads = 0, nonzero = 0;
	long sum_i = 0, last_l = 0, interval_us = 0, torn = 0;
	struct ethtool_src e;
	const char *src;
	double end;
	int q;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bqlwatch <ifname> <queue> <seconds> [interval_us]\n");
		return 2;
	}
	q = atoi(argv[2]);
	if (argc == 5)
		interval_us = atol(argv[4]);
	end = now() + atof(argv[3]);
	snprintf(p_inflight, sizeof(p_inflight),
		 "/sys/class/net/%s/queues/tx-%d/byte_queue_limits/inflight", argv[1], q);
	snprintf(p_limit, sizeof(p_limit),
		 "/sys/class/net/%s/queues/tx-%d/byte_queue_limits/limit", argv[1], q);

	if (access(p_inflight, R_OK) == 0)
		src = "sysfs";
	else if (ethtool_open(&e, argv[1], q) == 0)
		src = "ethtool";
	else
		src = "none";

	while (strcmp(src, "none") && now() < end) {
		if (src[0] == 's') {
			/* Core prints num_queued - num_completed as %u from two
			 * unordered reads: under load a read can see a newer
			 * num_completed (5.10 showed 4294967263).  As a signed
			 * 32-bit value that is a small negative: a torn read,
			 * counted apart, never a maximum.
			 */
			inflight = (int)(unsigned int)read_long(p_inflight);
			limit = read_long(p_limit);
		} else if (ethtool_read(&e, &inflight, &limit) < 0) {
			break;
		}
		reads++;
		if (inflight < 0)
			torn++;
		sum_i += inflight > 0 ? inflight : 0;
		last_l = limit;
		if (inflight > 0)
			nonzero++;
		if (inflight > max_i)
			max_i = inflight;
		if (limit > max_l)
			max_l = limit;
		if (interval_us > 0)
			usleep(interval_us);
	}
	if (!strcmp(src, "none") && interval_us > 0) {
		/* Same duration as a real watch, no CPU spent. */
		while (now() < end)
			usleep(100000);
	}
	printf("BQLWATCH source=%s reads=%ld nonzero=%ld max_inflight=%ld max_limit=%ld sum_inflight=%ld last_limit=%ld torn=%ld\n",
	       src, reads, nonzero, max_i, max_l, sum_i, last_l, torn);
	return 0;
}
