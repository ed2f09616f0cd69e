/*
 * pyframes_layout.c - the 3.11 offsets eng_pyframes.c reads by are
 * CPython's own: each entry of its table against offsetof() over the
 * installed python3.11-dev headers (built only where they are).
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>

#include "eng_pyframes_int.h"
#include "tap.h"

#define CHECK(field, want) \
	tap_eq(lo->field, want, "%s = %s", #field, #want)

int main(void)
{
	const struct eng_pyf_layout *lo = &eng_pyframes_layout_311;

	tap_ok(PY_VERSION_HEX >> 16 == 0x030b, "headers are 3.11 (%#x)",
	       (unsigned)PY_VERSION_HEX);
	CHECK(runtime_interp_head, offsetof(_PyRuntimeState, interpreters.head));
	CHECK(interp_next, offsetof(PyInterpreterState, next));
	CHECK(interp_threads_head, offsetof(PyInterpreterState, threads.head));
	CHECK(tstate_next, offsetof(PyThreadState, next));
	CHECK(tstate_interp, offsetof(PyThreadState, interp));
	CHECK(tstate_native_tid, offsetof(PyThreadState, native_thread_id));
	CHECK(tstate_cframe, offsetof(PyThreadState, cframe));
	CHECK(cframe_current, offsetof(_PyCFrame, current_frame));
	CHECK(frame_code, offsetof(_PyInterpreterFrame, f_code));
	CHECK(frame_previous, offsetof(_PyInterpreterFrame, previous));
	CHECK(frame_prev_instr, offsetof(_PyInterpreterFrame, prev_instr));
	CHECK(frame_is_entry, offsetof(_PyInterpreterFrame, is_entry));
	CHECK(frame_owner, offsetof(_PyInterpreterFrame, owner));
	CHECK(obj_type, offsetof(PyObject, ob_type));
	CHECK(var_size, offsetof(PyVarObject, ob_size));
	CHECK(code_filename, offsetof(PyCodeObject, co_filename));
	CHECK(code_name, offsetof(PyCodeObject, co_name));
	CHECK(code_qualname, offsetof(PyCodeObject, co_qualname));
	CHECK(code_linetable, offsetof(PyCodeObject, co_linetable));
	CHECK(code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	CHECK(code_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
	CHECK(code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
	CHECK(bytes_sval, offsetof(PyBytesObject, ob_sval));
	CHECK(str_length, offsetof(PyASCIIObject, length));
	CHECK(str_state, offsetof(PyASCIIObject, state));
	CHECK(str_ascii_data, sizeof(PyASCIIObject));
	CHECK(str_compact_data, sizeof(PyCompactUnicodeObject));
	/* the checks the walk makes on these fields */
	tap_eq(sizeof(_Py_CODEUNIT), 2, "a code unit is 2 bytes");
	tap_eq(FRAME_OWNED_BY_GENERATOR, ENG_PYF_FRAME_OWNED_BY_GENERATOR,
	       "FRAME_OWNED_BY_GENERATOR");
	tap_eq(FRAME_OWNED_BY_FRAME_OBJECT, ENG_PYF_FRAME_OWNER_MAX,
	       "the largest owner value");
	tap_ok(offsetof(_PyInterpreterFrame, owner) < 72 &&
	       offsetof(_PyInterpreterFrame, previous) + 8 <= 72,
	       "the 72 bytes read of a frame hold every field used");
	tap_ok(offsetof(PyCodeObject, co_code_adaptive) <= ENG_PYF_CODE_HDR,
	       "the %d bytes read of a code object hold every field used",
	       ENG_PYF_CODE_HDR);
	{
		PyASCIIObject a = { 0 };
		unsigned char st[4];

		a.state.kind = 4;
		a.state.compact = 1;
		a.state.ascii = 1;
		a.state.ready = 1;
		memcpy(st, (char *)&a + offsetof(PyASCIIObject, state), 4);
		tap_eq(st[0], (4u << 2) | (1u << 5) | (1u << 6) | (1u << 7),
		       "str state bits: kind 2-4, compact 5, ascii 6, ready 7");
	}
	return tap_done();
}
