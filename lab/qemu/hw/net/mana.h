/*
 * bqlkit's emulated MANA VF (Microsoft Azure Network Adapter): the state
 * shared by mana.c (PCI function, doorbells, queues, datapath, test knobs)
 * and mana_hwc.c (shared memory channel, hardware channel, messages).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_MANA_H
#define HW_NET_MANA_H

#include "hw/pci/pci.h"
#include "net/net.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "mana_debug.h"
#include "mana_gdma.h"

#define TYPE_MANA_VF "mana-vf"
OBJECT_DECLARE_SIMPLE_TYPE(ManaState, MANA_VF)

/* BAR0: registers, the shared memory channel, doorbell pages */
#define MANA_BAR0_SIZE          0x20000
#define MANA_SMC_OFFSET         0x1000
#define MANA_DB_PAGE_OFFSET     0x10000
#define MANA_DB_PAGE_SIZE       0x1000
#define MANA_DB_PAGES           16
#define MANA_MSIX_BAR           2

/* Queue id spaces; id 0 of each type is the hardware channel's */
#define MANA_MAX_WQ             128
#define MANA_MAX_CQ             256
#define MANA_MAX_EQ             128
#define MANA_MAX_REGIONS        512
#define MANA_MAX_QUEUE_PAGES    4096    /* 16 MiB per queue */

#define MANA_HWC_DB_ID          0
#define MANA_ETH_DB_ID          1
#define MANA_RDMA_DB_ID         2
#define MANA_PDID               1
#define MANA_GPA_MKEY           0x1234
#define MANA_VPORT_HANDLE       0x4d414e4100000001ULL
#define MANA_WQOBJ_HANDLE_BASE  0x5751000000000000ULL

enum {
    MANA_Q_SQ,
    MANA_Q_RQ,
    MANA_Q_CQ,
    MANA_Q_EQ,
    MANA_Q_TYPES
};

typedef struct ManaQueueStats {
#define MANA_QSTAT_FIELD(n, name) uint64_t name;
    MANA_DBG_QUEUE_FIELDS(MANA_QSTAT_FIELD)
#undef MANA_QSTAT_FIELD
} ManaQueueStats;

typedef struct ManaQueue {
    bool live;
    uint8_t kind;           /* MANA_Q_* */
    uint32_t id;
    uint32_t gen;           /* bumped at each create: stale completions */
    uint32_t size;          /* bytes, a power of two */
    uint64_t *pages;        /* guest addresses of its 4 KiB pages */
    uint32_t npages;

    /* SQ, RQ: producer from the doorbell, consumer, in bytes (u32 wraps) */
    uint32_t db_tail;
    uint32_t cons;
    uint32_t cq;            /* the WQ's completion queue */
    uint64_t handle;        /* wq object handle */

    /* CQ, EQ: entries produced; the driver's head from the doorbell, and
     * as a count of entries since the queue was created (consumed) */
    uint32_t prod;
    uint32_t db_head;
    uint32_t consumed;
    bool armed;
    uint32_t eq;            /* CQ: the parent EQ */
    uint16_t msix;          /* EQ: its MSI-X vector */
} ManaQueue;

typedef struct ManaRegion {
    uint64_t handle;
    uint64_t length;
    uint64_t *pages;
    uint32_t npages;
    uint32_t filled;
} ManaRegion;

/* A TX completion waiting for its WQE's last byte to leave the wire and
 * for the completion delay */
typedef struct ManaPendingCqe {
    uint32_t sq;
    uint32_t gen;
    uint32_t wqe_offset;
    int64_t start;          /* the WQE's first byte on the wire */
    int64_t due;
} ManaPendingCqe;

typedef struct ManaCounters {
#define MANA_COUNTER_FIELD(idx, name) uint64_t name;
    MANA_DBG_COUNTERS(MANA_COUNTER_FIELD)
#undef MANA_COUNTER_FIELD
} ManaCounters;

struct ManaState {
    PCIDevice parent_obj;

    NICState *nic;
    NICConf conf;
    MemoryRegion mmio;
    MemoryRegion msix;

    /* properties */
    uint32_t max_queues;
    uint32_t num_vectors;
    uint32_t rate_mbps;
    uint32_t tx_cqe_delay_us;
    uint32_t drop_tx_cqes;
    uint32_t tx_sync;           /* 1: send from the doorbell write itself */

    /* shared memory channel */
    uint32_t smc[MANA_SMC_SIZE / 4];

    /* hardware channel: a request waits here until the RQ has a WQE */
    bool hwc_up;
    bool hwc_destroyed;         /* by the SMC, not set up again since */
    QEMUBH *hwc_bh;
    uint8_t *hwc_resp;
    uint32_t hwc_resp_len;
    bool hwc_resp_pending;
    uint8_t hwc_post_action;    /* what to do once the response is out */
    uint32_t hwc_post_arg;

    /* registered devices */
    bool eth_registered;

    ManaQueue sq[MANA_MAX_WQ];
    ManaQueue rq[MANA_MAX_WQ];
    ManaQueue cq[MANA_MAX_CQ];
    ManaQueue eq[MANA_MAX_EQ];
    ManaQueueStats qstats[MANA_Q_TYPES][MANA_DBG_QIDS];

    ManaRegion regions[MANA_MAX_REGIONS];
    uint64_t next_region_handle;

    /* vport RX steering */
    bool vport_tx_configured;
    bool rx_enable;
    bool rss_enable;
    uint64_t default_rxobj;
    uint8_t hash_key[MANA_HASH_KEY_SIZE];
    uint32_t indir_entries;
    uint64_t indir[512];
    struct NetRxPkt *rx_pkt;

    /* TX: one wire shared by the SQs, served round-robin */
    QEMUBH *tx_bh;
    QEMUTimer *wire_timer;
    int64_t wire_free_ns;
    uint32_t tx_rr;
    uint8_t *tx_buf;
    uint8_t *seg_buf;

    /* delayed TX completions */
    QEMUTimer *cqe_timer;
    GQueue *pending_cqes;

    /* test port */
    uint8_t dbg_cap;
    uint32_t dbg_index;
    uint64_t dbg_latch;

    ManaCounters cnt;
};

/* mana.c */
bool mana_queue_read(ManaState *s, ManaQueue *q, uint32_t off, void *buf,
                     uint32_t len);
bool mana_queue_write(ManaState *s, ManaQueue *q, uint32_t off,
                      const void *buf, uint32_t len);
bool mana_queue_setup(ManaState *s, ManaQueue *q, int kind, uint32_t id,
                      uint32_t size, const uint64_t *pages, uint32_t npages);
void mana_queue_destroy(ManaState *s, ManaQueue *q);
int mana_queue_alloc_id(ManaQueue *table, int n);
void mana_post_eqe(ManaState *s, ManaQueue *eq, uint8_t type,
                   const uint32_t data[3]);
void mana_post_cqe(ManaState *s, ManaQueue *cq, const uint32_t *data,
                   uint32_t wq_num, bool is_sq);
ManaQueue *mana_rq_by_handle(ManaState *s, uint64_t handle);
void mana_rx_config_changed(ManaState *s);
void mana_reset_queues(ManaState *s);
void mana_guest_error(ManaState *s, const char *what, uint64_t a, uint64_t b);

/* mana_hwc.c */
void mana_smc_write(ManaState *s, unsigned dword, uint32_t val);
void mana_hwc_kick(void *opaque);
void mana_hwc_reset(ManaState *s);
ManaRegion *mana_region_find(ManaState *s, uint64_t handle);
void mana_region_free(ManaRegion *r);

#endif /* HW_NET_MANA_H */
