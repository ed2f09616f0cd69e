# pyhot.py - a Python program whose CPU is in one function reached
# through two others: top -> middle -> hot (tests/e2e/test-pyframes.sh).
def hot(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def middle():
    while True:
        hot(100000)


def top():
    middle()


top()
