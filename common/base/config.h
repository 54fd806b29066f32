/*
 * config.h: the nfsrdma configuration file, one format (libconfig syntax) read by
 * both nfsrdma-server and nfsrdma-client. Every setting, its type, range, default
 * and meaning lives in one table in config.c; nfsrdma.conf(5) documents it.
 *
 * Include it as "common/base/config.h": a plain "config.h" finds autoconf's first.
 */
#ifndef NFSRDMA_CONFIG_H
#define NFSRDMA_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"

struct sockaddr;

/* log.destination */
enum cfg_log_dest {
	CFG_LOG_STDERR,
	CFG_LOG_SYSLOG,
};

/* server.modes (a set: bit CFG_MODE_BIT(m)) and client.mode */
enum cfg_mode {
	CFG_MODE_READ_WRITE, /* "read-write": the server does all RDMA (RFC 8166) */
	CFG_MODE_READ_READ,  /* "read-read": the server exposes replies, the client reads them */
};
#define CFG_MODE_BIT(m) (1u << (m))

/* server.registration */
enum cfg_server_reg {
	CFG_SREG_DYNAMIC, /* register and deregister every I/O buffer */
	CFG_SREG_FASTREG, /* pre-allocated keys bound per I/O to a window of an arena */
	CFG_SREG_CACHE,	  /* bounded cache of registered buffers, watermark reclaim */
	CFG_SREG_ALLPHYS, /* one registration, one key for everything (trusted peers only) */
};

/* client.registration */
enum cfg_client_reg {
	CFG_CREG_ZEROCOPY, /* register the caller's buffer per I/O */
	CFG_CREG_CACHE,	   /* copy into pre-registered buffers */
	CFG_CREG_FASTREG,  /* pre-allocated keys bound per I/O */
	CFG_CREG_ALLPHYS,  /* one registration over the arena (trusted peers only) */
};

/* server.integrity.mode, client.integrity.mode */
enum cfg_integrity_mode {
	CFG_INTEGRITY_NONE,
	CFG_INTEGRITY_HMAC_SHA256,
};

/* server.exports.[N].access */
enum cfg_access {
	CFG_ACCESS_RO,
	CFG_ACCESS_RW,
};

/* client.proto */
enum cfg_proto {
	CFG_PROTO_RDMA,
	CFG_PROTO_TCP,
};

/* A list of strings as written in the file; v[0..n-1] are owned by the list. */
struct cfg_strlist {
	size_t n;
	char **v;
};

/* A "cache" group: the registration cache's size and reclaim watermarks. */
struct cfg_cache {
	uint64_t budget;	 /* bytes the cache may keep registered */
	unsigned high_watermark; /* percent of budget in use that starts reclaim */
	unsigned low_watermark;	 /* percent of budget reclaim stops at; < high_watermark */
};

/* The length of a key in a key_file, one trailing newline not counted: what
 * the configuration check takes, and common/rpc/integrity.h loads. */
#define CFG_KEY_MIN 16
#define CFG_KEY_MAX 64

/* An "integrity" group: per-message HMAC and where its key is. */
struct cfg_integrity {
	enum cfg_integrity_mode mode;
	unsigned replay_contexts; /* server: sender contexts remembered */
	unsigned replay_window_s; /* server: how far off a sender's clock may be */
	char *key_file;		  /* absolute path (relative ones are resolved against the config
				     file's directory); NULL when unset */
};

/* What one client of an export is granted. An exports file gives each client
 * its own options; a libconfig export gives every client the export's. */
struct cfg_client_opts {
	enum cfg_access access;
	bool root_squash; /* map uid/gid 0 to anon_uid/anon_gid */
	bool all_squash;  /* map every caller to anon_uid/anon_gid */
	bool secure;	  /* TCP and UDP calls must come from a port below 1024 */
	bool async;	  /* writes reported stable without being made so */
	bool no_auth_nlm; /* lock requests need no right to the file (nfs-utils' no_auth_nlm) */
	unsigned anon_uid, anon_gid;
};

/* One parsed entry of an export's client list. */
struct cfg_client_addr {
	int family;		/* AF_INET, AF_INET6, or AF_UNSPEC for "*" (anyone) */
	unsigned prefix;	/* leading bits that must match: 0..32 or 0..128 */
	unsigned char addr[16]; /* network address, host bits cleared; AF_INET uses 4 */
	size_t client;		/* the entry of the export's clients list it came from
				   (a host name may give several addresses) */
	struct cfg_client_opts opts;
};

/* server.exports.[N].backend: what serves the export's files. */
enum cfg_backend {
	CFG_BACKEND_POSIX,  /* a local directory */
	CFG_BACKEND_CEPHFS, /* a directory of a CephFS, through libcephfs */
};

/* server.handles: how the POSIX backend makes file handles. */
enum cfg_handles {
	CFG_HANDLES_AUTO,     /* native where the OS has them, else portable */
	CFG_HANDLES_NATIVE,   /* the OS's (name_to_handle_at on Linux) */
	CFG_HANDLES_PORTABLE, /* inode, generation and stamp, through an index */
};

/* server.identity: how the POSIX backend acts as the caller. */
enum cfg_identity {
	CFG_IDENTITY_AUTO,	/* native where threads can take on identities, else userspace */
	CFG_IDENTITY_NATIVE,	/* the thread takes on the caller's (setfsuid on Linux) */
	CFG_IDENTITY_USERSPACE, /* the server checks permissions itself, then chowns */
};

/* One element of server.exports. */
struct cfg_export {
	char *path;		       /* absolute, normalised: no "//", no trailing "/" */
	struct cfg_strlist clients;    /* the client list as written */
	struct cfg_client_addr *allow; /* clients, parsed, in order; a name may give several */
	size_t n_allow;
	enum cfg_access access;	 /* access..anon_gid: the libconfig export's, for every client */
	bool root_squash;	 /* map uid/gid 0 to anon_uid/anon_gid */
	bool auth_nlm;		 /* lock requests need the caller's right to the file */
	unsigned anon_uid;	 /* uid for squashed and AUTH_NONE requests */
	unsigned anon_gid;	 /* gid for squashed and AUTH_NONE requests */
	bool integrity_required; /* refuse requests without a valid HMAC */
	bool ordma;		 /* blocks read go to the Optimistic RDMA cache */
	enum cfg_backend backend;
	struct {
		char *conf_file;	  /* ceph.conf naming the cluster's monitors */
		char *client_id;	  /* cephx name without "client." */
		char *keyring;		  /* its key; NULL: what conf_file says */
		char *root;		  /* the exported directory inside the CephFS */
		unsigned mount_timeout_s; /* how long start-up waits for the cluster */
	} ceph;				  /* for backend = cephfs */
	unsigned fsid; /* export id in file handles; 0: a hash of the real path */
	unsigned line; /* line of the export in the file (0: not from a file) */
	char *file;    /* the exports file it came from; NULL: the configuration */
};

/* The whole configuration. Sizes are bytes, times as their names say. */
struct nfsrdma_config {
	char *source; /* the file it was loaded from; NULL for built-in defaults */
	struct {
		enum log_level level;	       /* lowest severity logged */
		enum cfg_log_dest destination; /* stderr or syslog */
	} log;
	struct {
		char *provider;	       /* "auto", "soft" or an rdma-core device name */
		unsigned credits;      /* RPC/RDMA credits granted per connection */
		uint64_t inline_send;  /* largest message sent inline (RFC 8797) */
		uint64_t inline_recv;  /* largest message received inline; receive size */
		uint64_t max_io_size;  /* largest READ/WRITE payload, multiple of 4K */
		unsigned rd_depth;     /* RDMA Read depth, IRD/ORD, per connection */
		unsigned poll_spin_us; /* look for completions this long before sleeping */
		uint64_t registered_memory_budget; /* cap on memory registered at once */
	} rdma;
	struct {
		struct cfg_strlist listen;	  /* local addresses to listen on */
		unsigned rdma_port;		  /* RPC/RDMA port */
		unsigned tcp_port;		  /* NFS over TCP port; 0 = no TCP */
		unsigned modes;			  /* accepted modes, CFG_MODE_BIT() set; not 0 */
		enum cfg_server_reg registration; /* memory registration strategy */
		struct cfg_cache cache;		  /* for registration = cache */
		unsigned fastreg_pool;		  /* keys in the pool, for registration = fastreg */
		bool trusted_peers;		  /* peers are trusted; required by allphys */
		struct {
			unsigned done_deadline_ms;  /* wait for RDMA_DONE before revoking */
			uint64_t exposed_bytes_max; /* exposed reply bytes per connection */
			unsigned windows_max; /* fastreg: windows per connection; 0: pool / 4 */
		} read_read;
		unsigned rdma_deadline_ms;     /* an RDMA Read pull or a reply's Send */
		unsigned tcp_deadline_ms;      /* a TCP reply or call that makes no progress */
		unsigned rdma_connections_max; /* 0: no limit */
		unsigned rdma_connections_per_client; /* 0: no limit */
		unsigned rdma_idle_ms;		      /* close an idle connection; 0: never */
		unsigned tcp_connections_max;	      /* per listen address; 0: no limit */
		unsigned tcp_connections_per_client;  /* per client address; 0: no limit */
		unsigned udp_inflight_max;	      /* UDP calls held at once */
		unsigned tcp_loops;	   /* TCP I/O loops per listen address; 0: one per CPU */
		unsigned tcp_poll_spin_us; /* the TCP loops look this long before sleeping */
		unsigned adaptive_poll_us; /* else the loops adapt their look up to this */
		uint64_t memory_budget;	   /* TCP and UDP call and reply buffers */
		uint64_t tcp_memory_per_connection; /* what one TCP connection may hold */
		unsigned tcp_idle_ms;	    /* close a connection idle this long; 0: never */
		unsigned threads;	    /* worker threads */
		unsigned storage_timeout_s; /* an export's storage stalls; 0: never */
		bool inline_calls;	    /* cheap calls run on the event loop */
		unsigned reply_cache;	    /* duplicate request cache entries; 0: none */
		char *handle_key_file;	    /* absolute path of the key signing handles */
		enum cfg_handles handles;
		enum cfg_identity identity;
		char *handle_index_dir; /* portable handles' index; NULL: "handles" beside
					   handle_key_file */
		char *pidfile;		/* absolute path; NULL: write none */
		char *control_socket;	/* absolute path of the stats socket */
		char *exports_file;	/* exports(5) file read after exports; NULL: none */
		struct {
			char *listen; /* "ADDR:PORT" serving /metrics; NULL: off */
		} metrics;
		bool rpcbind; /* register NFS and MOUNT with rpcbind */
		struct {
			bool enable;		      /* serve NLM v4 and NSM v1 */
			unsigned grace_s;	      /* only reclaims after start */
			unsigned clients_max;	      /* client hosts holding locks */
			unsigned owners_per_client;   /* open descriptions per client */
			unsigned locks_per_client;    /* ranges and shares per client */
			unsigned blocked_per_client;  /* blocked requests per client */
			unsigned blocked_timeout_s;   /* a blocked request's life */
			unsigned callback_retries;    /* tries of a call to a client */
			unsigned client_rpcbind_port; /* clients' rpcbind (111) */
		} nlm;
		struct {
			char *state_dir; /* NULL: "sm" beside handle_key_file */
			char *name;	 /* ours in SM_NOTIFY; NULL: the host name */
		} nsm;
		struct cfg_integrity integrity; /* per-message HMAC */
		struct {
			uint64_t cache;	    /* bytes of the registered block cache; 0: none */
			uint64_t block;	    /* bytes of a cached block */
		} ordma;		    /* Optimistic RDMA (issue 23) */
		struct cfg_export *exports; /* n_exports exported directories */
		size_t n_exports;
	} server;
	struct {
		enum cfg_mode mode;		  /* Read-Write or Read-Read */
		enum cfg_client_reg registration; /* memory registration strategy */
		struct cfg_cache cache;		  /* for registration = cache */
		unsigned fastreg_pool;		  /* keys, for registration = fastreg */
		bool trusted_peers;		  /* required by allphys */
		bool poll_in_caller;		  /* a waiting caller polls the CQ itself */
		unsigned adaptive_poll_us;	  /* ... adapting its spin up to this */
		enum cfg_proto proto;		  /* RPC/RDMA or TCP */
		unsigned port;			  /* server port; 0: 20049 (rdma), 2049 (tcp) */
		uint64_t rsize;			  /* READ size, multiple of 4K */
		uint64_t wsize;			  /* WRITE size, multiple of 4K */
		unsigned acregmin, acregmax;	  /* file attribute cache, seconds */
		unsigned acdirmin, acdirmax;	  /* directory attribute cache, seconds */
		unsigned timeo;			  /* seconds to wait for one reply */
		unsigned dir_max;		  /* entries one directory listing may have */
		unsigned nconnect;		  /* transports to the server */
		struct cfg_integrity integrity;	  /* per-message HMAC */
	} client;
};

/* One problem found in a configuration file. */
struct config_error {
	char *file;    /* the file the problem is in */
	unsigned line; /* 1-based; 0 when it concerns the file as a whole */
	char *setting; /* dotted path ("server.exports.[1].access"), "syntax", or NULL */
	char *problem; /* what is wrong, in words */
};

/* Every problem found by one config_load(), in file and line order. */
struct config_errors {
	struct config_error *v;
	size_t n, cap;
	bool out_of_memory; /* some errors could not be recorded */
};

/* Fill *cfg with the built-in defaults. Returns 0, or -1 when out of memory. */
int config_defaults(struct nfsrdma_config *cfg);

/*
 * Read and check the file at path. Returns 0 with *out filled (free it with
 * config_free), or -1 with *out empty and every problem found appended to *errs:
 * syntax errors, unknown settings, wrong types, values out of range and the
 * cross-checks between settings (key files are checked on disk here).
 */
int config_load(const char *path, struct nfsrdma_config *out, struct config_errors *errs);

/* Free what *cfg owns and zero it; safe on a zeroed or already freed config. */
void config_free(struct nfsrdma_config *cfg);

void config_errors_init(struct config_errors *errs);
void config_errors_free(struct config_errors *errs);
/* One line per error: "FILE:LINE: SETTING: PROBLEM", "FILE:LINE: PROBLEM" (an
 * exports file), or "FILE: PROBLEM" for line 0. */
void config_errors_print(const struct config_errors *errs, FILE *f);

/* Print every setting with its type, range, default and meaning (nfsrdma-server -D). */
int config_print_defaults(FILE *f);

/* One setting as documented: the man page shows summary under path, verbatim. */
struct config_doc {
	char path[96];	   /* "rdma.credits", "server.exports.[N].path" */
	const char *desc;  /* one line: what it does */
	char summary[256]; /* type, range, default: "integer, 1..4096, default 128" */
	char def[160];	   /* the default in config syntax ("128", "\"1M\""); "" if none */
};
/* Describe setting number i (0, 1, ...). Returns false past the last one. */
bool config_doc_get(size_t i, struct config_doc *out);

/*
 * Parse one client-list entry: an IPv4 or IPv6 address, a prefix such as
 * "10.0.0.0/8" or "fe80::/10", or "*" for anyone. An IPv4-mapped IPv6 entry
 * ("::ffff:192.0.2.7") is stored as IPv4. Returns 0, or -1 (out untouched).
 */
int config_client_parse(const char *text, struct cfg_client_addr *out);

/*
 * The first entry of the export's client list that admits the peer at sa
 * (AF_INET or AF_INET6; an IPv4-mapped IPv6 peer is matched as IPv4), or NULL.
 */
const struct cfg_client_addr *config_client_match(const struct cfg_export *exp,
						  const struct sockaddr *sa);
/* Whether the export's client list admits the peer at sa. Returns 1 if allowed, else 0. */
int config_client_allowed(const struct cfg_export *exp, const struct sockaddr *sa);
/* The same, shaped as an access-list callback: acl is a const struct cfg_export *. */
int config_acl_allows(const void *acl, const struct sockaddr *sa);

/*
 * Split "ADDR:PORT" (an IPv4 literal, or an IPv6 literal in brackets:
 * "[::1]:9101") into host (without brackets) and port 1..65535. Returns 0, or
 * -1 with why filled.
 */
int config_hostport_parse(const char *text, char *host, size_t hostlen, unsigned *port, char *why,
			  size_t whylen);

/* Names <-> enums: *_name returns "?" for a bad value; *_parse returns 0 or -1. */
const char *config_log_dest_name(enum cfg_log_dest v);
int config_log_dest_parse(const char *name, enum cfg_log_dest *out);
const char *config_mode_name(enum cfg_mode v);
int config_mode_parse(const char *name, enum cfg_mode *out);
const char *config_server_reg_name(enum cfg_server_reg v);
int config_server_reg_parse(const char *name, enum cfg_server_reg *out);
const char *config_client_reg_name(enum cfg_client_reg v);
int config_client_reg_parse(const char *name, enum cfg_client_reg *out);
const char *config_integrity_name(enum cfg_integrity_mode v);
int config_integrity_parse(const char *name, enum cfg_integrity_mode *out);
const char *config_access_name(enum cfg_access v);
const char *config_backend_name(enum cfg_backend v);
int config_backend_parse(const char *name, enum cfg_backend *out);
int config_access_parse(const char *name, enum cfg_access *out);
const char *config_proto_name(enum cfg_proto v);
int config_proto_parse(const char *name, enum cfg_proto *out);

#endif
