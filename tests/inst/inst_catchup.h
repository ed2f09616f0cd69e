/* inst_catchup.h - the cases of inst_catchup that use stack samples
 * (inst_catchup_samples.c), on progs/inst_inner.c at path `inner`. */
#ifndef INST_CATCHUP_H
#define INST_CATCHUP_H

/* Runs them, printing their TAP lines; *n and *failed get how many
 * (tap.h counts per file). */
void catchup_samples(const char *inner, int *n, int *failed);

#endif
