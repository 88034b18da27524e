/*
 * bqlkit's emulated MANA VF: the shared memory channel (SMC), which
 * establishes the hardware channel (HWC), and the HWC's request/response
 * messages: probe (GDMA) and interface up/down (mana) of every driver
 * version from Linux 5.15 to 7.3.
 *
 * The HWC has one send and one receive queue of depth 1: the driver posts a
 * request on its SQ and rings; the device answers in the buffer of the
 * next RQ WQE and posts an RX completion to the HWC's CQ.  A response is
 * exactly as long as the request says it expects (older drivers reject
 * longer ones; newer ones only append fields, left zero here).  Unknown
 * requests get GDMA_STATUS_CMD_UNSUPPORTED and a trace line.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "net/net.h"
#include "net/eth.h"
#include "trace.h"
#include "mana.h"

#define MANA_HWC_MAX_MSG        MANA_PAGE_SIZE
#define MANA_HWC_Q_DEPTH        1

enum {
    MANA_POST_NONE,
    MANA_POST_TEST_EQE,
    MANA_POST_FENCE,
};

typedef struct ManaMsg {
    const uint8_t *req;
    uint32_t req_len;
    uint8_t *resp;
    uint32_t resp_len;
} ManaMsg;

static uint32_t req32(const ManaMsg *m, uint32_t off)
{
    return off + 4 <= m->req_len ? ldl_le_p(m->req + off) : 0;
}

static uint64_t req64(const ManaMsg *m, uint32_t off)
{
    return off + 8 <= m->req_len ? ldq_le_p(m->req + off) : 0;
}

static uint8_t req8(const ManaMsg *m, uint32_t off)
{
    return off < m->req_len ? m->req[off] : 0;
}

static uint16_t req16(const ManaMsg *m, uint32_t off)
{
    return off + 2 <= m->req_len ? lduw_le_p(m->req + off) : 0;
}

static void resp16(ManaMsg *m, uint32_t off, uint16_t v)
{
    if (off + 2 <= m->resp_len) {
        stw_le_p(m->resp + off, v);
    }
}

static void resp32(ManaMsg *m, uint32_t off, uint32_t v)
{
    if (off + 4 <= m->resp_len) {
        stl_le_p(m->resp + off, v);
    }
}

static void resp64(ManaMsg *m, uint32_t off, uint64_t v)
{
    if (off + 8 <= m->resp_len) {
        stq_le_p(m->resp + off, v);
    }
}

static const char *mana_msg_name(uint32_t type)
{
    switch (type) {
    case GDMA_VERIFY_VF_DRIVER_VERSION: return "VERIFY_VF_DRIVER_VERSION";
    case GDMA_QUERY_MAX_RESOURCES: return "QUERY_MAX_RESOURCES";
    case GDMA_LIST_DEVICES: return "LIST_DEVICES";
    case GDMA_REGISTER_DEVICE: return "REGISTER_DEVICE";
    case GDMA_DEREGISTER_DEVICE: return "DEREGISTER_DEVICE";
    case GDMA_GENERATE_TEST_EQE: return "GENERATE_TEST_EQE";
    case GDMA_CREATE_QUEUE: return "CREATE_QUEUE";
    case GDMA_DISABLE_QUEUE: return "DISABLE_QUEUE";
    case GDMA_CREATE_DMA_REGION: return "CREATE_DMA_REGION";
    case GDMA_DMA_REGION_ADD_PAGES: return "DMA_REGION_ADD_PAGES";
    case GDMA_DESTROY_DMA_REGION: return "DESTROY_DMA_REGION";
    case GDMA_QUERY_HWC_TIMEOUT: return "QUERY_HWC_TIMEOUT";
    case MANA_QUERY_DEV_CONFIG: return "QUERY_DEV_CONFIG";
    case MANA_QUERY_GF_STAT: return "QUERY_GF_STAT";
    case MANA_CONFIG_VPORT_TX: return "CONFIG_VPORT_TX";
    case MANA_CREATE_WQ_OBJ: return "CREATE_WQ_OBJ";
    case MANA_DESTROY_WQ_OBJ: return "DESTROY_WQ_OBJ";
    case MANA_FENCE_RQ: return "FENCE_RQ";
    case MANA_CONFIG_VPORT_RX: return "CONFIG_VPORT_RX";
    case MANA_QUERY_VPORT_CONFIG: return "QUERY_VPORT_CONFIG";
    case MANA_QUERY_LINK_CONFIG: return "QUERY_LINK_CONFIG";
    case MANA_SET_BW_CLAMP: return "SET_BW_CLAMP";
    case MANA_QUERY_PHY_STAT: return "QUERY_PHY_STAT";
    default: return "unknown";
    }
}

/* DMA regions: the page lists behind queues */

ManaRegion *mana_region_find(ManaState *s, uint64_t handle)
{
    int i;

    for (i = 0; handle && i < MANA_MAX_REGIONS; i++) {
        if (s->regions[i].handle == handle) {
            return &s->regions[i];
        }
    }
    return NULL;
}

void mana_region_free(ManaRegion *r)
{
    g_free(r->pages);
    memset(r, 0, sizeof(*r));
}

static bool mana_region_add(ManaRegion *r, const ManaMsg *m, uint32_t list,
                            uint32_t n)
{
    uint32_t i;

    if (list + (uint64_t)n * 8 > m->req_len || r->filled + n > r->npages) {
        return false;
    }
    for (i = 0; i < n; i++) {
        r->pages[r->filled++] = req64(m, list + i * 8);
    }
    return true;
}

static uint32_t mana_msg_create_region(ManaState *s, ManaMsg *m)
{
    uint64_t length = req64(m, DMAREG_REQ_LENGTH);
    uint32_t count = req32(m, DMAREG_REQ_PAGE_COUNT);
    uint32_t n = req32(m, DMAREG_REQ_LIST_LEN);
    ManaRegion *r = mana_region_find(s, 0);
    int i;

    for (i = 0; !r && i < MANA_MAX_REGIONS; i++) {
        if (!s->regions[i].handle) {
            r = &s->regions[i];
        }
    }
    trace_mana_region_create(length, count, n, req32(m, DMAREG_REQ_OFFSET_IN_PAGE));
    if (!r || !count || count > MANA_MAX_QUEUE_PAGES || n > count ||
        req32(m, DMAREG_REQ_OFFSET_IN_PAGE) ||
        req32(m, DMAREG_REQ_PAGE_TYPE) != 0 ||
        length > (uint64_t)count * MANA_PAGE_SIZE) {
        mana_guest_error(s, "unsupported DMA region", length, count);
        return 1;
    }
    r->handle = ++s->next_region_handle;
    r->length = length;
    r->npages = count;
    r->pages = g_new0(uint64_t, count);
    if (!mana_region_add(r, m, DMAREG_REQ_LIST, n)) {
        mana_region_free(r);
        return 1;
    }
    resp64(m, DMAREG_RESP_HANDLE, r->handle);
    return 0;
}

static uint32_t mana_msg_region_add_pages(ManaState *s, ManaMsg *m)
{
    ManaRegion *r = mana_region_find(s, req64(m, DMAADD_REQ_HANDLE));

    if (!r || !mana_region_add(r, m, DMAADD_REQ_LIST,
                               req32(m, DMAADD_REQ_LIST_LEN))) {
        return 1;
    }
    return 0;
}

static uint32_t mana_msg_destroy_region(ManaState *s, ManaMsg *m)
{
    ManaRegion *r = mana_region_find(s, req64(m, DMADEL_REQ_HANDLE));

    if (!r) {
        return 1;
    }
    mana_region_free(r);
    return 0;
}

/* A queue created from a region takes its pages; the driver forgets the
 * region handle once the queue exists. */
static bool mana_queue_from_region(ManaState *s, ManaQueue *q, int kind,
                                   uint32_t id, uint64_t handle, uint32_t size)
{
    ManaRegion *r = mana_region_find(s, handle);
    bool ok;

    if (!r || r->filled != r->npages ||
        (uint64_t)r->npages * MANA_PAGE_SIZE < size) {
        mana_guest_error(s, "queue on a missing or short DMA region", handle, size);
        return false;
    }
    ok = mana_queue_setup(s, q, kind, id, size, r->pages, r->npages);
    if (ok) {
        mana_region_free(r);
    }
    return ok;
}

/* GDMA messages */

static uint32_t mana_msg_verify(ManaState *s, ManaMsg *m)
{
    char release[129] = "";

    if (m->req_len >= VERIFY_REQ_OS_VER_STR2 + 128) {
        memcpy(release, m->req + VERIFY_REQ_OS_VER_STR2, 128);
    }
    trace_mana_verify(req64(m, VERIFY_REQ_PROTO_MIN),
                      req64(m, VERIFY_REQ_PROTO_MAX),
                      req64(m, VERIFY_REQ_CAP_FLAGS1), release);
    if (req64(m, VERIFY_REQ_PROTO_MIN) > 1) {
        return 1;
    }
    resp64(m, VERIFY_RESP_PROTO, 1);
    /* No PF capabilities: no HWC timeout query, no CQE coalescing,
     * no interrupt moderation doorbell. */
    resp64(m, VERIFY_RESP_PF_CAP_FLAGS1, 0);
    return 0;
}

static uint32_t mana_msg_max_resources(ManaState *s, ManaMsg *m)
{
    resp32(m, MAXRES_RESP_MAX_SQ, s->max_queues);
    resp32(m, MAXRES_RESP_MAX_RQ, s->max_queues);
    resp32(m, MAXRES_RESP_MAX_CQ, 2 * s->max_queues);
    resp32(m, MAXRES_RESP_MAX_EQ, s->max_queues);
    resp32(m, MAXRES_RESP_MAX_DB, MANA_DB_PAGES);
    resp32(m, MAXRES_RESP_MAX_MSIX, s->num_vectors);
    return 0;
}

static uint32_t mana_msg_list_devices(ManaState *s, ManaMsg *m)
{
    /*
     * The HWC, the Ethernet device and an RDMA device.  Linux 6.12's
     * mana_ib registers the RDMA device without checking it was listed (a
     * NULL dereference otherwise); 7.x fails the whole probe if its
     * registration fails.  So it registers, and every RDMA request after
     * that is unsupported: mana_ib loads and its probe gives up cleanly.
     */
    resp32(m, LISTDEV_RESP_NUM, 3);
    resp32(m, LISTDEV_RESP_DEVS, GDMA_DEVICE_HWC);
    resp32(m, LISTDEV_RESP_DEVS + 4, GDMA_DEVICE_MANA);
    resp32(m, LISTDEV_RESP_DEVS + 8, GDMA_DEVICE_MANA_IB);
    return 0;
}

static uint32_t mana_msg_register(ManaState *s, ManaMsg *m)
{
    uint32_t dev = req32(m, GDMA_REQ_DEV_ID) & 0xffff;

    if (dev != GDMA_DEVICE_MANA && dev != GDMA_DEVICE_MANA_IB) {
        return 1;
    }
    if (dev == GDMA_DEVICE_MANA) {
        s->eth_registered = true;
    }
    resp32(m, REGDEV_RESP_PDID, dev == GDMA_DEVICE_MANA ? MANA_PDID : MANA_PDID + 1);
    resp32(m, REGDEV_RESP_GPA_MKEY, MANA_GPA_MKEY);
    resp32(m, REGDEV_RESP_DB_ID, dev == GDMA_DEVICE_MANA ? MANA_ETH_DB_ID :
                                 MANA_RDMA_DB_ID);
    return 0;
}

static uint32_t mana_msg_create_queue(ManaState *s, ManaMsg *m)
{
    uint32_t type = req32(m, CREATEQ_REQ_TYPE);
    uint32_t msix = req32(m, CREATEQ_REQ_MSIX);
    int id;

    if (type != MANA_GDMA_EQ || msix >= s->num_vectors) {
        mana_guest_error(s, "CREATE_QUEUE: only EQs with a valid vector", type, msix);
        return 1;
    }
    id = mana_queue_alloc_id(s->eq, MANA_MAX_EQ);
    if (id < 0 || !mana_queue_from_region(s, &s->eq[id], MANA_Q_EQ, id,
                                          req64(m, CREATEQ_REQ_REGION),
                                          req32(m, CREATEQ_REQ_SIZE))) {
        return 1;
    }
    s->eq[id].msix = msix;
    resp32(m, CREATEQ_RESP_QUEUE, id);
    return 0;
}

static uint32_t mana_msg_disable_queue(ManaState *s, ManaMsg *m)
{
    uint32_t id = req32(m, DISABLEQ_REQ_QUEUE);

    if (req32(m, DISABLEQ_REQ_TYPE) != MANA_GDMA_EQ || !id ||
        id >= MANA_MAX_EQ || !s->eq[id].live) {
        return 1;
    }
    mana_queue_destroy(s, &s->eq[id]);
    return 0;
}

static uint32_t mana_msg_test_eqe(ManaState *s, ManaMsg *m)
{
    uint32_t id = req32(m, TESTEQE_REQ_QUEUE);

    if (id >= MANA_MAX_EQ || !s->eq[id].live) {
        return 1;
    }
    s->hwc_post_action = MANA_POST_TEST_EQE;
    s->hwc_post_arg = id;
    return 0;
}

/* mana messages */

static uint32_t mana_msg_dev_config(ManaState *s, ManaMsg *m)
{
    resp16(m, DEVCFG_RESP_MAX_VPORTS, 1);
    resp32(m, DEVCFG_RESP_MAX_EQS, s->max_queues);
    /* Response v2 and later: the adapter MTU (no jumbo frames). */
    resp16(m, DEVCFG_RESP_ADAPTER_MTU, (ETH_HLEN + 1500));
    return 0;
}

static uint32_t mana_msg_vport_config(ManaState *s, ManaMsg *m)
{
    if (req32(m, VPCFG_REQ_INDEX) != 0) {
        return 1;
    }
    resp32(m, VPCFG_RESP_MAX_SQ, s->max_queues);
    resp32(m, VPCFG_RESP_MAX_RQ, s->max_queues);
    resp32(m, VPCFG_RESP_INDIR_ENT, 64);
    if (VPCFG_RESP_MAC + ETH_ALEN <= m->resp_len) {
        memcpy(m->resp + VPCFG_RESP_MAC, s->conf.macaddr.a, ETH_ALEN);
    }
    resp64(m, VPCFG_RESP_VPORT, MANA_VPORT_HANDLE);
    return 0;
}

static uint32_t mana_msg_vport_tx(ManaState *s, ManaMsg *m)
{
    if (req64(m, VPTX_REQ_VPORT) != MANA_VPORT_HANDLE) {
        return 1;
    }
    trace_mana_vport_tx(req32(m, VPTX_REQ_PDID), req32(m, VPTX_REQ_DB));
    s->vport_tx_configured = true;
    resp16(m, VPTX_RESP_OFFSET, 0);
    m->resp[VPTX_RESP_SHORT_FORM] = 1;
    return 0;
}

static uint32_t mana_msg_create_wq(ManaState *s, ManaMsg *m)
{
    uint32_t type = req32(m, WQOBJ_REQ_TYPE);
    uint32_t parent = req32(m, WQOBJ_REQ_CQ_PARENT);
    ManaQueue *table = type == MANA_GDMA_SQ ? s->sq : s->rq;
    int wq, cq;

    trace_mana_create_wq(type, req32(m, WQOBJ_REQ_WQ_SIZE),
                         req32(m, WQOBJ_REQ_CQ_SIZE), parent);
    if (req64(m, WQOBJ_REQ_VPORT) != MANA_VPORT_HANDLE ||
        (type != MANA_GDMA_SQ && type != MANA_GDMA_RQ) ||
        parent >= MANA_MAX_EQ || !s->eq[parent].live) {
        return 1;
    }
    wq = mana_queue_alloc_id(table, MANA_MAX_WQ);
    cq = mana_queue_alloc_id(s->cq, MANA_MAX_CQ);
    if (wq < 0 || cq < 0) {
        return 1;
    }
    if (!mana_queue_from_region(s, &s->cq[cq], MANA_Q_CQ, cq,
                                req64(m, WQOBJ_REQ_CQ_REGION),
                                req32(m, WQOBJ_REQ_CQ_SIZE))) {
        return 1;
    }
    if (!mana_queue_from_region(s, &table[wq],
                                type == MANA_GDMA_SQ ? MANA_Q_SQ : MANA_Q_RQ,
                                wq, req64(m, WQOBJ_REQ_WQ_REGION),
                                req32(m, WQOBJ_REQ_WQ_SIZE))) {
        mana_queue_destroy(s, &s->cq[cq]);
        return 1;
    }
    s->cq[cq].eq = parent;
    table[wq].cq = cq;
    table[wq].handle = MANA_WQOBJ_HANDLE_BASE | (uint64_t)type << 32 | wq;
    resp32(m, WQOBJ_RESP_WQ_ID, wq);
    resp32(m, WQOBJ_RESP_CQ_ID, cq);
    resp64(m, WQOBJ_RESP_HANDLE, table[wq].handle);
    return 0;
}

static uint32_t mana_msg_destroy_wq(ManaState *s, ManaMsg *m)
{
    uint32_t type = req32(m, WQDEL_REQ_TYPE);
    uint64_t handle = req64(m, WQDEL_REQ_HANDLE);
    uint64_t id = handle - (MANA_WQOBJ_HANDLE_BASE | (uint64_t)type << 32);
    ManaQueue *table = type == MANA_GDMA_SQ ? s->sq : s->rq;

    if ((type != MANA_GDMA_SQ && type != MANA_GDMA_RQ) || !id ||
        id >= MANA_MAX_WQ || !table[id].live || table[id].handle != handle) {
        return 1;
    }
    mana_queue_destroy(s, &s->cq[table[id].cq]);
    mana_queue_destroy(s, &table[id]);
    if (type == MANA_GDMA_RQ) {
        mana_rx_config_changed(s);
    }
    return 0;
}

static uint32_t mana_msg_fence_rq(ManaState *s, ManaMsg *m)
{
    ManaQueue *rq = mana_rq_by_handle(s, req64(m, FENCE_REQ_HANDLE));

    if (!rq) {
        return 1;
    }
    s->hwc_post_action = MANA_POST_FENCE;
    s->hwc_post_arg = rq->id;
    return 0;
}

static uint32_t mana_msg_vport_rx(ManaState *s, ManaMsg *m)
{
    uint32_t n = req16(m, RXCFG_REQ_NUM_INDIR);
    uint32_t tab = req16(m, RXCFG_REQ_INDIR_OFFSET);
    uint32_t i;

    if (req64(m, RXCFG_REQ_VPORT) != MANA_VPORT_HANDLE) {
        return 1;
    }
    if (req8(m, RXCFG_REQ_UPD_TAB)) {
        if (!n || n > ARRAY_SIZE(s->indir) || !is_power_of_2(n) ||
            tab + n * 8 > m->req_len) {
            mana_guest_error(s, "CONFIG_VPORT_RX: bad indirection table", n, tab);
            return 1;
        }
        for (i = 0; i < n; i++) {
            s->indir[i] = req64(m, tab + i * 8);
        }
        s->indir_entries = n;
    }
    if (req8(m, RXCFG_REQ_UPD_KEY)) {
        memcpy(s->hash_key, m->req + RXCFG_REQ_KEY, MANA_HASH_KEY_SIZE);
    }
    if (req8(m, RXCFG_REQ_UPD_DEFAULT)) {
        s->default_rxobj = req64(m, RXCFG_REQ_DEFAULT_OBJ);
    }
    s->rx_enable = req32(m, RXCFG_REQ_RX_ENABLE) == 1;
    s->rss_enable = req32(m, RXCFG_REQ_RSS_ENABLE) == 1;
    trace_mana_vport_rx(s->rx_enable, s->rss_enable, s->indir_entries,
                        req8(m, RXCFG_REQ_UPD_DEFAULT),
                        req8(m, RXCFG_REQ_UPD_KEY), req8(m, RXCFG_REQ_UPD_TAB));
    mana_rx_config_changed(s);
    return 0;
}

static uint32_t mana_msg_gf_stat(ManaState *s, ManaMsg *m)
{
    resp64(m, GFSTAT_RESP_REPORTED, req64(m, GFSTAT_REQ_STATS));
    resp64(m, GFSTAT_RESP_RX_NOWQE, s->cnt.rx_discards_no_wqe);
    resp64(m, GFSTAT_RESP_RX_BYTES, s->cnt.rx_bytes);
    resp64(m, GFSTAT_RESP_RX_UCAST_PKTS, s->cnt.rx_frames);
    resp64(m, GFSTAT_RESP_RX_UCAST_BYTES, s->cnt.rx_bytes);
    resp64(m, GFSTAT_RESP_TX_BYTES, s->cnt.tx_bytes);
    resp64(m, GFSTAT_RESP_TX_UCAST_PKTS, s->cnt.tx_frames);
    resp64(m, GFSTAT_RESP_TX_UCAST_BYTES, s->cnt.tx_bytes);
    return 0;
}

static uint32_t mana_msg_link_config(ManaState *s, ManaMsg *m)
{
    uint32_t speed = s->rate_mbps ? s->rate_mbps : 100000;

    resp32(m, LINKCFG_RESP_QOS_SPEED, speed);
    resp32(m, LINKCFG_RESP_LINK_SPEED, speed);
    return 0;
}

static uint32_t mana_handle_msg(ManaState *s, ManaMsg *m, uint32_t type)
{
    switch (type) {
    case GDMA_VERIFY_VF_DRIVER_VERSION:
        return mana_msg_verify(s, m);
    case GDMA_QUERY_MAX_RESOURCES:
        return mana_msg_max_resources(s, m);
    case GDMA_LIST_DEVICES:
        return mana_msg_list_devices(s, m);
    case GDMA_REGISTER_DEVICE:
        return mana_msg_register(s, m);
    case GDMA_DEREGISTER_DEVICE:
        if ((req32(m, GDMA_REQ_DEV_ID) & 0xffff) == GDMA_DEVICE_MANA) {
            s->eth_registered = false;
        }
        return 0;
    case GDMA_GENERATE_TEST_EQE:
        return mana_msg_test_eqe(s, m);
    case GDMA_CREATE_QUEUE:
        return mana_msg_create_queue(s, m);
    case GDMA_DISABLE_QUEUE:
        return mana_msg_disable_queue(s, m);
    case GDMA_CREATE_DMA_REGION:
        return mana_msg_create_region(s, m);
    case GDMA_DMA_REGION_ADD_PAGES:
        return mana_msg_region_add_pages(s, m);
    case GDMA_DESTROY_DMA_REGION:
        return mana_msg_destroy_region(s, m);
    case GDMA_QUERY_HWC_TIMEOUT:
        resp32(m, HWCTMO_RESP_TIMEOUT, req32(m, HWCTMO_REQ_TIMEOUT));
        return 0;
    case MANA_QUERY_DEV_CONFIG:
        return mana_msg_dev_config(s, m);
    case MANA_QUERY_GF_STAT:
        return mana_msg_gf_stat(s, m);
    case MANA_CONFIG_VPORT_TX:
        return mana_msg_vport_tx(s, m);
    case MANA_CREATE_WQ_OBJ:
        return mana_msg_create_wq(s, m);
    case MANA_DESTROY_WQ_OBJ:
        return mana_msg_destroy_wq(s, m);
    case MANA_FENCE_RQ:
        return mana_msg_fence_rq(s, m);
    case MANA_CONFIG_VPORT_RX:
        return mana_msg_vport_rx(s, m);
    case MANA_QUERY_VPORT_CONFIG:
        return mana_msg_vport_config(s, m);
    case MANA_QUERY_LINK_CONFIG:
        return mana_msg_link_config(s, m);
    case MANA_QUERY_PHY_STAT:
        /* All zero: no PHY counters. */
        return 0;
    default:
        /* Including MANA_SET_BW_CLAMP and the RDMA requests. */
        s->cnt.hwc_unknown++;
        trace_mana_hwc_unknown(type, m->req_len);
        qemu_log_mask(LOG_UNIMP, "mana: unsupported HWC request 0x%x\n", type);
        return GDMA_STATUS_CMD_UNSUPPORTED;
    }
}

/* Build the response to one request into s->hwc_resp. */
static void mana_hwc_request(ManaState *s, const uint8_t *req, uint32_t len)
{
    ManaMsg m = { .req = req, .req_len = len, .resp = s->hwc_resp };
    uint32_t type, status;

    s->cnt.hwc_requests++;
    s->hwc_post_action = MANA_POST_NONE;
    memset(s->hwc_resp, 0, MANA_HWC_MAX_MSG);
    if (len < GDMA_REQ_HDR_SIZE) {
        mana_guest_error(s, "HWC request shorter than its header", len, 0);
        s->cnt.hwc_errors++;
        m.resp_len = GDMA_RESP_HDR_SIZE;
        stl_le_p(s->hwc_resp + GDMA_RESP_STATUS, 1);
        s->hwc_resp_len = m.resp_len;
        return;
    }
    type = ldl_le_p(req + GDMA_MSG_TYPE);
    m.resp_len = ldl_le_p(req + GDMA_REQ_RESP + GDMA_MSG_SIZE);
    m.resp_len = MAX(MIN(m.resp_len, MANA_HWC_MAX_MSG), GDMA_RESP_HDR_SIZE);
    trace_mana_hwc_request(mana_msg_name(type), type,
                           lduw_le_p(req + GDMA_MSG_VERSION), len, m.resp_len,
                           lduw_le_p(req + GDMA_MSG_ID));
    /* The response header echoes what the driver expects. */
    memcpy(s->hwc_resp, req + GDMA_REQ_RESP, 16);
    stw_le_p(s->hwc_resp + GDMA_MSG_ID, lduw_le_p(req + GDMA_MSG_ID));
    stl_le_p(s->hwc_resp + GDMA_RESP_DEV_ID, ldl_le_p(req + GDMA_REQ_DEV_ID));
    stl_le_p(s->hwc_resp + GDMA_RESP_ACTIVITY,
             ldl_le_p(req + GDMA_REQ_ACTIVITY));
    status = mana_handle_msg(s, &m, type);
    if (status && status != GDMA_STATUS_CMD_UNSUPPORTED) {
        s->cnt.hwc_errors++;
    }
    stl_le_p(s->hwc_resp + GDMA_RESP_STATUS, status);
    s->hwc_resp_len = m.resp_len;
    trace_mana_hwc_response(mana_msg_name(type), type, status, m.resp_len);
}

static void mana_hwc_post_action(ManaState *s)
{
    uint32_t id = s->hwc_post_arg;
    uint32_t ev[3] = { 0 };
    uint32_t data[15] = { 0 };

    switch (s->hwc_post_action) {
    case MANA_POST_TEST_EQE:
        if (id < MANA_MAX_EQ && s->eq[id].live) {
            mana_post_eqe(s, &s->eq[id], MANA_EQE_TEST_EVENT, ev);
        }
        break;
    case MANA_POST_FENCE:
        if (id < MANA_MAX_WQ && s->rq[id].live) {
            data[0] = MANA_CQE_HDR(MANA_CQE_RX_OBJECT_FENCE);
            s->cnt.fences++;
            trace_mana_fence(id);
            mana_post_cqe(s, &s->cq[s->rq[id].cq], data, id, false);
        }
        break;
    }
    s->hwc_post_action = MANA_POST_NONE;
}

/* Put the pending response into the next HWC RQ buffer. */
static bool mana_hwc_deliver(ManaState *s)
{
    ManaQueue *rq = &s->rq[0];
    uint32_t wqe[8], data[15] = { 0 };
    uint64_t addr;
    uint32_t size;

    if (!rq->live || rq->cons == rq->db_tail) {
        return false;
    }
    if (!mana_queue_read(s, rq, rq->cons, wqe, sizeof(wqe))) {
        return false;
    }
    addr = ldq_le_p(&wqe[4]);
    size = le32_to_cpu(wqe[7]);
    if (size < s->hwc_resp_len) {
        mana_guest_error(s, "HWC RQ buffer too small", size, s->hwc_resp_len);
        s->hwc_resp_len = size;
    }
    pci_dma_write(PCI_DEVICE(s), addr, s->hwc_resp, s->hwc_resp_len);
    data[0] = 3 << 6;           /* som, eom */
    data[MANA_HWC_RXOOB_WQE_OFFSET_DW] = rq->cons;
    data[MANA_HWC_RXOOB_DATA_SIZE_DW] = s->hwc_resp_len;
    rq->cons += MANA_WQE_BU;
    s->hwc_resp_pending = false;
    mana_post_cqe(s, &s->cq[0], data, rq->id, false);
    mana_hwc_post_action(s);
    return true;
}

/* Bottom half: serve the HWC SQ (and a response waiting for an RQ WQE). */
void mana_hwc_kick(void *opaque)
{
    ManaState *s = opaque;
    ManaQueue *sq = &s->sq[0];
    uint8_t *req = NULL;

    if (!s->hwc_up) {
        return;
    }
    if (s->hwc_resp_pending && !mana_hwc_deliver(s)) {
        return;
    }
    while (sq->live && sq->cons != sq->db_tail) {
        uint32_t hdr[2], oob, nsge, wqe_size, len;
        uint8_t sge[MANA_SGE_SIZE];
        uint64_t addr;

        if (!mana_queue_read(s, sq, sq->cons, hdr, sizeof(hdr))) {
            break;
        }
        nsge = MANA_WQE_NUM_SGE(le32_to_cpu(hdr[1]));
        oob = MANA_WQE_OOB_DIV4(le32_to_cpu(hdr[1])) * 4;
        wqe_size = ROUND_UP(8 + oob + nsge * MANA_SGE_SIZE, MANA_WQE_BU);
        if (nsge != 1 || wqe_size > (uint32_t)(sq->db_tail - sq->cons) ||
            !mana_queue_read(s, sq, sq->cons + 8 + oob, sge, sizeof(sge))) {
            mana_guest_error(s, "malformed HWC SQ WQE", le32_to_cpu(hdr[1]), 0);
            sq->cons = sq->db_tail;
            break;
        }
        sq->cons += wqe_size;
        addr = ldq_le_p(sge);
        len = MIN(ldl_le_p(sge + 12), MANA_HWC_MAX_MSG);
        if (!req) {
            req = g_malloc(MANA_HWC_MAX_MSG);
        }
        if (pci_dma_read(PCI_DEVICE(s), addr, req, len) != MEMTX_OK) {
            mana_guest_error(s, "HWC request unreadable", addr, len);
            continue;
        }
        mana_hwc_request(s, req, len);
        s->hwc_resp_pending = true;
        if (!mana_hwc_deliver(s)) {
            break;
        }
    }
    g_free(req);
}

void mana_hwc_reset(ManaState *s)
{
    s->hwc_up = false;
    s->hwc_destroyed = false;
    s->hwc_resp_pending = false;
    s->hwc_post_action = MANA_POST_NONE;
}

/* Shared memory channel */

static void mana_hwc_establish(ManaState *s)
{
    const uint8_t *b = (const uint8_t *)s->smc;
    uint16_t high = lduw_le_p(b + 24);
    uint16_t msix = lduw_le_p(b + 26);
    uint64_t addr[4];
    uint32_t ev[3] = { 0 };
    static const uint32_t data[][2] = {
        { MANA_HWC_DATA_CQID, 0 },
        { MANA_HWC_DATA_RQID, 0 },
        { MANA_HWC_DATA_SQID, 0 },
        { MANA_HWC_DATA_QUEUE_DEPTH, MANA_HWC_Q_DEPTH },
        { MANA_HWC_DATA_MAX_REQUEST, MANA_HWC_MAX_MSG },
        { MANA_HWC_DATA_MAX_RESPONSE, MANA_HWC_MAX_MSG },
        { MANA_HWC_DATA_MAX_NUM_CQS, MANA_MAX_CQ },
        { MANA_HWC_DATA_PDID, MANA_PDID },
        { MANA_HWC_DATA_GPA_MKEY, MANA_GPA_MKEY },
    };
    int i;

    for (i = 0; i < 4; i++) {
        uint64_t pfn = 0;

        memcpy(&pfn, b + 6 * i, 6);
        pfn = le64_to_cpu(pfn) | (uint64_t)((high >> (4 * i)) & 0xf) << 48;
        addr[i] = pfn * MANA_PAGE_SIZE;
    }
    trace_mana_smc_establish(addr[0], addr[1], addr[2], addr[3], msix);
    /* A new channel: whatever the previous driver left is gone. */
    mana_reset_queues(s);
    mana_hwc_reset(s);
    if (msix >= s->num_vectors ||
        !mana_queue_setup(s, &s->eq[0], MANA_Q_EQ, 0, MANA_PAGE_SIZE, &addr[0], 1) ||
        !mana_queue_setup(s, &s->cq[0], MANA_Q_CQ, 0, MANA_PAGE_SIZE, &addr[1], 1) ||
        !mana_queue_setup(s, &s->rq[0], MANA_Q_RQ, 0, MANA_PAGE_SIZE, &addr[2], 1) ||
        !mana_queue_setup(s, &s->sq[0], MANA_Q_SQ, 0, MANA_PAGE_SIZE, &addr[3], 1)) {
        mana_reset_queues(s);
        return;
    }
    s->eq[0].msix = msix;
    s->cq[0].armed = true;      /* the driver never arms the HWC CQ first */
    s->rq[0].cq = 0;
    s->sq[0].cq = 0;
    s->hwc_up = true;

    ev[0] = 0 | MANA_HWC_DB_ID << 16;           /* EQ id, doorbell page */
    mana_post_eqe(s, &s->eq[0], MANA_EQE_HWC_INIT_EQ_ID_DB, ev);
    for (i = 0; i < ARRAY_SIZE(data); i++) {
        ev[0] = data[i][1] | data[i][0] << 24;
        mana_post_eqe(s, &s->eq[0], MANA_EQE_HWC_INIT_DATA, ev);
    }
    ev[0] = 0;
    mana_post_eqe(s, &s->eq[0], MANA_EQE_HWC_INIT_DONE, ev);
}

void mana_smc_write(ManaState *s, unsigned dword, uint32_t val)
{
    uint32_t type, status = 0;

    s->smc[dword] = val;
    if (dword != MANA_SMC_SIZE / 4 - 1) {
        return;
    }
    type = MANA_SMC_HDR_TYPE(val);
    trace_mana_smc_request(type, MANA_SMC_HDR_VERSION(val),
                           !!(val & MANA_SMC_HDR_RESET_VF));
    if (val & MANA_SMC_HDR_RESPONSE) {
        mana_guest_error(s, "SMC: the driver wrote a response", val, 0);
        return;
    }
    switch (type) {
    case MANA_SMC_ESTABLISH_HWC:
        /* Answer first: the driver polls the header before it waits for
         * the channel's start-up events. */
        s->smc[dword] = type | MANA_SMC_HDR_RESPONSE;
        mana_hwc_establish(s);
        if (!s->hwc_up) {
            status = 1;
        }
        break;
    case MANA_SMC_DESTROY_HWC:
        mana_reset_queues(s);
        mana_hwc_reset(s);
        s->hwc_destroyed = true;
        break;
    default:
        mana_guest_error(s, "SMC: unknown request", val, 0);
        status = 1;
    }
    s->smc[dword] = (val & 0x3f) | MANA_SMC_HDR_RESPONSE |
                    status << MANA_SMC_HDR_STATUS_SHIFT;
}
