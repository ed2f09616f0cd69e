/*
 * src_live_pyscript.h - the script a Python process runs, read from its
 * command line: its file is named first among the Python names
 * (src_live_pyname_first_file), so that the script is shown by its
 * basename, not a library file of the same basename the samples held
 * first.
 */
#ifndef SRC_LIVE_PYSCRIPT_H
#define SRC_LIVE_PYSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The script's path as CPython names its code (co_filename) into out
 * (len bytes): true, or false when the process runs no script file
 * (`-c`, `-m`, stdin) or its command line cannot be read. */
bool src_live_pyscript_path(pid_t pid, char *out, size_t len);

#endif
