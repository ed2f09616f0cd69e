/*
 * eng_perfring.h - reading the records of a perf event's mmap ring, the
 * one loop both perf samplers drain with (eng_perfsample.c's cpu-clock
 * samples, eng_perfswitch.c's switch-outs).
 *
 * A record that wraps past the ring's end is copied whole into a buffer
 * the caller keeps (grown as needed), so every record reaches the
 * callback in one piece.  Records are handed on in ring order and the
 * ring's tail is released after the last whole one.
 */
#ifndef ENG_PERFRING_H
#define ENG_PERFRING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* Where a wrapped record is put together; zero it before first use and
 * free `rec` when done. */
struct eng_perfring_buf {
	uint8_t *rec;
	size_t cap;
};

/* One record: its header, its body from `body` up to `end`. */
typedef void (*eng_perfring_fn)(void *arg, const struct perf_event_header *h,
				const uint8_t *body, const uint8_t *end);

/* Hand every whole record in the ring mapped at `map` to fn, in order,
 * and release them to the kernel. */
void eng_perfring_drain(void *map, struct eng_perfring_buf *b,
			eng_perfring_fn fn, void *arg);

#endif
