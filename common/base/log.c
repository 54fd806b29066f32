/* log.c: logging to stderr or syslog, one line per message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <pthread.h>

#include "log.h"

static const struct {
	const char *name;
	int syslog_prio;
} levels[] = {
	[LOG_LVL_ERR] = {"error", LOG_ERR},	   [LOG_LVL_WARN] = {"warning", LOG_WARNING},
	[LOG_LVL_NOTICE] = {"notice", LOG_NOTICE}, [LOG_LVL_INFO] = {"info", LOG_INFO},
	[LOG_LVL_DEBUG] = {"debug", LOG_DEBUG},
};

static enum log_level cur_level = LOG_LVL_NOTICE;
static int to_syslog;
static const char *log_ident = "nfsrdma";
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;

/* Choose the destination and threshold; safe to call again (e.g. on reload). */
void log_open(const char *ident, int use_syslog, enum log_level level)
{
	if (to_syslog)
		closelog();
	log_ident = ident ? ident : "nfsrdma";
	to_syslog = use_syslog;
	cur_level = level;
	if (to_syslog)
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_close(void)
{
	if (to_syslog)
		closelog();
	to_syslog = 0;
}

void log_set_level(enum log_level level)
{
	__atomic_store_n(&cur_level, level, __ATOMIC_RELAXED);
}

enum log_level log_get_level(void)
{
	return __atomic_load_n(&cur_level, __ATOMIC_RELAXED);
}

int log_level_parse(const char *name, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcmp(name, levels[i].name) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

const char *log_level_name(enum log_level level)
{
	return (unsigned)level < sizeof(levels) / sizeof(levels[0]) ? levels[level].name : "?";
}

void log_vmsg(enum log_level level, const char *func, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (to_syslog) {
		syslog(levels[level].syslog_prio, "%s: %s", func, buf);
		return;
	}
	pthread_mutex_lock(&stderr_lock);
	fprintf(stderr, "%s: %s: %s: %s\n", log_ident, levels[level].name, func, buf);
	pthread_mutex_unlock(&stderr_lock);
}

void log_msg(enum log_level level, const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, func, fmt, ap);
	va_end(ap);
}

void log_fatal(const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_ERR, func, fmt, ap);
	va_end(ap);
	exit(1);
}
