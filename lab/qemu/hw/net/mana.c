/*
 * bqlkit's emulated MANA VF (Microsoft Azure Network Adapter)
 *
 * Written to run the unmodified Linux mana driver (5.15 ... 7.3) under
 * QEMU, so that its datapath -- BQL, doorbells, NAPI, XDP, teardown --
 * executes against a device.  The interface follows what the driver reads
 * and writes (see mana_gdma.h); timing and firmware behaviour are not
 * modelled beyond what the tests need: an optional wire rate limit, a TX
 * completion delay and lost TX completions (the test knobs, mana_debug.h).
 *
 * This file: the PCI function, BAR0 (registers, doorbells), queues (SQ,
 * RQ, CQ, EQ), interrupts, the TX and RX datapath, the test knobs and
 * counters.  mana_hwc.c: the shared memory channel, the hardware channel
 * and its messages.
 *
 * Concurrency: everything here runs under the BQL (MMIO handlers, bottom
 * halves, timers and the net layer's receive callback).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "net/eth.h"
#include "net/checksum.h"
#include "net_rx_pkt.h"
#include "trace.h"
#include "mana.h"

#define MANA_TX_BUF_SIZE        (64 * 1024 + 512)
#define MANA_TX_MAX_SGE         31
/* A rate-limited wire may send this far ahead of its schedule, so the
 * timer does not have to fire for every frame. */
#define MANA_WIRE_BURST_NS      (50 * SCALE_US)
/* Ethernet preamble, start delimiter, FCS and inter-frame gap */
#define MANA_WIRE_OVERHEAD      24
#define MANA_TX_BUDGET          1024

/* Every error of the guest's is counted (guest_errors, which the kit's
 * mana VM tests require to be 0 at the end of a run), logged with -d
 * guest_errors and traced. */
void mana_guest_error(ManaState *s, const char *what, uint64_t a, uint64_t b)
{
    s->cnt.guest_errors++;
    qemu_log_mask(LOG_GUEST_ERROR, "mana: %s (0x%" PRIx64 ", 0x%" PRIx64 ")\n",
                  what, a, b);
    trace_mana_guest_error(what, a, b);
}

/* Queue memory: 4 KiB pages listed by the driver's DMA region */

static bool mana_queue_rw(ManaState *s, ManaQueue *q, uint32_t off,
                          void *buf, uint32_t len, bool write)
{
    PCIDevice *d = PCI_DEVICE(s);
    uint8_t *p = buf;

    while (len) {
        uint32_t o = off & (q->size - 1);
        uint32_t pg = o / MANA_PAGE_SIZE;
        uint32_t in = o % MANA_PAGE_SIZE;
        uint32_t n = MIN(len, MANA_PAGE_SIZE - in);
        MemTxResult r;

        if (pg >= q->npages) {
            return false;
        }
        if (write) {
            r = pci_dma_write(d, q->pages[pg] + in, p, n);
        } else {
            r = pci_dma_read(d, q->pages[pg] + in, p, n);
        }
        if (r != MEMTX_OK) {
            return false;
        }
        off += n;
        p += n;
        len -= n;
    }
    return true;
}

bool mana_queue_read(ManaState *s, ManaQueue *q, uint32_t off, void *buf,
                     uint32_t len)
{
    return mana_queue_rw(s, q, off, buf, len, false);
}

bool mana_queue_write(ManaState *s, ManaQueue *q, uint32_t off,
                      const void *buf, uint32_t len)
{
    return mana_queue_rw(s, q, off, (void *)buf, len, true);
}

static ManaQueueStats *mana_qstats(ManaState *s, ManaQueue *q)
{
    return &s->qstats[q->kind][q->id % MANA_DBG_QIDS];
}

bool mana_queue_setup(ManaState *s, ManaQueue *q, int kind, uint32_t id,
                      uint32_t size, const uint64_t *pages, uint32_t npages)
{
    ManaQueueStats *st;
    uint32_t gen = q->gen + 1;

    if (size < MANA_PAGE_SIZE || !is_power_of_2(size) ||
        (uint64_t)npages * MANA_PAGE_SIZE < size ||
        npages > MANA_MAX_QUEUE_PAGES) {
        mana_guest_error(s, "bad queue size", size, npages);
        return false;
    }
    g_free(q->pages);
    memset(q, 0, sizeof(*q));
    q->live = true;
    q->gen = gen;
    q->kind = kind;
    q->id = id;
    q->size = size;
    q->npages = size / MANA_PAGE_SIZE;
    q->pages = g_memdup2(pages, q->npages * sizeof(uint64_t));
    if (kind == MANA_Q_CQ || kind == MANA_Q_EQ) {
        /* The driver's head starts at the ring size (owner bits 1). */
        q->db_head = size / (kind == MANA_Q_CQ ? MANA_CQE_SIZE : MANA_EQE_SIZE);
        /* EQs start armed (the driver does not arm them before the test
         * event); completion queues are armed by the driver. */
        q->armed = kind == MANA_Q_EQ;
    }
    st = mana_qstats(s, q);
    st->live = 1;
    st->created++;
    trace_mana_queue_create(kind, id, size);
    return true;
}

void mana_queue_destroy(ManaState *s, ManaQueue *q)
{
    if (!q->live) {
        return;
    }
    trace_mana_queue_destroy(q->kind, q->id);
    mana_qstats(s, q)->live = 0;
    q->live = false;
    g_free(q->pages);
    q->pages = NULL;
    q->npages = 0;
}

/* The lowest free id above 0 (0 is the hardware channel's). */
int mana_queue_alloc_id(ManaQueue *table, int n)
{
    int i;

    for (i = 1; i < n; i++) {
        if (!table[i].live) {
            return i;
        }
    }
    return -1;
}

/* Event and completion queues */

static uint32_t mana_ring_pending(ManaQueue *q, uint32_t entries)
{
    /* The driver reports its head modulo 8 ring sizes, offset by one. */
    uint32_t span = entries << MANA_OWNER_BITS;

    return (q->prod + entries - q->db_head) % span;
}

static void mana_eq_fire(ManaState *s, ManaQueue *eq)
{
    eq->armed = false;
    if (eq->msix < s->num_vectors) {
        msix_notify(PCI_DEVICE(s), eq->msix);
        s->cnt.msix_sent++;
        trace_mana_msix(eq->id, eq->msix);
    }
}

void mana_post_eqe(ManaState *s, ManaQueue *eq, uint8_t type,
                   const uint32_t data[3])
{
    uint32_t entries = eq->size / MANA_EQE_SIZE;
    uint32_t slot = eq->prod % entries;
    uint32_t owner = (eq->prod / entries + 1) & 7;
    uint32_t e[4];

    if (!eq->live) {
        return;
    }
    if (mana_ring_pending(eq, entries) >= entries) {
        s->cnt.eq_overflows++;
        trace_mana_eq_overflow(eq->id, eq->prod, eq->consumed);
        mana_guest_error(s, "EQ overflow", eq->id, eq->prod);
        return;
    }
    e[0] = cpu_to_le32(data[0]);
    e[1] = cpu_to_le32(data[1]);
    e[2] = cpu_to_le32(data[2]);
    e[3] = cpu_to_le32(type | owner << 29);
    /* The data before the owner bits: the driver polls those. */
    mana_queue_write(s, eq, slot * MANA_EQE_SIZE, e, 12);
    smp_wmb();
    mana_queue_write(s, eq, slot * MANA_EQE_SIZE + 12, &e[3], 4);
    eq->prod++;
    mana_qstats(s, eq)->entries++;
    s->cnt.eqes++;
    trace_mana_eqe(eq->id, type, data[0], eq->prod, eq->armed);
    if (eq->armed) {
        mana_eq_fire(s, eq);
    }
}

static void mana_cq_fire(ManaState *s, ManaQueue *cq)
{
    uint32_t ev[3] = { cq->id, 0, 0 };

    cq->armed = false;
    if (cq->eq < MANA_MAX_EQ && s->eq[cq->eq].live) {
        mana_post_eqe(s, &s->eq[cq->eq], MANA_EQE_COMPLETION, ev);
    }
}

void mana_post_cqe(ManaState *s, ManaQueue *cq, const uint32_t *data,
                   uint32_t wq_num, bool is_sq)
{
    uint32_t entries = cq->size / MANA_CQE_SIZE;
    uint32_t slot = cq->prod % entries;
    uint32_t owner = (cq->prod / entries + 1) & 7;
    uint32_t e[16];
    int i;

    if (!cq->live) {
        return;
    }
    /*
     * The driver reports its head modulo 8 ring sizes (the owner bits) and
     * must ring at least once every 8 wraparounds (mana_cq_handler() rings
     * after 4).  A CQE that would put the model 8 rings ahead of the last
     * head it was told is past that contract: the driver's owner-bit check
     * could no longer tell it from an old one.  (Fewer than 8 rings ahead
     * is not proof: the driver may have read more than it reported; what
     * the model can prove, it checks when the head arrives,
     * mana_db_ring_head().)  The CQE is not written.
     */
    if ((uint32_t)(cq->prod - cq->consumed) >= entries << MANA_OWNER_BITS) {
        s->cnt.cq_overflows++;
        trace_mana_cq_overflow(cq->id, cq->prod, cq->consumed);
        mana_guest_error(s, "CQ overflow: 8 rings past the driver's last head",
                         cq->id, cq->prod);
        return;
    }
    for (i = 0; i < 15; i++) {
        e[i] = cpu_to_le32(data[i]);
    }
    e[15] = cpu_to_le32((wq_num & 0xffffff) | (is_sq ? MANA_CQE_IS_SQ : 0) |
                        owner << 29);
    mana_queue_write(s, cq, slot * MANA_CQE_SIZE, e, MANA_CQE_DATA);
    smp_wmb();
    mana_queue_write(s, cq, slot * MANA_CQE_SIZE + MANA_CQE_DATA, &e[15], 4);
    cq->prod++;
    mana_qstats(s, cq)->entries++;
    trace_mana_cqe(cq->id, wq_num, is_sq, data[0] & 0x3f, cq->prod, cq->armed);
    if (cq->armed) {
        mana_cq_fire(s, cq);
    }
}

/* Doorbells */

/* The driver's head and, with the arm bit, a request for one interrupt. */
static void mana_db_ring_head(ManaState *s, ManaQueue *q, uint32_t head,
                              bool arm)
{
    bool cq = q->kind == MANA_Q_CQ;
    uint32_t entries = q->size / (cq ? MANA_CQE_SIZE : MANA_EQE_SIZE);

    uint32_t pending;

    mana_qstats(s, q)->doorbells++;
    q->db_head = head;
    pending = mana_ring_pending(q, entries);
    q->consumed = q->prod - pending;
    /*
     * The head is the driver's own at the moment it rings: more entries
     * produced than read by a whole ring means the model wrote over an
     * entry the driver had not read (it reused its slot).
     */
    if (pending > entries) {
        if (cq) {
            s->cnt.cq_overflows++;
            trace_mana_cq_overflow(q->id, q->prod, q->consumed);
        } else {
            s->cnt.eq_overflows++;
            trace_mana_eq_overflow(q->id, q->prod, q->consumed);
        }
        mana_guest_error(s, cq ? "CQ overflow: more unread CQEs than the ring holds" :
                         "EQ overflow: more unread EQEs than the ring holds",
                         q->id, pending);
    }
    if (!arm) {
        return;
    }
    mana_qstats(s, q)->arms++;
    if (!pending) {
        q->armed = true;
    } else if (cq) {
        /* Entries arrived since the driver looked: fire again. */
        mana_cq_fire(s, q);
    } else {
        mana_eq_fire(s, q);
    }
}

/*
 * Each queue's doorbells belong on one doorbell page: the hardware
 * channel's (id 0 of each type, the page the HWC init EQE names), and the
 * page REGISTER_DEVICE handed out for the Ethernet device for every other
 * queue.  A doorbell on another page is another function's (or nobody's):
 * the hardware would not apply it to this queue.  Counted, reported and
 * not applied.
 */
static bool mana_db_page_ok(ManaState *s, unsigned page, int kind,
                            uint32_t id, uint64_t val)
{
    unsigned want = id ? MANA_ETH_DB_ID : MANA_HWC_DB_ID;

    if (page == want) {
        return true;
    }
    s->cnt.db_wrong_page++;
    trace_mana_db_wrong_page(kind, id, page, want);
    mana_guest_error(s, "doorbell on the wrong doorbell page",
                     (uint64_t)page << 32 | id, val);
    return false;
}

/*
 * A doorbell for a queue the device does not have is the driver's error,
 * with one exception that every upstream kernel makes at unload, not a
 * bug the model can blame on it: mana_hwc_destroy_channel() destroys the
 * hardware channel through the SMC before it frees the channel's queues
 * and their interrupt.  The handler of the last response completes the
 * waiting request (mana_hwc_handle_resp()), then re-arms the CQ
 * (mana_hwc_comp_event()) and last the EQ (mana_gd_process_eq_events());
 * 5.15 also posts the RQ WQE again after the completion.  If the waiter,
 * on another CPU, reaches the SMC request first, those doorbells (id 0,
 * the channel's doorbell page) are for queues gone.  What hardware
 * does with them is not documented; the model ignores and counts them
 * (hwc_late_doorbells) until the channel is set up again.  Not the SQ:
 * a request sent after the teardown is a driver error.
 */
static void mana_db_missing(ManaState *s, unsigned page, int kind,
                            uint32_t id, uint64_t val, const char *what)
{
    if (s->hwc_destroyed && kind != MANA_Q_SQ && id == 0 &&
        page == MANA_HWC_DB_ID) {
        s->cnt.hwc_late_doorbells++;
        trace_mana_db_hwc_late(kind, val);
        return;
    }
    mana_guest_error(s, what, id, val);
}

static void mana_db_eq(ManaState *s, unsigned page, uint64_t val)
{
    uint32_t id = val & 0xffff;
    uint32_t head = (val >> 32) & 0x7fffffff;
    bool arm = val >> 63;

    trace_mana_db_eq(id, head, arm);
    s->cnt.eq_doorbells++;
    s->cnt.eq_arms += arm;
    if (id >= MANA_MAX_EQ || !s->eq[id].live) {
        mana_db_missing(s, page, MANA_Q_EQ, id, val,
                        "EQ doorbell for a missing EQ");
        return;
    }
    if (!mana_db_page_ok(s, page, MANA_Q_EQ, id, val)) {
        return;
    }
    mana_db_ring_head(s, &s->eq[id], head, arm);
}

static void mana_db_cq(ManaState *s, unsigned page, uint64_t val)
{
    uint32_t id = val & 0xffffff;
    uint32_t head = (val >> 32) & 0x7fffffff;
    bool arm = val >> 63;

    trace_mana_db_cq(id, head, arm);
    s->cnt.cq_doorbells++;
    s->cnt.cq_arms += arm;
    if (id >= MANA_MAX_CQ || !s->cq[id].live) {
        mana_db_missing(s, page, MANA_Q_CQ, id, val,
                        "CQ doorbell for a missing CQ");
        return;
    }
    if (!mana_db_page_ok(s, page, MANA_Q_CQ, id, val)) {
        return;
    }
    mana_db_ring_head(s, &s->cq[id], head, arm);
}

static void mana_tx_pump(ManaState *s);

static void mana_db_wq(ManaState *s, unsigned page, bool is_sq, uint64_t val)
{
    uint32_t id = val & 0xffffff;
    uint32_t tail = val >> 32;
    ManaQueue *q;

    if (is_sq) {
        trace_mana_db_sq(id, tail);
        s->cnt.sq_doorbells++;
    } else {
        trace_mana_db_rq(id, tail, (val >> 24) & 0xff);
        s->cnt.rq_doorbells++;
    }
    if (id >= MANA_MAX_WQ || !(is_sq ? s->sq : s->rq)[id].live) {
        mana_db_missing(s, page, is_sq ? MANA_Q_SQ : MANA_Q_RQ, id, val,
                        is_sq ? "SQ doorbell for a missing SQ" :
                        "RQ doorbell for a missing RQ");
        return;
    }
    q = &(is_sq ? s->sq : s->rq)[id];
    if (!mana_db_page_ok(s, page, q->kind, id, val)) {
        return;
    }
    mana_qstats(s, q)->doorbells++;
    if ((uint32_t)(tail - q->cons) > q->size) {
        mana_guest_error(s, "WQ doorbell beyond the ring", id, tail);
        return;
    }
    q->db_tail = tail;
    if (id == 0) {
        qemu_bh_schedule(s->hwc_bh);
    } else if (is_sq && s->tx_sync) {
        mana_tx_pump(s);
    } else if (is_sq) {
        qemu_bh_schedule(s->tx_bh);
    } else {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

static void mana_doorbell(ManaState *s, hwaddr off, uint64_t val,
                          unsigned size)
{
    unsigned page = off / MANA_DB_PAGE_SIZE;

    if (size != 8) {
        mana_guest_error(s, "doorbell write is not 64-bit", off, val);
        return;
    }
    switch (off % MANA_DB_PAGE_SIZE) {
    case MANA_DB_SQ:
        mana_db_wq(s, page, true, val);
        break;
    case MANA_DB_RQ:
        mana_db_wq(s, page, false, val);
        break;
    case MANA_DB_CQ:
        mana_db_cq(s, page, val);
        break;
    case MANA_DB_EQ:
        mana_db_eq(s, page, val);
        break;
    case MANA_DB_DIM:
        trace_mana_db_dim(val);
        break;
    default:
        mana_guest_error(s, "write to an unknown doorbell", off, val);
    }
}

/* BAR0 */

static uint64_t mana_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    ManaState *s = opaque;
    uint64_t val = 0;

    switch (addr) {
    case MANA_REG_DB_PAGE_OFFSET:
        val = MANA_DB_PAGE_OFFSET;
        break;
    case MANA_REG_DB_PAGE_SIZE:
        val = MANA_DB_PAGE_SIZE;
        break;
    case MANA_REG_SHM_OFFSET:
        val = MANA_SMC_OFFSET;
        break;
    default:
        if (addr >= MANA_SMC_OFFSET && addr < MANA_SMC_OFFSET + MANA_SMC_SIZE &&
            size == 4 && !(addr & 3)) {
            val = s->smc[(addr - MANA_SMC_OFFSET) / 4];
        }
    }
    trace_mana_mmio_read(addr, size, val);
    return val;
}

static void mana_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    ManaState *s = opaque;

    trace_mana_mmio_write(addr, size, val);
    if (addr >= MANA_DB_PAGE_OFFSET) {
        mana_doorbell(s, addr - MANA_DB_PAGE_OFFSET, val, size);
    } else if (addr >= MANA_SMC_OFFSET &&
               addr < MANA_SMC_OFFSET + MANA_SMC_SIZE) {
        if (size != 4 || (addr & 3)) {
            mana_guest_error(s, "shared memory write is not 32-bit", addr, val);
            return;
        }
        mana_smc_write(s, (addr - MANA_SMC_OFFSET) / 4, val);
    } else {
        mana_guest_error(s, "write to a read-only register", addr, val);
    }
}

static const MemoryRegionOps mana_mmio_ops = {
    .read = mana_mmio_read,
    .write = mana_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

/* TX */

static void mana_tx_cqe(ManaState *s, ManaQueue *sq, uint32_t wqe_offset,
                        int64_t start)
{
    uint32_t data[15] = { 0 };
    int64_t wait = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - start;

    /* (Never negative here: a CQE is due at its WQE's wire end at the
     * earliest; the clamp keeps a regression readable as 0.) */
    s->cnt.tx_cqe_latency_us_max = MAX(s->cnt.tx_cqe_latency_us_max,
                                       (uint64_t)MAX(wait, 0) / SCALE_US);

    data[0] = MANA_CQE_HDR(MANA_CQE_TX_OKAY);
    data[2] = (wqe_offset / MANA_WQE_BU) << 5;
    s->cnt.tx_cqes++;
    if (sq->cq < MANA_MAX_CQ) {
        mana_post_cqe(s, &s->cq[sq->cq], data, sq->id, true);
    }
}

static void mana_cqe_timer_arm(ManaState *s)
{
    ManaPendingCqe *p = g_queue_peek_head(s->pending_cqes);

    if (p) {
        timer_mod(s->cqe_timer, p->due);
    }
}

static void mana_cqe_timer_cb(void *opaque)
{
    ManaState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    ManaPendingCqe *p;

    while ((p = g_queue_peek_head(s->pending_cqes)) && p->due <= now) {
        g_queue_pop_head(s->pending_cqes);
        if (p->sq < MANA_MAX_WQ && s->sq[p->sq].live &&
            s->sq[p->sq].gen == p->gen) {
            mana_tx_cqe(s, &s->sq[p->sq], p->wqe_offset, p->start);
        }
        g_free(p);
    }
    mana_cqe_timer_arm(s);
}

/*
 * A WQE was put on the wire from start to end (virtual time; end == start
 * on an unlimited wire): complete it when its last byte has left plus the
 * completion delay, or never (lost CQE).  Completions stay in order.
 */
static void mana_tx_complete(ManaState *s, ManaQueue *sq, uint32_t wqe_offset,
                             int64_t start, int64_t end)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t due = MAX(end, now) + (int64_t)s->tx_cqe_delay_us * SCALE_US;
    ManaPendingCqe *p, *last;

    if (s->drop_tx_cqes) {
        s->drop_tx_cqes--;
        s->cnt.tx_cqes_dropped++;
        trace_mana_tx_cqe_dropped(sq->id, wqe_offset, s->drop_tx_cqes);
        return;
    }
    if (due <= now && g_queue_is_empty(s->pending_cqes)) {
        mana_tx_cqe(s, sq, wqe_offset, start);
        return;
    }
    trace_mana_tx_cqe_due(sq->id, wqe_offset, end - start, due - now);
    p = g_new0(ManaPendingCqe, 1);
    p->sq = sq->id;
    p->gen = sq->gen;
    p->wqe_offset = wqe_offset;
    p->start = start;
    p->due = due;
    /* In order: a completion never overtakes an earlier one. */
    last = g_queue_peek_tail(s->pending_cqes);
    if (last && last->due > p->due) {
        p->due = last->due;
    }
    g_queue_push_tail(s->pending_cqes, p);
    if (g_queue_get_length(s->pending_cqes) == 1) {
        mana_cqe_timer_arm(s);
    }
}

static void mana_wire_send(ManaState *s, ManaQueue *sq, const uint8_t *buf,
                           size_t len)
{
    ManaQueueStats *st = mana_qstats(s, sq);

    if (s->rate_mbps) {
        int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        int64_t t = (int64_t)(len + MANA_WIRE_OVERHEAD) * 8 * 1000 /
                    s->rate_mbps;

        s->wire_free_ns = MAX(s->wire_free_ns, now) + t;
    }
    qemu_send_packet(qemu_get_queue(s->nic), buf, len);
    s->cnt.tx_frames++;
    s->cnt.tx_bytes += len;
    st->frames++;
    st->bytes += len;
    trace_mana_tx_frame(sq->id, len);
}

/* The TCP or UDP checksum of the frame, computed whole (pseudo-header
 * included), whatever the driver left in the field. */
static void mana_l4_csum(uint8_t *f, size_t len, size_t l3, size_t l4,
                         bool ip4, bool udp)
{
    size_t field = l4 + (udp ? 6 : 16);
    uint32_t l4len = len - l4;
    uint32_t sum;
    uint16_t c;

    if (field + 2 > len) {
        return;
    }
    stw_be_p(f + field, 0);
    sum = net_checksum_add(l4len, f + l4);
    if (ip4) {
        sum += net_checksum_add(8, f + l3 + 12);
    } else {
        sum += net_checksum_add(32, f + l3 + 8);
    }
    sum += (udp ? IP_PROTO_UDP : IP_PROTO_TCP) + l4len;
    c = net_checksum_finish(sum);
    if (udp && !c) {
        c = 0xffff;
    }
    stw_be_p(f + field, c);
}

static void mana_ip4_csum(uint8_t *f, size_t l3)
{
    size_t ihl = (f[l3] & 0xf) * 4;

    stw_be_p(f + l3 + 10, 0);
    stw_be_p(f + l3 + 10, net_raw_checksum(f + l3, ihl));
}

typedef struct ManaParsed {
    bool ip4, ip6, udp, tcp;
    size_t l3, l4, l5;
} ManaParsed;

static void mana_parse(const uint8_t *f, size_t len, ManaParsed *p)
{
    struct iovec iov = { .iov_base = (void *)f, .iov_len = len };
    eth_ip6_hdr_info ip6;
    eth_ip4_hdr_info ip4;
    eth_l4_hdr_info l4;

    eth_get_protocols(&iov, 1, &p->ip4, &p->ip6, &p->udp, &p->tcp,
                      &p->l3, &p->l4, &p->l5, &ip6, &ip4, &l4);
}

/* TCP segmentation offload: cut the payload into MSS-sized segments.
 * QEMU 7.2's net_tx_pkt would IP-fragment instead (its software
 * "fragmentation" predates TCP segmentation in QEMU 8.0). */
static void mana_tx_tso(ManaState *s, ManaQueue *sq, uint8_t *f, size_t len,
                        uint32_t mss)
{
    ManaParsed p = { 0 };
    size_t hdr, thl, payload, off;
    uint32_t seq;
    uint16_t ipid = 0;
    uint8_t flags;
    uint8_t *o = s->seg_buf;

    mana_parse(f, len, &p);
    if (!p.tcp || !(p.ip4 || p.ip6) || p.l4 + 20 > len) {
        mana_guest_error(s, "TSO on a frame that is not TCP", len, mss);
        s->cnt.tx_errors++;
        return;
    }
    thl = (f[p.l4 + 12] >> 4) * 4;
    hdr = p.l4 + thl;
    if (hdr > len || hdr > 512) {
        mana_guest_error(s, "TSO headers beyond the frame", hdr, len);
        s->cnt.tx_errors++;
        return;
    }
    payload = len - hdr;
    seq = ldl_be_p(f + p.l4 + 4);
    flags = f[p.l4 + 13];
    if (p.ip4) {
        ipid = lduw_be_p(f + p.l3 + 4);
    }
    off = 0;
    do {
        size_t n = MIN(mss, payload - off);
        bool first = off == 0, last = off + n >= payload;

        memcpy(o, f, hdr);
        memcpy(o + hdr, f + hdr + off, n);
        if (p.ip4) {
            stw_be_p(o + p.l3 + 2, hdr - p.l3 + n);
            stw_be_p(o + p.l3 + 4, ipid++);
            mana_ip4_csum(o, p.l3);
        } else {
            stw_be_p(o + p.l3 + 4, hdr - p.l3 - 40 + n);
        }
        stl_be_p(o + p.l4 + 4, seq + off);
        o[p.l4 + 13] = flags & ~((last ? 0 : 0x09) | (first ? 0 : 0x80));
        mana_l4_csum(o, hdr + n, p.l3, p.l4, p.ip4, false);
        mana_wire_send(s, sq, o, hdr + n);
        off += n;
    } while (off < payload);
}

static void mana_tx_frame(ManaState *s, ManaQueue *sq, uint32_t flags,
                          const uint32_t *oob, unsigned oob_len,
                          uint8_t *f, size_t len)
{
    uint32_t d0 = oob[0];
    uint32_t mss = MANA_WQE_CLIENT_DATA_UNIT(flags);

    if (oob_len >= 24 && (oob[2] & MANA_TXOOB_INJECT_VLAN) && len >= 14) {
        uint16_t tci = MANA_TXOOB_PCP(oob[2]) << 13 |
                       MANA_TXOOB_DEI(oob[2]) << 12 | MANA_TXOOB_VLAN_ID(oob[2]);

        memmove(f + 16, f + 12, len - 12);
        stw_be_p(f + 12, ETH_P_VLAN);
        stw_be_p(f + 14, tci);
        len += 4;
    }
    trace_mana_tx(sq->id, len, mss, d0);
    if (mss && (d0 & MANA_TXOOB_COMP_TCP_CSUM)) {
        s->cnt.tx_tso_wqes++;
        mana_tx_tso(s, sq, f, len, mss);
        return;
    }
    if (d0 & (MANA_TXOOB_COMP_TCP_CSUM | MANA_TXOOB_COMP_UDP_CSUM)) {
        ManaParsed p = { 0 };

        s->cnt.tx_csum_wqes++;
        mana_parse(f, len, &p);
        if ((p.tcp || p.udp) && (p.ip4 || p.ip6)) {
            mana_l4_csum(f, len, p.l3, p.l4, p.ip4, p.udp);
        } else {
            mana_guest_error(s, "checksum offload on a frame without TCP/UDP",
                             len, d0);
        }
    }
    mana_wire_send(s, sq, f, len);
}

/* Consume the WQE at the SQ's consumer offset. */
static void mana_tx_one(ManaState *s, ManaQueue *sq)
{
    uint32_t avail = sq->db_tail - sq->cons;
    uint32_t hdr[2], oob[6] = { 0 };
    uint8_t sgl[MANA_TX_MAX_SGE * MANA_SGE_SIZE];
    uint32_t nsge, oob_len, wqe_size, off = sq->cons, i;
    size_t len = 0;
    int64_t now, start, end;

    if (!mana_queue_read(s, sq, off, hdr, sizeof(hdr))) {
        goto bad;
    }
    hdr[0] = le32_to_cpu(hdr[0]);
    hdr[1] = le32_to_cpu(hdr[1]);
    nsge = MANA_WQE_NUM_SGE(hdr[1]);
    oob_len = MANA_WQE_OOB_DIV4(hdr[1]) * 4;
    wqe_size = ROUND_UP(8 + oob_len + nsge * MANA_SGE_SIZE, MANA_WQE_BU);
    if (!nsge || nsge > MANA_TX_MAX_SGE || (oob_len != 8 && oob_len != 24) ||
        wqe_size > MANA_MAX_SQE || wqe_size > avail) {
        mana_guest_error(s, "malformed SQ WQE", sq->id, hdr[1]);
        goto bad;
    }
    if (!mana_queue_read(s, sq, off + 8, oob, oob_len) ||
        !mana_queue_read(s, sq, off + 8 + oob_len, sgl,
                         nsge * MANA_SGE_SIZE)) {
        goto bad;
    }
    for (i = 0; i < oob_len / 4; i++) {
        oob[i] = le32_to_cpu(oob[i]);
    }
    for (i = 0; i < nsge; i++) {
        uint64_t addr = ldq_le_p(sgl + i * MANA_SGE_SIZE);
        uint32_t n = ldl_le_p(sgl + i * MANA_SGE_SIZE + 12);

        if (len + n > MANA_TX_BUF_SIZE - 4 ||
            pci_dma_read(PCI_DEVICE(s), addr, s->tx_buf + len, n) != MEMTX_OK) {
            mana_guest_error(s, "bad TX SGE", addr, n);
            goto bad;
        }
        len += n;
    }
    sq->cons += wqe_size;
    s->cnt.tx_wqes++;
    mana_qstats(s, sq)->entries++;
    /* On a rate-limited wire the WQE's first byte goes out when the wire
     * is free, its last byte at wire_free_ns once mana_wire_send() has
     * added the time of every segment. */
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    start = s->rate_mbps ? MAX(s->wire_free_ns, now) : now;
    mana_tx_frame(s, sq, hdr[1], oob, oob_len, s->tx_buf, len);
    end = s->rate_mbps ? MAX(s->wire_free_ns, start) : start;
    s->cnt.tx_wqe_wire_us_max = MAX(s->cnt.tx_wqe_wire_us_max,
                                    (uint64_t)(end - start) / SCALE_US);
    mana_tx_complete(s, sq, off, start, end);
    return;

bad:
    /* Nothing sensible to do with the rest of the ring. */
    s->cnt.tx_errors++;
    sq->cons = sq->db_tail;
}

/*
 * Send later what the SQs still hold: in a bottom half, which the main
 * loop runs whenever it next takes the BQL, i.e. at a moment of host
 * time; with tx-sync=1 from the wire timer made due now, which fires at
 * a point of virtual time.  With tx-sync=1 an SQ doorbell also sends at
 * once, in its MMIO write: under -icount the device then acts at the
 * same guest instruction in every run (make bench DRIVER=mana's cost
 * boots count instructions per packet; trace event mana_db_sq).
 */
static void mana_tx_kick(ManaState *s)
{
    if (s->tx_sync) {
        timer_mod(s->wire_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    } else {
        qemu_bh_schedule(s->tx_bh);
    }
}

static void mana_tx_pump(ManaState *s)
{
    int budget = MANA_TX_BUDGET;

    for (;;) {
        ManaQueue *sq = NULL;
        uint32_t i;

        for (i = 0; i < MANA_MAX_WQ; i++) {
            uint32_t id = (s->tx_rr + i) % MANA_MAX_WQ;

            if (id && s->sq[id].live && s->sq[id].cons != s->sq[id].db_tail) {
                sq = &s->sq[id];
                break;
            }
        }
        if (!sq) {
            return;
        }
        if (s->rate_mbps) {
            int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

            if (s->wire_free_ns > now + MANA_WIRE_BURST_NS) {
                s->cnt.tx_wire_waits++;
                timer_mod(s->wire_timer, s->wire_free_ns - MANA_WIRE_BURST_NS);
                return;
            }
        }
        if (!budget--) {
            mana_tx_kick(s);
            return;
        }
        mana_tx_one(s, sq);
        s->tx_rr = sq->id + 1;
    }
}

static void mana_tx_bh(void *opaque)
{
    mana_tx_pump(opaque);
}

static void mana_wire_timer_cb(void *opaque)
{
    mana_tx_pump(opaque);
}

/* RX */

ManaQueue *mana_rq_by_handle(ManaState *s, uint64_t handle)
{
    uint64_t id = handle - (MANA_WQOBJ_HANDLE_BASE | (uint64_t)MANA_GDMA_RQ << 32);

    if (id && id < MANA_MAX_WQ && s->rq[id].live && s->rq[id].handle == handle) {
        return &s->rq[id];
    }
    return NULL;
}

void mana_rx_config_changed(ManaState *s)
{
    qemu_flush_queued_packets(qemu_get_queue(s->nic));
}

static bool mana_can_receive(NetClientState *nc)
{
    ManaState *s = qemu_get_nic_opaque(nc);

    return s->hwc_up;
}

static uint32_t mana_rx_hash(ManaState *s, uint32_t *type)
{
    bool ip4, ip6, udp, tcp;
    NetRxPktRssType t;

    net_rx_pkt_get_protocols(s->rx_pkt, &ip4, &ip6, &udp, &tcp);
    if (ip4) {
        if (tcp) {
            t = NetPktRssIpV4Tcp;
            *type = MANA_HASH_TCP_IPV4;
        } else if (udp) {
            t = NetPktRssIpV4Udp;
            *type = MANA_HASH_UDP_IPV4;
        } else {
            t = NetPktRssIpV4;
            *type = MANA_HASH_IPV4;
        }
    } else if (ip6) {
        if (tcp) {
            t = NetPktRssIpV6Tcp;
            *type = MANA_HASH_TCP_IPV6;
        } else if (udp) {
            t = NetPktRssIpV6Udp;
            *type = MANA_HASH_UDP_IPV6;
        } else {
            t = NetPktRssIpV6;
            *type = MANA_HASH_IPV6;
        }
    } else {
        *type = 0;
        return 0;
    }
    return net_rx_pkt_calc_rss_hash(s->rx_pkt, t, s->hash_key);
}

static uint32_t mana_rx_csum_flags(ManaState *s)
{
    bool ip4, ip6, udp, tcp, ok;
    uint32_t f = 0;

    net_rx_pkt_get_protocols(s->rx_pkt, &ip4, &ip6, &udp, &tcp);
    if (ip4 && net_rx_pkt_validate_l3_csum(s->rx_pkt, &ok)) {
        f |= ok ? MANA_RXCQE_IPHDR_CSUM_OK : MANA_RXCQE_IPHDR_CSUM_FAIL;
    } else if (ip6) {
        f |= MANA_RXCQE_IPHDR_CSUM_OK;  /* no IPv6 header checksum */
    }
    if ((tcp || udp) && net_rx_pkt_validate_l4_csum(s->rx_pkt, &ok)) {
        if (tcp) {
            f |= ok ? MANA_RXCQE_TCP_CSUM_OK : MANA_RXCQE_TCP_CSUM_FAIL;
        } else {
            f |= ok ? MANA_RXCQE_UDP_CSUM_OK : MANA_RXCQE_UDP_CSUM_FAIL;
        }
        if (ok) {
            s->cnt.rx_csum_ok++;
        } else {
            s->cnt.rx_csum_bad++;
        }
    }
    return f;
}

static ssize_t mana_receive(NetClientState *nc, const uint8_t *buf,
                            size_t size)
{
    ManaState *s = qemu_get_nic_opaque(nc);
    uint32_t data[15] = { 0 };
    uint32_t hash = 0, hashtype = 0, wqe[8];
    uint64_t obj, addr;
    uint32_t sge_len, wqe_size;
    ManaQueue *rq;

    if (size < ETH_HLEN) {
        return size;
    }
    /* Only frames for this port: its address, broadcast and multicast. */
    if (!(buf[0] & 1) && memcmp(buf, s->conf.macaddr.a, ETH_ALEN)) {
        return size;
    }
    if (!s->rx_enable || !(PCI_DEVICE(s)->config[PCI_COMMAND] &
                           PCI_COMMAND_MASTER)) {
        s->cnt.rx_dropped++;
        trace_mana_rx_drop(size, "vport RX disabled");
        return size;
    }
    net_rx_pkt_attach_data(s->rx_pkt, buf, size, false);
    net_rx_pkt_set_protocols(s->rx_pkt, buf, size);
    obj = s->default_rxobj;
    if (s->rss_enable && s->indir_entries) {
        hash = mana_rx_hash(s, &hashtype);
        if (hashtype) {
            obj = s->indir[hash & (s->indir_entries - 1)];
        }
    }
    rq = mana_rq_by_handle(s, obj);
    if (!rq) {
        s->cnt.rx_dropped++;
        trace_mana_rx_drop(size, "no RQ for the frame");
        return size;
    }
    if (rq->cons == rq->db_tail) {
        /* No receive buffer posted: the hardware drops the frame and
         * counts it (rx_discards_no_wqe, which QUERY_GF_STAT reports).
         * Holding it would stall every RQ of the port behind this one. */
        s->cnt.rx_discards_no_wqe++;
        mana_qstats(s, rq)->discards++;
        trace_mana_rx_discard_nowqe(rq->id, size, s->cnt.rx_discards_no_wqe);
        return size;
    }
    if (!mana_queue_read(s, rq, rq->cons, wqe, sizeof(wqe))) {
        s->cnt.rx_dropped++;
        return size;
    }
    wqe_size = ROUND_UP(8 + MANA_WQE_OOB_DIV4(le32_to_cpu(wqe[1])) * 4 +
                        MANA_WQE_NUM_SGE(le32_to_cpu(wqe[1])) * MANA_SGE_SIZE,
                        MANA_WQE_BU);
    addr = ldq_le_p(&wqe[4]);
    sge_len = le32_to_cpu(wqe[7]);
    if (wqe_size > MANA_MAX_RQE || (uint32_t)(rq->db_tail - rq->cons) < wqe_size) {
        mana_guest_error(s, "malformed RQ WQE", rq->id, le32_to_cpu(wqe[1]));
        rq->cons = rq->db_tail;
        return size;
    }
    data[MANA_RXCQE_WQE_OFFSET_DW] = rq->cons;
    if (size > sge_len) {
        data[0] = MANA_CQE_HDR(MANA_CQE_RX_TRUNCATED);
        s->cnt.rx_dropped++;
        trace_mana_rx_drop(size, "frame larger than the RX buffer");
    } else {
        pci_dma_write(PCI_DEVICE(s), addr, buf, size);
        data[0] = MANA_CQE_HDR(MANA_CQE_RX_OKAY);
        data[1] = hashtype << MANA_RXCQE_HASHTYPE_SHIFT | mana_rx_csum_flags(s);
        data[MANA_RXCQE_PKT_LEN_DW] = size & 0xffff;
        data[MANA_RXCQE_HASH_DW] = hash;
        s->cnt.rx_frames++;
        s->cnt.rx_bytes += size;
        mana_qstats(s, rq)->frames++;
        mana_qstats(s, rq)->bytes += size;
    }
    trace_mana_rx(rq->id, size, hash, rq->cons);
    rq->cons += wqe_size;
    mana_qstats(s, rq)->entries++;
    s->cnt.rx_cqes++;
    if (rq->cq < MANA_MAX_CQ) {
        mana_post_cqe(s, &s->cq[rq->cq], data, rq->id, false);
    }
    return size;
}

static NetClientInfo mana_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = mana_can_receive,
    .receive = mana_receive,
};

/* State */

void mana_reset_queues(ManaState *s)
{
    ManaPendingCqe *p;
    int i;

    for (i = 0; i < MANA_MAX_WQ; i++) {
        mana_queue_destroy(s, &s->sq[i]);
        mana_queue_destroy(s, &s->rq[i]);
    }
    for (i = 0; i < MANA_MAX_CQ; i++) {
        mana_queue_destroy(s, &s->cq[i]);
    }
    for (i = 0; i < MANA_MAX_EQ; i++) {
        mana_queue_destroy(s, &s->eq[i]);
    }
    for (i = 0; i < MANA_MAX_REGIONS; i++) {
        mana_region_free(&s->regions[i]);
    }
    while ((p = g_queue_pop_head(s->pending_cqes))) {
        g_free(p);
    }
    timer_del(s->cqe_timer);
    timer_del(s->wire_timer);
    s->wire_free_ns = 0;
    s->eth_registered = false;
    s->vport_tx_configured = false;
    s->rx_enable = false;
    s->rss_enable = false;
    s->default_rxobj = 0;
    s->indir_entries = 0;
}

static void mana_qdev_reset(DeviceState *dev)
{
    ManaState *s = MANA_VF(dev);

    trace_mana_reset();
    mana_reset_queues(s);
    mana_hwc_reset(s);
    memset(s->smc, 0, sizeof(s->smc));
}

/* Test knobs and counters */

static bool mana_dbg_get(ManaState *s, uint32_t index, uint64_t *val)
{
    if (index == 0) {
        *val = MANA_DBG_MAGIC;
        return true;
    }
    switch (index) {
#define MANA_KNOB_GET(i, name, desc) case i: *val = s->name; return true;
    MANA_DBG_KNOBS(MANA_KNOB_GET)
#undef MANA_KNOB_GET
#define MANA_COUNTER_GET(i, name) case i: *val = s->cnt.name; return true;
    MANA_DBG_COUNTERS(MANA_COUNTER_GET)
#undef MANA_COUNTER_GET
    }
    if (index >= MANA_DBG_QUEUE_BASE &&
        index < MANA_DBG_QUEUE(MANA_DBG_QTYPES, 0, 0)) {
        uint32_t t = (index - MANA_DBG_QUEUE_BASE) >> 12;
        uint32_t id = (index >> 4) & 0xff;
        ManaQueueStats *st = &s->qstats[t][id];

        switch (index & 0xf) {
#define MANA_QFIELD_GET(f, name) case f: *val = st->name; return true;
        MANA_DBG_QUEUE_FIELDS(MANA_QFIELD_GET)
#undef MANA_QFIELD_GET
        }
    }
    *val = ~0ULL;
    return false;
}

static void mana_dbg_set(ManaState *s, uint32_t index, uint32_t val)
{
    switch (index) {
#define MANA_KNOB_SET(i, name, desc) \
    case i: s->name = val; trace_mana_knob(#name, val); break;
    MANA_DBG_KNOBS(MANA_KNOB_SET)
#undef MANA_KNOB_SET
    default:
        mana_guest_error(s, "test port: not a knob", index, val);
        return;
    }
    qemu_bh_schedule(s->tx_bh);
}

static uint32_t mana_config_read(PCIDevice *d, uint32_t addr, int len)
{
    ManaState *s = MANA_VF(d);
    uint32_t cap = s->dbg_cap;

    if (cap && len == 4 && addr == cap + MANA_DBG_DATA_LO) {
        mana_dbg_get(s, s->dbg_index, &s->dbg_latch);
        return s->dbg_latch;
    }
    if (cap && len == 4 && addr == cap + MANA_DBG_DATA_HI) {
        return s->dbg_latch >> 32;
    }
    if (cap && len == 4 && addr == cap + MANA_DBG_INDEX) {
        return s->dbg_index;
    }
    return pci_default_read_config(d, addr, len);
}

static void mana_config_write(PCIDevice *d, uint32_t addr, uint32_t val,
                              int len)
{
    ManaState *s = MANA_VF(d);
    uint32_t cap = s->dbg_cap;

    if (cap && addr >= cap + MANA_DBG_INDEX && addr < cap + MANA_DBG_CAP_LEN) {
        if (len != 4) {
            mana_guest_error(s, "test port access is not 32-bit", addr, val);
        } else if (addr == cap + MANA_DBG_INDEX) {
            s->dbg_index = val;
        } else if (addr == cap + MANA_DBG_DATA_LO) {
            mana_dbg_set(s, s->dbg_index, val);
        }
        return;
    }
    pci_default_write_config(d, addr, val, len);
}

/* "stats": every counter as key=value lines, as the guest tool prints. */
static char *mana_get_stats(Object *obj, Error **errp)
{
    static const char *const qnames[] = MANA_DBG_QTYPE_NAMES;
    ManaState *s = MANA_VF(obj);
    GString *str = g_string_new("");
    int t, id;

#define MANA_KNOB_STR(i, name, desc) \
    g_string_append_printf(str, #name "=%u\n", s->name);
    MANA_DBG_KNOBS(MANA_KNOB_STR)
#undef MANA_KNOB_STR
#define MANA_COUNTER_STR(i, name) \
    g_string_append_printf(str, #name "=%" PRIu64 "\n", s->cnt.name);
    MANA_DBG_COUNTERS(MANA_COUNTER_STR)
#undef MANA_COUNTER_STR
    for (t = 0; t < MANA_DBG_QTYPES; t++) {
        for (id = 0; id < MANA_DBG_QIDS; id++) {
            ManaQueueStats *st = &s->qstats[t][id];

            if (!st->created) {
                continue;
            }
            g_string_append_printf(str, "%s%d", qnames[t], id);
#define MANA_QFIELD_STR(f, name) \
            g_string_append_printf(str, " " #name "=%" PRIu64, st->name);
            MANA_DBG_QUEUE_FIELDS(MANA_QFIELD_STR)
#undef MANA_QFIELD_STR
            g_string_append_c(str, '\n');
        }
    }
    return g_string_free(str, false);
}

static void mana_instance_init(Object *obj)
{
    ManaState *s = MANA_VF(obj);

    /* Knobs: settable with -device ...,rate-mbps=1000 or qom-set. */
    object_property_add_uint32_ptr(obj, "rate-mbps", &s->rate_mbps,
                                   OBJ_PROP_FLAG_READWRITE);
    object_property_add_uint32_ptr(obj, "tx-cqe-delay-us", &s->tx_cqe_delay_us,
                                   OBJ_PROP_FLAG_READWRITE);
    object_property_add_uint32_ptr(obj, "drop-tx-cqes", &s->drop_tx_cqes,
                                   OBJ_PROP_FLAG_READWRITE);
    object_property_add_uint32_ptr(obj, "tx-sync", &s->tx_sync,
                                   OBJ_PROP_FLAG_READWRITE);
#define MANA_COUNTER_PROP(i, name) \
    object_property_add_uint64_ptr(obj, "stat-" #name, &s->cnt.name, \
                                   OBJ_PROP_FLAG_READ);
    MANA_DBG_COUNTERS(MANA_COUNTER_PROP)
#undef MANA_COUNTER_PROP
    object_property_add_str(obj, "stats", mana_get_stats, NULL);
}

static void mana_realize(PCIDevice *d, Error **errp)
{
    ManaState *s = MANA_VF(d);
    DeviceState *dev = DEVICE(d);
    int cap, i;

    if (s->max_queues < 1 || s->max_queues > 64) {
        error_setg(errp, "mana-vf: queues must be 1..64");
        return;
    }
    if (s->num_vectors < 2 || s->num_vectors > 2048) {
        error_setg(errp, "mana-vf: vectors must be 2..2048");
        return;
    }
    d->config[PCI_INTERRUPT_PIN] = 0;

    memory_region_init_io(&s->mmio, OBJECT(s), &mana_mmio_ops, s,
                          "mana-bar0", MANA_BAR0_SIZE);
    pci_register_bar(d, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->mmio);
    if (msix_init_exclusive_bar(d, s->num_vectors, MANA_MSIX_BAR, errp)) {
        return;
    }
    for (i = 0; i < s->num_vectors; i++) {
        msix_vector_use(d, i);
    }
    cap = pci_add_capability(d, PCI_CAP_ID_VNDR, 0, MANA_DBG_CAP_LEN, errp);
    if (cap < 0) {
        return;
    }
    s->dbg_cap = cap;
    d->config[cap + 2] = MANA_DBG_CAP_LEN;
    d->config[cap + 3] = MANA_DBG_VERSION;

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&mana_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);

    s->hwc_bh = qemu_bh_new_guarded(mana_hwc_kick, s, &dev->mem_reentrancy_guard);
    s->tx_bh = qemu_bh_new_guarded(mana_tx_bh, s, &dev->mem_reentrancy_guard);
    s->wire_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, mana_wire_timer_cb, s);
    s->cqe_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, mana_cqe_timer_cb, s);
    s->pending_cqes = g_queue_new();
    s->tx_buf = g_malloc(MANA_TX_BUF_SIZE);
    s->seg_buf = g_malloc(MANA_TX_BUF_SIZE);
    s->hwc_resp = g_malloc0(MANA_PAGE_SIZE);
    net_rx_pkt_init(&s->rx_pkt, false);
}

static void mana_exit(PCIDevice *d)
{
    ManaState *s = MANA_VF(d);

    mana_reset_queues(s);
    qemu_bh_delete(s->hwc_bh);
    qemu_bh_delete(s->tx_bh);
    timer_free(s->wire_timer);
    timer_free(s->cqe_timer);
    g_queue_free(s->pending_cqes);
    g_free(s->tx_buf);
    g_free(s->seg_buf);
    g_free(s->hwc_resp);
    net_rx_pkt_uninit(s->rx_pkt);
    qemu_del_nic(s->nic);
    msix_uninit_exclusive_bar(d);
}

static const VMStateDescription mana_vmstate = {
    .name = "mana-vf",
    .unmigratable = 1,
};

static Property mana_properties[] = {
    DEFINE_NIC_PROPERTIES(ManaState, conf),
    DEFINE_PROP_UINT32("queues", ManaState, max_queues, 16),
    DEFINE_PROP_UINT32("vectors", ManaState, num_vectors, 65),
    DEFINE_PROP_END_OF_LIST(),
};

static void mana_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = mana_realize;
    k->exit = mana_exit;
    k->config_read = mana_config_read;
    k->config_write = mana_config_write;
    k->vendor_id = PCI_VENDOR_ID_MICROSOFT_MANA;
    k->device_id = MANA_VF_DEVICE_ID;
    k->revision = 0;
    k->class_id = PCI_CLASS_NETWORK_ETHERNET;
    dc->desc = "Microsoft Azure Network Adapter VF (bqlkit test model)";
    dc->reset = mana_qdev_reset;
    dc->vmsd = &mana_vmstate;
    device_class_set_props(dc, mana_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo mana_info = {
    .name = TYPE_MANA_VF,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(ManaState),
    .instance_init = mana_instance_init,
    .class_init = mana_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { }
    },
};

static void mana_register_types(void)
{
    type_register_static(&mana_info);
}

type_init(mana_register_types)
