/*
 * rdmacore_unit_test: the parts of the rdma-core provider that need no
 * device: flag, status and opcode translations, work-request translation,
 * the key -> object maps (also under concurrent lookups), argument checks,
 * and open answering -ENODEV quietly where there is no device.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "platform/ibverbs/verbs_rdmacore.h"

/* Registration rights translate one to one; remote write brings local write. */
static void access_flags(void **state)
{
	int f = -1;

	assert_int_equal(rdmacore_access_to_ibv(0, &f), 0);
	assert_int_equal(f, 0);
	assert_int_equal(rdmacore_access_to_ibv(VB_ACCESS_LOCAL_WRITE, &f), 0);
	assert_int_equal(f, IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(rdmacore_access_to_ibv(VB_ACCESS_REMOTE_READ, &f), 0);
	assert_int_equal(f, IBV_ACCESS_REMOTE_READ);
	assert_int_equal(rdmacore_access_to_ibv(VB_ACCESS_REMOTE_WRITE, &f), 0);
	assert_int_equal(f, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(rdmacore_access_to_ibv(VB_ACCESS_MW_BIND | VB_ACCESS_REMOTE_READ, &f), 0);
	assert_int_equal(f, IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ);
	f = 1234;
	assert_int_equal(rdmacore_access_to_ibv(1u << 9, &f), -EINVAL);
	assert_int_equal(f, 1234);
}

/* Windows carry remote rights only. */
static void mw_access_flags(void **state)
{
	int f = -1;

	assert_int_equal(rdmacore_mw_access_to_ibv(VB_ACCESS_REMOTE, &f), 0);
	assert_int_equal(f, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(rdmacore_mw_access_to_ibv(VB_ACCESS_LOCAL_WRITE, &f), -EINVAL);
	assert_int_equal(rdmacore_mw_access_to_ibv(VB_ACCESS_MW_BIND, &f), -EINVAL);
}

/* Every ibv status has a vb status; the ones with no equivalent are GENERAL_ERR. */
static void wc_statuses(void **state)
{
	static const struct {
		enum ibv_wc_status in;
		enum vb_wc_status out;
	} cases[] = {
		{IBV_WC_SUCCESS, VB_WC_SUCCESS},
		{IBV_WC_LOC_LEN_ERR, VB_WC_LOC_LEN_ERR},
		{IBV_WC_LOC_PROT_ERR, VB_WC_LOC_PROT_ERR},
		{IBV_WC_REM_ACCESS_ERR, VB_WC_REM_ACCESS_ERR},
		{IBV_WC_REM_INV_REQ_ERR, VB_WC_REM_INV_REQ_ERR},
		{IBV_WC_REM_OP_ERR, VB_WC_REM_OP_ERR},
		{IBV_WC_RNR_RETRY_EXC_ERR, VB_WC_RNR_RETRY_EXC_ERR},
		{IBV_WC_RETRY_EXC_ERR, VB_WC_RETRY_EXC_ERR},
		{IBV_WC_WR_FLUSH_ERR, VB_WC_WR_FLUSH_ERR},
		{IBV_WC_MW_BIND_ERR, VB_WC_MW_BIND_ERR},
		{IBV_WC_FATAL_ERR, VB_WC_GENERAL_ERR},
		{IBV_WC_GENERAL_ERR, VB_WC_GENERAL_ERR},
		{(enum ibv_wc_status)999, VB_WC_GENERAL_ERR},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(rdmacore_wc_status(cases[i].in), cases[i].out);
}

/* Completion opcodes, receives included. */
static void wc_opcodes(void **state)
{
	assert_int_equal(rdmacore_wc_opcode(IBV_WC_SEND), VB_WC_SEND);
	assert_int_equal(rdmacore_wc_opcode(IBV_WC_RDMA_WRITE), VB_WC_RDMA_WRITE);
	assert_int_equal(rdmacore_wc_opcode(IBV_WC_RDMA_READ), VB_WC_RDMA_READ);
	assert_int_equal(rdmacore_wc_opcode(IBV_WC_BIND_MW), VB_WC_BIND_MW);
	assert_int_equal(rdmacore_wc_opcode(IBV_WC_LOCAL_INV), VB_WC_LOCAL_INV);
	assert_int_equal(rdmacore_wc_opcode(IBV_WC_RECV), VB_WC_RECV);
	assert_int_equal(rdmacore_wc_opcode(IBV_WC_RECV_RDMA_WITH_IMM), VB_WC_RECV);
}

/* Send WRs: opcode, flags, RDMA fields, invalidate key; SGEs shared as they are. */
static void send_wr_translation(void **state)
{
	struct vb_sge sge[2] = {{0x1000, 16, 7}, {0x2000, 32, 8}};
	struct vb_send_wr wr = {.wr_id = 42, .sg_list = sge, .num_sge = 2};
	struct ibv_send_wr iw;

	wr.opcode = VB_WR_RDMA_READ;
	wr.send_flags = VB_SEND_SIGNALED | VB_SEND_FENCE;
	wr.remote_addr = 0xabc000;
	wr.rkey = 0x1234;
	assert_int_equal(rdmacore_send_wr_to_ibv(&wr, &iw), 0);
	assert_int_equal(iw.wr_id, 42);
	assert_int_equal(iw.opcode, IBV_WR_RDMA_READ);
	assert_int_equal(iw.send_flags, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	assert_int_equal(iw.wr.rdma.remote_addr, 0xabc000);
	assert_int_equal(iw.wr.rdma.rkey, 0x1234);
	assert_ptr_equal(iw.sg_list, (void *)sge);
	assert_int_equal(iw.sg_list[1].length, 32);
	assert_int_equal(iw.sg_list[1].lkey, 8);
	assert_null(iw.next);

	wr.opcode = VB_WR_SEND_WITH_INV;
	wr.send_flags = VB_SEND_INLINE;
	wr.invalidate_rkey = 0x5566;
	assert_int_equal(rdmacore_send_wr_to_ibv(&wr, &iw), 0);
	assert_int_equal(iw.opcode, IBV_WR_SEND_WITH_INV);
	assert_int_equal(iw.send_flags, IBV_SEND_INLINE);
	assert_int_equal(iw.invalidate_rkey, 0x5566);
}

/* Malformed send WRs are refused before anything reaches the device. */
static void send_wr_refused(void **state)
{
	struct vb_send_wr wr = {.opcode = VB_WR_SEND};
	struct ibv_send_wr iw;

	wr.opcode = (enum vb_wr_opcode)17;
	assert_int_equal(rdmacore_send_wr_to_ibv(&wr, &iw), -EINVAL);
	wr.opcode = VB_WR_SEND;
	wr.send_flags = 1u << 7;
	assert_int_equal(rdmacore_send_wr_to_ibv(&wr, &iw), -EINVAL);
	wr.send_flags = 0;
	wr.num_sge = -1;
	assert_int_equal(rdmacore_send_wr_to_ibv(&wr, &iw), -EINVAL);
	wr.num_sge = 1; /* but no list */
	assert_int_equal(rdmacore_send_wr_to_ibv(&wr, &iw), -EINVAL);
}

/* Completions: fields copied, the invalidated key reported only with WITH_INV. */
static void wc_translation(void **state)
{
	struct ibv_wc in = {.wr_id = 9,
			    .status = IBV_WC_SUCCESS,
			    .opcode = IBV_WC_RECV,
			    .byte_len = 100,
			    .wc_flags = IBV_WC_WITH_INV,
			    .qp_num = 5};
	struct vb_conn conn = {0};
	struct vb_wc out;

	in.invalidated_rkey = 0x77;
	rdmacore_wc_from_ibv(&in, &conn, IBV_WC_WITH_INV, &out);
	assert_int_equal(out.wr_id, 9);
	assert_ptr_equal(out.conn, &conn);
	assert_int_equal(out.status, VB_WC_SUCCESS);
	assert_int_equal(out.opcode, VB_WC_RECV);
	assert_int_equal(out.byte_len, 100);
	assert_int_equal(out.wc_flags, VB_WC_WITH_INV);
	assert_int_equal(out.invalidated_rkey, 0x77);

	in.wc_flags = IBV_WC_WITH_IMM; /* imm_data shares the field: not a key */
	rdmacore_wc_from_ibv(&in, NULL, IBV_WC_WITH_INV, &out);
	assert_int_equal(out.wc_flags, 0);
	assert_int_equal(out.invalidated_rkey, 0);
	assert_null(out.conn);

	/* rxe's kernel-valued flag: honoured only where the device says so */
	in.wc_flags = IBV_WC_GRH | IBV_WC_IP_CSUM_OK;
	rdmacore_wc_from_ibv(&in, NULL, IBV_WC_WITH_INV, &out);
	assert_int_equal(out.wc_flags, 0);
	rdmacore_wc_from_ibv(&in, NULL, IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK, &out);
	assert_int_equal(out.wc_flags, VB_WC_WITH_INV);
	assert_int_equal(out.invalidated_rkey, 0x77);

	/* never on a send completion */
	in.opcode = IBV_WC_SEND;
	in.wc_flags = IBV_WC_WITH_INV;
	rdmacore_wc_from_ibv(&in, NULL, IBV_WC_WITH_INV, &out);
	assert_int_equal(out.wc_flags, 0);
}

/* Insert, find, refuse duplicates, remove (twice is harmless). */
static void map_basic(void **state)
{
	struct rdmacore_map map;
	struct rdmacore_map_node n[600], dup;
	int objs[600];

	assert_int_equal(rdmacore_map_init(&map), 0);
	for (int i = 0; i < 600; i++) {
		n[i] = (struct rdmacore_map_node){.key = 17 + (uint32_t)i * 3, .obj = &objs[i]};
		assert_int_equal(rdmacore_map_insert(&map, &n[i]), 0);
	}
	dup = (struct rdmacore_map_node){.key = 17 + 3 * 5, .obj = &objs[0]};
	assert_int_equal(rdmacore_map_insert(&map, &dup), -EEXIST);
	assert_false(dup.mapped);
	for (int i = 0; i < 600; i++)
		assert_ptr_equal(rdmacore_map_find(&map, 17 + (uint32_t)i * 3), &objs[i]);
	assert_null(rdmacore_map_find(&map, 18));
	for (int i = 0; i < 600; i += 2)
		rdmacore_map_remove(&map, &n[i]);
	rdmacore_map_remove(&map, &n[0]);
	rdmacore_map_remove(&map, &dup); /* never mapped: must not unlink n[5] */
	for (int i = 0; i < 600; i++)
		assert_ptr_equal(rdmacore_map_find(&map, 17 + (uint32_t)i * 3),
				 i % 2 ? &objs[i] : NULL);
	assert_int_equal(map.count, 300);
	for (int i = 1; i < 600; i += 2)
		rdmacore_map_remove(&map, &n[i]);
	assert_int_equal(map.count, 0);
	rdmacore_map_destroy(&map);
}

/* Keys that differ only in high bits (rkeys) still find their own objects. */
static void map_rkeys(void **state)
{
	struct rdmacore_map map;
	struct rdmacore_map_node n[64];
	int objs[64];

	assert_int_equal(rdmacore_map_init(&map), 0);
	for (int i = 0; i < 64; i++) {
		n[i] = (struct rdmacore_map_node){.key = ((uint32_t)i << 24) | 0x1200,
						  .obj = &objs[i]};
		assert_int_equal(rdmacore_map_insert(&map, &n[i]), 0);
	}
	for (int i = 0; i < 64; i++)
		assert_ptr_equal(rdmacore_map_find(&map, ((uint32_t)i << 24) | 0x1200), &objs[i]);
	for (int i = 0; i < 64; i++)
		rdmacore_map_remove(&map, &n[i]);
	assert_int_equal(map.count, 0);
	rdmacore_map_destroy(&map);
}

struct churn {
	struct rdmacore_map *map;
	void *stable;
	int stop;
	int wrong;
};

/* Reader thread: the stable entry must always be found while others come and go. */
static void *churn_reader(void *arg)
{
	struct churn *c = arg;
	int wrong = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED))
		if (rdmacore_map_find(c->map, 1000) != c->stable)
			wrong++;
	__atomic_add_fetch(&c->wrong, wrong, __ATOMIC_RELAXED);
	return NULL;
}

/* Lookups from other threads stay right while entries are added and removed. */
static void map_concurrent(void **state)
{
	struct rdmacore_map map;
	int stable, other;
	struct rdmacore_map_node keep = {.key = 1000, .obj = &stable}, tmp[64];
	struct churn c = {.map = &map, .stable = &stable};
	pthread_t th[2];

	assert_int_equal(rdmacore_map_init(&map), 0);
	assert_int_equal(rdmacore_map_insert(&map, &keep), 0);
	for (int t = 0; t < 2; t++)
		assert_int_equal(pthread_create(&th[t], NULL, churn_reader, &c), 0);
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 64; i++) {
			tmp[i] = (struct rdmacore_map_node){.key = 1000 + 256 * (uint32_t)(i + 1),
							    .obj = &other};
			assert_int_equal(rdmacore_map_insert(&map, &tmp[i]), 0);
		}
		for (int i = 0; i < 64; i++)
			rdmacore_map_remove(&map, &tmp[i]);
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	assert_int_equal(c.wrong, 0);
	rdmacore_map_remove(&map, &keep);
	rdmacore_map_destroy(&map);
}

/* Objects of another provider (or none) are refused, never dereferenced as ours. */
static void foreign_objects_refused(void **state)
{
	static const struct vb_ops other_ops = {.name = "other"};
	struct vb_device other = {.ops = &other_ops};
	struct vb_conn conn = {.dev = &other};
	struct vb_cq cq = {.dev = &other};
	struct vb_pd pd = {.dev = &other};
	struct vb_device_attr attr;
	struct vb_send_wr swr = {0};
	struct vb_recv_wr rwr = {0};
	struct vb_wc wc;
	struct vb_pd *pdo;
	struct vb_mr *mr;
	struct vb_conn *co;
	char buf[8];

	assert_int_equal(vb_rdmacore_ops.query_device(&other, &attr), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.alloc_pd(&other, &pdo), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.reg_mr(&pd, buf, sizeof(buf), 0, &mr), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.poll_cq(&cq, 1, &wc), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.post_send(&conn, &swr, NULL), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.post_recv(&conn, &rwr, NULL), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.resolve(&other, "127.0.0.1", "1", 10, &co), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.conn_destroy(NULL), -EINVAL);
	assert_int_equal(vb_rdmacore_ops.open(NULL, NULL), -EINVAL);
}

/* Without such a device, open says -ENODEV (and prints nothing). */
static void open_missing_device(void **state)
{
	struct vb_device *dev = (struct vb_device *)&dev;

	assert_int_equal(vb_rdmacore_ops.open("no-such-device0", &dev), -ENODEV);
	assert_null(dev);
	assert_int_equal(vb_rdmacore_ops.open("", &dev), -ENODEV);
	if (vb_rdmacore_ops.open(NULL, &dev) == 0) {
		vb_rdmacore_ops.close(dev); /* a machine with RDMA (the lab): the first device */
		return;
	}
	assert_null(dev);
	assert_int_equal(vb_rdmacore_ops.open(NULL, &dev), -ENODEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(access_flags),
		cmocka_unit_test(mw_access_flags),
		cmocka_unit_test(wc_statuses),
		cmocka_unit_test(wc_opcodes),
		cmocka_unit_test(send_wr_translation),
		cmocka_unit_test(send_wr_refused),
		cmocka_unit_test(wc_translation),
		cmocka_unit_test(map_basic),
		cmocka_unit_test(map_rkeys),
		cmocka_unit_test(map_concurrent),
		cmocka_unit_test(foreign_objects_refused),
		cmocka_unit_test(open_missing_device),
	};
	return cmocka_run_group_tests_name("rdmacore_unit", tests, NULL, NULL);
}
