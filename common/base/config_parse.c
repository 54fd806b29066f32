/*
 * config_parse.c: libconfig's text. libconfig stops at the first syntax error;
 * here the offending line is commented out in memory and the text parsed again,
 * so that every error in the file is found. And libconfig 1.5 silently wraps an
 * integer literal beyond 32 bits; such literals are found here so that the
 * setting holding one can be refused.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

#define SYNTAX_RETRIES 16

/*
 * libconfig 1.5 (Debian 12) leaks the buffer of a string token that is the
 * parser's lookahead when a syntax error is found, e.g. in 'a = 1 "x";'
 * (libconfig issue #142, fixed upstream by a bison %destructor after 1.5).
 * The buffer is libconfig's own and cannot be freed from here; it is at most
 * 64 bytes per such error. This tells LeakSanitizer, in sanitizer builds, to
 * ignore exactly the scanner's token allocations (strbuf_append for a string,
 * libconfig_yylex itself for an empty one), so that every other leak still
 * fails the tests. Without a sanitizer it is unused.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:strbuf_append\n"
	       "leak:libconfig_yylex\n";
}

/* Record literal (at line) if libconfig would silently wrap it to 32 bits. */
static void note_literal(struct load_ctx *c, const char *lit, size_t len, unsigned line)
{
	struct big_int b = {.line = line};
	struct big_int *v;
	bool hex;
	long long x;
	char *end;

	if (len >= sizeof(b.text))
		len = sizeof(b.text) - 1;
	memcpy(b.text, lit, len);
	b.text[len] = '\0';
	hex = strchr(b.text, 'x') != NULL || strchr(b.text, 'X') != NULL;
	if ((!hex && strpbrk(b.text, ".eE") != NULL) || b.text[len - 1] == 'L' ||
	    b.text[len - 1] == 'l')
		return; /* a float, or an explicit 64-bit integer */
	errno = 0;
	x = strtoll(b.text, &end, hex ? 16 : 10);
	if (*end != '\0' || (errno == 0 && x >= INT_MIN && x <= INT_MAX))
		return;
	b.wrapped = (int)(uint32_t)(unsigned long long)x;
	v = realloc(c->big, (c->n_big + 1) * sizeof(*v));
	if (v == NULL)
		return;
	c->big = v;
	c->big[c->n_big++] = b;
}

/* Skip a string literal starting at p ("); count the newlines it holds. */
static const char *skip_string(const char *p, unsigned *line)
{
	for (p++; *p != '\0' && *p != '"'; p++) {
		if (*p == '\\' && p[1] != '\0')
			p++;
		if (*p == '\n')
			(*line)++;
	}
	return *p ? p + 1 : p;
}

/* Skip a comment at p (#, // or a C comment); count its newlines. */
static const char *skip_comment(const char *p, unsigned *line)
{
	if (p[0] == '/' && p[1] == '*') {
		for (p += 2; *p != '\0' && !(p[0] == '*' && p[1] == '/'); p++)
			*line += *p == '\n';
		return *p ? p + 2 : p;
	}
	while (*p != '\0' && *p != '\n')
		p++;
	return p;
}

/* Whether c can continue a libconfig name (after its first letter or '*'). */
static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_' || ch == '*';
}

/*
 * libconfig 1.5 reads an integer literal beyond 32 bits without an L suffix as
 * the wrapped value (5000000000 becomes 705032704), silently. Find such literals
 * in the text so the setting holding one can be refused instead.
 */
void config_scan_big_ints(struct load_ctx *c, const char *p)
{
	unsigned line = 1;

	while (*p != '\0') {
		const char *start = p;
		bool digit = *p >= '0' && *p <= '9';
		bool sign = (*p == '-' || *p == '+') && p[1] >= '0' && p[1] <= '9';

		if (*p == '\n') {
			line++;
			p++;
		} else if (*p == '"') {
			p = skip_string(p, &line);
		} else if (*p == '#' || (p[0] == '/' && (p[1] == '/' || p[1] == '*'))) {
			p = skip_comment(p, &line);
		} else if (name_char(*p) && !digit) {
			while (name_char(*p))
				p++;
		} else if (digit || sign) {
			for (p++; name_char(*p) || *p == '.' ||
				  ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E'));
			     p++)
				;
			note_literal(c, start, (size_t)(p - start), line);
		} else {
			p++;
		}
	}
}

/* Start of line n (1-based) of text, or NULL if it has fewer lines. */
static char *line_start(char *text, unsigned n)
{
	for (unsigned l = 1; l < n; l++) {
		text = strchr(text, '\n');
		if (text == NULL)
			return NULL;
		text++;
	}
	return *text ? text : NULL;
}

/* Whether the line at p has nothing for libconfig: blank or a comment. */
static bool line_is_empty(const char *p)
{
	p += strspn(p, " \t\r");
	return *p == '\n' || *p == '\0' || *p == '#' || (p[0] == '/' && p[1] == '/');
}

/* Whether lines n.. of text are all empty: libconfig hit the end of the file. */
static bool at_end(char *text, unsigned n)
{
	for (char *p = line_start(text, n); p != NULL; p = line_start(p, 2)) {
		if (!line_is_empty(p))
			return false;
	}
	return true;
}

/* Comment out line n, or the nearest line above it with content. false: none left. */
static bool comment_out(char *text, unsigned n)
{
	for (unsigned l = n; l >= 1; l--) {
		char *p = line_start(text, l);

		if (p != NULL && !line_is_empty(p)) {
			*p = '#';
			return true;
		}
	}
	return false;
}

/* Record libconfig's parse error; false if it cannot be worked around. */
static bool report_syntax(struct load_ctx *c, const config_t *lc, char *text, unsigned *last)
{
	const char *efile = config_error_file(lc);
	unsigned line = (unsigned)config_error_line(lc);
	char buf[PATH_MAX];

	if (efile != NULL) { /* in an @include file: it is not ours to edit */
		config_error_in(c, config_setting_file(c, efile, buf, sizeof(buf)), line, "syntax",
				"%s", config_error_text(lc));
		return false;
	}
	if (line != *last)
		config_file_error(c, line, "syntax", "%s%s", config_error_text(lc),
				  at_end(text, line)
					  ? " at the end of the file (is a group, list or "
					    "string left open?)"
					  : "");
	*last = line;
	return comment_out(text, line);
}

/*
 * Parse text into lc. libconfig stops at the first syntax error, so after each
 * one the offending line is commented out in the copy and the parse retried, a
 * bounded number of times, so that the errors after it are found too.
 */
bool config_parse_text(struct load_ctx *c, config_t *lc, char *text)
{
	unsigned last = 0;

	for (int attempt = 0; attempt <= SYNTAX_RETRIES; attempt++) {
		config_destroy(lc);
		config_init(lc);
		if (c->dir != NULL)
			config_set_include_dir(lc, c->dir);
		if (config_read_string(lc, text) == CONFIG_TRUE)
			return true;
		if (!report_syntax(c, lc, text, &last))
			return false;
	}
	config_file_error(c, 0, NULL, "too many syntax errors: gave up after %d",
			  SYNTAX_RETRIES + 1);
	return false;
}
