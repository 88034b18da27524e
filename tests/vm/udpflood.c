// SPDX-License-Identifier: GPL-2.0
/*
 * udpflood - UDP load generator and sink for the bqlkit VM tests.
 *
 *   udpflood send <ip> <port> <secs> <payload> <nsockets> [<count> [<gso_size>]]
 *   udpflood sink <port> <secs> [<idle_ms> [<count>]]
 *   udpflood stamp
 *
 * count: stop after <count> datagrams were handed to the stack (at most
 * <secs> seconds; 0: no limit); gso_size: send <payload>-byte writes that
 * UDP GSO cuts into <gso_size>-byte datagrams; idle_ms: the sink stops
 * when nothing arrived for that long after its first datagram, or once it
 * has read <count>.  With both, a flood is a fixed amount of work (make
 * bench's cost floods, which count instructions per packet).  With
 * UDPFLOOD_VMMARK=1 in the environment the sender executes the insncount
 * plugin's "begin" marker (vmmark.h) just before its first datagram and
 * the sink the "end" marker just after its last, so that the instructions
 * between them are the flood's own.
 *
 * stamp keeps RX timestamping on until a signal (do_stamp()).
 * send and sink print exactly one summary line on stdout:
 *   UDPFLOOD send sent=N nobufs=N errors=N pps=N
 *   UDPFLOOD sink pkts=N bytes=N pps=N
 *
 * SIGTERM/SIGINT end the run early; the summary is still printed.
 * A send blocks at most 100 ms (SO_SNDTIMEO): a sender whose datagrams
 * never complete (lost TX completions) still stops after <secs>.
 * The sender counts ENOBUFS/EAGAIN (qdisc full, backpressure) separately
 * from other errors (ECONNREFUSED, ENETDOWN, ... e.g. when the device is
 * deleted under load) and keeps going in both cases.  With <gso_size>
 * each send is one UDP GSO super-packet (UDP_SEGMENT) that the stack
 * splits into <payload>/<gso_size> datagrams: "sent" counts the sends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "vmmark.h"

#define MAX_SOCKETS 64
#define MAX_PAYLOAD 65507

static volatile sig_atomic_t stop;
static int vmmark;	/* UDPFLOOD_VMMARK=1: execute the plugin's markers */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long parse_num(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max) {
		fprintf(stderr, "udpflood: bad %s '%s' (want %ld..%ld)\n",
			what, s, min, max);
		exit(2);
	}
	return v;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: interrupt recv() */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

static int do_send(const char *ip, int port, double secs, int len, int nsock,
		   unsigned long long count, int gso)
{
	static char buf[MAX_PAYLOAD];
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned long long sent = 0, nobufs = 0, errors = 0, n;
	struct timeval sndtimeo = { .tv_sec = 0, .tv_usec = 100000 };
	int fds[MAX_SOCKETS];
	int blocked = 0;
	double t0, el;
	int i;

	if (inet_pton(AF_INET, ip, &dst.sin_addr) != 1) {
		fprintf(stderr, "udpflood: bad ip '%s'\n", ip);
		return 2;
	}
	memset(buf, 0xa5, sizeof(buf));
	for (i = 0; i < nsock; i++) {
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fds[i] < 0 ||
		    connect(fds[i], (struct sockaddr *)&dst, sizeof(dst)) < 0) {
			perror("udpflood: socket/connect");
			return 1;
		}
		if (gso && setsockopt(fds[i], SOL_UDP, UDP_SEGMENT, &gso,
				      sizeof(gso)) < 0) {
			perror("udpflood: UDP_SEGMENT");
			return 1;
		}
		/* A send blocked on a full send buffer whose skbs never come
		 * back (TX completions lost, a queue stopped for good) must
		 * not outlive <secs>: it returns EAGAIN after this, and the
		 * clock is read at once.
		 */
		if (setsockopt(fds[i], SOL_SOCKET, SO_SNDTIMEO, &sndtimeo,
			       sizeof(sndtimeo)) < 0) {
			perror("udpflood: SO_SNDTIMEO");
			return 1;
		}
	}
	t0 = now();
	if (vmmark)
		VMMARK(VMMARK_BEGIN);
	for (n = 0; !stop && (!count || sent < count); n++) {
		if (((n & 255) == 0 || blocked) && now() - t0 >= secs)
			break;
		blocked = 0;
		if (send(fds[n % nsock], buf, len, 0) >= 0) {
			sent++;
		} else if (errno == ENOBUFS || errno == EAGAIN) {
			nobufs++;
			blocked = errno == EAGAIN;
		} else if (errno != EINTR) {
			errors++;
		}
	}
	el = now() - t0;
	printf("UDPFLOOD send sent=%llu nobufs=%llu errors=%llu pps=%.0f\n",
	       sent, nobufs, errors, el > 0 ? sent / el : 0.0);
	return 0;
}

static int do_sink(int port, double secs, int idle_ms, unsigned long long count)
{
	static char buf[65536];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	unsigned long long pkts = 0, bytes = 0;
	int fd, rcvbuf = 4 << 20, one = 1;
	double t0, el;
	ssize_t r;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("udpflood: socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("udpflood: bind");
		return 1;
	}
	if (idle_ms) {
		tv.tv_sec = idle_ms / 1000;
		tv.tv_usec = idle_ms % 1000 * 1000;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t0 = now();
	while (!stop && now() - t0 < secs) {
		r = recv(fd, buf, sizeof(buf), 0);
		if (r >= 0) {
			pkts++;
			bytes += r;
			if (count && pkts == count)
				break;
		} else if (idle_ms && pkts && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			break;
		}
	}
	if (vmmark && pkts)
		VMMARK(VMMARK_END);
	el = now() - t0;
	printf("UDPFLOOD sink pkts=%llu bytes=%llu pps=%.0f\n",
	       pkts, bytes, el > 0 ? pkts / el : 0.0);
	return 0;
}

/*
 * stamp: hold a socket with SO_TIMESTAMPNS open until a signal.  The first
 * such socket turns the kernel's RX timestamping on (netstamp_needed_key, a
 * static branch in every receive); while one stays open, others (ping's)
 * only count, so no kernel text is patched under a flood: MTTCG has been
 * seen to run stale code at a site patched then (stop 21's soft lockup).
 */
static int do_stamp(void)
{
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one,
				 sizeof(one)) < 0) {
		perror("udpflood: SO_TIMESTAMPNS");
		return 1;
	}
	while (!stop)
		pause();
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: udpflood send <ip> <port> <secs> <payload> <nsockets> [<count> [<gso_size>]]\n"
		"       udpflood sink <port> <secs> [<idle_ms> [<count>]]\n"
		"       udpflood stamp\n");
	exit(2);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	vmmark = getenv("UDPFLOOD_VMMARK") && !strcmp(getenv("UDPFLOOD_VMMARK"), "1");
	install_signals();
	if (argc >= 7 && argc <= 9 && !strcmp(argv[1], "send"))
		return do_send(argv[2],
			       parse_num(argv[3], "port", 1, 65535),
			       parse_num(argv[4], "secs", 0, 86400),
			       parse_num(argv[5], "payload", 0, MAX_PAYLOAD),
			       parse_num(argv[6], "nsockets", 1, MAX_SOCKETS),
			       argc >= 8 ? parse_num(argv[7], "count", 0, 1000000000) : 0,
			       argc == 9 ? parse_num(argv[8], "gso_size", 1, 65507) : 0);
	if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "sink"))
		return do_sink(parse_num(argv[2], "port", 1, 65535),
			       parse_num(argv[3], "secs", 0, 86400),
			       argc >= 5 ? parse_num(argv[4], "idle_ms", 1, 60000) : 0,
			       argc == 6 ? parse_num(argv[5], "count", 0, 1000000000) : 0);
	if (argc == 2 && !strcmp(argv[1], "stamp"))
		return do_stamp();
	usage();
	return 2;
}
