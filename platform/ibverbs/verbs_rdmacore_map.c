/*
 * verbs_rdmacore_map.c: a 32-bit key -> object map. The provider keeps two:
 * QP number -> conn (ibv_wc carries only the QP number, and several conns may
 * share a CQ) and window rkey -> window (so a Send with Invalidate seen on a
 * receive marks the window unbound). Pollers take the read lock, the rare
 * changes the write lock. Nodes live inside their objects: nothing is
 * allocated here.
 */
#include <errno.h>
#include <string.h>

#include "common/base/log.h"
#include "verbs_rdmacore.h"

/* Bucket of a key: QP numbers run mostly in sequence, rkeys differ in the high bits. */
static unsigned bucket_of(uint32_t key)
{
	return (key ^ (key >> 8) ^ (key >> 16)) & (RDMACORE_MAP_BUCKETS - 1);
}

/* Set up an empty map. */
int rdmacore_map_init(struct rdmacore_map *map)
{
	int rc;

	memset(map, 0, sizeof(*map));
	rc = pthread_rwlock_init(&map->lock, NULL);
	return rc ? -rc : 0;
}

/* Release the lock; nodes belong to their objects and are not touched. */
void rdmacore_map_destroy(struct rdmacore_map *map)
{
	if (map->count)
		log_warn("%u objects still mapped when the device closed", map->count);
	pthread_rwlock_destroy(&map->lock);
}

/* Add node under node->key; the caller holds the write lock. */
int rdmacore_map_insert_locked(struct rdmacore_map *map, struct rdmacore_map_node *node)
{
	unsigned b = bucket_of(node->key);

	for (struct rdmacore_map_node *n = map->bucket[b]; n; n = n->next)
		if (n->key == node->key)
			return -EEXIST;
	node->next = map->bucket[b];
	map->bucket[b] = node;
	node->mapped = 1;
	map->count++;
	return 0;
}

/* Unlink node if it is mapped; the caller holds the write lock. */
void rdmacore_map_remove_locked(struct rdmacore_map *map, struct rdmacore_map_node *node)
{
	if (!node->mapped)
		return;
	for (struct rdmacore_map_node **p = &map->bucket[bucket_of(node->key)]; *p;
	     p = &(*p)->next) {
		if (*p == node) {
			*p = node->next;
			break;
		}
	}
	node->next = NULL;
	node->mapped = 0;
	map->count--;
}

/* Add node under node->key; -EEXIST if the key is taken. */
int rdmacore_map_insert(struct rdmacore_map *map, struct rdmacore_map_node *node)
{
	int rc;

	pthread_rwlock_wrlock(&map->lock);
	rc = rdmacore_map_insert_locked(map, node);
	pthread_rwlock_unlock(&map->lock);
	return rc;
}

/* Remove node if it is mapped (callers need not know whether it is). */
void rdmacore_map_remove(struct rdmacore_map *map, struct rdmacore_map_node *node)
{
	pthread_rwlock_wrlock(&map->lock);
	rdmacore_map_remove_locked(map, node);
	pthread_rwlock_unlock(&map->lock);
}

/* Take the read lock for a batch of lookups. */
void rdmacore_map_rdlock(struct rdmacore_map *map)
{
	pthread_rwlock_rdlock(&map->lock);
}

/* Take the write lock for a lookup that changes what it finds. */
void rdmacore_map_wrlock(struct rdmacore_map *map)
{
	pthread_rwlock_wrlock(&map->lock);
}

/* Drop either lock. */
void rdmacore_map_unlock(struct rdmacore_map *map)
{
	pthread_rwlock_unlock(&map->lock);
}

/* The node of key, or NULL; the caller holds a lock. */
struct rdmacore_map_node *rdmacore_map_find_locked(struct rdmacore_map *map, uint32_t key)
{
	for (struct rdmacore_map_node *n = map->bucket[bucket_of(key)]; n; n = n->next)
		if (n->key == key)
			return n;
	return NULL;
}

/* The object of key, or NULL, under the read lock. */
void *rdmacore_map_find(struct rdmacore_map *map, uint32_t key)
{
	struct rdmacore_map_node *n;
	void *obj;

	rdmacore_map_rdlock(map);
	n = rdmacore_map_find_locked(map, key);
	obj = n ? n->obj : NULL;
	rdmacore_map_unlock(map);
	return obj;
}
