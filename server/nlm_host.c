/*
 * nlm_host.c: the client hosts that hold or wait for locks. A host is its
 * caller name and its address, as on Linux; server.nlm.clients_max bounds
 * how many there are, and one that has held nothing for NLM_HOST_IDLE_MS is
 * forgotten (and no longer monitored), an empty one sooner when clients_max
 * is reached.
 */
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "server/nlm_int.h"

/* See nlm_int.h. A client is its caller name and its address, as on Linux:
 * another machine cannot act on a client's locks by giving its name. */
struct nlm_host *nlm_host_find(struct nlm *n, const char *name, const struct sockaddr *peer)
{
	for (struct nlm_host *h = n->hosts; h; h = h->next)
		if (strcmp(h->name, name) == 0 &&
		    (peer == NULL || net_same_ip(peer, (const struct sockaddr *)&h->addr)))
			return h;
	return NULL;
}

static int host_empty(const struct nlm_host *h)
{
	return h->nowners == 0 && h->nlocks == 0 && h->nblocked == 0;
}

static void host_free(struct nlm *n, struct nlm_host *h)
{
	for (struct nlm_host **p = &n->hosts; *p; p = &(*p)->next) {
		if (*p == h) {
			*p = h->next;
			break;
		}
	}
	if (h->monitored)
		nsm_unmonitor(n, h);
	n->nhosts--;
	free(h->name);
	free(h);
}

/* See nlm_int.h. */
void nlm_hosts_gc(struct nlm *n, uint64_t older_ms)
{
	uint64_t now = nlm_now_ms();
	struct nlm_host *h = n->hosts, *next;

	for (; h; h = next) {
		next = h->next;
		if (host_empty(h) && h->pins == 0 && h->idle_since_ms &&
		    now - h->idle_since_ms >= older_ms)
			host_free(n, h);
	}
}

/* See nlm_int.h. */
struct nlm_host *nlm_host_get(struct nlm *n, const char *name, const struct sockaddr *peer,
			      socklen_t plen)
{
	struct nlm_host *h = nlm_host_find(n, name, peer);

	if (h == NULL) {
		if (n->nhosts >= n->p.clients_max)
			nlm_hosts_gc(n, 0);
		if (n->nhosts >= n->p.clients_max) {
			log_warn(
				"NLM: %u clients hold locks: '%s' refused (server.nlm.clients_max)",
				n->nhosts, name);
			return NULL;
		}
		if ((h = calloc(1, sizeof(*h))) == NULL || (h->name = strdup(name)) == NULL) {
			free(h);
			return NULL;
		}
		h->next = n->hosts;
		n->hosts = h;
		n->nhosts++;
		h->idle_since_ms = nlm_now_ms();
	}
	if (peer && plen <= sizeof(h->addr)) {
		memcpy(&h->addr, peer, plen);
		h->addrlen = plen;
	}
	return h;
}

/* See nlm_int.h. */
void nlm_host_touch(struct nlm_host *h)
{
	h->idle_since_ms = host_empty(h) ? nlm_now_ms() : 0;
}

/* See nlm_int.h. */
void nlm_host_mark_drop(struct nlm *n, struct nlm_host *h)
{
	h->drop_epoch = ++n->drop_epoch;
}
