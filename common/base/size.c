/* size.c: parse and print byte counts with K/M/G/T suffixes (powers of 1024). */
#include <stdio.h>

#include "size.h"

static const char suffixes[] = "KMGT";

/* Shift for a suffix letter (K=10 ... T=40), or -1 if c is not one. */
static int suffix_shift(char c)
{
	for (int i = 0; suffixes[i] != '\0'; i++) {
		if (c == suffixes[i] || c == suffixes[i] + ('a' - 'A'))
			return 10 * (i + 1);
	}
	return -1;
}

/* Decimal digits, then an optional suffix; overflow is reported, never wrapped. */
int size_parse(const char *text, uint64_t *out)
{
	const char *p = text;
	uint64_t v = 0;
	int shift = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	if (*p != '\0') {
		shift = suffix_shift(*p);
		if (shift < 0 || p[1] != '\0')
			return -1;
	}
	if (shift > 0 && v > (UINT64_MAX >> shift))
		return -2;
	*out = v << shift;
	return 0;
}

/* Inverse of size_parse for display: exact, so "1536" stays "1536", not "1.5K". */
const char *size_format(uint64_t v, char buf[SIZE_TEXT_MAX])
{
	int i = 0;

	while (v != 0 && suffixes[i] != '\0' && (v & 1023) == 0) {
		v >>= 10;
		i++;
	}
	if (i == 0)
		snprintf(buf, SIZE_TEXT_MAX, "%llu", (unsigned long long)v);
	else
		snprintf(buf, SIZE_TEXT_MAX, "%llu%c", (unsigned long long)v, suffixes[i - 1]);
	return buf;
}
