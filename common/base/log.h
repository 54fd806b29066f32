/* log.h: the one set of logging macros; each message carries its function name. */
#ifndef NFSRDMA_LOG_H
#define NFSRDMA_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LVL_ERR,
	LOG_LVL_WARN,
	LOG_LVL_NOTICE,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

/* Where messages go: stderr (the default) or syslog with the given ident. */
void log_open(const char *ident, int use_syslog, enum log_level level);
void log_close(void);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* "error", "warning", "notice", "info", "debug" -> level; returns -1 if unknown. */
int log_level_parse(const char *name, enum log_level *out);
const char *log_level_name(enum log_level level);

/* Each call site (format string) logs at most burst messages per interval;
 * the rest are counted and reported with its next message. burst 0: no limit. */
#define LOG_RATELIMIT_BURST	  10
#define LOG_RATELIMIT_INTERVAL_MS 5000
void log_set_ratelimit(unsigned burst, unsigned interval_ms);

void log_msg(enum log_level level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void log_vmsg(enum log_level level, const char *func, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Start-up only: log and exit(1). */
void log_fatal(const char *func, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

#define log_enabled(lvl) ((lvl) <= log_get_level())
#define LOG_AT(lvl, ...)                                                                           \
	do {                                                                                       \
		if (log_enabled(lvl))                                                              \
			log_msg(lvl, __func__, __VA_ARGS__);                                       \
	} while (0)
#define log_err(...)	LOG_AT(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...)	LOG_AT(LOG_LVL_WARN, __VA_ARGS__)
#define log_notice(...) LOG_AT(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...)	LOG_AT(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)	LOG_AT(LOG_LVL_DEBUG, __VA_ARGS__)
#define fatal(...)	log_fatal(__func__, __VA_ARGS__)

#endif
