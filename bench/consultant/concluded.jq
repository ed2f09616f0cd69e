# concluded.jq - when a search concluded a target's planted bottleneck:
# the target time at which the last of a finding's where/thread
# components was first reported (each component's earliest since_s among
# the true nodes that name it), or null when one never was.  Input: the
# true nodes of one phase (they carry since_s); $findings as for
# tests/e2e/truth.jq.
include "truth-lib";

. as $b
| [$findings[] as $f |
   ([$f.where[] as $w | [$b[] | select(names_where($f; $w)) | .since_s]
     | min] +
    (if $f.thread then [[$b[] | select(names_thread($f)) | .since_s] | min]
     else [] end))
   | if any(. == null) then null else max end]
| if length == 0 or any(. == null) then null else max end
