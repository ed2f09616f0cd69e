/*
 * eng_coldpart.h - finding gcc cold parts that have no symbol (stripped
 * files), from the unwind table: a range of .eh_frame whose first row's
 * CFA is not rsp+8 begins inside some function's frame, so it is the
 * cold part of the function that jumps into it (eng_points.c pairs
 * them).  Addresses are image-relative.
 */
#ifndef ENG_COLDPART_H
#define ENG_COLDPART_H

#include <stdbool.h>
#include <stdint.h>

#include "eng_image.h"

struct eng_coldpart;

/* 0 and *out set (NULL when the file cannot be read: then no address is
 * a cold part), or -ENOMEM. */
int eng_coldpart_open(const struct eng_image *img, struct eng_coldpart **out);
void eng_coldpart_close(struct eng_coldpart *c);

/* The FDE range [*start, *end) that holds t: 1 when its CFA at its
 * start is not rsp+8 (a cold part), 0 when it is (a function), -1 when
 * no FDE holds t (start and end untouched).  The caller checks that no
 * symbol covers the range. */
int eng_coldpart_at(const struct eng_coldpart *c, uint64_t t,
		    uint64_t *start, uint64_t *end);

#endif
