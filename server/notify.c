/* notify.c: the sd_notify messages of nfsrdma-server (see notify.h). */
#include "server/notify.h"

#ifdef HAVE_LIBSYSTEMD
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "common/base/log.h"

/* Send one message; a failure is logged once, it never stops the server. */
static void send_state(const char *state)
{
	static int warned;
	int r = sd_notify(0, state);

	if (r < 0 && !warned) {
		warned = 1;
		log_warn("cannot notify the service manager: %d", r);
	}
}

void notify_ready(const char *status)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", status);
	send_state(msg);
}

void notify_reloading(void)
{
	send_state("RELOADING=1\nSTATUS=reloading the configuration");
}

void notify_stopping(void)
{
	send_state("STOPPING=1\nSTATUS=finishing the calls in flight");
}
#else
void notify_ready(const char *status)
{
	(void)status;
}

void notify_reloading(void)
{
}

void notify_stopping(void)
{
}
#endif
