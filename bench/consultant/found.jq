# found.jq - when a report's findings (pc_findings: the true nodes of one
# cause grouped, CPUbound and CPUdemand one measure) first held a
# target's planted bottleneck: the earliest since_s of a finding of its
# hypothesis whose where names every /Code, /SyncObject and /Files
# component of the truth (its function, caller, object or file at or
# below it, or a /Code one at one of its `below` functions), and its
# thread or process if the truth has one, unless the finding's function
# or caller is the truth's own /Code where (the thread runs there: the
# demo's hot loop, which a loaded machine gets refined by CPUdemand down
# /Code, not to main's thread); null when none did.  Input: a report;
# $findings as for tests/e2e/truth.jq (one finding).
include "truth-lib";

def wheres: [.where.function, .where.caller, .where.object, .where.file]
	| map(select(. != null));

# Finding `.` names the truth's where $w.
def names($f; $w): any(wheres[]; at_or_below($w) or
	(($w | startswith("/Code/")) and is_below($f)));

# Finding `.` names the truth's thread or process, or runs in it.
def in_thread($f): (.where.threads // "") as $t
	| [.where.function, .where.caller | select(. != null)] as $fns
	| ($f.thread == null and $f.process == null)
	  or ($f.thread != null and ($t | test(thread_re($f.thread))))
	  or ($f.process != null and ($t | test(process_re($f.process))))
	  or any($f.where[]; startswith("/Code/") and
		 (. as $w | any($fns[]; glob_match($w))));

$findings[0] as $f
| [.findings[]? | select(of_hyp($f.hyp))
   | select(. as $g | all($f.where[]; . as $w | $g | names($f; $w)))
   | select(in_thread($f))
   | .since_s]
| min
