/* targets.h - conventions shared by every test target (macros only).
 *
 * The engine's symbol tests compare the functions they read from a
 * target against the target's .functions file, at every optimisation
 * level.  So every function a target defines must survive as exactly one
 * symbol with its source name: no inlining, no .isra/.constprop/.part
 * clones.  gcc's noipa gives that (it implies noinline, noclone and
 * no_icf); clang has no noipa and never renames global functions, so
 * noinline is enough there.  (.cold splits are prevented by the build,
 * see meson.build.)
 *
 * Only macros live here: a helper function in a header would become an
 * extra, unlisted symbol in every target that includes it.
 */
#ifndef HUNCH_TARGETS_H
#define HUNCH_TARGETS_H

#if defined(__clang__)
#define TGT_NOINLINE __attribute__((noinline))
#elif defined(__GNUC__)
#define TGT_NOINLINE __attribute__((noipa))
#else
#error "test targets need gcc or clang"
#endif

/* Fixed exit codes, so a shell test can tell "exited N" from "killed". */
#define TGT_EXIT_USAGE 2

#endif
