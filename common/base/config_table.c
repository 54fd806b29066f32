/*
 * config_table.c: THE table of settings (path, type, range, default, field,
 * meaning) for both daemons, the names of the enumerations and the checks of
 * string values. The documentation printed from the table (-D, the man
 * page's summaries) is config_doc.c.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "config_int.h"
#include "size.h"

/* ------------------------------------------------------------------ names */

/* Allowed names of each enumeration, indexed by value, NULL-terminated. */
static const char *const level_names[] = {"error", "warning", "notice", "info", "debug", NULL};
static const char *const log_dest_names[] = {"stderr", "syslog", NULL};
static const char *const mode_names[] = {"read-write", "read-read", NULL};
static const char *const server_reg_names[] = {"dynamic", "fastreg", "cache", "allphys", NULL};
static const char *const client_reg_names[] = {"zerocopy", "cache", "fastreg", "allphys", NULL};
static const char *const integrity_names[] = {"none", "hmac-sha256", NULL};
static const char *const access_names[] = {"ro", "rw", NULL};
static const char *const proto_names[] = {"rdma", "tcp", NULL};
static const char *const backend_names[] = {"posix", "cephfs", NULL};
static const char *const handles_names[] = {"auto", "native", "portable", NULL};
static const char *const identity_names[] = {"auto", "native", "userspace", NULL};

/* Index of name in a NULL-terminated list, or -1. */
int config_name_index(const char *const *names, const char *name)
{
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(names[i], name) == 0)
			return i;
	}
	return -1;
}

/* names[v], or "?" if v is not a valid index. */
static const char *name_at(const char *const *names, int v)
{
	for (int i = 0; names[i] != NULL; i++) {
		if (i == v)
			return names[i];
	}
	return "?";
}

/* The public name<->enum pairs, all through name_at/config_name_index. */
#define NAME_FUNCS(fn, type, names)                                                                \
	const char *config_##fn##_name(type v)                                                     \
	{                                                                                          \
		return name_at(names, (int)v);                                                     \
	}                                                                                          \
	int config_##fn##_parse(const char *name, type *out)                                       \
	{                                                                                          \
		int i = config_name_index(names, name);                                            \
		if (i < 0)                                                                         \
			return -1;                                                                 \
		*out = (type)i;                                                                    \
		return 0;                                                                          \
	}
NAME_FUNCS(log_dest, enum cfg_log_dest, log_dest_names)
NAME_FUNCS(mode, enum cfg_mode, mode_names)
NAME_FUNCS(server_reg, enum cfg_server_reg, server_reg_names)
NAME_FUNCS(client_reg, enum cfg_client_reg, client_reg_names)
NAME_FUNCS(integrity, enum cfg_integrity_mode, integrity_names)
NAME_FUNCS(access, enum cfg_access, access_names)
NAME_FUNCS(proto, enum cfg_proto, proto_names)
NAME_FUNCS(backend, enum cfg_backend, backend_names)

/* names joined by sep into buf ("error, warning, ..."). */
const char *config_join_names(const char *const *names, const char *sep, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; names[i] != NULL && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? sep : "", names[i]);

		used += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

/* ------------------------------------------------------------------ the table */

static int check_provider(const char *s, char *why, size_t len);
static int check_abs_path(const char *s, char *why, size_t len);
static int check_abs_path_set(const char *s, char *why, size_t len);
static int check_ceph_id(const char *s, char *why, size_t len);
static int check_file_path(const char *s, char *why, size_t len);
static int check_metrics_listen(const char *s, char *why, size_t len);
static int check_listen_addr(const char *s, char *why, size_t len);
static int check_client_entry(const char *s, char *why, size_t len);

/* offsetof(S, f), refused at compile time unless S.f has type T (or T's size). */
#define OFF_T(S, f, T)                                                                             \
	(offsetof(S, f) +                                                                          \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((S *)0)->f), T) ? 1 : -1]))
#define OFF_SZ(S, f, n) (offsetof(S, f) + 0 * sizeof(char[sizeof(((S *)0)->f) == (n) ? 1 : -1]))

#define E_INT(p, S, f, lo, hi, d, text)                                                            \
	{                                                                                          \
		.path = p, .type = T_INT, .off = OFF_T(S, f, unsigned), .min = lo, .max = hi,      \
		.def = d, .desc = text                                                             \
	}
#define E_SIZE(p, S, f, lo, hi, al, d, text)                                                       \
	{                                                                                          \
		.path = p, .type = T_SIZE, .off = OFF_T(S, f, uint64_t), .min = lo, .max = hi,     \
		.align = al, .def = d, .desc = text                                                \
	}
#define E_BOOL(p, S, f, d, text)                                                                   \
	{                                                                                          \
		.path = p, .type = T_BOOL, .off = OFF_T(S, f, bool), .def = d, .desc = text        \
	}
#define E_STR(p, S, f, d, req, chk, text)                                                          \
	{                                                                                          \
		.path = p, .type = T_STRING, .off = OFF_T(S, f, char *), .defstr = d,              \
		.required = req, .check = chk, .desc = text                                        \
	}
#define E_ENUM(p, S, f, nm, d, text)                                                               \
	{                                                                                          \
		.path = p, .type = T_ENUM, .off = OFF_SZ(S, f, sizeof(int)), .names = nm,          \
		.def = d, .desc = text                                                             \
	}
#define E_SET(p, S, f, nm, d, text)                                                                \
	{                                                                                          \
		.path = p, .type = T_ENUMSET, .off = OFF_T(S, f, unsigned), .names = nm, .min = 1, \
		.max = 32, .def = d, .desc = text                                                  \
	}
#define E_LIST(p, S, f, lo, hi, d, req, chk, text)                                                 \
	{                                                                                          \
		.path = p, .type = T_STRLIST, .off = OFF_T(S, f, struct cfg_strlist), .min = lo,   \
		.max = hi, .defstr = d, .required = req, .check = chk, .desc = text                \
	}

#define K 1024LL
#define M (1024LL * 1024)
#define G (1024LL * 1024 * 1024)
#define T (1024LL * 1024 * 1024 * 1024)
#define C struct nfsrdma_config
#define X struct cfg_export

/* THE settings: every default lives here. Keep each group's entries together. */
const struct cfg_entry config_main_table[] = {
	E_ENUM("log.level", C, log.level, level_names, LOG_LVL_NOTICE,
	       "Lowest severity of the messages that are logged."),
	E_ENUM("log.destination", C, log.destination, log_dest_names, CFG_LOG_STDERR,
	       "Where messages go: standard error, or syslog (facility daemon)."),
	E_STR("rdma.provider", C, rdma.provider, "auto", false, check_provider,
	      "RDMA provider: auto (an rdma-core device if there is one, else soft), soft "
	      "(software RDMA over TCP), or an rdma-core device name such as mlx5_0 or rxe0."),
	E_INT("rdma.credits", C, rdma.credits, 1, 4096, 128,
	      "RPC/RDMA credits: requests a peer may have outstanding per connection."),
	E_SIZE("rdma.inline_send", C, rdma.inline_send, 1 * K, 64 * K, 0, 4 * K,
	       "Largest RPC/RDMA message sent inline in one Send (RFC 8797 inline threshold)."),
	E_SIZE("rdma.inline_recv", C, rdma.inline_recv, 1 * K, 64 * K, 0, 4 * K,
	       "Largest RPC/RDMA message received inline; the size of each receive buffer."),
	E_SIZE("rdma.max_io_size", C, rdma.max_io_size, 4 * K, 16 * M, 4 * K, 1 * M,
	       "Largest READ or WRITE payload moved in one RPC."),
	E_INT("rdma.rd_depth", C, rdma.rd_depth, 1, 128, 8,
	      "RDMA Read depth (IRD/ORD): RDMA Reads in flight per connection."),
	E_INT("rdma.poll_spin_us", C, rdma.poll_spin_us, 0, 10000, 0,
	      "Microseconds a thread waiting for RPC/RDMA completions (the server's event loop, "
	      "a client's lone caller) keeps looking before it sleeps (busy polling); 0: no "
	      "fixed spin (the server's loop and a client's caller then adapt theirs, "
	      "server.adaptive_poll_us, client.adaptive_poll_us)."),
	E_SIZE("rdma.registered_memory_budget", C, rdma.registered_memory_budget, 1 * M, 1 * T, 0,
	       256 * M, "Most memory registered at once; credit grants shrink to stay within it."),
	E_LIST("server.listen", C, server.listen, 1, 64, "0.0.0.0", false, check_listen_addr,
	       "Local IPv4 or IPv6 addresses the server listens on (0.0.0.0: all IPv4; ::: all)."),
	E_INT("server.rdma_port", C, server.rdma_port, 1, 65535, 20049,
	      "Port for NFS over RPC/RDMA."),
	E_INT("server.tcp_port", C, server.tcp_port, 0, 65535, 2049,
	      "Port for NFS over TCP, the fallback every client understands; 0 turns TCP off."),
	E_SET("server.modes", C, server.modes, mode_names, 1u << CFG_MODE_READ_WRITE,
	      "RPC/RDMA modes accepted from clients: read-write (RFC 8166), read-read (legacy)."),
	E_ENUM("server.registration", C, server.registration, server_reg_names, CFG_SREG_CACHE,
	       "How I/O buffers are registered: per I/O, fast-registration keys, a cache, or one "
	       "registration of everything (allphys, trusted peers only)."),
	E_SIZE("server.cache.budget", C, server.cache.budget, 1 * M, 1 * T, 0, 128 * M,
	       "Registration cache size (registration = cache)."),
	E_INT("server.cache.high_watermark", C, server.cache.high_watermark, 1, 100, 90,
	      "Percent of the cache budget in use at which reclaim starts."),
	E_INT("server.cache.low_watermark", C, server.cache.low_watermark, 1, 100, 70,
	      "Percent of the cache budget reclaim brings use down to; below high_watermark."),
	E_INT("server.fastreg_pool", C, server.fastreg_pool, 1, 65536, 1024,
	      "Fast-registration keys in the pool (registration = fastreg)."),
	E_BOOL("server.trusted_peers", C, server.trusted_peers, false,
	       "Every client is trusted with access to all registered memory; allphys needs it."),
	E_INT("server.read_read.done_deadline_ms", C, server.read_read.done_deadline_ms, 1, 600000,
	      5000,
	      "Milliseconds a Read-Read client has to send RDMA_DONE before access is revoked."),
	E_SIZE("server.read_read.exposed_bytes_max", C, server.read_read.exposed_bytes_max, 64 * K,
	       1 * T, 0, 64 * M, "Most reply bytes exposed to one Read-Read connection at once."),
	E_INT("server.read_read.windows_max", C, server.read_read.windows_max, 0, 65536, 0,
	      "Most memory windows one Read-Read connection's replies hold at once "
	      "(registration = fastreg); 0: a quarter of fastreg_pool."),
	E_INT("server.rdma_deadline_ms", C, server.rdma_deadline_ms, 100, 600000, 10000,
	      "Milliseconds the RDMA Reads of a call's chunks, or a reply's Send, may take before "
	      "the connection is dropped."),
	E_INT("server.tcp_deadline_ms", C, server.tcp_deadline_ms, 100, 600000, 10000,
	      "Milliseconds a TCP client may take none of a reply, or send nothing more of a "
	      "call it has begun, before the connection is dropped."),
	E_INT("server.rdma_connections_max", C, server.rdma_connections_max, 0, 65536, 128,
	      "RPC/RDMA connections at once (each holds about 1 MB); past it the longest idle is "
	      "closed to make room, or the new one rejected. 0: no limit."),
	E_INT("server.rdma_connections_per_client", C, server.rdma_connections_per_client, 0, 65536,
	      16,
	      "RPC/RDMA connections from one client address; past it new ones are "
	      "rejected. 0: no limit."),
	E_INT("server.rdma_idle_ms", C, server.rdma_idle_ms, 0, 86400000, 360000,
	      "Milliseconds an RPC/RDMA connection may go without a call before it is closed; "
	      "the client reconnects when it needs to. 0: never."),
	E_INT("server.tcp_connections_max", C, server.tcp_connections_max, 0, 65536, 256,
	      "TCP connections on each listen address; past it the longest idle is closed to "
	      "make room, or the new one refused. 0: no limit."),
	E_INT("server.tcp_connections_per_client", C, server.tcp_connections_per_client, 0, 65536,
	      64,
	      "TCP connections from one client address; past it new ones are refused. "
	      "0: no limit."),
	E_SIZE("server.memory_budget", C, server.memory_budget, 16 * M, 1 * T, 0, 512 * M,
	       "Memory for the calls and replies of TCP and UDP clients; past it no new call is "
	       "read until others are answered."),
	E_SIZE("server.tcp_memory_per_connection", C, server.tcp_memory_per_connection, 2 * M,
	       1 * T, 0, 32 * M,
	       "Memory the calls of one TCP connection may hold (each its largest reply) before "
	       "it is read no more: one client cannot take the whole budget."),
	E_INT("server.tcp_loops", C, server.tcp_loops, 0, 16, 0,
	      "Event loops serving the TCP connections of each listen address, whatever the "
	      "number of clients; 0: one per processor."),
	E_INT("server.tcp_poll_spin_us", C, server.tcp_poll_spin_us, 0, 10000, 0,
	      "Microseconds a TCP event loop keeps looking for work before it sleeps (busy "
	      "polling, as rdma.poll_spin_us for RPC/RDMA); 0: no fixed spin (the loops then "
	      "adapt theirs, server.adaptive_poll_us)."),
	E_INT("server.adaptive_poll_us", C, server.adaptive_poll_us, 0, 10000, 100,
	      "Ceiling of the busy polling that the server's event loops (TCP and RPC/RDMA) "
	      "adapt to their traffic where no fixed spin is set: longer while events come "
	      "within it, none when they come further apart; 0: off."),
	E_INT("server.udp_inflight_max", C, server.udp_inflight_max, 1, 4096, 64,
	      "UDP calls held at once on each listen address (128 KiB each); past it the "
	      "server stops reading and the kernel drops what its socket buffer cannot hold."),
	E_INT("server.tcp_idle_ms", C, server.tcp_idle_ms, 0, 86400000, 360000,
	      "Milliseconds a TCP connection may go without a call before it is closed; the "
	      "client reconnects when it needs to. 0: never."),
	E_INT("server.threads", C, server.threads, 1, 256, 4,
	      "Worker threads running NFS requests. The calls of one export, its lock calls "
	      "included, hold at most all but one of them at once (all of 1), so that an export "
	      "whose storage stops answering leaves a worker to the others; a call past its "
	      "share waits up to a second for one to finish (none once none has finished for a "
	      "second), then is answered NFS3ERR_JUKEBOX. Lock calls go into the storage one "
	      "at a time; one kept waiting as long is answered NLM4_DENIED_GRACE_PERIOD."),
	E_INT("server.storage_timeout_s", C, server.storage_timeout_s, 0, 3600, 30,
	      "Seconds an export's storage may go without finishing any of the calls in it "
	      "before it counts as stalled: its further calls are answered NFS3ERR_JUKEBOX (the "
	      "client tries again later) until one of them finishes, and a reload of the "
	      "exports waits no longer for them and is refused; a stop, 30 s more. The same "
	      "for the lock manager's calls (answered NLM4_DENIED_GRACE_PERIOD). 0: wait for "
	      "ever."),
	E_BOOL("server.inline_calls", C, server.inline_calls, true,
	       "Run cheap calls (NULL, GETATTR, ACCESS, FSSTAT, FSINFO, PATHCONF, READs of up "
	       "to 128 KiB the page cache holds, UNSTABLE WRITEs of up to 128 KiB the file "
	       "system takes without waiting) on the RPC/RDMA or TCP event loop that "
	       "received them, without the hand-off to a worker; a call that would wait (storage, "
	       "the caller's identity unless the kernel already answered that caller for the file, "
	       "a long reply) still goes to a worker."),
	E_STR("server.handle_key_file", C, server.handle_key_file, "/var/lib/nfsrdma/handle.key",
	      false, check_abs_path_set,
	      "Secret key that signs file handles, made at the first start if missing; "
	      "handles outlive a restart only with the same key."),
	E_ENUM("server.handles", C, server.handles, handles_names, CFG_HANDLES_AUTO,
	       "File handles of POSIX exports: native (the OS's own, name_to_handle_at on Linux), "
	       "portable (inode number, a generation and the birth time, found through an index "
	       "in server.handle_index_dir), or auto: native where the OS has them."),
	E_ENUM("server.identity", C, server.identity, identity_names, CFG_IDENTITY_AUTO,
	       "How POSIX exports act as the caller: native (each worker thread takes on the "
	       "caller's identity, setfsuid on Linux, and the kernel checks), userspace (the "
	       "server checks mode bits and ACLs itself and gives new objects to the caller), "
	       "or auto: native where the OS has per-thread identities."),
	E_STR("server.handle_index_dir", C, server.handle_index_dir, NULL, false, check_abs_path,
	      "Directory of the portable handles' index, one file per export; unset: handles "
	      "beside server.handle_key_file."),
	E_INT("server.reply_cache", C, server.reply_cache, 0, 1048576, 4096,
	      "Replies of non-idempotent calls kept for retransmissions; 0: no cache."),
	E_STR("server.pidfile", C, server.pidfile, NULL, false, check_abs_path,
	      "Absolute path of a file to write the server's process id to; unset: none."),
	E_STR("server.control_socket", C, server.control_socket, "/run/nfsrdma-server.sock", false,
	      check_abs_path_set,
	      "Unix socket where the running server answers `nfsrdma-server -s` (stats)."),
	E_BOOL("server.rpcbind", C, server.rpcbind, false,
	       "Register NFS and MOUNT with the local rpcbind (off: do not disturb a kernel "
	       "nfsd)."),
	E_BOOL("server.nlm.enable", C, server.nlm.enable, true,
	       "Serve file locks: NLM version 4 and NSM version 1 beside NFS, on TCP and UDP."),
	E_INT("server.nlm.grace_s", C, server.nlm.grace_s, 0, 3600, 90,
	      "Seconds after start during which only reclaims of locks are granted."),
	E_INT("server.nlm.clients_max", C, server.nlm.clients_max, 1, 65536, 256,
	      "Client hosts holding locks at once; past it a new one gets DENIED_NOLOCKS."),
	E_INT("server.nlm.owners_per_client", C, server.nlm.owners_per_client, 1, 65536, 256,
	      "Lock owners (each an open file) one client may have; past it DENIED_NOLOCKS."),
	E_INT("server.nlm.locks_per_client", C, server.nlm.locks_per_client, 1, 1048576, 4096,
	      "Lock ranges and shares one client may hold; past it DENIED_NOLOCKS."),
	E_INT("server.nlm.blocked_per_client", C, server.nlm.blocked_per_client, 0, 65536, 64,
	      "Blocked lock requests one client may have waiting; past it DENIED_NOLOCKS."),
	E_INT("server.nlm.blocked_timeout_s", C, server.nlm.blocked_timeout_s, 1, 86400, 600,
	      "Seconds a blocked lock request waits before it is forgotten."),
	E_INT("server.nlm.callback_retries", C, server.nlm.callback_retries, 1, 100, 5,
	      "Tries of a call back to a client (GRANTED, _RES, SM_NOTIFY) before giving up."),
	E_INT("server.nlm.client_rpcbind_port", C, server.nlm.client_rpcbind_port, 1, 65535, 111,
	      "Port of the clients' rpcbind, where their lock manager and NSM are found."),
	E_STR("server.nsm.state_dir", C, server.nsm.state_dir, NULL, false, check_abs_path,
	      "Directory recording the clients that hold locks and our NSM state number; "
	      "unset: sm beside server.handle_key_file."),
	E_STR("server.nsm.name", C, server.nsm.name, NULL, false, NULL,
	      "The name the server gives itself in SM_NOTIFY; unset: its host name."),
	E_ENUM("server.integrity.mode", C, server.integrity.mode, integrity_names,
	       CFG_INTEGRITY_NONE,
	       "Per-message integrity: none, or an HMAC-SHA256 on every message."),
	E_INT("server.integrity.replay_contexts", C, server.integrity.replay_contexts, 16, 1048576,
	      4096,
	      "Integrity senders (client contexts) whose call numbers are remembered to refuse "
	      "replays."),
	E_INT("server.integrity.replay_window_s", C, server.integrity.replay_window_s, 10, 86400,
	      300,
	      "Seconds a signed call's clock may differ from the server's; older calls are "
	      "refused as replays."),
	E_STR("server.integrity.key_file", C, server.integrity.key_file, NULL, false, NULL,
	      "File holding the HMAC key; must be readable by its owner only (mode 0600 or "
	      "stricter)."),
	{.path = "server.exports",
	 .type = T_EXPORTS,
	 .min = 0,
	 .max = 4096,
	 .desc = "The exported directories: a list of groups, one per export (see below)."},
	E_SIZE("server.ordma.cache", C, server.ordma.cache, 0, 1 * T, 0, 0,
	       "Bytes of the Optimistic RDMA block cache: registered memory holding blocks that "
	       "READs of exports with ordma = true brought in, which clients of those exports "
	       "read with RDMA Reads, no call; 0: none."),
	E_SIZE("server.ordma.block", C, server.ordma.block, 4 * K, 64 * K, 4 * K, 4 * K,
	       "Bytes of one cached block (4K..64K, a power of two)."),
	E_STR("server.metrics.listen", C, server.metrics.listen, NULL, false, check_metrics_listen,
	      "Address and port where GET /metrics serves the counters in the Prometheus text "
	      "format (\"127.0.0.1:9101\", \"[::1]:9101\"); unset: off."),
	E_STR("server.exports_file", C, server.exports_file, NULL, false, check_file_path,
	      "A file of more exports in the exports(5) syntax of nfs-utils, reread on reload; "
	      "unset: none."),
	E_ENUM("client.mode", C, client.mode, mode_names, CFG_MODE_READ_WRITE,
	       "RPC/RDMA mode the client asks for: read-write or read-read."),
	E_ENUM("client.registration", C, client.registration, client_reg_names, CFG_CREG_FASTREG,
	       "How the client registers I/O buffers: the caller's buffer per I/O (zerocopy), "
	       "copies into a cache, fast-registration keys, or allphys (trusted peers only)."),
	E_SIZE("client.cache.budget", C, client.cache.budget, 1 * M, 1 * T, 0, 64 * M,
	       "Client registration cache size (registration = cache)."),
	E_INT("client.cache.high_watermark", C, client.cache.high_watermark, 1, 100, 90,
	      "Percent of the client cache budget in use at which reclaim starts."),
	E_INT("client.cache.low_watermark", C, client.cache.low_watermark, 1, 100, 70,
	      "Percent of the client cache budget reclaim brings use down to."),
	E_INT("client.fastreg_pool", C, client.fastreg_pool, 1, 65536, 256,
	      "Fast-registration keys in the client's pool (registration = fastreg)."),
	E_BOOL("client.trusted_peers", C, client.trusted_peers, false,
	       "The server is trusted with access to all registered memory; allphys needs it."),
	E_BOOL("client.poll_in_caller", C, client.poll_in_caller, true,
	       "A lone call's thread takes its reply from the completion queue itself instead of "
	       "being woken by the event loop."),
	E_INT("client.adaptive_poll_us", C, client.adaptive_poll_us, 0, 10000, 0,
	      "Ceiling of the busy polling that a lone call's thread (client.poll_in_caller) "
	      "adapts to its replies where rdma.poll_spin_us is 0, as the server's loops do "
	      "(server.adaptive_poll_us); 0 (the default): it sleeps at once. It spins only "
	      "while the machine's runnable threads fit on its processors (read from "
	      "/proc/loadavg on Linux; elsewhere it never spins)."),
	E_ENUM("client.proto", C, client.proto, proto_names, CFG_PROTO_RDMA,
	       "Transport to the server: rdma (RPC/RDMA) or tcp."),
	E_INT("client.port", C, client.port, 0, 65535, 0,
	      "Server port; 0 means 20049 for rdma and 2049 for tcp."),
	E_SIZE("client.rsize", C, client.rsize, 4 * K, 16 * M, 4 * K, 1 * M,
	       "Largest READ the client asks for."),
	E_SIZE("client.wsize", C, client.wsize, 4 * K, 16 * M, 4 * K, 1 * M,
	       "Largest WRITE the client sends."),
	E_INT("client.acregmin", C, client.acregmin, 0, 3600, 3,
	      "Seconds file attributes are cached, at least."),
	E_INT("client.acregmax", C, client.acregmax, 0, 3600, 60,
	      "Seconds file attributes are cached, at most."),
	E_INT("client.acdirmin", C, client.acdirmin, 0, 3600, 30,
	      "Seconds directory attributes are cached, at least."),
	E_INT("client.acdirmax", C, client.acdirmax, 0, 3600, 60,
	      "Seconds directory attributes are cached, at most."),
	E_INT("client.timeo", C, client.timeo, 1, 3600, 30,
	      "Seconds to wait for one reply; also what a stop waits for (at most 5)."),
	E_INT("client.dir_max", C, client.dir_max, 16, 1 << 30, 1 << 22,
	      "Entries one directory listing may have; a longer or looping one fails."),
	E_INT("client.nconnect", C, client.nconnect, 1, 16, 1,
	      "Transports to the server (RPC/RDMA connections or TCP connections); calls "
	      "take them in turn, and all are replaced together when one breaks."),
	E_ENUM("client.integrity.mode", C, client.integrity.mode, integrity_names,
	       CFG_INTEGRITY_NONE, "Per-message integrity: none or hmac-sha256 (as the server)."),
	E_STR("client.integrity.key_file", C, client.integrity.key_file, NULL, false, NULL,
	      "File holding the HMAC key; readable by its owner only."),
};

/* The settings of one export, relative to server.exports.[N]. */
const struct cfg_entry config_export_table[] = {
	E_STR("path", X, path, NULL, true, config_check_export_path,
	      "Absolute path of the exported directory."),
	E_LIST("clients", X, clients, 1, 1024, NULL, true, check_client_entry,
	       "Who may mount it: addresses (192.0.2.7, ::1), prefixes (10.0.0.0/8, fe80::/10) "
	       "or * for anyone."),
	E_ENUM("access", X, access, access_names, CFG_ACCESS_RO,
	       "ro (read-only) or rw (read-write)."),
	E_BOOL("root_squash", X, root_squash, true,
	       "Treat requests from uid 0 as anon_uid/anon_gid."),
	E_BOOL("auth_nlm", X, auth_nlm, true,
	       "A lock request (NLM) needs its caller, after squashing, to own the file or "
	       "have the right to read it, as on the Linux server; false: anyone the export "
	       "admits may lock any of its files (for clients that send lock requests as "
	       "AUTH_NULL or as a squashed root)."),
	E_INT("anon_uid", X, anon_uid, 0, 4294967294LL, 65534,
	      "User id for squashed and anonymous requests."),
	E_INT("anon_gid", X, anon_gid, 0, 4294967294LL, 65534,
	      "Group id for squashed and anonymous requests."),
	E_INT("fsid", X, fsid, 0, 4294967295LL, 0,
	      "Export id in file handles; 0: a hash of the directory's real path."),
	E_BOOL("integrity_required", X, integrity_required, false,
	       "Refuse requests without a valid HMAC (needs server.integrity.mode = hmac-sha256)."),
	E_BOOL("ordma", X, ordma, false,
	       "Put blocks this export's READs bring in into the Optimistic RDMA cache, where "
	       "any client connected over RPC/RDMA can read any cached block of any ordma "
	       "export, whatever the file's permissions (needs server.ordma.cache and "
	       "server.trusted_peers = true)."),
	E_ENUM("backend", X, backend, backend_names, CFG_BACKEND_POSIX,
	       "What serves the files: posix (path is a local directory) or cephfs (path is the "
	       "name clients mount; the files are ceph.root of a CephFS)."),
	E_STR("ceph.conf_file", X, ceph.conf_file, "/etc/ceph/ceph.conf", false, check_abs_path_set,
	      "For backend = cephfs: the ceph.conf that names the cluster's monitors."),
	E_STR("ceph.client_id", X, ceph.client_id, "admin", false, check_ceph_id,
	      "For backend = cephfs: the cephx user the server mounts as, without \"client.\"."),
	E_STR("ceph.keyring", X, ceph.keyring, NULL, false, check_abs_path,
	      "For backend = cephfs: the keyring holding that user's key; unset: the one "
	      "ceph.conf_file names."),
	E_STR("ceph.root", X, ceph.root, "/", false, config_check_export_path,
	      "For backend = cephfs: the exported directory, as a path inside the CephFS."),
	E_INT("ceph.mount_timeout_s", X, ceph.mount_timeout_s, 1, 300, 30,
	      "For backend = cephfs: how long start-up waits for the cluster before it gives up, "
	      "and a stop for its unmount."),
};

#undef C
#undef X
#undef K
#undef M
#undef G
#undef T

const size_t config_main_count = ARRAY_SIZE(config_main_table);
const size_t config_export_count = ARRAY_SIZE(config_export_table);

/* ------------------------------------------------------------------ string checks */

/* rdma.provider: auto, soft, or something that can be an rdma-core device name. */
static int check_provider(const char *s, char *why, size_t len)
{
	size_t n = strlen(s);

	if (strcmp(s, "auto") == 0 || strcmp(s, "soft") == 0)
		return 0;
	if (n > 0 && n < 64 &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_-.") == n)
		return 0;
	snprintf(why, len,
		 "\"%s\" is not auto, soft or an rdma-core device name (letters, digits, _ - .; "
		 "at most 63)",
		 s);
	return -1;
}

/* An optional absolute path: "" (none) or starting with "/". */
static int check_abs_path(const char *s, char *why, size_t len)
{
	if (s[0] != '\0' && s[0] != '/') {
		snprintf(why, len, "\"%s\" is not an absolute path", s);
		return -1;
	}
	if (strlen(s) >= PATH_MAX) {
		snprintf(why, len, "path is longer than %d bytes", PATH_MAX - 1);
		return -1;
	}
	return 0;
}

/* An absolute path that cannot be unset: "" is refused (it would store none). */
static int check_abs_path_set(const char *s, char *why, size_t len)
{
	if (s[0] == '\0') {
		snprintf(why, len, "an absolute path is needed (this setting cannot be empty)");
		return -1;
	}
	return check_abs_path(s, why, len);
}

/* A cephx user name: letters, digits and . _ - only, at most 64 bytes. */
static int check_ceph_id(const char *s, char *why, size_t len)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64 ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789._-") != n) {
		snprintf(why, len,
			 "\"%s\" is not a cephx user name (1..64 letters, digits, '.', '_', '-'; "
			 "no \"client.\" prefix)",
			 s);
		return -1;
	}
	if (strncmp(s, "client.", 7) == 0) {
		snprintf(why, len, "give the name without \"client.\": \"%s\"", s + 7);
		return -1;
	}
	return 0;
}

/* server.metrics.listen: "" (off) or ADDR:PORT. */
static int check_metrics_listen(const char *s, char *why, size_t len)
{
	char host[64];
	unsigned port;

	if (s[0] == '\0')
		return 0;
	return config_hostport_parse(s, host, sizeof(host), &port, why, len);
}

/* A file name: relative ones are taken from the configuration file's directory. */
static int check_file_path(const char *s, char *why, size_t len)
{
	if (strlen(s) >= PATH_MAX) {
		snprintf(why, len, "path is longer than %d bytes", PATH_MAX - 1);
		return -1;
	}
	return 0;
}

/* An export path: absolute, and no "." or ".." component to hide what is exported. */
int config_check_export_path(const char *s, char *why, size_t len)
{
	if (s[0] != '/') {
		snprintf(why, len, "\"%s\" is not an absolute path", s);
		return -1;
	}
	for (const char *p = s; *p != '\0'; p++) {
		if (p[0] == '/' && p[1] == '.' &&
		    (p[2] == '/' || p[2] == '\0' ||
		     (p[2] == '.' && (p[3] == '/' || p[3] == '\0')))) {
			snprintf(why, len, "\"%s\" has a \".\" or \"..\" component", s);
			return -1;
		}
	}
	return check_abs_path(s, why, len);
}

/* server.listen entries: a literal IPv4 or IPv6 address. */
static int check_listen_addr(const char *s, char *why, size_t len)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1)
		return 0;
	snprintf(why, len, "\"%s\" is not an IPv4 or IPv6 address", s);
	return -1;
}

/* server.exports.[N].clients entries: what config_client_parse accepts. */
static int check_client_entry(const char *s, char *why, size_t len)
{
	struct cfg_client_addr a;

	if (config_client_parse(s, &a) == 0)
		return 0;
	snprintf(why, len, "\"%s\" is not an address, a prefix (10.0.0.0/8, fe80::/10) or *", s);
	return -1;
}
