/*
 * eng_fault.c - named fault points (see eng_fault.h): the one place that
 * reads HUNCH_TEST_KILL_AT and HUNCH_NO_TAILPAD.
 */
#include "eng_fault.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	bool env_read;
	enum eng_fault point;
	long n;                 /* kill at this occurrence */
	long seen;              /* occurrences counted so far */
	uint64_t commit;        /* C of C:N */
	bool counting;          /* C:N: commit C has started */
	bool no_tailpad;
} fault;

static const struct {
	const char *name;
	enum eng_fault point;
} names[] = {
	{ "infcall", ENG_FAULT_INFCALL },
	{ "signal", ENG_FAULT_SIGNAL },
	{ "signal-in-commit", ENG_FAULT_SIGNAL_IN_COMMIT },
	{ "signal-in-step", ENG_FAULT_SIGNAL_IN_STEP },
};

static int arm(const char *spec)
{
	char name[32];
	unsigned long long c;
	long n;

	fault.point = ENG_FAULT_NONE;
	fault.seen = 0;
	fault.counting = false;
	if (spec == NULL || *spec == '\0')
		return 0;
	if (sscanf(spec, "%llu:%ld", &c, &n) == 2) {
		fault.point = ENG_FAULT_COMMIT_WRITE;
		fault.commit = c;
		fault.n = n;
		return 0;
	}
	if (sscanf(spec, "%31[a-z-]:%ld", name, &n) != 2)
		return -1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(names[i].name, name) == 0) {
			fault.point = names[i].point;
			fault.n = n;
			fault.counting = true;
			return 0;
		}
	return -1;
}

/* The environment, once: at the first fault point or arming. */
static void read_env(void)
{
	if (fault.env_read)
		return;
	fault.env_read = true;
	fault.no_tailpad = getenv("HUNCH_NO_TAILPAD") != NULL;
	arm(getenv("HUNCH_TEST_KILL_AT"));
}

int eng_fault_arm(const char *spec)
{
	read_env();
	return arm(spec);
}

void eng_fault_hit(enum eng_fault f)
{
	read_env();
	if (f != fault.point || !fault.counting)
		return;
	if (fault.seen++ == fault.n)
		raise(SIGKILL);
}

void eng_fault_commit_start(uint64_t commit)
{
	read_env();
	if (fault.point == ENG_FAULT_COMMIT_WRITE && commit == fault.commit) {
		fault.counting = true;
		fault.seen = 0;
	}
}

bool eng_fault_no_tailpad(void)
{
	read_env();
	return fault.no_tailpad;
}
