#!/usr/bin/python3
# textcmp.py PID: compares every executable file mapping of process PID
# (its code as it runs) with the bytes of the file it maps.  Prints one
# line per mapping that differs ("DIFF path offset") and then
# "mappings N differ M"; exit 0.  hunch patches jmps and int3s into the
# code of the process it instruments: a process with none of hunch's
# patches left reads "differ 0".
import sys

pid = int(sys.argv[1])
n = bad = 0
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in maps:
        f = line.split()
        if len(f) < 6 or "x" not in f[1] or not f[5].startswith("/"):
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        off = int(f[2], 16)
        try:
            with open(f[5], "rb") as fh:
                fh.seek(off)
                want = fh.read(hi - lo)
        except OSError:
            continue
        mem.seek(lo)
        got = mem.read(len(want))
        n += 1
        if got != want:
            bad += 1
            print("DIFF", f[5], hex(off))
print("mappings", n, "differ", bad)
