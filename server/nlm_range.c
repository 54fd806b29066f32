/*
 * nlm_range.c: one lock owner's ranges, kept as the kernel keeps the same
 * owner's locks (POSIX: a new lock replaces what it overlaps, an unlock cuts
 * a hole, adjacent or overlapping ranges of one kind merge). The kernel
 * decides conflicts; this copy says who holds what (TEST's holder) and when
 * an owner holds nothing any more (its description can be closed).
 */
#include <errno.h>
#include <stdlib.h>

#include "server/nlm_int.h"

static int by_start(const void *a, const void *b)
{
	const struct nlm_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* See nlm_int.h. */
int nlm_ranges_apply(const struct nlm_ranges *r, uint64_t start, uint64_t end, int type,
		     struct nlm_ranges *out)
{
	struct nlm_range *v = calloc(r->n + 2, sizeof(*v));
	size_t n = 0, m = 0;

	if (v == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		const struct nlm_range *x = &r->v[i];

		if (x->end <= start || x->start >= end) {
			v[n++] = *x;
			continue;
		}
		if (x->start < start)
			v[n++] = (struct nlm_range){x->start, start, x->exclusive};
		if (x->end > end)
			v[n++] = (struct nlm_range){end, x->end, x->exclusive};
	}
	if (type != 0)
		v[n++] = (struct nlm_range){start, end, type == 2};
	qsort(v, n, sizeof(*v), by_start);
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && v[m - 1].exclusive == v[i].exclusive && v[m - 1].end >= v[i].start) {
			if (v[i].end > v[m - 1].end)
				v[m - 1].end = v[i].end;
			continue;
		}
		v[m++] = v[i];
	}
	out->v = v;
	out->n = m;
	return 0;
}

/* See nlm_int.h. */
int nlm_ranges_find(const struct nlm_ranges *r, uint64_t start, uint64_t end, int exclusive,
		    struct nlm_range *hit)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].end > start && r->v[i].start < end && r->v[i].exclusive == exclusive) {
			*hit = r->v[i];
			return 1;
		}
	}
	return 0;
}
