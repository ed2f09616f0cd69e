/* exceptions.cpp - C++ exceptions unwinding through several frames.
 *
 * main -> ex_level1 -> ... -> ex_level5 throws ex_error, caught in main
 * (five frames unwound).  main -> ex_rethrow_outer -> ex_rethrow_mid ->
 * ex_rethrow_inner throws std::runtime_error; ex_rethrow_mid catches it,
 * prints, and rethrows with `throw;`; main catches it again.
 *
 * Functions are at global scope (no namespace), so their demangled names
 * are e.g. "ex_level3(int)".  ex_error is an aggregate with no member
 * functions, and only out-of-line library functions of std::runtime_error
 * are used, so the binary defines no function the source does not spell
 * out, even at -O0 (no weak copies of inline header functions).
 * printf, not iostream: iostream adds a static initialiser function.
 */
#include <cstdio>
#include <stdexcept>

#include "targets.h"

struct ex_error {
	int depth;
	int code;
};

TGT_NOINLINE int ex_level5(int n)
{
	if (n > 0)
		throw ex_error{ 5, n * 10 };
	return n;
}

TGT_NOINLINE int ex_level4(int n) { return ex_level5(n) + 1; }
TGT_NOINLINE int ex_level3(int n) { return ex_level4(n) + 1; }
TGT_NOINLINE int ex_level2(int n) { return ex_level3(n) + 1; }
TGT_NOINLINE int ex_level1(int n) { return ex_level2(n) + 1; }

TGT_NOINLINE int ex_rethrow_inner(int n)
{
	if (n > 0)
		throw std::runtime_error("inner failure");
	return n;
}

TGT_NOINLINE int ex_rethrow_mid(int n)
{
	try {
		return ex_rethrow_inner(n) + 1;
	} catch (const std::runtime_error &e) {
		std::printf("mid: caught runtime_error: %s, rethrowing\n", e.what());
		throw;
	}
}

TGT_NOINLINE int ex_rethrow_outer(int n) { return ex_rethrow_mid(n) + 1; }

TGT_NOINLINE int main(int argc, char **)
{
	/* argc (1 when run as documented) keeps the throws unknown to the
	 * compiler, so no optimisation level can fold them away. */
	std::printf("levels: no throw returned %d\n", ex_level1(0));
	try {
		std::printf("levels: returned %d\n", ex_level1(argc * 3));
	} catch (const ex_error &e) {
		std::printf("main: caught ex_error depth=%d code=%d\n", e.depth, e.code);
	}
	try {
		std::printf("rethrow: returned %d\n", ex_rethrow_outer(argc));
	} catch (const std::runtime_error &e) {
		std::printf("main: caught runtime_error: %s\n", e.what());
	}
	std::printf("exceptions: done\n");
	return 0;
}
