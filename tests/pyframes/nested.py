# nested.py - a CPython program whose stacks are known: the main thread
# spins in inner() (reached main -> outer -> inner), a second thread in
# worker(), until SIGUSR1.  Before spinning, each thread writes its own
# stack as CPython sees it (qualname, file, line; the line of its
# innermost frame is the spinning one) to the file argv[1]: the truth
# tests/pyframes/pyframes_live.c compares eng_pyframes' reads with.
import linecache
import os
import signal
import sys
import threading

stop = False
started = threading.Event()
truth = {}


def on_usr1(signum, frame):
    global stop
    stop = True


def record(name):
    """The caller's stack, its own line moved to its spinning loop."""
    f = sys._getframe(1)
    rows = []
    line = f.f_lineno
    while "while not stop:" not in linecache.getline(f.f_code.co_filename,
                                                     line):
        line += 1
    while f is not None:
        rows.append(f"{f.f_code.co_qualname}\t{f.f_code.co_filename}\t{line}")
        f = f.f_back
        line = f.f_lineno if f is not None else 0
    truth[name] = (threading.get_native_id(), rows)


def worker():
    n = 0
    record("worker")
    started.set()
    while not stop: n += 1
    return n


def inner():
    n = 0
    record("main")
    with open(sys.argv[1] + ".tmp", "w") as out:
        for name in ("main", "worker"):
            tid, rows = truth[name]
            out.write(f"{name} {tid} {len(rows)}\n")
            out.write("".join(r + "\n" for r in rows))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while not stop: n += 1
    return n


def outer():
    return inner()


def main():
    signal.signal(signal.SIGUSR1, on_usr1)
    t = threading.Thread(target=worker, name="worker")
    t.start()
    started.wait()
    outer()
    t.join()
    print("inner stopped")
    print("worker joined")


main()
