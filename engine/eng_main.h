/*
 * eng_main.h - the program's main: where it is (from _start's code) and
 * where it returns to (see eng_main.c).
 */
#ifndef ENG_MAIN_H
#define ENG_MAIN_H

#include <stdbool.h>
#include <stdint.h>

struct eng_proc;

/* main's address from the code at the entry point (p->entry), or 0. */
uint64_t eng_main_find(struct eng_proc *p);
/* At main's first instruction: note where main returns to (the word at
 * %rsp) and the stack pointer its return leaves. */
void eng_main_note_return(struct eng_proc *p);
/* An exec replaced the image: its main is found at the new entry point
 * (eng_main_find) and its return is known by the offset noted in the
 * library that calls main. */
void eng_main_forget(struct eng_proc *p);
/* Where main returns to and, when known, the stack pointer after that
 * return (0 otherwise); false when neither is known.  A frame that
 * returns there (at that stack pointer) is main's activation, whatever
 * code runs in it: main's own, or code main tail-called (a `jmp` that
 * left main without a frame, as python3.11's main does into
 * Py_BytesMain). */
bool eng_main_return(struct eng_proc *p, uint64_t *ret, uint64_t *sp);

#endif
