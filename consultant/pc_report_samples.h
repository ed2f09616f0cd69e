/*
 * pc_report_samples.h - the report's "stack samples" section: what the
 * source's CPU stack samples of the whole run saw (the source's
 * `stack_samples` op, src_live_samples.h), the top functions by self
 * and by inclusive samples and the top call chains.  Sampled, never
 * concluded: it says so, and it is what a user has when the search
 * ended (the program ended, a time limit) before its hypotheses
 * concluded.  Printed from the object the source gave, which the
 * journal records, so a replay prints the same.
 */
#ifndef PC_REPORT_SAMPLES_H
#define PC_REPORT_SAMPLES_H

#include <jansson.h>
#include <stdio.h>

#include "pc_search.h"

/* The source's stack samples (a new reference), or NULL: none, or a
 * source without them. */
json_t *pc_report_samples_get(const struct pc_consult *pc);
/* The section's text for the object `s` (NULL: nothing printed). */
void pc_report_samples_text(const json_t *s, FILE *f);
/* "`memcmp` (libc.so.6)" for a function entry of the object, in
 * buf[len]; a module's code no function covers is "code in (module)". */
const char *pc_report_samples_name(const json_t *fn, char *buf, size_t len);

#endif
