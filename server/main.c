/*
 * main.c: nfsrdma-server's command line. Checks the configuration (-t), prints
 * the defaults (-D) or the running server's counters (-s), or serves: in the
 * background unless -F, reporting start-up success or failure to the shell
 * before detaching, and handling SIGHUP (reload) and SIGTERM/SIGINT (drain and
 * exit) in the main thread while the others work.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/base/cli.h"
#include "common/base/config.h"
#include "common/base/log.h"
#include "common/base/osdep.h"
#include "common/base/ctl.h"
#include "common/verbs.h"
#include "server/daemon.h"
#include "server/notify.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define DEFAULT_CONFIG SYSCONFDIR "/nfsrdma.conf"

/* What the command line asked for. */
struct server_opts {
	const char *config_file; /* -f */
	bool test;		 /* -t: check the configuration and exit */
	bool defaults;		 /* -D: print the defaults and exit */
	bool foreground;	 /* -F: do not detach */
	bool debug;		 /* -d: debug log on stderr, in the foreground */
	bool stats;		 /* -s: print the running server's counters */
	bool exports;		 /* -e: print the running server's exports and clients */
	bool reload;		 /* -r: make the running server reload */
};

/* Usage on f; the caller decides the exit status. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfsrdma-server [-F] [-d] [-f FILE]\n"
		"       nfsrdma-server -t [-f FILE]\n"
		"       nfsrdma-server -s [-f FILE]\n"
		"       nfsrdma-server -e [-f FILE]\n"
		"       nfsrdma-server -r [-f FILE]\n"
		"       nfsrdma-server -D | -h | -V\n"
		"  -f FILE  configuration file (default %s)\n"
		"  -F       stay in the foreground\n"
		"  -d       debug: log everything to stderr, in the foreground\n"
		"  -t       check the configuration file, print every problem, and exit\n"
		"  -s       print the running server's counters (from its control socket)\n"
		"  -e       print the running server's exports with each client's options\n"
		"           (like exportfs -v), and the clients connected now\n"
		"  -r       make the running server reread its configuration and exports\n"
		"           file (as SIGHUP); print the problems and exit 1 if it refused\n"
		"  -D       print every setting with its type, range and default, and exit\n"
		"  -h, --help     show this help\n"
		"  -V, --version  print the version\n",
		DEFAULT_CONFIG);
}

/* Fill *o from argv. Returns -1 (exit 0) after -h or -V, CLI_EXIT_USAGE on a
 * usage error (one line printed), else 0. */
static int parse_args(int argc, char **argv, struct server_opts *o)
{
	static const struct option longs[] = {{"help", no_argument, NULL, 'h'},
					      {"version", no_argument, NULL, 'V'},
					      {NULL, 0, NULL, 0}};
	int ch, modes;

	o->config_file = DEFAULT_CONFIG;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:tDFdserhV", longs, NULL)) != -1) {
		switch (ch) {
		case 'f':
			o->config_file = optarg;
			break;
		case 't':
			o->test = true;
			break;
		case 'D':
			o->defaults = true;
			break;
		case 'F':
			o->foreground = true;
			break;
		case 'd':
			o->debug = o->foreground = true;
			break;
		case 's':
			o->stats = true;
			break;
		case 'e':
			o->exports = true;
			break;
		case 'r':
			o->reload = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			cli_version("nfsrdma-server");
			return -1;
		default:
			return cli_getopt_error("nfsrdma-server", ch, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("nfsrdma-server", "unexpected argument '%s'", argv[optind]);
	modes = o->test + o->defaults + o->stats + o->exports + o->reload;
	if (modes > 1)
		return cli_usage_error("nfsrdma-server",
				       "-t, -D, -s, -e and -r do not go together: give one");
	if (modes && o->foreground)
		return cli_usage_error("nfsrdma-server", "-F and -d are for serving: not with -t, "
							 "-D, -s, -e or -r");
	return 0;
}

/* What the configuration file cannot know: whether the providers built into
 * this program can do its registration strategy. fastreg binds memory
 * windows, which the verbs provider lacks where its libibverbs has none
 * (illumos's OFED 1.1.8). 0, or -1 after saying why. */
static int check_registration(const char *path, const struct nfsrdma_config *cfg)
{
	const struct vb_ops *p = vb_windowless_provider(NULL, cfg->rdma.provider);

	if (cfg->server.registration != CFG_SREG_FASTREG || p == NULL)
		return 0;
	fprintf(stderr,
		"%s: server.registration: \"fastreg\" needs memory windows, which provider '%s' "
		"of this build lacks (rdma.provider \"%s\" may open it): use dynamic or cache\n",
		path, p->name, cfg->rdma.provider);
	return -1;
}

/* Load the file into *cfg, printing every problem. Returns 0 if it is valid. */
static int server_load_config(const char *path, struct nfsrdma_config *cfg)
{
	struct config_errors errs;
	int r;

	config_errors_init(&errs);
	r = config_load(path, cfg, &errs);
	config_errors_print(&errs, stderr);
	config_errors_free(&errs);
	if (r == 0 && (r = check_registration(path, cfg)) < 0)
		config_free(cfg);
	return r;
}

/* -t: exit status 0 and "FILE: configuration ok" when valid, else 1. */
static int server_check_config(const char *path)
{
	struct nfsrdma_config cfg;

	if (server_load_config(path, &cfg) < 0)
		return 1;
	fprintf(stderr, "%s: configuration ok\n", path);
	config_free(&cfg);
	return 0;
}

/* -s, -e: ask the running server (command "stats" or "exports"). */
static int server_query(const char *path, const char *cmd)
{
	struct nfsrdma_config cfg;
	int rc;

	if (server_load_config(path, &cfg) < 0)
		return 1;
	rc = ctl_query(cfg.server.control_socket, cmd, stdout);
	if (rc)
		fprintf(stderr, "nfsrdma-server: no server answers on %s: %s\n",
			cfg.server.control_socket, strerror(-rc));
	config_free(&cfg);
	return rc ? 1 : 0;
}

/* -r: ask the running server to reload; its answer on stdout, or on stderr
 * with exit status 1 when it refused. */
static int server_reload(const char *path)
{
	struct nfsrdma_config cfg;
	char *answer = NULL;
	size_t len = 0;
	FILE *mem;
	int rc;

	if (server_load_config(path, &cfg) < 0)
		return 1;
	if ((mem = open_memstream(&answer, &len)) == NULL) {
		perror("nfsrdma-server");
		config_free(&cfg);
		return 1;
	}
	rc = ctl_query(cfg.server.control_socket, "reload", mem);
	fclose(mem);
	if (rc)
		fprintf(stderr, "nfsrdma-server: no server answers on %s: %s\n",
			cfg.server.control_socket, strerror(-rc));
	else if (strncmp(answer, "reloaded ", 9) == 0)
		fputs(answer, stdout);
	else {
		fputs(answer, stderr);
		rc = 1;
	}
	free(answer);
	config_free(&cfg);
	return rc ? 1 : 0;
}

/*
 * Detach: fork; the parent waits for the child to say on a pipe whether it
 * started, and exits with that status. Returns the pipe's write end in the
 * child (-1 in the foreground).
 */
static int detach(void)
{
	int p[2];
	pid_t pid;
	char status;

	if (pipe(p) < 0 || (pid = fork()) < 0) {
		perror("nfsrdma-server: cannot detach");
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &status, 1) != 1)
			status = 1; /* the child died before saying */
		exit(status);
	}
	close(p[0]);
	setsid();
	if (chdir("/") < 0)
		perror("nfsrdma-server: chdir /");
	return p[1];
}

/* Tell the waiting parent how start-up went; then stop using the terminal. */
static void report(int fd, int status)
{
	char c = (char)status;
	int null;

	if (fd < 0)
		return;
	if (write(fd, &c, 1) != 1)
		perror("nfsrdma-server: start-up status");
	close(fd);
	if (status == 0 && (null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
}

/* A stop's deadline: calls held by storage that does not answer would keep
 * the workers, and the process, for ever (server.storage_timeout_s). */
#define STOP_GRACE_S 30 /* past the storage timeout: the unmounts', and the rest */
static unsigned stop_wait_s;
static char stop_pidfile[PATH_MAX]; /* daemon_stop frees the configuration */

static void *stop_watchdog(void *arg)
{
	(void)arg;
	sleep(stop_wait_s);
	log_err("still stopping after %u s: calls are held by storage that does not answer; "
		"exiting without them",
		stop_wait_s);
	if (stop_pidfile[0])
		unlink(stop_pidfile);
	_exit(1);
}

/* Serve until SIGTERM or SIGINT; SIGHUP reloads. */
static int server_run(const struct server_opts *o)
{
	/* the file as an absolute path: reloads come after the chdir("/") of detach */
	char *path = realpath(o->config_file, NULL);
	struct nfsrdma_server srv;
	struct nfsrdma_config cfg;
	sigset_t set;
	int sig, fd = -1;

	if (server_load_config(path ? path : o->config_file, &cfg) < 0) {
		free(path);
		return 1;
	}
	free(path); /* cfg.source keeps it */
	/* start-up messages go to stderr; the configured destination after */
	log_open("nfsrdma-server", 0, o->debug ? LOG_LVL_DEBUG : cfg.log.level);
	if (!o->foreground)
		fd = detach();
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* every thread inherits this */
	signal(SIGPIPE, SIG_IGN);
	osdep_malloc_keep(cfg.rdma.max_io_size);
	if (daemon_start(&srv, &cfg) != 0) {
		log_err("not started");
		report(fd, 1);
		return 1;
	}
	report(fd, 0);
	srv.log_debug = o->debug;
	daemon_notify_ready(&srv); /* the listeners are up: daemon_start opened them */
	/* detached, the server has no standard error left: syslog, as
	 * rpc.mountd's messages go once it is in the background */
	if (!o->debug && (srv.cfg.log.destination == CFG_LOG_SYSLOG || fd >= 0))
		log_open("nfsrdma-server", 1, srv.cfg.log.level);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			daemon_reload(&srv, srv.cfg.source, NULL);
			continue;
		}
		notify_stopping();
		log_notice("signal %d: finishing the calls in flight, then exiting", sig);
		break;
	}
	if (srv.cfg.server.storage_timeout_s) {
		pthread_t t;

		stop_wait_s = srv.cfg.server.storage_timeout_s + STOP_GRACE_S;
		if (srv.cfg.server.pidfile)
			snprintf(stop_pidfile, sizeof(stop_pidfile), "%s", srv.cfg.server.pidfile);
		if (pthread_create(&t, NULL, stop_watchdog, NULL) == 0)
			pthread_detach(t);
	}
	daemon_stop(&srv);
	log_notice("stopped");
	log_close();
	return 0;
}

/* Options, then one of: print defaults, check the file, print stats, or run. */
int main(int argc, char **argv)
{
	struct server_opts opts = {0};
	int r = parse_args(argc, argv, &opts);

	if (r != 0)
		return r < 0 ? 0 : r;
	if (opts.defaults)
		return config_print_defaults(stdout) < 0 ? 1 : 0;
	if (opts.test)
		return server_check_config(opts.config_file);
	if (opts.stats)
		return server_query(opts.config_file, "stats");
	if (opts.exports)
		return server_query(opts.config_file, "exports");
	if (opts.reload)
		return server_reload(opts.config_file);
	return server_run(&opts);
}
