# work.py - a deterministic Python workload for the robustness corpus:
# the interpreter's allocator, dicts, json, hashing, sorting, and threads.
import hashlib
import json
import threading


def digest_chunk(n, out, i):
    h = hashlib.sha256()
    for k in range(n):
        h.update(str(k * k).encode())
    out[i] = h.hexdigest()[:16]


def main():
    data = {f"key{i}": [i, i * i, str(i)[::-1]] for i in range(20000)}
    text = json.dumps(data, sort_keys=True)
    back = json.loads(text)
    print("json", len(text), back["key1234"])
    words = sorted((v[2] for v in back.values()), key=lambda s: (len(s), s))
    print("sorted", words[:3], words[-3:])
    out = [None] * 4
    threads = [threading.Thread(target=digest_chunk, args=(30000 + i, out, i))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("digests", " ".join(out))
    print("sum", sum(x[0] for x in data.values()))


main()
