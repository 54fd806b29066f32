/*
 * client_testsrv.c: the in-process NFS server of client_srv.c as a program,
 * for the client's shell tests: it prints "ready RDMA_PORT TCP_PORT" once it
 * listens and serves until SIGTERM or SIGINT.
 *
 *   client_testsrv -d DIR [-r RDMA_PORT] [-t TCP_PORT] [-m rw|rr|both]
 *                  [-g dynamic|fastreg|cache|allphys] [-k KEYFILE] [--deny] [--ro]
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "t/system/client_srv.h"

/* A server registration name. */
static int parse_reg(const char *s, enum rr_reg *out)
{
	static const struct {
		const char *name;
		enum rr_reg reg;
	} regs[] = {{"dynamic", RR_REG_DYNAMIC},
		    {"fastreg", RR_REG_FASTREG},
		    {"cache", RR_REG_CACHE},
		    {"allphys", RR_REG_ALLPHYS}};

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		if (strcmp(s, regs[i].name) == 0) {
			*out = regs[i].reg;
			return 0;
		}
	}
	return -1;
}

/* rw, rr or both. */
static int parse_modes(const char *s, unsigned *out)
{
	*out = strcmp(s, "rw") == 0	? RR_MODE_READ_WRITE
	       : strcmp(s, "rr") == 0	? RR_MODE_READ_READ
	       : strcmp(s, "both") == 0 ? RR_MODE_READ_WRITE | RR_MODE_READ_READ
					: 0;
	return *out ? 0 : -1;
}

/* Options into p; exits with a message on a bad one. */
static void parse(int argc, char **argv, struct csrv_params *p)
{
	static const struct option longs[] = {{"deny", no_argument, NULL, 'D'},
					      {"ro", no_argument, NULL, 'R'},
					      {NULL, 0, NULL, 0}};
	int ch;

	csrv_params_init(p, NULL);
	while ((ch = getopt_long(argc, argv, "d:r:t:m:g:k:v", longs, NULL)) != -1) {
		if (ch == 'd')
			p->dir = optarg;
		else if (ch == 'r')
			p->rdma_port = optarg;
		else if (ch == 't')
			p->tcp_port = optarg;
		else if (ch == 'k')
			p->keyfile = optarg;
		else if (ch == 'D')
			p->deny = 1;
		else if (ch == 'R')
			p->ro = 1;
		else if (ch == 'v')
			log_set_level(LOG_LVL_DEBUG);
		else if ((ch == 'm' && parse_modes(optarg, &p->modes) == 0) ||
			 (ch == 'g' && parse_reg(optarg, &p->reg) == 0))
			continue;
		else
			goto usage;
	}
	if (p->dir && optind == argc)
		return;
usage:
	fprintf(stderr, "usage: client_testsrv -d DIR [-r PORT] [-t PORT] [-m rw|rr|both] "
			"[-g dynamic|fastreg|cache|allphys] [-k KEYFILE] [--deny] [--ro]\n");
	exit(2);
}

/* Start, say ready, serve until a signal. */
int main(int argc, char **argv)
{
	struct csrv_params p;
	struct csrv s;
	sigset_t set;
	int sig = 0;

	log_open("client_testsrv", 0, LOG_LVL_WARN);
	parse(argc, argv, &p);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread starts */
	if (csrv_start(&s, &p) != 0)
		return 1;
	printf("ready %s %s\n", s.rdma_port[0] ? s.rdma_port : "-",
	       s.tcp_port[0] ? s.tcp_port : "-");
	fflush(stdout);
	sigwait(&set, &sig);
	csrv_stop(&s);
	return 0;
}
