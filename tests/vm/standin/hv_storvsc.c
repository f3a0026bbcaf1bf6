// SPDX-License-Identifier: GPL-2.0
/*
 * hv_storvsc stand-in: test code for hvtuned's QEMU tests, never shipped.
 *
 * Linux sees it as it sees Hyper-V storvsc from the guest side: a bus "vmbus",
 * a root device VMBUS:00, controllers named by instance GUID with class_id /
 * device_id / modalias, a driver and module hv_storvsc with the real module
 * parameters, a Scsi_Host per controller built as storvsc_probe() builds it,
 * over the real SCSI midlayer, sd and blk-mq. The Hyper-V host (VSP) is a RAM
 * disk per LUN answering as Microsoft's storvsp does. Citations: Debian
 * linux-source-6.1 6.1.192-3; "storvsc_drv.c" = drivers/scsi/storvsc_drv.c,
 * "vmbus_drv.c" = drivers/hv/vmbus_drv.c, "hyperv.h" = include/linux/hyperv.h,
 * "openvmm" = github.com/microsoft/openvmm vm/devices/storage/{storvsp,scsidisk}.
 * A bare ":NNNN" is a storvsc_drv.c line.
 *
 * One source for every kernel of the real-kernel tier, built against each one's
 * headers. Where storvsc itself differs (what hvtuned sees), the model follows
 * that version's storvsc_drv.c, cited as 5.10:NNNN (linux-source-5.10
 * 5.10.262-1), 6.12:NNNN (linux-source-6.12 6.12.118-1), 7.3:NNNN
 * (linux-source-7.3 7.3.4-1~bpo13+1):
 *   - storvsc_max_hw_queues: absent before 5.13 (a81a38cc6dda); 5.10:2015-2016
 *     gives a SCSI controller one hw queue per present CPU, always. From 5.13 a
 *     uint 0644 read at probe, reset to 0 (with a warning) above the present
 *     CPUs, not clamped: :2045-2055, 6.12:2055-2063, 7.3:2057-2065.
 *   - requests a channel: 5.10:2173-2178 divides the ring (128 KiB less a page,
 *     not VMBUS_RING_SIZE) by a packet less vmscsi_size_delta (the WIN8
 *     extension's 16 bytes, 5.10:231): 369; :2212-2217, 6.12:2220-2225, 7.3:2222-2227: 352.
 *   - can_queue = that x (subchannels + 1) x 90%: 5.10:1943, :1951, 6.12:1962,
 *     7.3:1964. cmd_size sizeof(struct storvsc_cmd_request), 416 on each:
 *     5.10:1852 (struct at 5.10:423-436), :1880, 6.12:1889, 7.3:1891.
 * The kernel API around them (bus callbacks, scsi_done, the host template's
 * hooks) moved between these versions: the STANDIN_* macros below follow it,
 * and change no modelled behaviour.
 *
 * Test control (not part of the model), debugfs file
 *   /sys/kernel/debug/hv_storvsc_standin/control   (write one command; read: state)
 *     add scsi|ide <guid> [nluns [mib]]  offer a controller, LUNs 0..nluns-1 (1 x 8 MiB)
 *     del <guid>                         rescind it (unbinds, frees its disks)
 *     lun-add <guid> <lun> <mib>         host adds a LUN, then sends ENUMERATE_BUS
 *     lun-del <guid> <lun>               host drops a LUN, then sends ENUMERATE_BUS
 *     rescan <guid>                      ENUMERATE_BUS only
 *   A write returns once the probes, scans and removals it caused have finished.
 * Load-time parameters (mode 0, so /sys/module/hv_storvsc/parameters/ lists only
 * the real driver's five):
 *   standin_controllers=scsi:<guid>[:nluns[:mib]],ide:<guid>[:nluns[:mib]],...
 *   standin_max_transfer_bytes=N  host's max_transfer_bytes (default 0x40000)
 *   standin_wce=1                 report write cache enabled (default disabled)
 * The LUNs belong to the controller device (the host side): they survive
 * unbind/bind of hv_storvsc, so the disks come back with their data.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/hyperv.h>
#include <linux/vmalloc.h>
#include <linux/version.h>
#if __has_include(<linux/unaligned.h>)		/* moved there in 6.12 */
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif
#include <scsi/scsi.h>
#include <scsi/scsi_cmnd.h>
#include <scsi/scsi_dbg.h>
#include <scsi/scsi_device.h>
#include <scsi/scsi_devinfo.h>
#include <scsi/scsi_host.h>

/* The kernel API the stand-in uses, by version (none of it is modelled behaviour). */
#define STANDIN_KV(a, b) (LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0))
#if STANDIN_KV(5, 15)		/* bus_type.remove returns void */
#define STANDIN_BUS_REMOVE_RET void
#define STANDIN_BUS_REMOVE_OK
#else
#define STANDIN_BUS_REMOVE_RET int
#define STANDIN_BUS_REMOVE_OK 0
#endif
#if STANDIN_KV(6, 11)		/* bus_type.match takes a const driver */
#define STANDIN_MATCH_DRV const struct device_driver
#else
#define STANDIN_MATCH_DRV struct device_driver
#endif
#if STANDIN_KV(6, 3)		/* bus_type.uevent takes a const device */
#define STANDIN_UEVENT_DEV const struct device
#else
#define STANDIN_UEVENT_DEV struct device
#endif
#if !STANDIN_KV(5, 16)		/* scsi_done() came in 5.16 */
#define scsi_done(scmnd) (scmnd)->scsi_done(scmnd)
#endif
#ifdef SCSI_MLQUEUE_HOST_BUSY	/* an enum scsi_qc_status from 7.x */
#define STANDIN_QC_STATUS int
#else
#define STANDIN_QC_STATUS enum scsi_qc_status
#endif
/* storvsc_max_hw_queues exists from 5.13 (a81a38cc6dda) */
#define STANDIN_HAS_MAX_HW_QUEUES STANDIN_KV(5, 13)

/* The real module's parameters, :154-161 and :336-356 */
static int logging_level = 1;			/* 1 error, 2 warning */
module_param(logging_level, int, 0644);
static int storvsc_ringbuffer_size = 128 * 1024;
module_param(storvsc_ringbuffer_size, int, 0444);
#if STANDIN_HAS_MAX_HW_QUEUES
static unsigned int storvsc_max_hw_queues;	/* :342/:347, read only at probe */
module_param(storvsc_max_hw_queues, uint, 0644);
#endif
static int storvsc_vcpus_per_sub_channel = 4;
module_param(storvsc_vcpus_per_sub_channel, int, 0444);
static int ring_avail_percent_lowater = 10;
module_param(ring_avail_percent_lowater, int, 0444);

static char *standin_controllers = "";
module_param(standin_controllers, charp, 0);
/* storvsc takes max_transfer_bytes from the host's QUERY_PROPERTIES answer
 * (:944, :2021); openvmm's storvsp answers 0x40000. */
static unsigned int standin_max_transfer_bytes = 0x40000;
module_param(standin_max_transfer_bytes, uint, 0);
/* Azure data disks (host caching None) say "Write cache: disabled, read cache:
 * enabled, supports DPO and FUA" (azuredisk-csi-driver#2979); OS disks enabled. */
static bool standin_wce;
module_param(standin_wce, bool, 0);

#define STORVSC_MAX_LUNS_PER_TARGET	255	/* :370-381 */
#define STORVSC_MAX_TARGETS		2
#define STORVSC_MAX_CHANNELS		8
#define STORVSC_IDE_MAX_LUNS_PER_TARGET	64
#define STORVSC_IDE_MAX_TARGETS		1
#define STORVSC_IDE_MAX_CHANNELS	1
#define SRB_STATUS_AUTOSENSE_VALID	0x80	/* :319-328 */
#define SRB_STATUS_SUCCESS		0x01
#define SRB_STATUS_INVALID_REQUEST	0x06
#define SRB_STATUS_DATA_OVERRUN		0x12
#define SRB_STATUS_INVALID_LUN		0x20

/*
 * cmd_size is sizeof(struct storvsc_cmd_request) (:1880, struct at :389-402).
 * Same members; struct vstor_packet (:262-295) is __packed, 4+4+4 + a 0x34-byte
 * union = 64 bytes, alignment 1, so u8[64] stands for it. x86-64 offsets: cmd 0,
 * device 8, completion 16 (32 B), mpb 48 (packed, 288 B), payload 336,
 * payload_sz 344, vstor_packet 348..412, padded to 8: 416. Also checked by
 * compiling the real storvsc_drv.c against Debian's 6.1 headers.
 */
struct storvsc_cmd_request {
	struct scsi_cmnd *cmd;
	struct hv_device *device;
	struct completion wait_event;
	struct vmbus_channel_packet_multipage_buffer mpb;
	struct vmbus_packet_mpb_array *payload;
	u32 payload_sz;
	u8 vstor_packet[64];
};
static_assert(sizeof(struct storvsc_cmd_request) == 416);
static u32 max_outstanding_req_per_channel;

struct sv_lun {				/* host side: one RAM-backed LUN */
	u64 sectors;
	void *data;
};

struct sv_dev {				/* models struct hv_device (hyperv.h:1301) */
	struct device device;
	guid_t dev_type, dev_instance;
	u64 dma_mask;
	struct device_dma_parameters dma_parms;
	bool ide;
	u16 target;			/* host-side target id of the LUNs */
	rwlock_t lock;			/* lun[] against the I/O path */
	struct sv_lun *lun[STORVSC_MAX_LUNS_PER_TARGET + 1];
	struct Scsi_Host *host;		/* guest side, set while bound */
	struct list_head node;
};
#define to_sv_dev(d) container_of(d, struct sv_dev, device)

struct hv_host_device {			/* :456-464, the fields used */
	struct sv_dev *dev;
	struct workqueue_struct *handle_error_wq;
	struct work_struct host_scan_work;
	struct Scsi_Host *host;
};

struct storvsc_scan_work {		/* :466-471 */
	struct work_struct work;
	struct Scsi_Host *host;
	u8 lun, tgt_id;
};

#define storvsc_log(dev, level, fmt, ...)	/* :174-178 */ \
	do { if (logging_level >= (level))				\
		dev_warn_ratelimited(&(dev)->device, fmt, ##__VA_ARGS__); } while (0)

/* ---- the vmbus bus (vmbus_drv.c) ---- */
static struct device *vmbus_root;	/* real: ACPI device VMBUS:00, vmbus_drv.c:1903, 2298 */
static LIST_HEAD(sv_list);
static DEFINE_MUTEX(sv_mutex);
static int storvsc_probe(struct sv_dev *device, const struct hv_vmbus_device_id *dev_id);
static void storvsc_remove(struct sv_dev *dev);

enum { SCSI_GUID, IDE_GUID };
static const struct hv_vmbus_device_id id_table[] = {	/* :1903-1918, FC left out */
	{ HV_SCSI_GUID, .driver_data = SCSI_GUID },
	{ HV_IDE_GUID, .driver_data = IDE_GUID },
	{ },
};

/* vmbus_drv.c:157-188: "{%pUl}" of if_type and if_instance; "vmbus:%*phN" */
static ssize_t class_id_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sprintf(buf, "{%pUl}\n", &to_sv_dev(d)->dev_type);
}
static DEVICE_ATTR_RO(class_id);
static ssize_t device_id_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sprintf(buf, "{%pUl}\n", &to_sv_dev(d)->dev_instance);
}
static DEVICE_ATTR_RO(device_id);
static ssize_t modalias_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sprintf(buf, "vmbus:%*phN\n", UUID_SIZE, &to_sv_dev(d)->dev_type);
}
static DEVICE_ATTR_RO(modalias);
static struct attribute *vmbus_dev_attrs[] = {
	&dev_attr_class_id.attr, &dev_attr_device_id.attr, &dev_attr_modalias.attr, NULL,
};
ATTRIBUTE_GROUPS(vmbus_dev);

static const struct hv_vmbus_device_id *hv_vmbus_get_id(struct sv_dev *dev)
{
	const struct hv_vmbus_device_id *id;

	for (id = id_table; !guid_is_null(&id->guid); id++)
		if (guid_equal(&id->guid, &dev->dev_type))
			return id;
	return NULL;
}

/* One driver on this bus, so the bus calls storvsc directly (real: via hv_driver) */
static int vmbus_uevent(STANDIN_UEVENT_DEV *d, struct kobj_uevent_env *env)	/* vmbus_drv.c:650 */
{
	return add_uevent_var(env, "MODALIAS=vmbus:%*phN", UUID_SIZE, &to_sv_dev(d)->dev_type);
}
static int vmbus_match(struct device *d, STANDIN_MATCH_DRV *drv)	/* vmbus_drv.c:819 */
{
	return hv_vmbus_get_id(to_sv_dev(d)) != NULL;
}
static int vmbus_probe(struct device *d)			/* vmbus_drv.c:837 */
{
	int ret = storvsc_probe(to_sv_dev(d), hv_vmbus_get_id(to_sv_dev(d)));

	if (ret)
		pr_err("probe failed for device %s (%d)\n", dev_name(d), ret);
	return ret;
}
static STANDIN_BUS_REMOVE_RET vmbus_remove(struct device *d)	/* vmbus_drv.c:878 */
{
	if (d->driver)
		storvsc_remove(to_sv_dev(d));
	return STANDIN_BUS_REMOVE_OK;
}
static struct bus_type hv_bus = {				/* vmbus_drv.c:988 */
	.name = "vmbus", .match = vmbus_match, .probe = vmbus_probe,
	.remove = vmbus_remove, .uevent = vmbus_uevent, .dev_groups = vmbus_dev_groups,
};
static struct device_driver storvsc_drv = {	/* :2183-2193; vmbus_drv.c:1426-1431 */
	.name = KBUILD_MODNAME, .bus = &hv_bus, .owner = THIS_MODULE,
	.mod_name = KBUILD_MODNAME, .probe_type = PROBE_PREFER_ASYNCHRONOUS,
};

/* ---- the Hyper-V host answering one SRB, after openvmm storvsp + scsidisk ---- */
struct vsp_result {
	u8 scsi_status, srb_status;
	u32 tx;				/* data_transfer_length */
};

static void vsp_data(struct scsi_cmnd *c, struct vsp_result *r, const void *buf, u32 len, u32 alloc)
{
	len = min3(len, alloc, scsi_bufflen(c));
	r->tx = sg_pcopy_from_buffer(scsi_sglist(c), scsi_sg_count(c), buf, len, 0);
}

/* ILLEGAL REQUEST with autosense; storvsc copies the sense (:1187-1191) */
static void vsp_illegal(struct scsi_cmnd *c, struct vsp_result *r, u8 asc)
{
	scsi_build_sense_buffer(0, c->sense_buffer, ILLEGAL_REQUEST, asc, 0);
	r->scsi_status = SAM_STAT_CHECK_CONDITION;
	r->srb_status = SRB_STATUS_INVALID_REQUEST | SRB_STATUS_AUTOSENSE_VALID;
}

/* openvmm scsidisk/src/inquiry.rs INQUIRY_DATA_TEMPLATE: SPC-3, format 2, no CmdQue */
static void vsp_inquiry(struct scsi_cmnd *c, struct vsp_result *r, u8 pdt, bool ids)
{
	u8 d[36] = { pdt, 0, 5, 2, sizeof(d) - 5 };

	if (ids)
		memcpy(&d[8], "Msft    Virtual Disk    1.0 ", 28);
	vsp_data(c, r, d, sizeof(d), get_unaligned_be16(&c->cmnd[3]));
}

static void vsp_disk(struct sv_dev *dev, struct sv_lun *l, struct scsi_cmnd *c, struct vsp_result *r)
{
	const u8 *cdb = c->cmnd;
	bool ten = cdb[0] == MODE_SENSE_10;
	u8 d[32] = {};
	u64 lba;
	u32 n;

	switch (cdb[0]) {
	case TEST_UNIT_READY:
	case SYNCHRONIZE_CACHE:
	case SYNCHRONIZE_CACHE_16:
		return;
	case INQUIRY:		/* VPD 0x00 and 0x83; openvmm also has 0xc0/0xcf, b0-b2 */
		if (!(cdb[1] & 1) && !cdb[2])
			return vsp_inquiry(c, r, TYPE_DISK, true);
		if (!(cdb[1] & 1) || (cdb[2] != 0x00 && cdb[2] != 0x83))
			return vsp_illegal(c, r, 0x24);
		d[1] = cdb[2];
		if (cdb[2] == 0x00) {
			d[3] = 2; d[5] = 0x83;
			return vsp_data(c, r, d, 6, get_unaligned_be16(&cdb[3]));
		}
		/* one NAA-6 designator with Microsoft's OUI 00-22-48, as openvmm */
		memcpy(&d[3], "\x14\x01\x03\x00\x10\x60\x02\x24\x80", 9);
		memcpy(&d[12], &dev->dev_instance, 10);
		put_unaligned_be16(c->device->lun, &d[22]);
		return vsp_data(c, r, d, 24, get_unaligned_be16(&cdb[3]));
	case MODE_SENSE:	/* caching page only: "Mode Sense: 0f 00 10 00" on Azure */
	case MODE_SENSE_10:
		if ((cdb[2] & 0x3f) != 0x08 && (cdb[2] & 0x3f) != 0x3f)
			return vsp_illegal(c, r, 0x24);
		if (ten)
			put_unaligned_be16(8 + 12 - 2, d);
		else
			d[0] = 4 + 12 - 1;
		d[ten ? 3 : 2] = 0x10;				/* DPOFUA */
		memcpy(&d[ten ? 8 : 4], standin_wce ? "\x08\x0a\x04" : "\x08\x0a\x00", 3);
		return vsp_data(c, r, d, ten ? 20 : 16, ten ? get_unaligned_be16(&cdb[7]) : cdb[4]);
	case READ_CAPACITY:
		put_unaligned_be32(min_t(u64, l->sectors - 1, 0xffffffff), d);
		put_unaligned_be32(512, &d[4]);
		return vsp_data(c, r, d, 8, 8);
	case SERVICE_ACTION_IN_16:
		if ((cdb[1] & 0x1f) != SAI_READ_CAPACITY_16)
			break;
		put_unaligned_be64(l->sectors - 1, d);
		put_unaligned_be32(512, &d[8]);
		return vsp_data(c, r, d, 32, get_unaligned_be32(&cdb[10]));
	case READ_10: case WRITE_10:	/* sd uses 10 and 16 on this device */
	case READ_16: case WRITE_16:
		lba = cdb[0] == READ_16 || cdb[0] == WRITE_16 ? get_unaligned_be64(&cdb[2]) :
								get_unaligned_be32(&cdb[2]);
		n = cdb[0] == READ_16 || cdb[0] == WRITE_16 ? get_unaligned_be32(&cdb[10]) :
							      get_unaligned_be16(&cdb[7]);
		if (lba > l->sectors || n > l->sectors - lba)
			return vsp_illegal(c, r, 0x21);		/* LBA out of range */
		n = min_t(u32, n << 9, scsi_bufflen(c));
		if (c->sc_data_direction == DMA_TO_DEVICE)
			r->tx = sg_pcopy_to_buffer(scsi_sglist(c), scsi_sg_count(c),
						   l->data + (lba << 9), n, 0);
		else
			r->tx = sg_pcopy_from_buffer(scsi_sglist(c), scsi_sg_count(c),
						     l->data + (lba << 9), n, 0);
		return;
	}
	vsp_illegal(c, r, 0x20);			/* invalid command operation code */
}

/* openvmm storvsp/src/lib.rs execute_scsi: REPORT LUNS at any address; the disk
 * if present; INQUIRY of a missing LUN: PQ 3 / type 0x1f (0x7f), ids on LUN 0
 * only; anything else: SRB_STATUS_INVALID_LUN, CHECK CONDITION, no sense. */
static void vsp_execute(struct sv_dev *dev, struct scsi_cmnd *c, struct vsp_result *r)
{
	struct scsi_device *sdev = c->device;
	bool here = sdev->channel == 0 && sdev->id == dev->target;
	u32 i, nr = 0, alloc = get_unaligned_be32(&c->cmnd[6]);
	struct sv_lun *l = NULL;
	unsigned long flags;
	struct scsi_lun sl;
	u8 hdr[8] = {};

	*r = (struct vsp_result){ 0, SRB_STATUS_SUCCESS, 0 };
	read_lock_irqsave(&dev->lock, flags);
	if (here && sdev->lun < ARRAY_SIZE(dev->lun))
		l = dev->lun[sdev->lun];
	if (c->cmnd[0] == REPORT_LUNS) {
		for (i = 0; here && i < ARRAY_SIZE(dev->lun); i++) {
			if (!dev->lun[i])
				continue;
			int_to_scsilun(i, &sl);
			if (16 + 8 * nr <= min(alloc, scsi_bufflen(c)))
				sg_pcopy_from_buffer(scsi_sglist(c), scsi_sg_count(c), &sl, 8, 8 + 8 * nr);
			nr++;
		}
		put_unaligned_be32(8 * nr, hdr);
		vsp_data(c, r, hdr, 8, alloc);
		r->tx = min3(8 + 8 * nr, alloc, scsi_bufflen(c));
	} else if (l) {
		vsp_disk(dev, l, c, r);
	} else if (c->cmnd[0] == INQUIRY && !(c->cmnd[1] & 1) && !c->cmnd[2]) {
		vsp_inquiry(c, r, 0x7f, sdev->lun == 0);
	} else if (c->cmnd[0] == INQUIRY) {
		vsp_illegal(c, r, 0x24);
	} else {
		r->scsi_status = SAM_STAT_CHECK_CONDITION;
		r->srb_status = SRB_STATUS_INVALID_LUN;
	}
	read_unlock_irqrestore(&dev->lock, flags);
}

/* ---- the guest driver (storvsc_drv.c) ---- */
static void storvsc_host_scan(struct work_struct *work)			/* :490-517 */
{
	struct Scsi_Host *host = container_of(work, struct hv_host_device, host_scan_work)->host;
	struct scsi_device *sdev;

	mutex_lock(&host->scan_mutex);	/* TUR every LUN: removed ones fail, see below */
	shost_for_each_device(sdev, host)
		scsi_test_unit_ready(sdev, 1, 1, NULL);
	mutex_unlock(&host->scan_mutex);
	scsi_scan_host(host);
}

static void storvsc_remove_lun(struct work_struct *work)		/* :519-539 */
{
	struct storvsc_scan_work *wrk = container_of(work, struct storvsc_scan_work, work);
	struct scsi_device *sdev;

	if (scsi_host_get(wrk->host)) {
		sdev = scsi_device_lookup(wrk->host, 0, wrk->tgt_id, wrk->lun);
		if (sdev) {
			scsi_remove_device(sdev);
			scsi_device_put(sdev);
		}
		scsi_host_put(wrk->host);
	}
	kfree(wrk);
}

/* storvsc_on_io_completion (:1126-1200), storvsc_command_completion (:1072-1123),
 * storvsc_handle_error (:978-1070). This host fails commands only with
 * autosense (left to the upper layer, :988-1019 minus the 0x2a/0x3f rescans it
 * never reports) or with SRB_STATUS_INVALID_LUN (:1046-1049). */
static void storvsc_complete(struct Scsi_Host *host, struct sv_dev *dev,
			     struct scsi_cmnd *scmnd, struct vsp_result *r)
{
	struct hv_host_device *host_dev = shost_priv(host);
	struct storvsc_scan_work *wrk;
	struct scsi_sense_hdr hdr;
	u8 op = scmnd->cmnd[0];

	if (op == INQUIRY || op == MODE_SENSE || op == MODE_SENSE_10)	/* :1147-1155 */
		*r = (struct vsp_result){ 0, SRB_STATUS_SUCCESS, r->tx };
	if (r->scsi_status || r->srb_status != SRB_STATUS_SUCCESS)	/* :1167-1185 */
		storvsc_log(dev, op == TEST_UNIT_READY ? 2 : 1,
			    "tag#%d cmd 0x%x status: scsi 0x%x srb 0x%x hv 0x%x\n",
			    scsi_cmd_to_rq(scmnd)->tag, op, r->scsi_status, r->srb_status,
			    0xc0000001);
	scmnd->result = r->scsi_status;
	if (scmnd->result && logging_level >= 2 &&
	    scsi_normalize_sense(scmnd->sense_buffer, SCSI_SENSE_BUFFERSIZE, &hdr))
		scsi_print_sense_hdr(scmnd->device, "storvsc", &hdr);
	if (r->srb_status == SRB_STATUS_INVALID_LUN) {
		set_host_byte(scmnd, DID_NO_CONNECT);
		wrk = kmalloc(sizeof(*wrk), GFP_ATOMIC);
		if (wrk) {
			wrk->host = host;
			wrk->lun = scmnd->device->lun;
			wrk->tgt_id = scmnd->device->id;
			INIT_WORK(&wrk->work, storvsc_remove_lun);
			queue_work(host_dev->handle_error_wq, &wrk->work);
		} else {
			set_host_byte(scmnd, DID_BAD_TARGET);
		}
	}
	if (r->srb_status != SRB_STATUS_SUCCESS && r->srb_status != SRB_STATUS_DATA_OVERRUN)
		r->tx = 0;
	scsi_set_resid(scmnd, scsi_bufflen(scmnd) - r->tx);
	scsi_done(scmnd);
}

/* :1715: the real one posts a VMBus packet; this host answers at once */
static STANDIN_QC_STATUS storvsc_queuecommand(struct Scsi_Host *host, struct scsi_cmnd *scmnd)
{
	struct hv_host_device *host_dev = shost_priv(host);
	struct vsp_result r;

	vsp_execute(host_dev->dev, scmnd, &r);
	storvsc_complete(host, host_dev->dev, scmnd, &r);
	return 0;
}

static int storvsc_device_alloc(struct scsi_device *sdevice)		/* :1566-1580 */
{
	sdevice->sdev_bflags = BLIST_REPORTLUN2 | BLIST_TRY_VPD_PAGES;
	return 0;
}

#if STANDIN_KV(6, 14)		/* sdev_configure with the limits, 7.3:1629 */
static int storvsc_device_configure(struct scsi_device *sdevice, struct queue_limits *lim)
#else
static int storvsc_device_configure(struct scsi_device *sdevice)	/* :1582-1608 */
#endif
{
	blk_queue_rq_timeout(sdevice->request_queue, 180 * HZ);		/* :361 */
	sdevice->no_report_opcodes = 1;
	/* protocol WIN10 (first choice, :219): no SPC-3 override, WRITE SAME allowed */
	sdevice->no_write_same = strncmp(sdevice->vendor, "Msft", 4) != 0;
	return 0;
}

static int storvsc_host_reset_handler(struct scsi_cmnd *scmnd)	/* :1633: bus reset */
{
	return SUCCESS;
}

#if STANDIN_KV(6, 2)
static enum scsi_timeout_action storvsc_eh_timed_out(struct scsi_cmnd *scmnd)
{
	return SCSI_EH_RESET_TIMER;					/* 6.12:1699 */
}
#else
static enum blk_eh_timer_return storvsc_eh_timed_out(struct scsi_cmnd *scmnd)
{
	return BLK_EH_RESET_TIMER;					/* :1688 */
}
#endif

static int storvsc_change_queue_depth(struct scsi_device *sdev, int queue_depth);

static struct scsi_host_template scsi_driver = {			/* :1877-1895 */
	.module = THIS_MODULE,
	.name = "storvsc_host_t",
	.cmd_size = sizeof(struct storvsc_cmd_request),
	.queuecommand = storvsc_queuecommand,
	.eh_host_reset_handler = storvsc_host_reset_handler,
	.proc_name = "storvsc_host",
	.eh_timed_out = storvsc_eh_timed_out,
#if STANDIN_KV(6, 14)
	.sdev_init = storvsc_device_alloc,				/* 7.3:1897-1898 */
	.sdev_configure = storvsc_device_configure,
#else
	.slave_alloc = storvsc_device_alloc,
	.slave_configure = storvsc_device_configure,
#endif
	.cmd_per_lun = 2048,
	.this_id = -1,
	.virt_boundary_mask = HV_HYP_PAGE_SIZE - 1,
	.no_write_same = 1,
	.track_queue_depth = 1,
	.change_queue_depth = storvsc_change_queue_depth,
	/* no host_tagset: a tag set of can_queue per hw queue */
};

/* :2126: capped by the shared template's can_queue, i.e. the latest probe's */
static int storvsc_change_queue_depth(struct scsi_device *sdev, int queue_depth)
{
	return scsi_change_queue_depth(sdev, min(queue_depth, scsi_driver.can_queue));
}

static int storvsc_probe(struct sv_dev *device, const struct hv_vmbus_device_id *dev_id)
{									/* :1929-2123 */
	int num_cpus = num_online_cpus();
	int num_present_cpus = num_present_cpus();
	bool dev_is_ide = dev_id->driver_data == IDE_GUID;
	int max_sub_channels = 0, target, ret;
	struct hv_host_device *host_dev;
	struct Scsi_Host *host;
	u32 max_xfer_bytes;

	if (!dev_is_ide)						/* :1949-1955 */
		max_sub_channels = (num_cpus - 1) / storvsc_vcpus_per_sub_channel;
	scsi_driver.can_queue = max_outstanding_req_per_channel *
				(max_sub_channels + 1) * (100 - ring_avail_percent_lowater) / 100;

	host = scsi_host_alloc(&scsi_driver, sizeof(struct hv_host_device));
	if (!host)
		return -ENOMEM;
	host_dev = shost_priv(host);
	*host_dev = (struct hv_host_device){ .dev = device, .host = host };
#if STANDIN_HAS_MAX_HW_QUEUES	/* 5.10's storvsc sets no DMA alignment mask */
	dma_set_min_align_mask(&device->device, HV_HYP_PAGE_SIZE - 1);	/* :1982 */
#endif

	host->max_lun = dev_is_ide ? STORVSC_IDE_MAX_LUNS_PER_TARGET : STORVSC_MAX_LUNS_PER_TARGET;
	host->max_id = dev_is_ide ? STORVSC_IDE_MAX_TARGETS : STORVSC_MAX_TARGETS;
	host->max_channel = (dev_is_ide ? STORVSC_IDE_MAX_CHANNELS : STORVSC_MAX_CHANNELS) - 1;
	host->max_cmd_len = 16;						/* :2015 */
#if STANDIN_HAS_MAX_HW_QUEUES
	max_xfer_bytes = round_down(standin_max_transfer_bytes, HV_HYP_PAGE_SIZE);
	host->max_sectors = max_xfer_bytes >> 9;			/* :2026 */
	host->sg_tablesize = (max_xfer_bytes >> HV_HYP_PAGE_SHIFT) + 1;	/* :2040 */
#else
	/* 5.10:2010: the table from the host's answer, max_sectors left at the
	 * midlayer's default (SCSI_DEFAULT_MAX_SECTORS: max_hw_sectors_kb 512) */
	max_xfer_bytes = standin_max_transfer_bytes;
	host->sg_tablesize = max_xfer_bytes >> PAGE_SHIFT;
#endif

	if (!dev_is_ide) {	/* IDE leaves 0 = 1 queue (scsi_lib.c:2003) */
#if STANDIN_HAS_MAX_HW_QUEUES	/* :2045-2055, 6.12:2055-2063, 7.3:2057-2065 */
		if (storvsc_max_hw_queues > num_present_cpus) {
			storvsc_max_hw_queues = 0;
			storvsc_log(device, 2,
				    "Resetting invalid storvsc_max_hw_queues value to default.\n");
		}
		host->nr_hw_queues = storvsc_max_hw_queues ? : num_present_cpus;
#else
		host->nr_hw_queues = num_present_cpus;			/* 5.10:2015-2016 */
#endif
	}

	host_dev->handle_error_wq = alloc_ordered_workqueue("storvsc_error_wq_%d", 0,
							    host->host_no);
	ret = -ENOMEM;
	if (!host_dev->handle_error_wq)
		goto err_put;
	INIT_WORK(&host_dev->host_scan_work, storvsc_host_scan);
	ret = scsi_add_host(host, &device->device);
	if (ret)
		goto err_wq;
	device->host = host;
	if (!dev_is_ide) {						/* :2074-2082 */
		scsi_scan_host(host);
	} else {
		target = device->dev_instance.b[5] << 8 | device->dev_instance.b[4];
		ret = scsi_add_device(host, 0, target, 0);
		if (ret) {
			device->host = NULL;
			scsi_remove_host(host);
			goto err_wq;
		}
	}
	return 0;
err_wq:
	destroy_workqueue(host_dev->handle_error_wq);
err_put:
	scsi_host_put(host);
	return ret;
}

static void storvsc_remove(struct sv_dev *dev)				/* :2134-2153 */
{
	struct Scsi_Host *host = dev->host;

	destroy_workqueue(((struct hv_host_device *)shost_priv(host))->handle_error_wq);
	scsi_remove_host(host);
	dev->host = NULL;
	scsi_host_put(host);
}

/* ---- test control ---- */
static struct sv_lun *sv_lun_new(unsigned int mib)
{
	struct sv_lun *l = kzalloc(sizeof(*l), GFP_KERNEL);

	if (l) {
		l->sectors = (u64)mib << 11;
		l->data = mib ? vzalloc((size_t)mib << 20) : NULL;
		if (!l->data) {
			kfree(l);
			l = NULL;
		}
	}
	return l;
}

static void sv_lun_free(struct sv_lun *l)
{
	if (l)
		vfree(l->data);
	kfree(l);
}

static void sv_release(struct device *d)
{
	struct sv_dev *dev = to_sv_dev(d);
	int i;

	for (i = 0; i < ARRAY_SIZE(dev->lun); i++)
		sv_lun_free(dev->lun[i]);
	kfree(dev);
}

static struct sv_dev *sv_find(const char *s)
{
	char buf[UUID_STRING_LEN + 1];
	struct sv_dev *dev;
	guid_t g;

	strscpy(buf, s + (*s == '{'), sizeof(buf));
	if (guid_parse(buf, &g))
		return ERR_PTR(-EINVAL);
	list_for_each_entry(dev, &sv_list, node)
		if (guid_equal(&dev->dev_instance, &g))
			return dev;
	return ERR_PTR(-ENODEV);
}

/* The host offers a channel; vmbus_device_register (vmbus_drv.c:1894-1915):
 * named "%pUl" of the instance, 64-bit DMA mask, parent VMBUS:00. */
static int sv_add(const char *kind, const char *guid, unsigned int nluns, unsigned int mib)
{
	static const guid_t scsi_guid = GUID_INIT(0xba6163d9, 0x04a1, 0x4d29, 0xb6, 0x05,
						  0x72, 0xe2, 0xff, 0xb1, 0xdc, 0x7f); /* hyperv.h:1402 */
	static const guid_t ide_guid = GUID_INIT(0x32412632, 0x86cb, 0x44a2, 0x9b, 0x5c,
						 0x50, 0xd1, 0x41, 0x73, 0x54, 0xf5); /* hyperv.h:1394 */
	bool ide = !strcmp(kind, "ide");
	struct sv_dev *dev = sv_find(guid);
	int i, ret;

	if (!IS_ERR(dev))
		return -EEXIST;
	if (PTR_ERR(dev) != -ENODEV || (!ide && strcmp(kind, "scsi")) ||
	    nluns > (ide ? STORVSC_IDE_MAX_LUNS_PER_TARGET : STORVSC_MAX_LUNS_PER_TARGET))
		return -EINVAL;
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ide = ide;
	dev->dev_type = ide ? ide_guid : scsi_guid;
	guid_parse(guid + (*guid == '{'), &dev->dev_instance);
	dev->target = ide ? dev->dev_instance.b[5] << 8 | dev->dev_instance.b[4] : 0;
	rwlock_init(&dev->lock);
	dev_set_name(&dev->device, "%pUl", &dev->dev_instance);
	dev->device.bus = &hv_bus;
	dev->device.parent = vmbus_root;
	dev->device.release = sv_release;
	dev->device.dma_parms = &dev->dma_parms;
	dev->device.dma_mask = &dev->dma_mask;
	dma_set_mask(&dev->device, DMA_BIT_MASK(64));
	for (i = 0; i < nluns; i++) {
		dev->lun[i] = sv_lun_new(mib);
		if (!dev->lun[i]) {
			put_device(&dev->device);	/* sv_release frees */
			return -ENOMEM;
		}
	}
	ret = device_register(&dev->device);
	if (ret) {
		put_device(&dev->device);
		return ret;
	}
	list_add_tail(&dev->node, &sv_list);
	return 0;
}

static void sv_del(struct sv_dev *dev)
{
	list_del(&dev->node);
	device_unregister(&dev->device);
}

/* The host sends VSTOR_OPERATION_ENUMERATE_BUS; storvsc queues host_scan_work
 * (:1213-1218). Unbound, the channel is closed and nobody listens. The flushes
 * only make the test control synchronous (scan, then the removals it queued). */
static void sv_enumerate_bus(struct sv_dev *dev)
{
	struct hv_host_device *host_dev;

	device_lock(&dev->device);
	if (dev->host) {
		host_dev = shost_priv(dev->host);
		queue_work(host_dev->handle_error_wq, &host_dev->host_scan_work);
		flush_workqueue(host_dev->handle_error_wq);
		flush_workqueue(host_dev->handle_error_wq);
	}
	device_unlock(&dev->device);
}

static int sv_command(char *cmd)
{
	char verb[16], a1[48], a2[48];
	unsigned int lun = 1, mib = 8;
	struct sv_lun *l = NULL;
	struct sv_dev *dev;
	unsigned long flags;
	int n, ret = 0;

	n = sscanf(cmd, "%15s %47s %47s %u %u", verb, a1, a2, &lun, &mib);
	if (!strcmp(verb, "add") && n >= 3) {
		ret = sv_add(a1, a2, lun, mib);
		goto out;
	}
	n = sscanf(cmd, "%15s %47s %u %u", verb, a1, &lun, &mib);
	dev = n >= 2 ? sv_find(a1) : ERR_PTR(-EINVAL);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	if (!strcmp(verb, "del") && n == 2) {
		sv_del(dev);
	} else if (!strcmp(verb, "rescan") && n == 2) {
		sv_enumerate_bus(dev);
	} else if (!strcmp(verb, "lun-add") && n == 4 &&
		   lun < (dev->ide ? STORVSC_IDE_MAX_LUNS_PER_TARGET : STORVSC_MAX_LUNS_PER_TARGET)) {
		l = sv_lun_new(mib);
		if (!l)
			return -ENOMEM;
		write_lock_irqsave(&dev->lock, flags);
		if (!dev->lun[lun])
			swap(dev->lun[lun], l);
		write_unlock_irqrestore(&dev->lock, flags);
		ret = l ? -EEXIST : 0;
		sv_lun_free(l);
		if (!ret)
			sv_enumerate_bus(dev);
	} else if (!strcmp(verb, "lun-del") && n == 3 && lun < ARRAY_SIZE(dev->lun)) {
		write_lock_irqsave(&dev->lock, flags);
		swap(dev->lun[lun], l);
		write_unlock_irqrestore(&dev->lock, flags);
		if (!l)
			return -ENOENT;
		sv_lun_free(l);		/* no I/O holds it past the write lock */
		sv_enumerate_bus(dev);
	} else {
		return -EINVAL;
	}
out:
	wait_for_device_probe();	/* async probes, async scans, sd probes */
	return ret;
}

static ssize_t sv_ctl_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	char buf[128];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	mutex_lock(&sv_mutex);
	ret = sv_command(buf);
	mutex_unlock(&sv_mutex);
	return ret ? ret : len;
}

static ssize_t sv_ctl_read(struct file *f, char __user *ubuf, size_t len, loff_t *pos)
{
	size_t size = 16384, o = 0;
	char *buf = kmalloc(size, GFP_KERNEL);
	struct sv_dev *dev;
	ssize_t ret;
	int i;

	if (!buf)
		return -ENOMEM;
	mutex_lock(&sv_mutex);
	list_for_each_entry(dev, &sv_list, node) {
		o += scnprintf(buf + o, size - o, "%pUl %s %s", &dev->dev_instance,
			       dev->ide ? "ide" : "scsi", dev->device.driver ? "bound" : "unbound");
		for (i = 0; i < ARRAY_SIZE(dev->lun); i++)
			if (dev->lun[i])
				o += scnprintf(buf + o, size - o, " %d:%lluMiB", i,
					       dev->lun[i]->sectors >> 11);
		o += scnprintf(buf + o, size - o, "\n");
	}
	mutex_unlock(&sv_mutex);
	ret = simple_read_from_buffer(ubuf, len, pos, buf, o);
	kfree(buf);
	return ret;
}

static const struct file_operations sv_ctl_fops = {
	.owner = THIS_MODULE, .write = sv_ctl_write, .read = sv_ctl_read, .llseek = default_llseek,
};

static struct dentry *sv_debugfs;

static void sv_cleanup(void)
{
	struct sv_dev *dev, *tmp;

	debugfs_remove_recursive(sv_debugfs);
	list_for_each_entry_safe(dev, tmp, &sv_list, node)
		sv_del(dev);
	driver_unregister(&storvsc_drv);
	bus_unregister(&hv_bus);
	root_device_unregister(vmbus_root);
}

static int __init storvsc_drv_init(void)
{
	char *opts, *p, *item, kind[8], guid[48];
	unsigned int nluns, mib;
	int ret;

#if STANDIN_HAS_MAX_HW_QUEUES
	/* :2212-2217, 6.12:2220-2225, 7.3:2222-2227: (VMBUS_RING_SIZE(128 KiB) = 135168 - 4096)
	 * / ALIGN(MAX_MULTIPAGE_BUFFER_PACKET + 64 + 8, 8) = 352 */
	max_outstanding_req_per_channel = (VMBUS_RING_SIZE(storvsc_ringbuffer_size) - PAGE_SIZE) /
		ALIGN(MAX_MULTIPAGE_BUFFER_PACKET + 64 + sizeof(u64), sizeof(u64));
#else
	/* 5.10:2173-2178: (128 KiB - 4096) / ALIGN(MAX_MULTIPAGE_BUFFER_PACKET + 64 + 8
	 * - vmscsi_size_delta, 8), the delta still sizeof(struct vmscsi_win8_extension)
	 * (5.10:180-191: 2 + 1 + 1 + 4 + 4 + 4 = 16) at module init (5.10:231); the packet
	 * 0x18 + sizeof(struct hv_multipage_buffer) (8 + 32 x 8) = 288: 126976 / 344 = 369 */
	max_outstanding_req_per_channel = (storvsc_ringbuffer_size - PAGE_SIZE) /
		ALIGN(MAX_MULTIPAGE_BUFFER_PACKET + 64 + sizeof(u64) - 16, sizeof(u64));
#endif

	vmbus_root = root_device_register("VMBUS:00");
	if (IS_ERR(vmbus_root))
		return PTR_ERR(vmbus_root);
	ret = bus_register(&hv_bus);
	if (ret) {
		root_device_unregister(vmbus_root);
		return ret;
	}
	ret = driver_register(&storvsc_drv);
	if (ret) {
		bus_unregister(&hv_bus);
		root_device_unregister(vmbus_root);
		return ret;
	}
	p = opts = kstrdup(standin_controllers, GFP_KERNEL);
	while (!ret && (item = strsep(&p, ",")) != NULL) {
		nluns = 1;
		mib = 8;
		if (!*item)
			continue;
		if (sscanf(item, "%7[^:]:%47[^:]:%u:%u", kind, guid, &nluns, &mib) < 2)
			ret = -EINVAL;
		else
			ret = sv_add(kind, guid, nluns, mib);
		if (ret)
			pr_err("hv_storvsc stand-in: controller '%s': %d\n", item, ret);
	}
	kfree(opts);
	if (ret) {
		sv_cleanup();
		return ret;
	}
	sv_debugfs = debugfs_create_dir("hv_storvsc_standin", NULL);
	debugfs_create_file("control", 0600, sv_debugfs, NULL, &sv_ctl_fops);
	return 0;
}

static void __exit storvsc_drv_exit(void)
{
	sv_cleanup();
}

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hv_storvsc stand-in for tests: guest-side model of Hyper-V storvsc");
module_init(storvsc_drv_init);
module_exit(storvsc_drv_exit);
