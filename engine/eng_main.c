/*
 * eng_main.c - the program's main (see eng_main.h): found from the code
 * at the entry point, and where it returns to, for catchup.
 *
 * Why the return: a main whose last act is `jmp g` (Debian's python3.11:
 * `jmp Py_BytesMain`) has no frame and no pc in it while the program
 * runs, and a timer enabled at main then found no activation to catch
 * up.  The frame that returns to main's caller is main's activation,
 * continued by the code main jumped to.  Launch stops the program at
 * main and reads the return address there, with the stack pointer its
 * return leaves.  An image followed through an exec is held at its
 * entry point, not at main: its main returns to the same place in the
 * same C library (glibc's __libc_start_call_main calls every main), so
 * the address is carried over by its offset in that library's file,
 * without the stack pointer.
 */
#include "eng_main.h"
#include "eng_maps.h"
#include "eng_proc_int.h"
#include "x86_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is addr in an executable mapping of the process? */
static bool in_code(pid_t pid, uint64_t addr)
{
	struct eng_maps_line m;

	return eng_maps_find(pid, addr, &m) && eng_maps_is_code(&m);
}

/* The start of the mapping of file `path` at file offset 0 (its load
 * base), 0 if none. */
static uint64_t file_base(pid_t pid, const char *path)
{
	struct eng_maps_line l;
	struct eng_maps m;
	uint64_t base = 0;

	if (eng_maps_open(&m, pid) < 0)
		return 0;
	while (base == 0 && eng_maps_next(&m, &l))
		if (l.off == 0 && strcmp(l.path, path) == 0)
			base = l.lo;
	eng_maps_close(&m);
	return base;
}

/* The file mapped at addr, into path (size len); false if none. */
static bool file_at(pid_t pid, uint64_t addr, char *path, size_t len)
{
	struct eng_maps_line m;

	if (!eng_maps_find(pid, addr, &m) || m.path[0] != '/')
		return false;
	snprintf(path, len, "%s", m.path);
	return true;
}

/* A _start that is not glibc's can load anything into %rdi before its
 * first call, so the candidate must at least be code. */
uint64_t eng_main_find(struct eng_proc *p)
{
	struct x86_decoder *d;
	uint8_t code[96];
	uint64_t ref = 0, main_addr = 0;
	bool load = false;

	if (eng_mem_read(p, p->entry, code, sizeof(code), NULL) < 0 ||
	    x86_decode_open(&d) < 0)
		return 0;
	if (x86_decode_find_main_ref(d, code, sizeof(code), p->entry, &ref,
			      &load) == 0) {
		main_addr = ref;
		/* The GOT slot is filled in now: ld.so ran before _start. */
		if (load && eng_mem_read(p, ref, &main_addr, 8, NULL) < 0)
			main_addr = 0;
	}
	x86_decode_close(d);
	return main_addr != 0 && in_code(p->pid, main_addr) ? main_addr : 0;
}

void eng_main_note_return(struct eng_proc *p)
{
	struct user_regs_struct r;
	char path[4096];
	uint64_t ret, base;

	if (eng_regs_get(p, p->pid, &r, NULL) < 0 ||
	    eng_mem_read(p, r.rsp, &ret, sizeof(ret), NULL) < 0)
		return;
	p->main_ret = ret;
	p->main_ret_sp = r.rsp + 8;
	if (!file_at(p->pid, ret, path, sizeof(path)) ||
	    (base = file_base(p->pid, path)) == 0)
		return;
	free(p->main_ret_file);
	p->main_ret_file = strdup(path);
	p->main_ret_off = ret - base;
}

void eng_main_forget(struct eng_proc *p)
{
	p->main_addr = p->main_ret = p->main_ret_sp = 0;
	p->main_ret_looked = false;
}

bool eng_main_return(struct eng_proc *p, uint64_t *ret, uint64_t *sp)
{
	uint64_t base;

	if (p->main_ret == 0 && !p->main_ret_looked &&
	    p->main_ret_file != NULL) {
		/* once per image: its C library is mapped by now */
		p->main_ret_looked = true;
		base = file_base(p->pid, p->main_ret_file);
		if (base != 0)
			p->main_ret = base + p->main_ret_off;
	}
	*ret = p->main_ret;
	*sp = p->main_ret_sp;
	return p->main_ret != 0;
}
