# work_wait.py PATH - keeps 3 threads busy until PATH exists, then prints
# deterministic lines: for attaching to a real interpreter mid-run.
import os
import sys
import threading
import time

stop = threading.Event()


def spin(i, out):
    n = 0
    while not stop.is_set():
        n += sum(range(1000))
    out[i] = n > 0


out = [False] * 3
threads = [threading.Thread(target=spin, args=(i, out)) for i in range(3)]
for t in threads:
    t.start()
print("ready", file=sys.stderr, flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
stop.set()
for t in threads:
    t.join()
print("threads ran:", out)
