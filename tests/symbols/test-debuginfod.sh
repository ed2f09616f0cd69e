#!/bin/bash
# test-debuginfod.sh FULL - a stripped program gets its names from a real
# debuginfod server.
#
# FULL is a tests/targets program built with -g and without
# --export-dynamic (so its stripped copy names none of its functions).
# The test serves its debug file (objcopy --only-keep-debug) and the
# stripped program from Debian's debuginfod on a free port of 127.0.0.1,
# then checks that `hunch where` of the stripped copy prints exactly what
# it prints for the unstripped build: once fetched from the server, once
# more from the client cache with the server stopped.  A server that
# accepts but never answers must not hold up the open: `hunch where`
# gives up after --debuginfod-wait and prints the file's own names.
#
# Live: a batch search of the stripped tests/targets build (its .dynsym
# names every function, without source files) whose debug file is held
# back by a proxy until hunch has reported the functions: the journal
# must show each renamed function retired under its old /Code path and
# added under the new one, and the search goes on meanwhile.
# Every server and process is killed at the end, whatever happens.
set -u
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"

full=$1
if ! command -v debuginfod >/dev/null; then
	echo "1..0 # SKIP the debuginfod server is not installed (Debian package debuginfod; ./dev.sh build installs it)"
	exit 0
fi

tmp=$(mktemp -d /tmp/hunch-debuginfod-XXXXXX)
server=
silent=
proxy=
run=
stop_server() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null
		wait "$server" 2>/dev/null
		server=
	fi
}
cleanup() {
	local p
	stop_server
	for p in $silent $proxy $run; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A port nobody listens on now (the kernel's choice).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The server's /metrics, or nothing while it is not up.
metrics() {
	python3 - "$1" <<'EOF' 2>/dev/null
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1],
                             timeout=5).read().decode())
EOF
}

# Wait (at most 60 s) until the server has scanned the 4 files of srv/.
wait_scanned() {
	local port=$1 i
	for ((i = 0; i < 600; i++)); do
		metrics "$port" | grep -q '^scanned_files_total{source="file"} 4$' && return 0
		kill -0 "$server" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

name=bn_cpu_deep
mkdir -p "$tmp/srv" "$tmp/prog" "$tmp/ref" "$tmp/cache"
cp "$full" "$tmp/ref/$name"
objcopy --only-keep-debug "$full" "$tmp/srv/$name.debug"
strip --strip-all -o "$tmp/prog/$name" "$full"
cp "$tmp/prog/$name" "$tmp/srv/$name"
live=bn_cpu_deep-O2-pie
cp "$TARGETS_DIR/$live-stripped" "$tmp/prog/"
cp "$TARGETS_DIR/$live-stripped" "$tmp/srv/"
objcopy --only-keep-debug "$TARGETS_DIR/$live" "$tmp/srv/$live.debug"
id=$(readelf -n "$full" | sed -n 's/^ *Build ID: *//p')
tap_ok "$([ ${#id} -eq 40 ]; echo $?)" "the target has a GNU build-id ($id)"

unset DEBUGINFOD_URLS
want=$("$HUNCH" where "$tmp/ref/$name")
tap_eq "$(grep -c "^/Code/$name/.*/bncpu_hot_loop\$" <<<"$want")" 1 \
	"the unstripped build names bncpu_hot_loop"
bare=$("$HUNCH" where "$tmp/prog/$name")
tap_eq "$(grep -c 'bncpu_' <<<"$bare")" 0 \
	"without debuginfod the stripped copy names none of its functions"

port=$(free_port)
debuginfod -p "$port" -F -d "$tmp/db.sqlite" "$tmp/srv" \
	>"$tmp/server.log" 2>&1 &
server=$!
if ! tap_ok "$(wait_scanned "$port"; echo $?)" \
	"debuginfod on port $port scanned the debug file and the program"; then
	tap_lines <"$tmp/server.log"
fi

export DEBUGINFOD_URLS=http://127.0.0.1:$port
export DEBUGINFOD_CACHE_PATH=$tmp/cache
got=$("$HUNCH" where "$tmp/prog/$name" 2>"$tmp/err1")
tap_eq "$got" "$want" "fetched: the stripped copy's where axis is the unstripped build's"
tap_eq "$(head -1 "$tmp/err1")" \
	"hunch: fetching debug info for $tmp/prog/$name (build-id $id) from debuginfod..." \
	"the log says what is being fetched"
tap_eq "$(sed -n '2s/, [0-9]* KiB in .*//p' "$tmp/err1")" \
	"hunch: fetching debug info for $tmp/prog/$name (build-id $id) from debuginfod: done" \
	"and that it is done"
tap_eq "$(wc -l <"$tmp/err1")" 2 "nothing else on stderr"
tap_ok "$(cmp -s "$tmp/cache/$id/debuginfo" "$tmp/srv/$name.debug"; echo $?)" \
	"the debug file is in the private cache, byte for byte"

# Live: the proxy answers only once the gate file exists.
cat >"$tmp/proxy.py" <<'EOF'
import http.server, os, sys, time, urllib.request
port, upstream, gate = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class Gate(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def do_GET(self):
        while not os.path.exists(gate):
            time.sleep(0.05)
        try:
            data = urllib.request.urlopen(upstream + self.path, timeout=30).read()
        except Exception:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Gate)
print("listening", flush=True)
server.serve_forever()
EOF
pport=$(free_port)
python3 "$tmp/proxy.py" "$pport" "http://127.0.0.1:$port" "$tmp/gate" \
	>"$tmp/proxy.out" 2>&1 &
proxy=$!
wait_file() {  # wait_file FILE PATTERN: at most 60 s
	local i
	for ((i = 0; i < 600; i++)); do
		grep -aq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
wait_file "$tmp/proxy.out" listening
export DEBUGINFOD_URLS=http://127.0.0.1:$pport
export DEBUGINFOD_CACHE_PATH=$tmp/cache-live
lid=$(readelf -n "$TARGETS_DIR/$live" | sed -n 's/^ *Build ID: *//p')
"$HUNCH" run --batch --time-limit 4 --kill-at-end --journal "$tmp/journal" \
	-- "$tmp/prog/$live-stripped" >"$tmp/live.out" 2>"$tmp/live.err" &
run=$!
tap_ok "$(wait_file "$tmp/journal" '"function":"bncpu_hot_loop"'; echo $?)" \
	"live: the functions are reported under their .dynsym names first"
touch "$tmp/gate"
wait "$run"
tap_eq "$?" 0 "live: the batch search ends normally"
run=
tap_eq "$(grep -a '^{"t":"resource",' "$tmp/journal" |
	grep '"function":"bncpu_hot_loop"' |
	sed 's/"ts":[0-9.e-]*,//; s/,"addr":[0-9]*//')" \
'{"t":"resource","op":"add","kind":"function","module":"'$live'-stripped","function":"bncpu_hot_loop"}
{"t":"resource","op":"retire","kind":"function","module":"'$live'-stripped","function":"bncpu_hot_loop"}
{"t":"resource","op":"add","kind":"function","module":"'$live'-stripped","srcfile":"bn_cpu_deep.c","function":"bncpu_hot_loop"}' \
	"live: once the debug file arrives, bncpu_hot_loop moves to bn_cpu_deep.c"
tap_eq "$(grep -ac '"op":"retire","kind":"function","module":"'$live'-stripped"' "$tmp/journal")" \
	"$(grep -c "^/Code/$name/bn_cpu_deep.c/" <<<"$want")" \
	"live: every function of bn_cpu_deep.c is retired under <unknown> once"
started=$(grep -c 'from debuginfod\.\.\.$' "$tmp/live.err")
tap_eq "$(grep -cE 'from debuginfod: (done|failed)' "$tmp/live.err")" \
	"$started" "live: each of the $started fetches started is logged as ended"
tap_eq "$(grep "build-id $lid" "$tmp/live.err" | sed 's/, [0-9]* KiB in .*//')" \
	"hunch: fetching debug info for $tmp/prog/$live-stripped (build-id $lid) from debuginfod...
hunch: fetching debug info for $tmp/prog/$live-stripped (build-id $lid) from debuginfod: done" \
	"live: the log says the program's debug info was fetched"

export DEBUGINFOD_URLS=http://127.0.0.1:$port
export DEBUGINFOD_CACHE_PATH=$tmp/cache
stop_server
tap_ok "$(metrics "$port" | grep -q scanned; [ $? -ne 0 ]; echo $?)" \
	"the server is stopped"
got=$("$HUNCH" where "$tmp/prog/$name" 2>"$tmp/err2")
tap_eq "$got" "$want" "from the cache, server stopped: the same where axis"
tap_eq "$(cat "$tmp/err2")" "" "from the cache: nothing fetched, nothing said"

# A build-id nobody serves (the server is gone): the failure is said and
# the program keeps the names it gives itself.
other=$HUNCH_BUILD_ROOT/tests/symbols/fixtures/symfix-sep-O2-pie
strip --strip-all -o "$tmp/prog/other" "$other"
oid=$(readelf -n "$other" | sed -n 's/^ *Build ID: *//p')
got=$("$HUNCH" where "$tmp/prog/other" 2>"$tmp/err3")
tap_eq "$(sed -n '2s/failed (.*)/failed (reason)/p' "$tmp/err3")" \
	"hunch: fetching debug info for $tmp/prog/other (build-id $oid) from debuginfod: failed (reason); its functions keep the names the file itself gives" \
	"a fetch that fails is said so"
tap_eq "$(grep -c 'sf_' <<<"$got")" 0 "and the program keeps its own (no) names"

# A server that accepts connections and never answers: the image opens
# at once without its debug file, and where stops waiting when told.
sport=$(free_port)
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
print("listening", flush=True)
time.sleep(3600)' "$sport" >"$tmp/silent.out" &
silent=$!
for ((i = 0; i < 600; i++)); do
	grep -q listening "$tmp/silent.out" && break
	sleep 0.1
done
export DEBUGINFOD_URLS=http://127.0.0.1:$sport
export DEBUGINFOD_CACHE_PATH=$tmp/cache2
got=$("$HUNCH" where --debuginfod-wait 1 "$tmp/prog/$name" 2>"$tmp/err4")
tap_eq "$got" "$bare" "silent server: where prints the stripped file's own names"
tap_eq "$(cat "$tmp/err4")" \
	"hunch: fetching debug info for $tmp/prog/$name (build-id $id) from debuginfod...
hunch where: debuginfod had not answered after 1 s; the files still being fetched keep the names they give themselves (wait longer with --debuginfod-wait SECONDS)" \
	"silent server: the wait ends after --debuginfod-wait, saying so"
tap_ok "$([ ! -e "$tmp/cache2/$id/debuginfo" ]; echo $?)" \
	"silent server: the download stopped at exit leaves no miss in the cache"

tap_done
