# truth.jq - judge one search's bottlenecks against a target's .truth
# (tests/targets/README.md, "Truth files").  Input: the bottlenecks
# array of one phase of a hunch report.  Arguments:
#   $findings  [{hyp, where: [PATH...], thread: START|null, process:
#              PID|null}] that this
#              phase must report (<module> already substituted)
#   $explain   the findings a reported bottleneck may belong to ($findings,
#              plus the other half's for the global phase of bn_phases)
#   $may       [HYPOTHESIS...] allowed anywhere
#   $ancestors {HYPOTHESIS: [its ancestors on the why axis]}
# Output: one line per required where/thread, "ok<TAB>what" or "not
# ok<TAB>what" (the shell makes each a TAP line), then one line per
# reported bottleneck: "planted", "may" or "extra" (not there), a tab,
# its name.
include "truth-lib";

. as $b
| ($findings[] as $f |
   ($f.where[] as $w |
    if any($b[]; names_where($f; $w)) then "ok\t\($f.hyp) at \($w)"
    else "not ok\t\($f.hyp) at \($w)" end),
   (select($f.thread != null) |
    if any($b[]; names_thread($f)) then "ok\t\($f.hyp) in thread \($f.thread)"
    else "not ok\t\($f.hyp) in thread \($f.thread)" end),
   (select($f.process != null) |
    if any($b[]; names_process($f)) then "ok\t\($f.hyp) in process \($f.process)"
    else "not ok\t\($f.hyp) in process \($f.process)" end)),
  ($b[] | . as $x |
   (.hypothesis + "<" + (.focus | join(",")) + ">") as $name |
   if any($may[]; . as $m | $x | of_hyp($m)) then "may\t\($name)"
   elif any($explain[]; . as $f | $x | explained_by($f; $ancestors))
   then "planted\t\($name)"
   else "extra\t\($name)" end)
