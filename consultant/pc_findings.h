/*
 * pc_findings.h - findings, not nodes: the true nodes of a search that
 * describe one cause, grouped into one finding, ranked by impact, and
 * said in plain words with units.
 *
 * A finding groups the most refined true nodes (pc_report_bottlenecks and
 * pc_report_unconfirmed) of one hypothesis whose foci refine each other
 * across hierarchies (a function, a thread, an object, a file: one
 * cause seen from several sides), then joins groups of different
 * hypotheses that name the same object, file or function (a mutex
 * waited for and locked very often; an I/O path blocking in small
 * pieces; the CPU a function spends doing that I/O).  It carries the
 * most specific resource found in each hierarchy, the node whose value
 * measures it, the chain of refinements to it and every node grouped.
 *
 * Impact: the seconds per second of the program that the cause explains
 * (a hypothesis whose metric is in CPUs/seconds per second: its value;
 * one measured otherwise, bytes per operation or operations per second:
 * the seconds per second of its why-parent or of the group it joined;
 * NaN when nothing measures it in seconds).  Findings are ranked by
 * impact, larger first; those with no impact after, by the time they
 * became true.  A finding whose function may be spent in another
 * finding's cause (CPU in a function where a wait or I/O hypothesis is
 * true or still being tested) is ranked after the findings that are
 * not (`symptom_of`).
 *
 * Built from the search state at any moment (the dashboard calls it at
 * every redraw; batch mode at every tick and for the report), and only
 * from the nodes (and a Python function's line, a journaled answer of
 * the source: pc_finding.line): a replay builds the same findings as the
 * live search.
 */
#ifndef PC_FINDINGS_H
#define PC_FINDINGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pc_search.h"

/* Hypotheses whose measures a finding keeps beside its own (also). */
#define PC_FINDINGS_MAXHYP 64

/* Why a finding may be another's time (symptom_of). */
enum pc_findings_symptom {
	PC_SYMPTOM_NONE,
	/* CPU in a function where another cause is true or still tested */
	PC_SYMPTOM_IN_FUNCTION,
	/* CPU inside a lock's wait path, or an I/O call's system time */
	PC_SYMPTOM_WAIT_PATH,
	/* a wait on a pipe, a socket or a message, in a job whose other
	 * process computes: the reader waits for the writer */
	PC_SYMPTOM_OTHER_PROCESS,
};

/* The words for why: "not concluded false in this function". */
const char *pc_findings_text_symptom(enum pc_findings_symptom why);

struct pc_finding {
	/* Stable while the search refines it: the id of the first node of
	 * its chain below the top-level hypothesis (or of the top-level
	 * node when it has not been refined). */
	int id;
	int hyp;                        /* the cause: index into cfg->hyp */
	const struct pc_node *lead;     /* the node whose value measures it */
	/* The most specific resource in each hierarchy (PC_HIER_* order of
	 * pc_focus), the hierarchy's root when unconstrained. */
	pc_res_id where[PC_NHIER];
	/* When the function is in another module than the code its chain
	 * starts in (a library's write() called from the program), the
	 * deepest function of that module on the chain; for a Python
	 * function, the nearest Python function above it on the chain when
	 * the samples show it calling the function directly (the frame
	 * around a generator: the hint question PC_FINDINGS_CALLER_Q); else
	 * PC_RES_NONE. */
	pc_res_id caller;
	/* The line of the function where its time was sampled most, 0
	 * unknown: asked of the source for a Python function (the hint
	 * question PC_FINDINGS_LINE_Q, journaled like every hint, so that
	 * a replay says the same line). */
	int line;
	double impact;                  /* seconds per second; NaN unknown */
	/* Each other hypothesis's measure of the cause among its leaves,
	 * as the impact is taken (parts summed: "3 processes want 2.90
	 * CPUs" uses the three's CPU, not one's); NaN none, or a
	 * hypothesis index past the array. */
	double also[PC_FINDINGS_MAXHYP];
	int nthreads;                   /* threads it is seen in, 0 unknown */
	int nprocs;                     /* processes of a job of several it
					   is seen in, 0 one or unknown */
	double since_s;                 /* first of its nodes true */
	bool sampled;                   /* a node judged on stack samples */
	bool unconfirmed;               /* every node shed before confirmed */
	int symptom_of;                 /* index of the finding that may
					   explain it, -1 none */
	enum pc_findings_symptom symptom_why;   /* and why */
	const struct pc_node **nodes;   /* every node grouped: the lead,
					   its other own most refined true
					   nodes (nown in all), those it
					   shares with other findings (up to
					   nleaves), then the why-parent's
					   nodes its impact came from */
	size_t nnodes, nown, nleaves;
	const struct pc_node **chain;   /* the lead's chain, top first */
	size_t nchain;
	/* What identifies it for pc_findings_text_tell: the nodes below the
	 * top level on the chains of the leaves that are its own (not
	 * compatible with another finding too). */
	const struct pc_node **ident;
	size_t nident;
};

/* The hint question for a function's line: its where path and this
 * suffix; the answer is the line (0 none), < 0 not answered.  Asked
 * only for Python functions (module PC_FINDINGS_PY_MODULE): a C
 * function's lines are the debug info's, not the samples'. */
#define PC_FINDINGS_LINE_Q "?line"
/* The hint question for a Python function's caller: its where path,
 * this, and the caller's where path; the answer is the share of the
 * function's sampled frames the caller called directly, < 0 not
 * answered. */
#define PC_FINDINGS_CALLER_Q "?caller="
#define PC_FINDINGS_PY_MODULE "<python>"

struct pc_findings {
	struct pc_finding *f;           /* ranked: most impact first */
	size_t n;
	const struct pc_node **pool;    /* storage of nodes and chains */
	size_t npool, cappool;
};

/* The findings of search s now (s NULL: pc's global search), into `out`
 * (freed and rebuilt when reused). */
void pc_findings_build(const struct pc_consult *pc, const struct pc_search *s,
		       struct pc_findings *out);
void pc_findings_free(struct pc_findings *fs);
/* Whether hypothesis hyp is measured in seconds per second (its first
 * input's units are CPUs: CPU time, or time blocked summed over the
 * threads, per second). */
bool pc_findings_in_seconds(const struct pc_consult *pc, int hyp);

/* One finding in plain words, with units, no newline, e.g.
 * "4 threads spend 69% of their time waiting for mutex `demo_lock`, in
 * `demo_worker` (demo.c)".  Returns buf. */
char *pc_findings_text_line(const struct pc_consult *pc,
			    const struct pc_finding *f, char *buf, size_t len);
/* Its impact in words: "2.55 s/s", or "not measured in seconds". */
char *pc_findings_text_impact(const struct pc_finding *f, char *buf,
			      size_t len);

/* The finding as the report's JSON `findings` entries (schema:
 * docs/report-schema.md). */
json_t *pc_findings_text_json(const struct pc_consult *pc,
			const struct pc_search *s,
			const struct pc_finding *f);

/* Which findings were told already (batch mode's one line per new
 * finding): a finding is new when no node of its chain below the top
 * level was in a finding told before; one of top-level nodes only (not
 * refined yet) is new once nothing below it is still queued or being
 * tested; one that may be another's symptom (symptom_of) is not told
 * while it may be.  A finding told before is told again when it has
 * come to rest in a function it was not told in (its lead has nothing
 * left to conclude). */
struct pc_findings_told {
	int *ids;               /* an id once per function it was told in */
	pc_res_id *code;        /* that function, or NONE */
	size_t n, cap;
};
/* True when f is new (and remembers it as told). */
bool pc_findings_text_tell(struct pc_findings_told *t,
		      const struct pc_search *s, const struct pc_finding *f);
void pc_findings_text_told_free(struct pc_findings_told *t);

#endif
