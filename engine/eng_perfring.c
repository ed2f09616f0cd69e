/*
 * eng_perfring.c - reading a perf event's mmap ring (see eng_perfring.h).
 */
#include "eng_perfring.h"

#include <stdlib.h>
#include <string.h>

/* The `len` bytes at ring position `at`, in one piece. */
static const uint8_t *record_at(struct eng_perfring_buf *b,
				const uint8_t *base, size_t mask, uint64_t at,
				size_t len)
{
	size_t off = (size_t)(at & mask), first = mask + 1 - off;

	if (first >= len)
		return base + off;
	if (b->cap < len) {
		b->cap = len;
		b->rec = realloc(b->rec, len);
		if (b->rec == NULL)
			abort();
	}
	memcpy(b->rec, base + off, first);
	memcpy(b->rec + first, base, len - first);
	return b->rec;
}

void eng_perfring_drain(void *map, struct eng_perfring_buf *b,
			eng_perfring_fn fn, void *arg)
{
	struct perf_event_mmap_page *mp = map;
	const uint8_t *base = (const uint8_t *)map + mp->data_offset;
	size_t mask = (size_t)mp->data_size - 1;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		const uint8_t *rec;

		memcpy(&h, record_at(b, base, mask, tail, sizeof(h)),
		       sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		rec = record_at(b, base, mask, tail, h.size);
		fn(arg, &h, rec + sizeof(h), rec + h.size);
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}
