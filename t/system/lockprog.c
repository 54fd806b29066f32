/*
 * lockprog.c: takes and tests locks on one file for the lock tests, one
 * command per argument group, printing one line per command:
 *   lockprog FILE CMD...
 *   r|w START LEN     F_SETLK read or write lock: "ok" or "busy" (or the errno)
 *   R|W START LEN     F_SETLKW: "ok" once granted
 *   t START LEN       F_GETLK for a write lock: "free", or "locked r|w START LEN PID"
 *   u START LEN       unlock: "ok"
 *   f sh|ex|shnb|exnb|un   flock(2): "ok" or "busy"
 *   s MS              sleep MS milliseconds (no output)
 *   c                 close and open the file again: "ok"
 *   p N               read N bytes at 0 (pread): "data BYTES"
 * The file is opened read-write, or write-only where the caller may not read
 * it. Exits 2 on bad arguments, else 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

static int usage(void)
{
	fprintf(stderr,
		"usage: lockprog FILE {r|w|R|W|t|u START LEN | f MODE | s MS | c | p N}...\n");
	return 2;
}

static void result(int rc)
{
	if (rc == 0)
		printf("ok\n");
	else if (errno == EAGAIN || errno == EACCES || errno == EWOULDBLOCK)
		printf("busy\n");
	else
		printf("error %s\n", strerror(errno));
	fflush(stdout);
}

static int do_flock(int fd, const char *mode)
{
	static const struct {
		const char *name;
		int op;
	} modes[] = {{"sh", LOCK_SH},
		     {"ex", LOCK_EX},
		     {"shnb", LOCK_SH | LOCK_NB},
		     {"exnb", LOCK_EX | LOCK_NB},
		     {"un", LOCK_UN}};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(mode, modes[i].name) == 0)
			return flock(fd, modes[i].op);
	errno = EINVAL;
	return -1;
}

/* path opened read-write (made if missing), or write-only where that is all
 * the caller may. */
static int open_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0666);

	return fd < 0 && errno == EACCES ? open(path, O_WRONLY) : fd;
}

int main(int argc, char **argv)
{
	const char *path;
	struct flock fl;
	int fd, i = 2;

	if (argc < 3)
		return usage();
	path = argv[1];
	if ((fd = open_file(path)) < 0) {
		perror(path);
		return 1;
	}
	while (i < argc) {
		const char *cmd = argv[i++];
		char c = cmd[0];

		if (c && strchr("rwRWtu", c) && cmd[1] == '\0' && i + 1 < argc) {
			memset(&fl, 0, sizeof(fl));
			fl.l_whence = SEEK_SET;
			fl.l_start = strtoll(argv[i++], NULL, 0);
			fl.l_len = strtoll(argv[i++], NULL, 0);
			fl.l_type = c == 'r' || c == 'R' ? F_RDLCK : c == 'u' ? F_UNLCK : F_WRLCK;
			if (c == 't') {
				if (fcntl(fd, F_GETLK, &fl) != 0) {
					result(-1);
				} else if (fl.l_type == F_UNLCK) {
					printf("free\n");
				} else {
					printf("locked %c %lld %lld %ld\n",
					       fl.l_type == F_WRLCK ? 'w' : 'r',
					       (long long)fl.l_start, (long long)fl.l_len,
					       (long)fl.l_pid);
				}
				fflush(stdout);
			} else {
				result(fcntl(fd, c == 'R' || c == 'W' ? F_SETLKW : F_SETLK, &fl));
			}
		} else if (c == 'f' && cmd[1] == '\0' && i < argc) {
			result(do_flock(fd, argv[i++]));
		} else if (c == 's' && cmd[1] == '\0' && i < argc) {
			usleep((useconds_t)strtoul(argv[i++], NULL, 0) * 1000);
		} else if (c == 'p' && cmd[1] == '\0' && i < argc) {
			char data[256];
			size_t n = strtoul(argv[i++], NULL, 0);
			ssize_t got = pread(fd, data, n < sizeof(data) ? n : sizeof(data), 0);

			if (got < 0)
				result(-1);
			else
				printf("data %.*s\n", (int)got, data);
			fflush(stdout);
		} else if (c == 'c' && cmd[1] == '\0') {
			close(fd);
			if ((fd = open_file(path)) < 0) {
				perror(path);
				return 1;
			}
			result(0);
		} else {
			return usage();
		}
	}
	close(fd);
	return 0;
}
