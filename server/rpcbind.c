/* rpcbind.c: registration with the local rpcbind through libtirpc: the
 * portmapper's calls for IPv4, rpcb_set with netids tcp6 and udp6 for IPv6. */
#include <string.h>
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

/* Register prog/vers over proto and IPv6 at port; 1 if done. */
static int set_ipv6(unsigned long prog, unsigned long vers, int proto, unsigned port)
{
	struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	struct netbuf nb = {.maxlen = sizeof(any), .len = sizeof(any), .buf = (void *)&any};
	struct netconfig *nc = getnetconfigent(proto == IPPROTO_TCP ? "tcp6" : "udp6");
	int ok;

	if (nc == NULL)
		return 0;
	ok = rpcb_set((rpcprog_t)prog, (rpcvers_t)vers, nc, &nb);
	freenetconfigent(nc);
	return ok;
}

int rpcbind_register(unsigned port, int with_nlm, int with_ipv6)
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
			rpcbind_unregister();
			return -EIO;
		}
		/* IPv6 clients without it need port= (and mountport=, lockport=) */
		if (with_ipv6 &&
		    !set_ipv6(entries[i].prog, entries[i].vers, entries[i].proto, port)) {
			log_warn("rpcbind refused program %lu version %lu over IPv6",
				 entries[i].prog, entries[i].vers);
			with_ipv6 = 0;
		}
	}
	log_info("registered NFS and MOUNT version 3%s on port %u with rpcbind (%s)",
		 with_nlm ? ", NLM version 4 and NSM" : "", port,
		 with_ipv6 ? "IPv4 and IPv6" : "IPv4");
	return 0;
}

void rpcbind_unregister(void)
{
	for (size_t i = 0; i < NENTRIES; i++)
		rpcb_unset((rpcprog_t)entries[i].prog, (rpcvers_t)entries[i].vers, NULL);
}
