/*
 * bqlkit's emulated MANA VF: the hardware interface as the Linux mana
 * driver (gdma_main.c, shm_channel.c, hw_channel.c, mana_en.c of Linux
 * 5.15 to 7.3) uses it.  Everything is little-endian; message fields are
 * given as byte offsets from the start of the message.
 *
 * This is an interface derived from what the driver reads and writes, not
 * from a hardware specification: where the driver does not care (reserved
 * fields, most error codes) the model picks something plausible.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_MANA_GDMA_H
#define HW_NET_MANA_GDMA_H

#define PCI_VENDOR_ID_MICROSOFT_MANA    0x1414
#define MANA_VF_DEVICE_ID               0x00ba

/* BAR0 registers (VF) */
#define MANA_REG_DB_PAGE_OFFSET         0x08    /* u64 */
#define MANA_REG_DB_PAGE_SIZE           0x10    /* u32 */
#define MANA_REG_SHM_OFFSET             0x18    /* u64 */

/* Doorbell page: one 64-bit register per queue type */
#define MANA_DB_SQ                      0x000
#define MANA_DB_RQ                      0x400
#define MANA_DB_CQ                      0x800
#define MANA_DB_DIM                     0x820   /* 7.x, behind a PF flag */
#define MANA_DB_EQ                      0xff8

/* Shared memory channel: 8 dwords, the last one is the protocol header */
#define MANA_SMC_SIZE                   32
#define MANA_SMC_HDR_TYPE(h)            ((h) & 0x7)
#define MANA_SMC_HDR_VERSION(h)         (((h) >> 3) & 0x7)
#define MANA_SMC_HDR_RESPONSE           (1u << 7)
#define MANA_SMC_HDR_STATUS_SHIFT       8
#define MANA_SMC_HDR_RESET_VF           (1u << 24)
#define MANA_SMC_HDR_OWNER_PF           (1u << 31)
#define MANA_SMC_ESTABLISH_HWC          1
#define MANA_SMC_DESTROY_HWC            2

/* Queue types (gdma_queue_type) */
enum {
    MANA_GDMA_SQ = 1,
    MANA_GDMA_RQ = 2,
    MANA_GDMA_CQ = 3,
    MANA_GDMA_EQ = 4,
};

#define MANA_PAGE_SIZE                  4096
#define MANA_WQE_BU                     32      /* WQE basic unit */
#define MANA_EQE_SIZE                   16
#define MANA_CQE_SIZE                   64
#define MANA_CQE_DATA                   60
#define MANA_OWNER_BITS                 3
#define MANA_MAX_SQE                    512
#define MANA_MAX_RQE                    256
#define MANA_SGE_SIZE                   16

/* WQE header: dword 0 bits 24-31 last_vbytes; dword 1 the flags */
#define MANA_WQE_NUM_SGE(f)             ((f) & 0xff)
#define MANA_WQE_OOB_DIV4(f)            (((f) >> 8) & 0x7)
#define MANA_WQE_OOB_IN_SGL             (1u << 11)
#define MANA_WQE_CLIENT_DATA_UNIT(f)    (((f) >> 16) & 0x3fff)

/* EQE: 3 data dwords, then type (bits 0-7) and owner (bits 29-31) */
enum {
    MANA_EQE_COMPLETION = 3,
    MANA_EQE_TEST_EVENT = 64,
    MANA_EQE_HWC_INIT_EQ_ID_DB = 129,
    MANA_EQE_HWC_INIT_DATA = 130,
    MANA_EQE_HWC_INIT_DONE = 131,
};

/* HWC_INIT_DATA types (value in bits 0-23, type in bits 24-31) */
enum {
    MANA_HWC_DATA_CQID = 1,
    MANA_HWC_DATA_RQID = 2,
    MANA_HWC_DATA_SQID = 3,
    MANA_HWC_DATA_QUEUE_DEPTH = 4,
    MANA_HWC_DATA_MAX_REQUEST = 5,
    MANA_HWC_DATA_MAX_RESPONSE = 6,
    MANA_HWC_DATA_MAX_NUM_CQS = 7,
    MANA_HWC_DATA_PDID = 8,
    MANA_HWC_DATA_GPA_MKEY = 9,
};

/* CQE info dword: wq_num bits 0-23, is_sq bit 24, owner bits 29-31 */
#define MANA_CQE_IS_SQ                  (1u << 24)

/* mana CQE header (first dword of the CQE data) */
#define MANA_CQE_CLIENT_COMPLETION      1
#define MANA_CQE_HDR(type)              ((type) | (MANA_CQE_CLIENT_COMPLETION << 6))
enum {
    MANA_CQE_RX_OKAY = 1,
    MANA_CQE_RX_OBJECT_FENCE = 3,
    MANA_CQE_RX_TRUNCATED = 4,
    MANA_CQE_TX_OKAY = 32,
};

/* RX CQE dword 1 */
#define MANA_RXCQE_HASHTYPE_SHIFT       16
#define MANA_RXCQE_IPHDR_CSUM_OK        (1u << 25)
#define MANA_RXCQE_IPHDR_CSUM_FAIL      (1u << 26)
#define MANA_RXCQE_TCP_CSUM_OK          (1u << 27)
#define MANA_RXCQE_TCP_CSUM_FAIL        (1u << 28)
#define MANA_RXCQE_UDP_CSUM_OK          (1u << 29)
#define MANA_RXCQE_UDP_CSUM_FAIL        (1u << 30)
/* RX CQE: ppi[0] pkt_len in dword 2 (16 bits), hash in dword 4; the
 * WQE offset in dword 14 */
#define MANA_RXCQE_PKT_LEN_DW           2
#define MANA_RXCQE_HASH_DW              4
#define MANA_RXCQE_WQE_OFFSET_DW        14

/* NDIS hash types reported in the RX CQE */
#define MANA_HASH_IPV4                  (1u << 0)
#define MANA_HASH_TCP_IPV4              (1u << 1)
#define MANA_HASH_UDP_IPV4              (1u << 2)
#define MANA_HASH_IPV6                  (1u << 3)
#define MANA_HASH_TCP_IPV6              (1u << 4)
#define MANA_HASH_UDP_IPV6              (1u << 5)

/* TX OOB, short form (8 bytes) */
#define MANA_TXOOB_PKT_FMT(d0)          ((d0) & 0x3)
#define MANA_TXOOB_OUTER_IPV4           (1u << 2)
#define MANA_TXOOB_OUTER_IPV6           (1u << 3)
#define MANA_TXOOB_COMP_IPHDR_CSUM      (1u << 4)
#define MANA_TXOOB_COMP_TCP_CSUM        (1u << 5)
#define MANA_TXOOB_COMP_UDP_CSUM        (1u << 6)
#define MANA_TXOOB_SUPPRESS_CQE         (1u << 7)
#define MANA_TXOOB_TRANS_OFF(d1)        ((d1) & 0x3ff)
/* TX OOB, long form (24 bytes): dword 2 */
#define MANA_TXOOB_INJECT_VLAN          (1u << 3)
#define MANA_TXOOB_PCP(d2)              (((d2) >> 16) & 0x7)
#define MANA_TXOOB_DEI(d2)              (((d2) >> 19) & 0x1)
#define MANA_TXOOB_VLAN_ID(d2)          (((d2) >> 20) & 0xfff)

/* HWC receive completion (struct hwc_rx_oob): dwords of the CQE data */
#define MANA_HWC_RXOOB_WQE_OFFSET_DW    3
#define MANA_HWC_RXOOB_DATA_SIZE_DW     6

/* HWC send WQE: its 24-byte OOB (struct hwc_tx_oob) precedes one SGE */
#define MANA_HWC_TXOOB_SIZE             24

/* Message headers (struct gdma_req_hdr: 40 bytes, gdma_resp_hdr: 32) */
#define GDMA_MSG_TYPE                   4       /* u32 */
#define GDMA_MSG_VERSION                8       /* u16 */
#define GDMA_MSG_ID                     10      /* u16 hwc_msg_id */
#define GDMA_MSG_SIZE                   12      /* u32 */
#define GDMA_REQ_RESP                   16      /* the expected response */
#define GDMA_REQ_DEV_ID                 32
#define GDMA_REQ_ACTIVITY               36
#define GDMA_REQ_HDR_SIZE               40
#define GDMA_RESP_DEV_ID                16
#define GDMA_RESP_ACTIVITY              20
#define GDMA_RESP_STATUS                24
#define GDMA_RESP_HDR_SIZE              32

#define GDMA_STATUS_CMD_UNSUPPORTED     0xffffffffu

enum {
    GDMA_DEVICE_HWC = 1,
    GDMA_DEVICE_MANA = 2,
    GDMA_DEVICE_MANA_IB = 3,
};

/* GDMA requests */
enum {
    GDMA_VERIFY_VF_DRIVER_VERSION = 1,
    GDMA_QUERY_MAX_RESOURCES = 2,
    GDMA_LIST_DEVICES = 3,
    GDMA_REGISTER_DEVICE = 4,
    GDMA_DEREGISTER_DEVICE = 5,
    GDMA_GENERATE_TEST_EQE = 10,
    GDMA_CREATE_QUEUE = 12,
    GDMA_DISABLE_QUEUE = 13,
    GDMA_CREATE_DMA_REGION = 25,
    GDMA_DMA_REGION_ADD_PAGES = 26,
    GDMA_DESTROY_DMA_REGION = 27,
    GDMA_QUERY_HWC_TIMEOUT = 84,
};

/* mana requests */
enum {
    MANA_QUERY_DEV_CONFIG = 0x20001,
    MANA_QUERY_GF_STAT = 0x20002,
    MANA_CONFIG_VPORT_TX = 0x20003,
    MANA_CREATE_WQ_OBJ = 0x20004,
    MANA_DESTROY_WQ_OBJ = 0x20005,
    MANA_FENCE_RQ = 0x20006,
    MANA_CONFIG_VPORT_RX = 0x20007,
    MANA_QUERY_VPORT_CONFIG = 0x20008,
    MANA_QUERY_LINK_CONFIG = 0x2000a,
    MANA_SET_BW_CLAMP = 0x2000b,
    MANA_QUERY_PHY_STAT = 0x2000c,
};

/* Request/response fields (byte offsets from the message start) */
#define VERIFY_REQ_PROTO_MIN            40      /* u64 */
#define VERIFY_REQ_PROTO_MAX            48      /* u64 */
#define VERIFY_REQ_CAP_FLAGS1           56      /* u64 */
#define VERIFY_REQ_OS_VER_STR2          256     /* char[128]: release */
#define VERIFY_RESP_PROTO               32      /* u64 */
#define VERIFY_RESP_PF_CAP_FLAGS1       40      /* u64 */

#define MAXRES_RESP_MAX_SQ              36
#define MAXRES_RESP_MAX_RQ              40
#define MAXRES_RESP_MAX_CQ              44
#define MAXRES_RESP_MAX_EQ              48
#define MAXRES_RESP_MAX_DB              52
#define MAXRES_RESP_MAX_MSIX            68

#define LISTDEV_RESP_NUM                32
#define LISTDEV_RESP_DEVS               40      /* u32 [64] */

#define REGDEV_RESP_PDID                32
#define REGDEV_RESP_GPA_MKEY            36
#define REGDEV_RESP_DB_ID               40

#define TESTEQE_REQ_QUEUE               40

#define CREATEQ_REQ_TYPE                40
#define CREATEQ_REQ_REGION              56      /* u64 */
#define CREATEQ_REQ_SIZE                68
#define CREATEQ_REQ_MSIX                76
#define CREATEQ_RESP_QUEUE              32

#define DISABLEQ_REQ_TYPE               40
#define DISABLEQ_REQ_QUEUE              44

#define DMAREG_REQ_LENGTH               40      /* u64 */
#define DMAREG_REQ_OFFSET_IN_PAGE       48
#define DMAREG_REQ_PAGE_TYPE            52
#define DMAREG_REQ_PAGE_COUNT           56
#define DMAREG_REQ_LIST_LEN             60
#define DMAREG_REQ_LIST                 64      /* u64 [] */
#define DMAREG_RESP_HANDLE              32      /* u64 */
#define DMAADD_REQ_HANDLE               40      /* u64 */
#define DMAADD_REQ_LIST_LEN             48
#define DMAADD_REQ_LIST                 56
#define DMADEL_REQ_HANDLE               40      /* u64 */

#define HWCTMO_REQ_TIMEOUT              40
#define HWCTMO_RESP_TIMEOUT             32

#define DEVCFG_REQ_PROTO_MAJOR          72
#define DEVCFG_RESP_MAX_VPORTS          64      /* u16 */
#define DEVCFG_RESP_MAX_EQS             68
#define DEVCFG_RESP_ADAPTER_MTU         72      /* u16, response v2 */

#define VPCFG_REQ_INDEX                 40
#define VPCFG_RESP_MAX_SQ               32
#define VPCFG_RESP_MAX_RQ               36
#define VPCFG_RESP_INDIR_ENT            40
#define VPCFG_RESP_MAC                  48
#define VPCFG_RESP_VPORT                56      /* u64 */

#define VPTX_REQ_VPORT                  40      /* u64 */
#define VPTX_REQ_PDID                   48
#define VPTX_REQ_DB                     52
#define VPTX_RESP_OFFSET                32      /* u16 */
#define VPTX_RESP_SHORT_FORM            34      /* u8 */

#define WQOBJ_REQ_VPORT                 40      /* u64 */
#define WQOBJ_REQ_TYPE                  48
#define WQOBJ_REQ_WQ_REGION             56      /* u64 */
#define WQOBJ_REQ_CQ_REGION             64      /* u64 */
#define WQOBJ_REQ_WQ_SIZE               72
#define WQOBJ_REQ_CQ_SIZE               76
#define WQOBJ_REQ_CQ_PARENT             84
#define WQOBJ_RESP_WQ_ID                32
#define WQOBJ_RESP_CQ_ID                36
#define WQOBJ_RESP_HANDLE               40      /* u64 */
#define WQDEL_REQ_TYPE                  40
#define WQDEL_REQ_HANDLE                48      /* u64 */

#define FENCE_REQ_HANDLE                40      /* u64 */

#define RXCFG_REQ_VPORT                 40      /* u64 */
#define RXCFG_REQ_NUM_INDIR             48      /* u16 */
#define RXCFG_REQ_INDIR_OFFSET          50      /* u16 */
#define RXCFG_REQ_RX_ENABLE             52
#define RXCFG_REQ_RSS_ENABLE            56
#define RXCFG_REQ_UPD_DEFAULT           60      /* u8 */
#define RXCFG_REQ_UPD_KEY               61      /* u8 */
#define RXCFG_REQ_UPD_TAB               62      /* u8 */
#define RXCFG_REQ_DEFAULT_OBJ           64      /* u64 */
#define RXCFG_REQ_KEY                   72      /* u8 [40] */
#define MANA_HASH_KEY_SIZE              40

#define GFSTAT_REQ_STATS                40      /* u64 */
#define GFSTAT_RESP_REPORTED            32
#define GFSTAT_RESP_RX_NOWQE            40
#define GFSTAT_RESP_RX_BYTES            56
#define GFSTAT_RESP_RX_UCAST_PKTS       64
#define GFSTAT_RESP_RX_UCAST_BYTES      72
#define GFSTAT_RESP_TX_BYTES            192
#define GFSTAT_RESP_TX_UCAST_PKTS       200
#define GFSTAT_RESP_TX_UCAST_BYTES      208

#define LINKCFG_RESP_QOS_SPEED          32
#define LINKCFG_RESP_LINK_SPEED         40

#endif /* HW_NET_MANA_GDMA_H */
