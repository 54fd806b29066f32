# lab-guest.sh: what the guest halves of the t/lab scripts share, sourced in
# the guest (which sees the host's files).

# nfsrdma_conf FILE: nfsrdma-server's configuration in the guest: rxe0 at
# $RDMALAB_IP, NFS on 20049 (RDMA) and 2049 (TCP) with rpcbind, /export
# read-write for everybody without root squash, as the lab's knfsd has it.
nfsrdma_conf() {
	cat > "$1" << CONF
log = { level = "info"; };
rdma = { provider = "$RDMALAB_RXE_DEV"; };
server = {
	listen = ["$RDMALAB_IP"];
	rdma_port = 20049;
	tcp_port = 2049;
	rpcbind = true;
	pidfile = "/run/nfsrdma-server.pid";
	control_socket = "/run/nfsrdma-server.sock";
	handle_key_file = "/run/nfsrdma-handle.key";
	exports = ( { path = "/export"; clients = ["*"]; access = "rw"; root_squash = false; } );
};
CONF
}
