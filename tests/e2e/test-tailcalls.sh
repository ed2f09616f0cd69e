#!/bin/bash
# test-tailcalls.sh - the tail-call and pointer-call targets against
# perf, the yardstick: bn_tailchain, bn_qsort and bn_callback (-O2 PIE).
# 1. The code is what the sources say (objdump): bntc_b's last
#    instruction is `jmp <bntc_c>`, bntc_ping and bntc_pong jmp to each
#    other, bnqs_sort's is `jmp <qsort@plt>`, bncb_dispatch calls through
#    a pointer (`call *`), and none of the hot functions is called by a
#    direct call from the function the source calls it from.
# 2. `perf record -e cpu-clock` on each target for 2 s: its hottest
#    function (self) is the planted one.
# 3. `hunch run --batch --time-limit 10` on the same target: a CPUbound
#    bottleneck is reported at perf's hottest function.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# last_insn PROG FUNC: the mnemonic and operand of FUNC's last
# instruction before its padding.
body() {
	objdump -d --no-show-raw-insn "$1" |
		awk -v f="<$2>:" '$2 == f { on = 1; next } on && NF == 0 { exit }
			on { $1 = ""; print }' | sed 's/^ *//'
}
last_insn() { body "$1" "$2" | grep -vE '^(nop|xchg|cs nop|data16)' | tail -1; }

for v in -O2-pie -O2-pie-shipped-g; do
	tc=$TARGETS_DIR/bn_tailchain$v qs=$TARGETS_DIR/bn_qsort$v
	cb=$TARGETS_DIR/bn_callback$v
	tap_ok $(last_insn "$tc" bntc_b | grep -qE '^jmp +[0-9a-f]+ <bntc_c>$'
		 echo $?) "bn_tailchain$v: bntc_b ends in jmp bntc_c: $(last_insn "$tc" bntc_b)"
	tap_ok $(body "$tc" bntc_ping | grep -qE '^jmp +[0-9a-f]+ <bntc_pong>$' &&
		 body "$tc" bntc_pong | grep -qE '^jmp +[0-9a-f]+ <bntc_ping>$'
		 echo $?) "bn_tailchain$v: bntc_ping and bntc_pong jmp to each other"
	tap_ok $(last_insn "$qs" bnqs_sort | grep -qE '^jmp +[0-9a-f]+ <qsort@plt>$'
		 echo $?) "bn_qsort$v: bnqs_sort ends in jmp qsort@plt: $(last_insn "$qs" bnqs_sort)"
	tap_ok $(body "$cb" bncb_dispatch | grep -qE '^call +\*' &&
		 ! body "$cb" bncb_dispatch | grep -q '<bncb_heavy>'
		 echo $?) "bn_callback$v: bncb_dispatch calls through a pointer, never bncb_heavy by name"
done

for t in bn_tailchain:bntc_hot bn_qsort:bnqs_cmp bn_callback:bncb_heavy; do
	name=${t%%:*} hot=${t#*:}
	prog=$TARGETS_DIR/$name-O2-pie
	perf record -q -e cpu-clock -o "$TMP/$name.data" -- "$prog" \
		--seconds 2 > /dev/null 2>&1
	top=$(perf report -q -i "$TMP/$name.data" --stdio --sort symbol \
		2> /dev/null | awk 'NF { print $3; exit }')
	tap_eq "$top" "$hot" "$name: perf's hottest function"
	"$HUNCH" run --batch --time-limit 10 --kill-at-end --no-journal \
		--report "$TMP/$name.json" -- "$prog" --seconds 14 \
		> "$TMP/$name.out" 2> "$TMP/$name.err"
	tap_eq "$(batch_status $? "$TMP/$name.json")" 0 \
		"$name: hunch run --batch exits 0 (3 with only CPUstarved undecided: batch_status)"
	where=$(jq -r '[.bottlenecks[] | select(.hypothesis == "CPUbound")
		| .focus[0] | select(startswith("/Code/"))] | .[]' \
		"$TMP/$name.json" | sed 's|.*/||' | sort -u | tr '\n' ' ')
	tap_ok $([[ " $where" == *" $top "* ]]; echo $?) \
		"$name: hunch reports CPUbound at perf's hottest $top (at: $where)"
done
tap_done
