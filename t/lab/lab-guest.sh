# lab-guest.sh: what the guest halves of the t/lab scripts share, sourced in
# the guest (which sees the host's files).

# nfsrdma_conf FILE [RDMA_PORT TCP_PORT LINES [RDMA_LINES NAME]]:
# nfsrdma-server's configuration in the guest: rxe0 at $RDMALAB_IP, NFS on
# 20049 (RDMA) and 2049 (TCP) with rpcbind (or on the ports given, with LINES
# instead of the rpcbind line, and RDMA_LINES in the rdma section), /export
# read-write for everybody without root squash, as the lab's knfsd has it;
# pid file and control socket in /run, named after NAME (nfsrdma-server).
nfsrdma_conf() {
	local name=${6:-nfsrdma-server}
	cat > "$1" << CONF
log = { level = "info"; };
rdma = { provider = "$RDMALAB_RXE_DEV"; ${5:-} };
server = {
	listen = ["$RDMALAB_IP"];
	rdma_port = ${2:-20049};
	tcp_port = ${3:-2049};
	${4:-rpcbind = true;}
	pidfile = "/run/$name.pid";
	control_socket = "/run/$name.sock";
	handle_key_file = "/run/$name-handle.key";
	exports = ( { path = "/export"; clients = ["*"]; access = "rw"; root_squash = false; } );
};
CONF
}
