/*
 * notify.h: telling a service manager how the server is doing (systemd's
 * sd_notify protocol: READY=1, RELOADING=1, STOPPING=1, STATUS=...). Built
 * over libsystemd when configure found it; without it, or when NOTIFY_SOCKET
 * is unset (not started by systemd as Type=notify), every call does nothing.
 */
#ifndef NFSRDMA_SERVER_NOTIFY_H
#define NFSRDMA_SERVER_NOTIFY_H

/* The listeners are up and calls are served; status says what is served. */
void notify_ready(const char *status);
/* A reload (SIGHUP) begins; notify_ready follows when it is done. */
void notify_reloading(void);
/* Shutdown begins: calls in flight finish, then the process exits. */
void notify_stopping(void);

#endif
