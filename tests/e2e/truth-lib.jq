# truth-lib.jq - matching reported bottlenecks against a target's .truth
# findings (definitions for truth.jq and bench/consultant); the rules are
# in tests/targets/README.md, "Truth files".

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

def thread_re($start): "^/Process/[0-9]+/[0-9]+:" +
	($start | gsub("(?<c>[.+?^${}()|\\[\\]\\\\])"; "\\\(.c)")) + "$";

# A /Code component the finding may be refined to past its /Code where:
# one of its `below` functions (the library call its code waits in).
def is_below($f): startswith("/Code/") and
	(. as $c | any(($f.below // [])[]; . as $b | $c | glob_match($b)));

# A /Code component on the finding's call path above its /Code where:
# one of its `above` functions (a caller whose inclusive time holds the
# finding's, as bn_qsort's bnqs_sort does through `jmp qsort@plt`).
def is_above($f): startswith("/Code/") and
	(. as $c | any(($f.above // [])[]; . as $b | $c | glob_match($b)));

# Is bottleneck `.` of the finding's hypothesis $h?  A CPUbound finding
# is also CPUdemand's: on a machine loaded enough that the program is
# CPU-starved, its hot code gets too little CPU to be CPU bound by CPUs
# used, and CPUdemand (CPU used or waited for) finds it instead.
def of_hyp($h): .hypothesis == $h or
	($h == "CPUbound" and .hypothesis == "CPUdemand");

# Does bottleneck `.` of hypothesis $f.hyp name the `where` $w (at it or
# below it; a /Code where also at one of the finding's `below`)?
def names_where($f; $w): of_hyp($f.hyp) and
	any(.focus[]; at_or_below($w) or
	    ($w | startswith("/Code/")) and is_below($f));
def names_thread($f): of_hyp($f.hyp) and
	(.focus[1] | test(thread_re($f.thread)));
# The process $pid itself or one of its threads.
def process_re($pid): "^/Process/" + $pid + "(/[0-9]+(:.*)?)?$";
def names_process($f): of_hyp($f.hyp) and
	(.focus[1] | test(process_re($f.process)));

# Is bottleneck `.` explained by finding $f: the finding's hypothesis or
# an ancestor, and every focus component the root of its hierarchy or on
# the path of one of the finding's where/thread components?
def explained_by($f; $ancestors): (.hypothesis as $h | of_hyp($f.hyp) or
	 any(($ancestors[$f.hyp] // [])[]; . == $h))
	and all(.focus[]; is_root or is_below($f) or is_above($f) or
		(. as $c | any($f.where[];
		. as $w | $c | on_path_of($w)) or
		($f.thread != null and
		 ($c | test("^/Process/[0-9]+$") or
		  test(thread_re($f.thread)))) or
		($f.process != null and
		 ($c | test(process_re($f.process))))));

