# lab-guest.sh: what the guest halves of the t/lab scripts share, sourced in
# the guest (which sees the host's files).

# nfsrdma_conf FILE [RDMA_PORT TCP_PORT LINES]: nfsrdma-server's configuration
# in the guest: rxe0 at $RDMALAB_IP, NFS on 20049 (RDMA) and 2049 (TCP) with
# rpcbind (or on the ports given, with LINES instead of the rpcbind line),
# /export read-write for everybody without root squash, as the lab's knfsd
# has it; pid file and control socket in /run.
nfsrdma_conf() {
	cat > "$1" << CONF
log = { level = "info"; };
rdma = { provider = "$RDMALAB_RXE_DEV"; };
server = {
	listen = ["$RDMALAB_IP"];
	rdma_port = ${2:-20049};
	tcp_port = ${3:-2049};
	${4:-rpcbind = true;}
	pidfile = "/run/nfsrdma-server.pid";
	control_socket = "/run/nfsrdma-server.sock";
	handle_key_file = "/run/nfsrdma-handle.key";
	exports = ( { path = "/export"; clients = ["*"]; access = "rw"; root_squash = false; } );
};
CONF
}
