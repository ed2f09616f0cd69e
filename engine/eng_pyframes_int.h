/*
 * eng_pyframes_int.h - what eng_pyframes.c (finding the runtime, the
 * walk) and eng_pyframes_code.c (code objects, strings, line tables)
 * share: the 3.11 layout and the reader's state.
 */
#ifndef ENG_PYFRAMES_INT_H
#define ENG_PYFRAMES_INT_H

#include "eng_pyframes.h"

/* Offsets (bytes) of the fields read, CPython 3.11 on x86-64.  Written
 * here, not taken from headers at build time, so that hunch reads
 * Python where python3.11-dev is not installed; tests/pyframes checks
 * each against offsetof() over the installed headers. */
struct eng_pyf_layout {
	size_t runtime_interp_head;   /* _PyRuntimeState.interpreters.head */
	size_t interp_next;           /* PyInterpreterState.next */
	size_t interp_threads_head;   /* PyInterpreterState.threads.head */
	size_t tstate_next;           /* PyThreadState.next */
	size_t tstate_interp;         /* PyThreadState.interp */
	size_t tstate_native_tid;     /* PyThreadState.native_thread_id */
	size_t tstate_cframe;         /* PyThreadState.cframe */
	size_t cframe_current;        /* _PyCFrame.current_frame */
	size_t frame_code;            /* _PyInterpreterFrame.f_code */
	size_t frame_previous;        /* _PyInterpreterFrame.previous */
	size_t frame_prev_instr;      /* _PyInterpreterFrame.prev_instr */
	size_t frame_is_entry;        /* _PyInterpreterFrame.is_entry */
	size_t frame_owner;           /* _PyInterpreterFrame.owner */
	size_t obj_type;              /* PyObject.ob_type */
	size_t var_size;              /* PyVarObject.ob_size */
	size_t code_filename;         /* PyCodeObject.co_filename */
	size_t code_name;             /* PyCodeObject.co_name */
	size_t code_qualname;         /* PyCodeObject.co_qualname */
	size_t code_linetable;        /* PyCodeObject.co_linetable */
	size_t code_firstlineno;      /* PyCodeObject.co_firstlineno */
	size_t code_firsttraceable;   /* PyCodeObject._co_firsttraceable */
	size_t code_adaptive;         /* PyCodeObject.co_code_adaptive */
	size_t bytes_sval;            /* PyBytesObject.ob_sval */
	size_t str_length;            /* PyASCIIObject.length */
	size_t str_state;             /* PyASCIIObject.state */
	size_t str_ascii_data;        /* sizeof(PyASCIIObject) */
	size_t str_compact_data;      /* sizeof(PyCompactUnicodeObject) */
};

extern const struct eng_pyf_layout eng_pyframes_layout_311;

#define ENG_PYF_FRAME_OWNED_BY_GENERATOR 1
#define ENG_PYF_FRAME_OWNER_MAX 2
#define ENG_PYF_CODE_HDR 192          /* bytes of a code object read */
#define ENG_PYF_MAX_LINETABLE 65536

struct eng_pyf_code_ent {
	struct eng_pycode pub;
	/* what must read the same for the cached entry to be this object */
	uint64_t type, size, qualname, filename, linetable;
	int firsttraceable;
	uint8_t *table;
	size_t ntable;
	struct eng_pyf_code_ent *next;   /* hash chain */
};

#define ENG_PYF_CODE_BUCKETS 4096
#define ENG_PYF_FRAME_BYTES 72        /* of a frame read: up to owner */
#define ENG_PYF_SNAP_PAGES 8          /* at most 32 KiB copied at once */

/* The pages under a thread's top frame, copied at once
 * (eng_pyframes_snap.c): [lo, hi) of the target is buf's end. */
struct eng_pyf_snap {
	uint64_t lo, hi;
	uint64_t low_frame;   /* the lowest frame read from the copy */
	uint64_t below;       /* a frame just below it, 0 if none */
	int pages;            /* how many to copy: fitted to the last walk */
	uint8_t buf[ENG_PYF_SNAP_PAGES * 4096];
};

struct eng_pyframes {
	pid_t pid;
	const struct eng_pyf_layout *lo;
	uint64_t runtime;                 /* &_PyRuntime */
	uint64_t code_type, str_type, bytes_type;   /* &PyCode_Type, ... */
	char version[32];
	char *file;
	struct eng_pyf_code_ent *code[ENG_PYF_CODE_BUCKETS];
	struct eng_pyf_code_ent *old;     /* replaced entries, kept alive */
	struct eng_pyframes_stats st;
	struct eng_pystack stack;         /* the one being built */
	struct eng_pyf_snap snap;         /* the thread being walked */
};

/* Read len bytes of the target; 0 or -errno (short reads too). */
int eng_pyframes_mem(const struct eng_pyframes *pf, uint64_t addr, void *buf,
		size_t len);
int eng_pyframes_u64(const struct eng_pyframes *pf, uint64_t addr, uint64_t *v);
/* The code object at addr, read or found in the cache and checked to be
 * the same object (type, size, names, table, lines); NULL when it is not
 * a valid code object now.  Its size and firsttraceable serve the
 * frame's checks. */
const struct eng_pyf_code_ent *eng_pyframes_code_get(struct eng_pyframes *pf,
					    uint64_t addr);
void eng_pyframes_code_free(struct eng_pyframes *pf);
/* Copy the memory under the frame at top; read through the copy (the
 * target where it does not hold the bytes); size the next copy to the
 * walk just done. */
void eng_pyframes_snap_take(struct eng_pyframes *pf, uint64_t top);
int eng_pyframes_snap_mem(struct eng_pyframes *pf, uint64_t addr, void *buf,
			  size_t len);
void eng_pyframes_snap_fit(struct eng_pyframes *pf);

#endif
