#!/bin/sh
# test-points.sh - `hunch points`: per function where the engine would
# patch it (in place, relocated, traps with the reason relocation is
# refused), the shares line, and a stripped cold part's jumps that are
# no exits.  Exact output (arch/x86_64/README.md, "hunch points").
#
#   test-points.sh PARSE-FIXTURES COLDPART-STRIPPED
# (environment: HUNCH, HUNCH_SOURCE_ROOT, TARGETS_DIR)
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
pfix=$1
cold=$2

got=$("$HUNCH" points "$pfix" pf_retpad)
want="function pf_retpad +0x1139 size 16 ok; in place
  point entry +0x1139 len 2 patch +0x1139+6 [31 c0 85 ff 74 05] ok
  point exit +0x1144 len 1 ret patch +0x1144+5 [c3 cc cc 90 90] ok
summary $pfix: 1 functions, 1 ok (100.0%), 0 refused; 2 points, 2 ok
shares $pfix: 1 in place (100.0%), 0 relocated (0.0%), 0 traps (0.0%), 0 none (0.0%)"
tap_eq "$got" "$want" "points: pf_retpad in place, with the shares line"

got=$("$HUNCH" points "$pfix" | grep '^function pf_hot ')
tap_eq "$got" "function pf_hot +0x11b2 size 33 refused: a branch target lies inside the bytes the jump would replace (at +0x11d2); traps (not relocated: has a cold part that jumps back into it)" \
	"points: pf_hot left to traps, with why it is not relocated"

got=$("$HUNCH" points "$pfix" pf_tinypad pf_tinynext | grep -v '^s')
want="function pf_tinypad +0x11d3 size 3 ok; in place
  point entry +0x11d3 len 2 patch +0x11d3+5 [31 c0 c3 cc cc] ok
  point exit +0x11d5 len 1 ret patch +0x11d5+5 [c3 cc cc cc cc] ok
function pf_tinynext +0x11e3 size 3 refused: function smaller than 5 bytes; traps (not relocated: the entry itself cannot take a jmp)
  point entry +0x11e3 len 2 patch +0x11e3+3 [31 c0 c3] refused: function smaller than 5 bytes
  point exit +0x11e5 len 1 ret patch +0x11e3+3 [31 c0 c3] refused: function smaller than 5 bytes"
tap_eq "$got" "$want" "points: a 3-byte function borrows the int3 padding after it; with none, it is too small"

got=$(HUNCH_NO_TAILPAD=1 "$HUNCH" points "$pfix" pf_tinypad | head -1)
tap_eq "$got" "function pf_tinypad +0x11d3 size 3 refused: function smaller than 5 bytes; traps (not relocated: the entry itself cannot take a jmp)" \
	"points: HUNCH_NO_TAILPAD=1 borrows no padding"

got=$("$HUNCH" points "$pfix" | tail -1)
tap_eq "$got" "shares $pfix: 12 in place (46.2%), 0 relocated (0.0%), 14 traps (53.8%), 0 none (0.0%)" \
	"points: the fixtures' shares"

# br_read_line at -O0: a loop jumps back into its exit's bytes; the
# whole function is copied instead.
got=$("$HUNCH" points "$TARGETS_DIR/blockread-O0-pie" br_read_line | head -1 | sed 's/.*; //')
tap_eq "$got" "relocated" "points: blockread-O0-pie's br_read_line relocated"

# The stripped cold part: cp_work's jump into it is no exit.
got=$("$HUNCH" points "$cold" cp_work | grep -c '^  point exit')
tap_eq "$got" 1 "points: stripped cp_work has 1 exit (its ret), none into its nameless cold part"
tap_done
