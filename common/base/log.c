/*
 * log.c: logging to stderr or syslog, one line per message.
 *
 * Every call site is rate-limited the way the kernel's printk_ratelimited is:
 * at most `burst` messages per interval from one format string; what is
 * dropped is counted and said ("N similar messages suppressed") with the next
 * message from that site that gets through. A peer that makes the server fail
 * the same way a million times a second fills no disk. Debug messages, asked
 * for on purpose, are never dropped.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <pthread.h>

#include "clock.h"
#include "log.h"

#define RL_SLOTS 256 /* call sites tracked; two that share a slot share a budget */

/* One call site's budget in the current interval. */
struct rl_site {
	const char *fmt; /* the call site, by its format string */
	uint64_t start_ns;
	unsigned n;		  /* messages logged in this interval */
	unsigned long suppressed; /* dropped since the last one logged */
};

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
static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rl_site rl_sites[RL_SLOTS]; /* under rl_lock */
static unsigned rl_burst = LOG_RATELIMIT_BURST, rl_interval_ms = LOG_RATELIMIT_INTERVAL_MS;

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

void log_set_ratelimit(unsigned burst, unsigned interval_ms)
{
	pthread_mutex_lock(&rl_lock);
	rl_burst = burst;
	rl_interval_ms = interval_ms;
	memset(rl_sites, 0, sizeof(rl_sites));
	pthread_mutex_unlock(&rl_lock);
}

/* Whether a message from the call site fmt may go out now; *suppressed gets
 * how many from that site were dropped since the last that went out. */
static bool rl_allow(const char *fmt, unsigned long *suppressed)
{
	struct rl_site *s = &rl_sites[((uintptr_t)fmt >> 3) % RL_SLOTS];
	uint64_t now = clock_now_ns();
	bool allow;

	*suppressed = 0;
	pthread_mutex_lock(&rl_lock);
	if (rl_burst == 0) {
		pthread_mutex_unlock(&rl_lock);
		return true;
	}
	if (s->fmt != fmt || now - s->start_ns >= (uint64_t)rl_interval_ms * 1000000) {
		if (s->fmt == fmt)
			*suppressed = s->suppressed;
		*s = (struct rl_site){.fmt = fmt, .start_ns = now};
	}
	allow = s->n < rl_burst;
	if (allow) {
		s->n++;
	} else {
		s->suppressed++;
	}
	pthread_mutex_unlock(&rl_lock);
	return allow;
}

/* One line to the destination. */
static void log_line(enum log_level level, const char *func, const char *text)
{
	if (to_syslog) {
		syslog(levels[level].syslog_prio, "%s: %s", func, text);
		return;
	}
	pthread_mutex_lock(&stderr_lock);
	fprintf(stderr, "%s: %s: %s: %s\n", log_ident, levels[level].name, func, text);
	pthread_mutex_unlock(&stderr_lock);
}

void log_vmsg(enum log_level level, const char *func, const char *fmt, va_list ap)
{
	unsigned long dropped = 0;
	char buf[1024];

	if (level != LOG_LVL_DEBUG && !rl_allow(fmt, &dropped))
		return;
	if (dropped) {
		snprintf(buf, sizeof(buf), "%lu similar messages suppressed", dropped);
		log_line(level, func, buf);
	}
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_line(level, func, buf);
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
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_line(LOG_LVL_ERR, func, buf); /* never rate-limited */
	exit(1);
}
