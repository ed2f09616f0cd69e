# churn.py - a CPython program whose stack changes all the time (calls
# and returns of a, b, c at varying depths, a generator, a lambda),
# until SIGUSR1: tests/pyframes/pyframes_churn.c reads it while it runs.
import signal
import sys

stop = False


def on_usr1(signum, frame):
    global stop
    stop = True


def a(n):
    return b(n - 1) if n > 0 else sum(x for x in range(3))


def b(n):
    return c(n - 1) if n > 0 else (lambda: 1)()


def c(n):
    return a(n - 1) if n > 0 else 0


def main():
    signal.signal(signal.SIGUSR1, on_usr1)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    i = 0
    while not stop:
        a(i % 40)
        i += 1


main()
