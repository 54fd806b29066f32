/* size.h: byte counts written with an optional K, M, G or T suffix (powers of 1024). */
#ifndef NFSRDMA_SIZE_H
#define NFSRDMA_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Longest text size_format() writes, with its NUL: 20 digits + suffix + NUL. */
#define SIZE_TEXT_MAX 24

/*
 * Parse "4096", "64K", "1m", "16G": decimal digits and at most one suffix letter
 * (K, M, G, T, either case). Returns 0, or -1 if the text is not of that form, or
 * -2 if it does not fit in 64 bits. *out is written only on success.
 */
int size_parse(const char *text, uint64_t *out);

/* Write v with the largest suffix that divides it exactly ("1M", "4K", "1500"). */
const char *size_format(uint64_t v, char buf[SIZE_TEXT_MAX]);

#endif
