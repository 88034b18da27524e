// SPDX-License-Identifier: GPL-2.0
/*
 * tcpload - TCP bulk transfer with verified contents, and a TCP
 * request/response latency probe, for the bqlkit VM tests.
 *
 *   tcpload sink PORT SECS               accept one stream, check every byte
 *   tcpload send IP PORT SECS [BYTES]    stream a known pattern (until BYTES
 *                                        sent, or SECS elapsed)
 *   tcpload rr-server PORT SECS          echo SIZE-byte requests
 *   tcpload rr-client IP PORT SECS [SIZE]   one request in flight at a time
 *
 * Output, one line each:
 *   TCPLOAD sink bytes=N bad=N first_bad=N secs=S mbps=M
 *   TCPLOAD send bytes=N secs=S mbps=M
 *   TCPLOAD rr n=N p50_us=N p90_us=N p99_us=N max_us=N
 * send and sink add the socket's TCP_INFO as it ends, one line:
 *   TCPLOAD tcpinfo side=send|sink port=N cwnd=N ssthresh=N mss=N ...
 * (send: where the stream's time went: busy, receive window, send buffer).
 * Byte i of a stream is pattern(i): a corrupted, lost or reordered segment
 * that TCP let through (a bad checksum offload, a broken segmentation)
 * shows as bad > 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define BUF (64 * 1024)
#define MAX_SAMPLES (1 << 20)

static volatile sig_atomic_t stop;

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

static void die(const char *what)
{
	fprintf(stderr, "tcpload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static inline uint8_t pattern(uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ i >> 17);
}

static void alarm_in(int secs)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	alarm(secs);
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (s < 0)
		die("socket");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 4))
		die("bind/listen");
	return s;
}

static int connect_to(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s, tries;

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "tcpload: bad address %s\n", ip);
		exit(2);
	}
	for (tries = 0; tries < 50; tries++) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			die("socket");
		if (!connect(s, (struct sockaddr *)&a, sizeof(a)))
			return s;
		close(s);
		usleep(100000);
	}
	die("connect");
	return -1;
}

/* tcpinfo SIDE S PORT: S's TCP_INFO, one line (nothing if the kernel has none). */
static void tcpinfo(const char *side, int s, int port)
{
	struct tcp_info i;
	socklen_t len = sizeof(i);

	memset(&i, 0, sizeof(i));
	if (getsockopt(s, IPPROTO_TCP, TCP_INFO, &i, &len))
		return;
	printf("TCPLOAD tcpinfo side=%s port=%d cwnd=%u ssthresh=%u mss=%u rtt_us=%u retrans=%u unacked=%u snd_wnd=%u rcv_space=%u busy_ms=%llu rwnd_limited_ms=%llu sndbuf_limited_ms=%llu pacing_bps=%llu delivery_bps=%llu segs_out=%u data_segs_out=%u bytes_sent=%llu notsent=%u\n",
	       side, port, i.tcpi_snd_cwnd, i.tcpi_snd_ssthresh, i.tcpi_snd_mss, i.tcpi_rtt,
	       i.tcpi_total_retrans, i.tcpi_unacked, i.tcpi_snd_wnd, i.tcpi_rcv_space,
	       (unsigned long long)i.tcpi_busy_time / 1000, (unsigned long long)i.tcpi_rwnd_limited / 1000,
	       (unsigned long long)i.tcpi_sndbuf_limited / 1000, (unsigned long long)i.tcpi_pacing_rate * 8,
	       (unsigned long long)i.tcpi_delivery_rate * 8, i.tcpi_segs_out, i.tcpi_data_segs_out,
	       (unsigned long long)i.tcpi_bytes_sent, i.tcpi_notsent_bytes);
}

static int sink(int port, int secs)
{
	static uint8_t buf[BUF];
	uint64_t off = 0, bad = 0, first_bad = UINT64_MAX;
	int l = listen_on(port), c;
	double t0, t;
	ssize_t n, i;

	alarm_in(secs);
	c = accept(l, NULL, NULL);
	if (c < 0) {
		printf("TCPLOAD sink bytes=0 bad=0 first_bad=-1 secs=0 mbps=0\n");
		return 1;
	}
	t0 = now();
	while (!stop && (n = read(c, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != pattern(off + i)) {
				if (first_bad == UINT64_MAX)
					first_bad = off + i;
				bad++;
			}
		}
		off += n;
	}
	t = now() - t0;
	tcpinfo("sink", c, port);
	printf("TCPLOAD sink bytes=%llu bad=%llu first_bad=%lld secs=%.2f mbps=%.1f\n",
	       (unsigned long long)off, (unsigned long long)bad,
	       first_bad == UINT64_MAX ? -1LL : (long long)first_bad, t,
	       t > 0 ? off * 8 / t / 1e6 : 0);
	return bad ? 1 : 0;
}

static int send_stream(const char *ip, int port, int secs, uint64_t limit)
{
	static uint8_t buf[BUF];
	uint64_t off = 0;
	int s = connect_to(ip, port);
	double t0 = now(), t;
	size_t i, len;
	ssize_t n;

	alarm_in(secs);
	while (!stop && off < limit) {
		len = sizeof(buf);
		if (limit - off < len)
			len = limit - off;
		for (i = 0; i < len; i++)
			buf[i] = pattern(off + i);
		n = write(s, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += n;
	}
	tcpinfo("send", s, port);
	shutdown(s, SHUT_WR);
	t = now() - t0;
	printf("TCPLOAD send bytes=%llu secs=%.2f mbps=%.1f\n",
	       (unsigned long long)off, t, t > 0 ? off * 8 / t / 1e6 : 0);
	close(s);
	return 0;
}

static int full_io(int s, uint8_t *buf, size_t len, int wr)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = wr ? write(s, buf + done, len - done) : read(s, buf + done, len - done);
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static int rr_server(int port, int secs)
{
	uint8_t buf[BUF];
	int l = listen_on(port), c, one = 1;
	ssize_t n;

	alarm_in(secs);
	while (!stop) {
		c = accept(l, NULL, NULL);
		if (c < 0)
			break;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!stop && (n = read(c, buf, sizeof(buf))) > 0)
			if (full_io(c, buf, n, 1))
				break;
		close(c);
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int rr_client(const char *ip, int port, int secs, size_t size)
{
	static uint32_t us[MAX_SAMPLES];
	uint8_t buf[BUF];
	size_t n = 0;
	int s = connect_to(ip, port), one = 1;
	double t;

	if (size < 1 || size > sizeof(buf))
		size = 1;
	memset(buf, 0x5a, size);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	alarm_in(secs);
	while (!stop && n < MAX_SAMPLES) {
		t = now();
		if (full_io(s, buf, size, 1) || full_io(s, buf, size, 0))
			break;
		us[n++] = (uint32_t)((now() - t) * 1e6);
	}
	close(s);
	if (!n) {
		printf("TCPLOAD rr n=0 p50_us=NA p90_us=NA p99_us=NA max_us=NA\n");
		return 1;
	}
	qsort(us, n, sizeof(us[0]), cmp_u32);
	printf("TCPLOAD rr n=%zu p50_us=%u p90_us=%u p99_us=%u max_us=%u\n", n,
	       us[n / 2], us[n * 9 / 10], us[n * 99 / 100], us[n - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "sink"))
		return sink(atoi(argv[2]), atoi(argv[3]));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "send"))
		return send_stream(argv[2], atoi(argv[3]), atoi(argv[4]),
				   argc == 6 ? strtoull(argv[5], NULL, 0) : UINT64_MAX);
	if (argc == 4 && !strcmp(argv[1], "rr-server"))
		return rr_server(atoi(argv[2]), atoi(argv[3]));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "rr-client"))
		return rr_client(argv[2], atoi(argv[3]), atoi(argv[4]),
				 argc == 6 ? strtoul(argv[5], NULL, 0) : 1);
	fprintf(stderr, "usage: tcpload sink PORT SECS | send IP PORT SECS [BYTES] |"
		" rr-server PORT SECS | rr-client IP PORT SECS [SIZE]\n");
	return 2;
}
