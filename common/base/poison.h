/*
 * poison.h: what AddressSanitizer sees of an object that a pool keeps for
 * reuse instead of freeing it: poisoned while kept, but for the pool's link,
 * so that a use after it was given back is still reported as one after
 * free() would have been. Nothing without ASan.
 */
#ifndef NFSRDMA_POISON_H
#define NFSRDMA_POISON_H

#include <stddef.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

/* obj (size bytes) is kept: poisoned but for [link, link + link_len). */
static inline void pool_poison(void *obj, size_t size, const void *link, size_t link_len)
{
#if defined(__SANITIZE_ADDRESS__)
	size_t before = (size_t)((const char *)link - (const char *)obj);

	ASAN_POISON_MEMORY_REGION(obj, before);
	ASAN_POISON_MEMORY_REGION((const char *)link + link_len, size - before - link_len);
#else
	(void)obj, (void)size, (void)link, (void)link_len;
#endif
}

/* obj is taken from the pool again: all of it may be used. */
static inline void pool_unpoison(void *obj, size_t size)
{
#if defined(__SANITIZE_ADDRESS__)
	ASAN_UNPOISON_MEMORY_REGION(obj, size);
#else
	(void)obj, (void)size;
#endif
}

#endif
