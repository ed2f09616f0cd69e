/*
 * pc_report_procs.h - each process of the job and its end, for the
 * report (pc_report.c): JSON `processes` and the text's `processes:`.
 */
#ifndef PC_REPORT_PROCS_H
#define PC_REPORT_PROCS_H

#include <jansson.h>
#include <stdio.h>

#include "pc_search.h"

/* [{pid, end, status|signal, end_s}], docs/report-schema.md */
json_t *pc_report_procs_json(const struct pc_consult *pc);
/* "processes:" and a line per process, when the job has more than one
 * (the program alone: the report's "search:" line says its end). */
void pc_report_procs_text(const struct pc_consult *pc, FILE *f);

#endif
