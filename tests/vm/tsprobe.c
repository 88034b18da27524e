// SPDX-License-Identifier: GPL-2.0
/*
 * tsprobe - one-way latency of small UDP probes from netns A to netns B,
 * measured by the kernel's own software timestamps (SO_TIMESTAMPING), so
 * that no user-space scheduling delay enters the numbers:
 *
 *   sched  the probe entered A's qdisc  (SCM_TSTAMP_SCHED, __dev_queue_xmit)
 *   snd    the driver got it            (SCM_TSTAMP_SND, veth_xmit's
 *                                        skb_tx_timestamp)
 *   rx     B's stack received it        (the receive timestamp, taken as
 *                                        netif_receive_skb starts on it)
 *
 * Per probe: qdisc = snd - sched (the standing queue in the qdisc), ring =
 * rx - snd (veth's ring and waiting for B's NAPI); their sum is the one-way
 * delay.  Both netns share the clock.  One process, one thread: the sockets
 * are made in each netns with setns() (no mount namespace, unlike ip netns
 * exec, so it starts at once however loaded the guest is), then polled
 * together.
 *
 *   tsprobe NETNS_A NETNS_B DST_IP PORT SECS INTERVAL_MS [FLOWS]
 *   tsprobe clock
 *
 * FLOWS sockets (default 1; own source ports, so own fq_codel flows) each
 * send one probe every INTERVAL_MS, staggered evenly: each flow stays as
 * sparse as one ping, the flows together give FLOWS times the samples.
 *
 * Output (stdout), times in microseconds; SCHED is the probe's sched
 * timestamp as seconds since boot (/proc/uptime's clock), so that a caller
 * can keep the probes of a time window:
 *   TSPROBE clock real_minus_boot_ns=N
 *   TSPROBE p SEQ SCHED QDISC RING     one per probe sent, in send order;
 *                                      "-" for a timestamp that never came
 *   TSPROBE summary sent=N sched=N snd=N rx=N flows=N
 * "tsprobe clock" prints only the first line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROBES 100000
#define MAX_FLOWS 8

struct probe {
	int64_t sched, snd, rx;	/* ns, CLOCK_REALTIME; 0 = not seen */
};

static struct probe *probes;
static unsigned int nsent;

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

static void enter_netns(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static int tstamp_socket(int flags)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) < 0) {
		perror("tsprobe: socket/SO_TIMESTAMPING");
		exit(1);
	}
	return fd;
}

/* The software timestamp of a message's SCM_TIMESTAMPING, 0 if none. */
static int64_t msg_ts(struct msghdr *m, struct sock_extended_err **ee)
{
	struct cmsghdr *c;
	int64_t t = 0;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING)
			t = ts_ns((struct timespec *)CMSG_DATA(c));
		else if (ee && c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR)
			*ee = (struct sock_extended_err *)CMSG_DATA(c);
	}
	return t;
}

static void read_rx(int fd)
{
	char ctl[512];
	uint32_t seq;
	struct iovec iov = { &seq, sizeof(seq) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	int64_t t;

	while (recvmsg(fd, &m, MSG_DONTWAIT) == (ssize_t)sizeof(seq)) {
		t = msg_ts(&m, NULL);
		if (seq < nsent && t)
			probes[seq].rx = t;
		m.msg_controllen = sizeof(ctl);
	}
}

/* The TX timestamps of flow f: the OPT_ID key counts that socket's sends */
static void read_errqueue(int fd, const unsigned int *of_key, unsigned int nkeys)
{
	char ctl[512], data[64];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct sock_extended_err *ee;
	int64_t t;

	while (ee = NULL, recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0) {
		t = msg_ts(&m, &ee);
		m.msg_controllen = sizeof(ctl);
		if (!t || !ee || ee->ee_origin != SO_EE_ORIGIN_TIMESTAMPING || ee->ee_data >= nkeys)
			continue;
		if (ee->ee_info == SCM_TSTAMP_SCHED)
			probes[of_key[ee->ee_data]].sched = t;
		else if (ee->ee_info == SCM_TSTAMP_SND)
			probes[of_key[ee->ee_data]].snd = t;
	}
}

/* CLOCK_REALTIME (the timestamps' clock) minus CLOCK_BOOTTIME, in ns */
static int64_t real_minus_boot(void)
{
	struct timespec r, b;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_BOOTTIME, &b);
	return ts_ns(&r) - ts_ns(&b);
}

static void print_probe(unsigned int i, int64_t off)
{
	const struct probe *p = &probes[i];

	printf("TSPROBE p %u ", i);
	if (p->sched)
		printf("%.6f ", (p->sched - off) / 1e9);
	else
		printf("- ");
	if (p->sched && p->snd)
		printf("%.1f ", (p->snd - p->sched) / 1000.0);
	else
		printf("- ");
	if (p->snd && p->rx)
		printf("%.1f\n", (p->rx - p->snd) / 1000.0);
	else
		printf("-\n");
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET }, any = { .sin_family = AF_INET };
	static unsigned int of_key[MAX_FLOWS][MAX_PROBES];	/* flow, key -> probe */
	unsigned int nkeys[MAX_FLOWS] = { 0 };
	struct pollfd pfd[MAX_FLOWS + 1];
	int64_t ival, next, end, now;
	unsigned int i, f, nsched = 0, nsnd = 0, nrx = 0;
	int64_t off = real_minus_boot();
	int tx[MAX_FLOWS], rx, nflows = 1;

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	printf("TSPROBE clock real_minus_boot_ns=%lld\n", (long long)off);
	if (argc == 2 && !strcmp(argv[1], "clock"))
		return 0;
	if (argc != 7 && argc != 8) {
		fprintf(stderr, "usage: tsprobe NETNS_A NETNS_B DST_IP PORT SECS INTERVAL_MS [FLOWS] | tsprobe clock\n");
		return 2;
	}
	if (argc == 8)
		nflows = atoi(argv[7]);
	dst.sin_port = any.sin_port = htons(atoi(argv[4]));
	if (inet_pton(AF_INET, argv[3], &dst.sin_addr) != 1 || atoi(argv[6]) < 1 ||
	    nflows < 1 || nflows > MAX_FLOWS) {
		fprintf(stderr, "tsprobe: bad address, interval or number of flows (1..%d)\n", MAX_FLOWS);
		return 2;
	}
	/* Each flow sends every INTERVAL_MS; the flows are staggered evenly */
	ival = atoll(argv[6]) * 1000000 / nflows;
	probes = calloc(MAX_PROBES, sizeof(*probes));
	if (!probes)
		return 1;

	enter_netns(argv[2]);
	rx = tstamp_socket(SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE);
	if (bind(rx, (struct sockaddr *)&any, sizeof(any)) < 0) {
		perror("tsprobe: bind");
		return 1;
	}
	enter_netns(argv[1]);
	pfd[0] = (struct pollfd){ .fd = rx, .events = POLLIN };
	for (f = 0; f < (unsigned int)nflows; f++) {
		/* One socket per flow: its own source port, so its own fq_codel flow */
		tx[f] = tstamp_socket(SOF_TIMESTAMPING_TX_SCHED | SOF_TIMESTAMPING_TX_SOFTWARE |
				      SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
				      SOF_TIMESTAMPING_OPT_TSONLY);
		if (connect(tx[f], (struct sockaddr *)&dst, sizeof(dst)) < 0) {
			perror("tsprobe: connect");
			return 1;
		}
		pfd[f + 1] = (struct pollfd){ .fd = tx[f], .events = 0 };	/* POLLERR */
	}

	next = mono_ns();
	end = next + atoll(argv[5]) * 1000000000LL;
	/* Send until SECS, then one more second to collect the stragglers */
	while ((now = mono_ns()) < end + 1000000000LL) {
		if (now >= next && now < end && nsent < MAX_PROBES) {
			uint32_t seq = nsent;

			f = nsent % nflows;
			if (send(tx[f], &seq, sizeof(seq), 0) == (ssize_t)sizeof(seq))
				of_key[f][nkeys[f]++] = nsent++;
			next += ival;
			if (next < now)
				next = now + ival;
			continue;
		}
		poll(pfd, nflows + 1, (int)(((now < end ? next : end + 1000000000LL) - now) / 1000000) + 1);
		read_rx(rx);
		for (f = 0; f < (unsigned int)nflows; f++)
			read_errqueue(tx[f], of_key[f], nkeys[f]);
	}
	for (i = 0; i < nsent; i++) {
		nsched += !!probes[i].sched;
		nsnd += !!probes[i].snd;
		nrx += !!probes[i].rx;
		print_probe(i, off);
	}
	printf("TSPROBE summary sent=%u sched=%u snd=%u rx=%u flows=%d\n", nsent, nsched, nsnd, nrx, nflows);
	return 0;
}
