/* rpcbind.c: registration with the local rpcbind through libtirpc's portmapper calls. */
#include <rpc/rpc.h>
#include <rpc/pmap_clnt.h>
#include <unistd.h>
#include <netinet/in.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "common/nfs/nlm_prog.h"
#include "server/nfs_program.h"
#include "server/rpcbind.h"

static const struct {
	unsigned long prog, vers;
	int proto;
} entries[] = {
	{NFS_PROGRAM, NFS_V3, IPPROTO_TCP},
	{MOUNT_PROGRAM, MOUNT_V3, IPPROTO_TCP},
	{MOUNT_PROGRAM, MOUNT_V3, IPPROTO_UDP},
	/* with the lock manager: */
	{NLM_PROGRAM, NLM_V4, IPPROTO_TCP},
	{NLM_PROGRAM, NLM_V4, IPPROTO_UDP},
	{NSM_PROGRAM, NSM_V1, IPPROTO_TCP},
	{NSM_PROGRAM, NSM_V1, IPPROTO_UDP},
};
#define NWITHOUT_NLM 3

#define NENTRIES (sizeof(entries) / sizeof(entries[0]))

int rpcbind_register(unsigned port, int with_nlm)
{
	int fd = net_connect_tcp("127.0.0.1", "111", 1000);

	/* pmap_set waits for seconds when nobody listens: ask first */
	if (fd < 0) {
		log_warn("no rpcbind on this host: NFS and MOUNT not registered (clients need "
			 "port= and mountport=)");
		return fd;
	}
	close(fd);
	rpcbind_unregister(); /* whatever an earlier run left, every protocol at once */
	for (size_t i = 0; i < (with_nlm ? NENTRIES : NWITHOUT_NLM); i++) {
		if (!pmap_set(entries[i].prog, entries[i].vers, entries[i].proto,
			      (unsigned short)port)) {
			log_warn("rpcbind refused program %lu version %lu", entries[i].prog,
				 entries[i].vers);
			return -EIO;
		}
	}
	log_info("registered NFS and MOUNT version 3%s on port %u with rpcbind",
		 with_nlm ? ", NLM version 4 and NSM" : "", port);
	return 0;
}

void rpcbind_unregister(void)
{
	for (size_t i = 0; i < NENTRIES; i++)
		pmap_unset(entries[i].prog, entries[i].vers);
}
