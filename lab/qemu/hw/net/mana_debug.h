/*
 * bqlkit's emulated MANA VF: the test port (not part of MANA's interface).
 *
 * The model keeps knobs and counters for tests.  The host reads and sets
 * them as QOM properties (qom-get/qom-set over QMP); the guest reaches them
 * through a vendor-specific PCI capability, because the mana driver claims
 * every BAR of the device and the guest kernel's IO_STRICT_DEVMEM then
 * forbids mapping them:
 *
 *   cap + 0   capability id 0x09 (vendor), next, length 16, version 1
 *   cap + 4   u32 index (write)
 *   cap + 8   u32 data, low half (a read latches the 64-bit value;
 *             a write sets the knob selected by index)
 *   cap + 12  u32 data, high half of the latched value
 *
 * This header is shared by the device (lab/qemu/hw/net/mana.c) and the guest
 * tool that reads it (tests/vm/manactl.c), so both name things the same.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_MANA_DEBUG_H
#define HW_NET_MANA_DEBUG_H

#define MANA_DBG_CAP_LEN        16
#define MANA_DBG_VERSION        1
#define MANA_DBG_INDEX          4
#define MANA_DBG_DATA_LO        8
#define MANA_DBG_DATA_HI        12

/* Index 0 reads this, so a tool can tell it found the port. */
#define MANA_DBG_MAGIC          0x414e414d6b697431ULL /* "1tikMANA" */

/*
 * Knobs (read/write), index 0x01...: X(index, name, description)
 */
#define MANA_DBG_KNOBS(X) \
    X(0x01, rate_mbps, "wire rate limit of TX in Mbit/s (0: unlimited)") \
    X(0x02, tx_cqe_delay_us, "delay of each TX completion in microseconds") \
    X(0x03, drop_tx_cqes, "TX completions still to be dropped (lost CQEs)")

/*
 * Device-wide counters (read-only), index 0x100...: X(index, name)
 * (0x110 was rx_nowqe_waits, frames the model held for want of an RQ
 * WQE; it drops and counts them now, as rx_discards_no_wqe.)
 * guest_errors counts every LOG_GUEST_ERROR of the model; cq_overflows,
 * eq_overflows and db_wrong_page are three of them, named.
 * tx_wqe_wire_us_max: the longest wire time of one TX WQE (all of its
 * segments, rate-limited wire only); tx_cqe_latency_us_max: the longest
 * time from a TX WQE starting on the wire to its CQE (both device-lifetime
 * maxima, in microseconds of virtual time).
 * hwc_late_doorbells: doorbells of the hardware channel's RQ, CQ or EQ
 * after the SMC destroyed the channel (mana.c mana_db_missing()).
 */
#define MANA_DBG_COUNTERS(X) \
    X(0x100, sq_doorbells) \
    X(0x101, rq_doorbells) \
    X(0x102, cq_doorbells) \
    X(0x103, cq_arms) \
    X(0x104, eq_doorbells) \
    X(0x105, eq_arms) \
    X(0x106, tx_wqes) \
    X(0x107, tx_frames) \
    X(0x108, tx_bytes) \
    X(0x109, tx_tso_wqes) \
    X(0x10a, tx_csum_wqes) \
    X(0x10b, tx_cqes) \
    X(0x10c, tx_cqes_dropped) \
    X(0x10d, tx_errors) \
    X(0x10e, rx_frames) \
    X(0x10f, rx_bytes) \
    X(0x111, rx_dropped) \
    X(0x112, rx_cqes) \
    X(0x113, rx_csum_ok) \
    X(0x114, rx_csum_bad) \
    X(0x115, eqes) \
    X(0x116, msix_sent) \
    X(0x117, hwc_requests) \
    X(0x118, hwc_unknown) \
    X(0x119, hwc_errors) \
    X(0x11a, fences) \
    X(0x11b, tx_wire_waits) \
    X(0x11c, guest_errors) \
    X(0x11d, cq_overflows) \
    X(0x11e, eq_overflows) \
    X(0x11f, db_wrong_page) \
    X(0x120, tx_wqe_wire_us_max) \
    X(0x121, tx_cqe_latency_us_max) \
    X(0x122, rx_discards_no_wqe) \
    X(0x123, hwc_late_doorbells)

/*
 * Per-queue counters: index MANA_DBG_QUEUE(type, id, field), kept per
 * queue id across destroy/create (ids are reused lowest first, so an id
 * follows the driver's queue index).  Types: 0 SQ, 1 RQ, 2 CQ, 3 EQ.
 * "entries": WQEs consumed (SQ, RQ), CQEs or EQEs produced (CQ, EQ).
 * "discards": frames for an RQ without a posted WQE, dropped (RQ).
 */
#define MANA_DBG_QTYPES         4
#define MANA_DBG_QIDS           256
#define MANA_DBG_QUEUE_BASE     0x10000
#define MANA_DBG_QUEUE(type, id, field) \
    (MANA_DBG_QUEUE_BASE + ((type) << 12) + ((id) << 4) + (field))

#define MANA_DBG_QUEUE_FIELDS(X) \
    X(0, live) \
    X(1, created) \
    X(2, doorbells) \
    X(3, arms) \
    X(4, entries) \
    X(5, frames) \
    X(6, bytes) \
    X(7, discards)

#define MANA_DBG_QTYPE_NAMES { "sq", "rq", "cq", "eq" }

#endif /* HW_NET_MANA_DEBUG_H */
