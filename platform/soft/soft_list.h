/* soft_list.h: a minimal intrusive doubly-linked list for the soft provider. */
#ifndef NFSRDMA_SOFT_LIST_H
#define NFSRDMA_SOFT_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct soft_list {
	struct soft_list *next, *prev;
};

#define soft_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* An empty list, or a node that is on no list. */
static inline void soft_list_init(struct soft_list *h)
{
	h->next = h->prev = h;
}

/* True when the list is empty (or the node is on no list). */
static inline bool soft_list_empty(const struct soft_list *h)
{
	return h->next == h;
}

/* Append n at the tail of list h. */
static inline void soft_list_add_tail(struct soft_list *h, struct soft_list *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

/* Unlink n (if linked) and leave it re-initialised, so deleting twice is harmless. */
static inline void soft_list_del(struct soft_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	soft_list_init(n);
}

/* Unlink and return the first node, or NULL when the list is empty. */
static inline struct soft_list *soft_list_pop(struct soft_list *h)
{
	struct soft_list *n = h->next;

	if (n == h)
		return NULL;
	soft_list_del(n);
	return n;
}

#endif
