# truth.jq - judge one search's bottlenecks against a target's .truth
# (tests/targets/README.md, "Truth files").  Input: the bottlenecks
# array of one phase of a hunch report.  Arguments:
#   $findings  [{hyp, where: [PATH...], thread: START|null}] that this
#              phase must report (<module> already substituted)
#   $explain   the findings a reported bottleneck may belong to ($findings,
#              plus the other half's for the global phase of bn_phases)
#   $may       [HYPOTHESIS...] allowed anywhere
#   $ancestors {HYPOTHESIS: [its ancestors on the why axis]}
# Output: one line per required where/thread, "ok<TAB>what" or "not
# ok<TAB>what" (the shell makes each a TAP line), then one line per
# reported bottleneck: "planted", "may" or "extra" (not there), a tab,
# its name.

# A /Files pattern: `*` matches any string, '/' included (bash [[ == ]]).
def glob_re: "^" + (gsub("(?<c>[.+?^${}()|\\[\\]\\\\])"; "\\\(.c)")
                    | gsub("\\*"; ".*")) + "$";
def glob_match($pat): test($pat | glob_re);

# The resource `.` is $w itself or lies below it.
def at_or_below($w): glob_match($w) or glob_match($w + "/*");

# The resource `.` is $w, or one of its ancestors (on the path to it):
# some prefix of the pattern matches it whole.
def on_path_of($w): . as $c | [range(1; ($w | length) + 1)]
	| any(. as $i | $c | glob_match($w[0:$i]));

def is_root: (.[1:] | contains("/")) | not;

def thread_re($start): "^/Process/[0-9]+/[0-9]+:" + $start + "$";

# Does bottleneck `.` of hypothesis $f.hyp name the `where` $w?
def names_where($f; $w): .hypothesis == $f.hyp and
	any(.focus[]; at_or_below($w));
def names_thread($f): .hypothesis == $f.hyp and
	(.focus[1] | test(thread_re($f.thread)));

# Is bottleneck `.` explained by finding $f: the finding's hypothesis or
# an ancestor, and every focus component the root of its hierarchy or on
# the path of one of the finding's where/thread components?
def explained_by($f): (.hypothesis as $h | $h == $f.hyp or
	 any(($ancestors[$f.hyp] // [])[]; . == $h))
	and all(.focus[]; is_root or (. as $c | any($f.where[];
		. as $w | $c | on_path_of($w)) or
		($f.thread != null and
		 ($c | test("^/Process/[0-9]+$") or
		  test(thread_re($f.thread))))));

. as $b
| ($findings[] as $f |
   ($f.where[] as $w |
    if any($b[]; names_where($f; $w)) then "ok\t\($f.hyp) at \($w)"
    else "not ok\t\($f.hyp) at \($w)" end),
   (select($f.thread != null) |
    if any($b[]; names_thread($f)) then "ok\t\($f.hyp) in thread \($f.thread)"
    else "not ok\t\($f.hyp) in thread \($f.thread)" end)),
  ($b[] | . as $x |
   (.hypothesis + "<" + (.focus | join(",")) + ">") as $name |
   if any($may[]; . == $x.hypothesis) then "may\t\($name)"
   elif any($explain[]; . as $f | $x | explained_by($f))
   then "planted\t\($name)"
   else "extra\t\($name)" end)
