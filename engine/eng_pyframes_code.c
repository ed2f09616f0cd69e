/*
 * eng_pyframes_code.c - CPython 3.11 code objects read from a live
 * process: their names and files (str objects), their location tables
 * (bytes objects) and the line of an instruction (the format of
 * CPython's Objects/locations.md), cached by address and checked to be
 * the same object at every use.
 */
#include "eng_pyframes_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* PyASCIIObject.state (3.11): interned:2 kind:3 compact:1 ascii:1
 * ready:1, from the lowest bit. */
#define STATE_KIND(s) (((s) >> 2) & 7u)
#define STATE_COMPACT(s) (((s) >> 5) & 1u)
#define STATE_ASCII(s) (((s) >> 6) & 1u)
#define STATE_READY(s) (((s) >> 7) & 1u)

static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A compact, ready str object as UTF-8 (malloc'ed), or NULL when addr
 * is not one, or longer than ENG_PYF_MAX_STR bytes. */
static char *read_str(const struct eng_pyframes *pf, uint64_t addr)
{
	const struct eng_pyf_layout *lo = pf->lo;
	uint8_t hdr[64], raw[4 * ENG_PYF_MAX_STR];
	uint64_t type, len;
	uint32_t state, kind;
	size_t data, o = 0;
	char *out;

	if (addr == 0 || (addr & 7) != 0 ||
	    eng_pyframes_mem(pf, addr, hdr, lo->str_ascii_data) < 0)
		return NULL;
	memcpy(&type, hdr + lo->obj_type, 8);
	memcpy(&len, hdr + lo->str_length, 8);
	memcpy(&state, hdr + lo->str_state, 4);
	kind = STATE_KIND(state);
	if (type != pf->str_type || !STATE_COMPACT(state) ||
	    !STATE_READY(state) || len > ENG_PYF_MAX_STR ||
	    (kind != 1 && kind != 2 && kind != 4) ||
	    (STATE_ASCII(state) && kind != 1))
		return NULL;
	data = STATE_ASCII(state) ? lo->str_ascii_data : lo->str_compact_data;
	if (len > 0 && eng_pyframes_mem(pf, addr + data, raw, len * kind) < 0)
		return NULL;
	out = malloc(4 * len + 1);
	if (out == NULL)
		return NULL;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? raw[i] : 0;

		if (kind == 2)
			c = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
		else if (kind == 4)
			memcpy(&c, raw + 4 * i, 4);
		if (c > 0x10ffff || (STATE_ASCII(state) && c > 0x7f) ||
		    c == 0) {
			free(out);
			return NULL;
		}
		o += put_utf8(out + o, c);
	}
	out[o] = '\0';
	if (o > ENG_PYF_MAX_STR) {
		free(out);
		return NULL;
	}
	return out;
}

/* A bytes object's contents (malloc'ed), at most `max` bytes. */
static uint8_t *read_bytes(const struct eng_pyframes *pf, uint64_t addr,
			   size_t max, size_t *n)
{
	const struct eng_pyf_layout *lo = pf->lo;
	uint64_t type, size;
	uint8_t *b;

	if (addr == 0 || (addr & 7) != 0 ||
	    eng_pyframes_u64(pf, addr + lo->obj_type, &type) < 0 ||
	    type != pf->bytes_type ||
	    eng_pyframes_u64(pf, addr + lo->var_size, &size) < 0 || size > max)
		return NULL;
	b = malloc(size + 1);
	if (b == NULL || (size > 0 &&
			  eng_pyframes_mem(pf, addr + lo->bytes_sval, b, size) < 0)) {
		free(b);
		return NULL;
	}
	*n = size;
	return b;
}

static uint64_t get64(const uint8_t *hdr, size_t off)
{
	uint64_t v;

	memcpy(&v, hdr + off, 8);
	return v;
}

static int get32(const uint8_t *hdr, size_t off)
{
	int v;

	memcpy(&v, hdr + off, 4);
	return v;
}

static void ent_free(struct eng_pyf_code_ent *e)
{
	free(e->pub.qualname);
	free(e->pub.file);
	free(e->table);
	free(e);
}

/* The cached entry still describes the object at its address. */
static bool same_object(const struct eng_pyframes *pf,
			const struct eng_pyf_code_ent *e, const uint8_t *hdr)
{
	const struct eng_pyf_layout *lo = pf->lo;

	return get64(hdr, lo->obj_type) == e->type &&
	       get64(hdr, lo->var_size) == e->size &&
	       get64(hdr, lo->code_qualname) == e->qualname &&
	       get64(hdr, lo->code_filename) == e->filename &&
	       get64(hdr, lo->code_linetable) == e->linetable &&
	       get32(hdr, lo->code_firstlineno) == e->pub.firstline &&
	       get32(hdr, lo->code_firsttraceable) == e->firsttraceable;
}

static struct eng_pyf_code_ent *read_code(struct eng_pyframes *pf,
					  uint64_t addr, const uint8_t *hdr)
{
	const struct eng_pyf_layout *lo = pf->lo;
	struct eng_pyf_code_ent *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->pub.addr = addr;
	e->type = get64(hdr, lo->obj_type);
	e->size = get64(hdr, lo->var_size);
	e->qualname = get64(hdr, lo->code_qualname);
	e->filename = get64(hdr, lo->code_filename);
	e->linetable = get64(hdr, lo->code_linetable);
	e->pub.firstline = get32(hdr, lo->code_firstlineno);
	e->firsttraceable = get32(hdr, lo->code_firsttraceable);
	e->pub.qualname = read_str(pf, e->qualname);
	e->pub.file = read_str(pf, e->filename);
	e->table = read_bytes(pf, e->linetable, ENG_PYF_MAX_LINETABLE,
			      &e->ntable);
	if (e->pub.qualname == NULL || e->pub.file == NULL ||
	    e->table == NULL || e->pub.firstline < 0 ||
	    e->firsttraceable < 0 || (uint64_t)e->firsttraceable > e->size) {
		ent_free(e);
		return NULL;
	}
	return e;
}

const struct eng_pyf_code_ent *eng_pyframes_code_get(struct eng_pyframes *pf,
					    uint64_t addr)
{
	const struct eng_pyf_layout *lo = pf->lo;
	struct eng_pyf_code_ent **b, *e, *n;
	uint8_t hdr[ENG_PYF_CODE_HDR];

	if (addr == 0 || (addr & 7) != 0 ||
	    eng_pyframes_mem(pf, addr, hdr, sizeof(hdr)) < 0 ||
	    get64(hdr, lo->obj_type) != pf->code_type ||
	    get64(hdr, lo->var_size) > (1u << 24))
		return NULL;
	b = &pf->code[(addr >> 4) % ENG_PYF_CODE_BUCKETS];
	for (e = *b; e != NULL && e->pub.addr != addr; e = e->next)
		;
	if (e != NULL && same_object(pf, e, hdr)) {
		pf->st.code_hits++;
		return e;
	}
	pf->st.code_misses++;
	n = read_code(pf, addr, hdr);
	if (n == NULL)
		return NULL;
	if (e != NULL) {
		/* a new object at a freed one's address: the old entry stays
		 * alive (callers may hold its names) on the list of old ones */
		struct eng_pyf_code_ent **p = b;

		while (*p != e)
			p = &(*p)->next;
		*p = e->next;
		e->next = pf->old;
		pf->old = e;
	}
	n->next = *b;
	*b = n;
	return n;
}

void eng_pyframes_code_free(struct eng_pyframes *pf)
{
	struct eng_pyf_code_ent *e, *n;

	for (size_t i = 0; i < ENG_PYF_CODE_BUCKETS; i++)
		for (e = pf->code[i]; e != NULL; e = n) {
			n = e->next;
			ent_free(e);
		}
	for (e = pf->old; e != NULL; e = n) {
		n = e->next;
		ent_free(e);
	}
}

/* A varint of the location table: 6-bit chunks, least significant
 * first, bit 6 set on all but the last. */
static unsigned long varint(const uint8_t *t, size_t len, size_t *i)
{
	unsigned long v = 0;
	unsigned shift = 0;

	while (*i < len && shift < 60) {
		uint8_t b = t[(*i)++];

		v |= (unsigned long)(b & 0x3f) << shift;
		shift += 6;
		if (!(b & 0x40))
			break;
	}
	return v;
}

static long svarint(const uint8_t *t, size_t len, size_t *i)
{
	unsigned long v = varint(t, len, i);

	return (v & 1) ? -(long)(v >> 1) : (long)(v >> 1);
}

/* The start line's change an entry of `code` makes (0: none). */
static long line_delta(int code, const uint8_t *t, size_t len, size_t i)
{
	if (code >= 10 && code <= 12)
		return code - 10;
	if (code == 13 || code == 14)
		return svarint(t, len, &i);
	return 0;
}

int eng_pyframes_code_line(const uint8_t *t, size_t len, int firstline,
		      long index)
{
	long line = firstline, unit = 0;
	size_t i = 0;

	if (index < 0)
		return firstline;
	while (i < len) {
		uint8_t first = t[i++];
		int code = (first >> 3) & 15;
		long n = (first & 7) + 1;

		if (!(first & 0x80))
			return 0;  /* not at an entry's first byte: torn */
		line += line_delta(code, t, len, i);
		if (index < unit + n)
			return code == 15 || line < 0 ? 0 : (int)line;
		unit += n;
		while (i < len && !(t[i] & 0x80))
			i++;
	}
	return 0;
}
