/*
 * mount.c: `nfsrdma-client mount` (also mount.nfsrdma, as mount(8) calls it)
 * and `nfsrdma-client umount`.
 *
 * The mount forks first (connections and threads do not survive a fork); the
 * child connects, MNTs, mounts FUSE, starts serving, checks with statfs that
 * the mount answers, and only then tells the parent, which exits 0. Any
 * failure on the way comes back to the parent as one line of text, printed
 * with exit status 32 (mount(8)'s "mount failure"). Bad usage or options exit
 * before anything is tried: with 1 as mount.nfsrdma (mount(8)'s status for
 * it), with 2 as an nfsrdma-client verb.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "client/client.h"
#include "client/fuse_fs.h"
#include "client/nlm_clnt.h"
#include "client/options.h"
#include "common/base/cli.h"
#include "common/base/ctl.h"
#include "common/base/log.h"
#include "common/base/osdep_mount.h"

#define EXIT_MOUNT_USAGE    1
#define EXIT_MOUNT_FAIL	    32
#define READY_TIMEOUT_EXTRA 60000

struct mount_job {
	struct client_opts o;
	char mnt[PATH_MAX];
	int report_fd; /* to the waiting parent; -1 in the foreground */
	struct fuse_session *se;
	struct nfs3c *c;
	int loop_done; /* the FUSE loop returned (atomic) */
	int verbose;
};

/* Tell the parent (or the terminal) how the mount went; once only. */
static void report(struct mount_job *j, int failed, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (j->report_fd < 0) {
		if (failed)
			fprintf(stderr, "nfsrdma-client: %s\n", msg);
		else if (j->verbose)
			printf("nfsrdma-client: %s\n", msg);
		return;
	}
	dprintf(j->report_fd, "%d %s\n", failed, msg);
	close(j->report_fd);
	j->report_fd = -1;
}

/* Become a daemon's worth of quiet: logs to syslog, stdio to /dev/null. */
static void detach_stdio(struct mount_job *j)
{
	int fd = open("/dev/null", O_RDWR);

	log_open("nfsrdma-client", 1, j->o.log_level);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

/* Whether our mount is still on j->mnt, per the mount table. */
static int still_mounted(struct mount_job *j)
{
	return osdep_mounted(j->mnt, "fuse.nfsrdma") == 1;
}

/*
 * Runs beside the FUSE loop: once the mount answers, report success; then
 * watch for the session's end (unmounted, lazily too, or a signal) and stop the
 * client (nfs3c_shutdown), so workers waiting for an absent server return
 * within seconds and the loop can end; after a signal, also detach the mount,
 * which wakes the loop's readers.
 */
static void *check_main(void *arg)
{
	struct mount_job *j = arg;
	int daemon = j->report_fd >= 0;

	if (osdep_is_fuse(j->mnt) != 1) {
		report(j, 1, "%s does not answer as a FUSE mount after mounting", j->mnt);
		nfs3c_shutdown(j->c);
		osdep_umount(j->mnt, OSDEP_UMOUNT_DETACH);
		return NULL;
	}
	report(j, 0, "mounted %s:%s on %s", j->o.host, j->o.export, j->mnt);
	if (daemon)
		detach_stdio(j);
	for (unsigned n = 1; !__atomic_load_n(&j->loop_done, __ATOMIC_ACQUIRE); n++) {
		if (fuse_session_exited(j->se)) {
			nfs3c_shutdown(j->c);
			if (still_mounted(j))
				osdep_umount(j->mnt, OSDEP_UMOUNT_DETACH);
			break;
		}
		/* a lazy unmount (fusermount3 -uz) while calls wait on the server:
		 * the session ends only once they return */
		if (n % 10 == 0 && !still_mounted(j)) {
			nfs3c_shutdown(j->c);
			fuse_session_exit(j->se);
			break;
		}
		usleep(100000);
	}
	return NULL;
}

/* The fuse argument vector: our mount options plus the user's. The kernel
 * checks the mode bits of every path step and open (default_permissions) with
 * the attributes we give it, as the Linux NFS client checks ACCESS; opens also
 * ask the server's ACCESS, which knows about root squashing. */
static int fuse_args_for(struct mount_job *j, struct fuse_args *args)
{
	char opts[2048];

	snprintf(opts, sizeof(opts), "fsname=%s:%s,subtype=nfsrdma,default_permissions%s%s%s",
		 j->o.host, j->o.export, geteuid() == 0 ? ",allow_other" : "",
		 j->o.fuse_opts[0] ? "," : "", j->o.fuse_opts);
	if (fuse_opt_add_arg(args, "nfsrdma-client") || fuse_opt_add_arg(args, "-o") ||
	    fuse_opt_add_arg(args, opts))
		return -ENOMEM;
	return 0;
}

/* The control socket's one command: the mount point, then its statistics. */
static void stats_answer(const char *cmd, FILE *out, void *arg)
{
	struct mount_job *j = arg;

	if (strcmp(cmd, "stats") != 0) {
		fprintf(out, "unknown command '%s'\n", cmd);
		return;
	}
	fprintf(out, "mount: %s\n", j->mnt);
	nfs3c_print_stats(j->c, out);
}

/* The control socket for `nfsrdma-client stats` (readable by anyone, as
 * /proc/self/mountstats is); a mount without one still works. */
static struct ctl *stats_start(struct mount_job *j)
{
	char path[PATH_MAX];
	struct ctl *ctl = NULL;
	int rc = client_stats_socket(j->mnt, geteuid() == 0, 1, path, sizeof(path));

	if (rc == 0)
		rc = ctl_start(path, 0666, stats_answer, j, &ctl);
	if (rc)
		log_warn("no statistics for %s: %s", j->mnt, strerror(-rc));
	return ctl;
}

/* The lock manager's client (the lock option): its callback service. */
static int start_locks(struct mount_job *j, struct nfsfs *fs)
{
	struct nlmc_params p;
	char err[CLIENT_OPT_ERR_LEN];

	nlmc_params_defaults(&p);
	p.host = j->o.host;
	p.port = j->o.lockport;
	if (j->o.nfs.proto == NFS3C_PROTO_TCP && j->o.port)
		p.nfs_port = (unsigned)atoi(j->o.port);
	p.cbport = j->o.lockcbport;
	p.key = j->o.nfs.key;
	if (nlmc_start(&p, &fs->nlm, err, sizeof(err)) != 0) {
		report(j, 1, "cannot start locking (mount with nolock for local locks): %s", err);
		return -1;
	}
	return 0;
}

/* Mount FUSE on j->mnt over fs and serve it until unmounted. */
static int serve(struct mount_job *j, struct nfsfs *fs)
{
	struct ctl *stats;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config lc = {.clone_fd = 0, .max_idle_threads = 16};
	struct fuse_lowlevel_ops ops = nfsfs_ops;
	pthread_t checker;
	int rc = -1;

	if (fs->nlm)
		nfsfs_ops_locks(&ops);
	if (fuse_args_for(j, &args) == 0)
		j->se = fuse_session_new(&args, &ops, sizeof(ops), fs);
	fuse_opt_free_args(&args);
	if (!j->se) {
		report(j, 1, "cannot start FUSE (bad mount options '%s'?)", j->o.fuse_opts);
		return -1;
	}
	fs->se = j->se;
	if (fuse_set_signal_handlers(j->se) != 0 || fuse_session_mount(j->se, j->mnt) != 0) {
		report(j, 1, "cannot mount FUSE on %s (is /dev/fuse there, and may we use it?)",
		       j->mnt);
		fuse_session_destroy(j->se);
		return -1;
	}
	stats = stats_start(j);
	if (pthread_create(&checker, NULL, check_main, j) == 0) {
		rc = fuse_session_loop_mt(j->se, &lc);
		__atomic_store_n(&j->loop_done, 1, __ATOMIC_RELEASE);
		pthread_join(checker, NULL);
	} else {
		report(j, 1, "cannot start a thread");
	}
	ctl_stop(stats);
	fuse_remove_signal_handlers(j->se);
	fuse_session_unmount(j->se);
	fuse_session_destroy(j->se);
	return rc < 0 ? rc : 0;
}

/* The mount itself, in the daemon (or the foreground). */
static int run_mount(struct mount_job *j)
{
	struct nfs3c *c;
	struct nfsfs fs;
	char err[CLIENT_OPT_ERR_LEN];
	int rc;

	if (j->report_fd >= 0 && chdir("/") != 0)
		log_warn("chdir /: %s", strerror(errno));
	rc = nfs3c_mount(&j->o.nfs, &c, err, sizeof(err));
	if (rc) {
		report(j, 1, "cannot mount %s:%s: %s", j->o.host, j->o.export, err);
		return EXIT_MOUNT_FAIL;
	}
	j->c = c;
	if (nfsfs_init(&fs, c, j->o.direct_io, j->o.nfs.noac, j->o.nfs.acdirmin) != 0) {
		report(j, 1, "out of memory");
		nfs3c_unmount(c);
		return EXIT_MOUNT_FAIL;
	}
	if (!j->o.nolock && start_locks(j, &fs) != 0) {
		nfs3c_unmount(c);
		nfsfs_fini(&fs);
		return EXIT_MOUNT_FAIL;
	}
	rc = serve(j, &fs);
	nfsfs_silly_cleanup(&fs);
	nlmc_stop(fs.nlm);
	nfs3c_unmount(c);
	nfsfs_fini(&fs);
	log_info("%s unmounted", j->mnt);
	return rc == 0 ? 0 : EXIT_MOUNT_FAIL;
}

/* Parent: wait for the child's one-line report; returns the exit status. */
static int wait_report(int fd, pid_t child, int timeout_ms)
{
	char buf[1100];
	size_t n = 0;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int status;

	while (n < sizeof(buf) - 1 && poll(&pfd, 1, timeout_ms) > 0) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = '\0';
	if (n >= 2 && buf[0] == '0')
		return 0;
	if (n >= 2 && buf[0] == '1') {
		fprintf(stderr, "nfsrdma-client: %s", buf + 2);
		waitpid(child, &status, 0);
		return EXIT_MOUNT_FAIL;
	}
	if (n == 0 && waitpid(child, &status, WNOHANG) == 0) {
		fprintf(stderr, "nfsrdma-client: the mount did not become ready in %d s\n",
			timeout_ms / 1000);
		kill(child, SIGTERM);
	} else {
		fprintf(stderr,
			"nfsrdma-client: the mount daemon died before the mount was ready\n");
	}
	return EXIT_MOUNT_FAIL;
}

/* Fork; the parent waits for the child's report and exits with it. */
static int daemonize(struct mount_job *j)
{
	int p[2];
	pid_t pid;

	if (pipe(p) != 0) {
		fprintf(stderr, "nfsrdma-client: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "nfsrdma-client: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(p[1]);
		exit(wait_report(p[0], pid,
				 nfs3c_connect_timeout_ms(&j->o.nfs) * 3 + j->o.nfs.timeout_ms +
					 READY_TIMEOUT_EXTRA));
	}
	close(p[0]);
	j->report_fd = p[1];
	setsid();
	return 0;
}

/* The mount point: an existing directory, made absolute. */
static int check_mountpoint(const char *dir, char *out)
{
	struct stat st;

	if (!realpath(dir, out) || stat(out, &st) != 0) {
		fprintf(stderr, "nfsrdma-client: mount point %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nfsrdma-client: mount point %s is not a directory\n", dir);
		return -1;
	}
	return 0;
}

/* mount's usage message and options. */
static void mount_usage(FILE *f, int helper)
{
	fprintf(f,
		"usage: %s\n"
		"  -f  fake: check everything, mount nothing\n"
		"  -n  accepted (no /etc/mtab is written)\n"
		"  -s  sloppy: ignore options that are not understood\n"
		"  -v  verbose\n"
		"  -h, --help     show this help\n"
		"  -V, --version  print the version\n"
		"options (-o, comma-separated; they override the configuration file):\n%s",
		helper ? "mount.nfsrdma SERVER:/EXPORT DIR [-fnsv] [-o OPTIONS]"
		       : "nfsrdma-client mount [-fnsv] [-o OPTIONS] SERVER:/EXPORT DIR",
		client_opts_help);
}

/* mount.nfsrdma answers a usage error with mount(8)'s status for it, 1 (as
 * mount.nfs does); the nfsrdma-client verbs with 2, like every other command. */
static int usage_status(int helper)
{
	return helper ? EXIT_MOUNT_USAGE : CLI_EXIT_USAGE;
}

/* One option of mount's command line into j. Returns 0, -1 when the command
 * is done (help or version printed), or an exit status (message printed). */
static int mount_option(struct mount_job *j, int ch, char **argv, int helper, int *fake,
			int *sloppy)
{
	const char *me = helper ? "mount.nfsrdma" : "nfsrdma-client mount";
	char err[CLIENT_OPT_ERR_LEN];

	switch (ch) {
	case 'o':
		if (client_opts_parse(&j->o, optarg, err, sizeof(err)) != 0 && !*sloppy) {
			fprintf(stderr, "%s: %s\n", me, err);
			return usage_status(helper);
		}
		return 0;
	case 'f':
		*fake = 1;
		return 0;
	case 's':
		*sloppy = 1;
		return 0;
	case 'v':
		j->verbose = 1;
		return 0;
	case 'n':
	case 't':
		return 0;
	case 'h':
		mount_usage(stdout, helper);
		return -1;
	case 'V':
		cli_version(helper ? "mount.nfsrdma" : "nfsrdma-client");
		return -1;
	default:
		cli_getopt_error(me, ch, argv);
		return usage_status(helper);
	}
}

/* Parse the command line into j. Returns 0, -1 when the command is done
 * (help or version printed), or an exit status (message printed). */
static int parse_args(struct mount_job *j, int argc, char **argv, int helper, int *fake)
{
	static const struct option longs[] = {{"help", no_argument, NULL, 'h'},
					      {"version", no_argument, NULL, 'V'},
					      {NULL, 0, NULL, 0}};
	const char *me = helper ? "mount.nfsrdma" : "nfsrdma-client mount";
	char err[CLIENT_OPT_ERR_LEN];
	int ch, rc, sloppy = 0;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fnsvhVt:", longs, NULL)) != -1)
		if ((rc = mount_option(j, ch, argv, helper, fake, &sloppy)) != 0)
			return rc;
	if (argc - optind < 2) {
		cli_usage_error(me, "SERVER:/EXPORT and DIR are needed");
		return usage_status(helper);
	}
	if (argc - optind > 2) {
		cli_usage_error(me, "unexpected argument '%s'", argv[optind + 2]);
		return usage_status(helper);
	}
	if (client_opts_spec(&j->o, argv[optind], err, sizeof(err)) != 0 ||
	    client_opts_finish(&j->o, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", me, err);
		return usage_status(helper);
	}
	return check_mountpoint(argv[optind + 1], j->mnt) ? EXIT_MOUNT_FAIL : 0;
}

/* See client.h: parse, check, daemonize, mount and serve. */
int client_mount_main(int argc, char **argv, int helper)
{
	struct mount_job j;
	int fake = 0, rc;

	memset(&j, 0, sizeof(j));
	j.report_fd = -1;
	client_opts_init(&j.o);
	if ((rc = parse_args(&j, argc, argv, helper, &fake)) != 0) {
		client_opts_free(&j.o);
		return rc < 0 ? 0 : rc;
	}
	log_open("nfsrdma-client", 0, j.o.log_level);
	if (access("/dev/fuse", R_OK | W_OK) != 0) {
		fprintf(stderr, "nfsrdma-client: /dev/fuse: %s (FUSE is needed to mount)\n",
			strerror(errno));
		client_opts_free(&j.o);
		return EXIT_MOUNT_FAIL;
	}
	if (fake) {
		client_opts_free(&j.o);
		return 0;
	}
	if (!j.o.foreground && daemonize(&j) != 0) {
		client_opts_free(&j.o);
		return EXIT_MOUNT_FAIL;
	}
	rc = run_mount(&j);
	client_opts_free(&j.o);
	return rc;
}

/* DIR made absolute without resolving it: resolving would ask the mounted file
 * system about its root, which hangs while the server is away. */
static int absolute(const char *dir, char *out, size_t len)
{
	char cwd[PATH_MAX];

	if (dir[0] == '/')
		return snprintf(out, len, "%s", dir) < (int)len ? 0 : -1;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return snprintf(out, len, "%s/%s", cwd, dir) < (int)len ? 0 : -1;
}

/* umount's command line: the OSDEP_UMOUNT_ flags in *flags. Returns 0, -1 when
 * the command is done (help or version printed), or CLI_EXIT_USAGE. */
static int umount_args(int argc, char **argv, unsigned *flags)
{
	static const struct option longs[] = {{"help", no_argument, NULL, 'h'},
					      {"version", no_argument, NULL, 'V'},
					      {NULL, 0, NULL, 0}};
	const char *me = "nfsrdma-client umount";
	int ch;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "flhV", longs, NULL)) != -1) {
		if (ch == 'f') {
			*flags |= OSDEP_UMOUNT_FORCE; /* FUSE: abort the connection, pending calls
							 fail */
		} else if (ch == 'l') {
			*flags |= OSDEP_UMOUNT_DETACH;
		} else if (ch == 'h') {
			printf("usage: nfsrdma-client umount [-f] [-l] DIR\n"
			       "  -f  force: pending calls fail at once\n"
			       "  -l  lazy: detach now, clean up when no longer busy\n");
			return -1;
		} else if (ch == 'V') {
			cli_version("nfsrdma-client");
			return -1;
		} else {
			return cli_getopt_error(me, ch, argv);
		}
	}
	if (argc - optind < 1)
		return cli_usage_error(me, "DIR is needed");
	if (argc - optind > 1)
		return cli_usage_error(me, "unexpected argument '%s'", argv[optind + 1]);
	return 0;
}

/* See client.h: the OS's unmount as root, fusermount3 otherwise. */
int client_umount_main(int argc, char **argv)
{
	char dir[PATH_MAX];
	unsigned flags = OSDEP_UMOUNT_NOFOLLOW;
	int rc;

	if ((rc = umount_args(argc, argv, &flags)) != 0)
		return rc < 0 ? 0 : rc;
	if (absolute(argv[optind], dir, sizeof(dir)) != 0) {
		return cli_usage_error("nfsrdma-client umount", "%s: path too long", argv[optind]);
	}
	if (geteuid() != 0) {
		if (flags & OSDEP_UMOUNT_DETACH)
			execlp("fusermount3", "fusermount3", "-u", "-z", dir, (char *)NULL);
		else
			execlp("fusermount3", "fusermount3", "-u", dir, (char *)NULL);
		fprintf(stderr, "nfsrdma-client: cannot run fusermount3: %s\n", strerror(errno));
		return EXIT_MOUNT_FAIL;
	}
	/* a forced unmount aborts the FUSE connection; what held the mount lets go
	 * a moment later, and the daemon may then unmount it itself: a mount
	 * gone after a forced try (EINVAL) is what was asked for */
	rc = osdep_umount(dir, flags);
	for (int i = 0; rc == -EBUSY && (flags & OSDEP_UMOUNT_FORCE) && i < 11; i++) {
		usleep(200000);
		/* gone already (what answers there is no FUSE mount; an aborted
		 * one answers ENOTCONN): no retry on whatever is mounted below */
		if (osdep_is_fuse(dir) == 0)
			rc = 0;
		else if (i < 10)
			rc = osdep_umount(dir, flags);
		else
			rc = osdep_umount(dir, flags | OSDEP_UMOUNT_DETACH);
		if (rc == -EINVAL)
			rc = 0;
	}
	if (rc != 0) {
		fprintf(stderr, "nfsrdma-client: cannot unmount %s: %s\n", dir,
			rc == -EINVAL ? "not mounted" : strerror(-rc));
		return EXIT_MOUNT_FAIL;
	}
	return 0;
}
