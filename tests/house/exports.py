#!/usr/bin/env python3
"""exports.py BUILD SOURCE - the exported functions of the product (arch,
engine, consultant, tui, common and the hunch executable), read with nm
from the objects of a build, checked against two house rules:

  dead:     an exported function nothing calls: no object of the build
            (product, tests, benchmarks) references it, and its own file
            names it only where it declares or defines it (a name that
            starts a line and is followed by '('); a call or a pointer
            in its own file counts, a comment, a string or a call from
            its own body (recursion) does not;
  misnamed: an exported function whose name does not start with its
            file's name followed by '_' (or is not the name itself), as
            tmux names its functions; xmalloc.c's x* family keeps the
            names every C programmer knows (tmux's xmalloc.c does too).

The runtime library (rtlib) is left out: its exports are called from the
target process (its API, the trampolines' entries, the libc functions it
wraps), never by an object of the build.  `main` is left out.
Prints "dead: A B ..." and "misnamed: file:name ..." ("none" when empty).
"""
import os
import re
import subprocess
import sys

build, src = sys.argv[1], sys.argv[2]
FOLDERS = ('arch', 'engine', 'consultant', 'tui', 'common')
XMALLOC = {'xrealloc', 'xreallocarray', 'xstrdup'}


def objects(top):
    for d, _, fs in os.walk(top):
        for f in fs:
            if f.endswith('.o'):
                yield os.path.join(d, f)


def source_of(obj):
    """The source file of a product object, or None."""
    rel = os.path.relpath(obj, build)
    d, f = os.path.split(rel)
    name = f[:-len('.o')]
    if d == 'hunch.p':       # executable objects: the path's '/' -> '_'
        for folder in FOLDERS:
            if name.startswith(folder + '_'):
                p = os.path.join(folder, name[len(folder) + 1:])
                if os.path.exists(os.path.join(src, p)):
                    return p
        return None
    if not d.split(os.sep)[0] in FOLDERS or not d.endswith('.p'):
        return None
    p = os.path.join(os.path.dirname(d), name)
    return p if os.path.exists(os.path.join(src, p)) else None


def nm(args, obj):
    out = subprocess.run(['nm'] + args + [obj], capture_output=True,
                         text=True, check=True).stdout
    return [l.split() for l in out.splitlines() if l.strip()]


defined = {}                 # name -> source file
referenced = set()
for obj in objects(build):
    if '/meson-private/' in obj:
        continue
    referenced.update(l[-1] for l in nm(['-u'], obj))
    s = source_of(obj)
    if s is None:
        continue
    for l in nm(['-g', '--defined-only'], obj):
        if len(l) == 3 and l[1] in 'TW' and l[2] != 'main':
            defined[l[2]] = s

def bodies(text, name):
    """Where the definitions of name run (a call there is recursion)."""
    for m in re.finditer(r'^(?:\w.*)?\b%s\s*\(' % re.escape(name), text,
                         re.M):
        end = text.find('\n}', m.end())
        if end >= 0 and text.find(';', m.end(), text.find('{', m.end())) < 0:
            yield m.start(), end


dead, misnamed = [], []
for name, s in sorted(defined.items()):
    stem = os.path.basename(s).rsplit('.', 1)[0]
    if not (name == stem or name.startswith(stem + '_')) and \
            not (stem == 'xmalloc' and name in XMALLOC):
        misnamed.append(f'{s}:{name}')
    if name in referenced:
        continue
    text = open(os.path.join(src, s)).read()
    text = re.sub(r'/\*.*?\*/|//[^\n]*|"(?:[^"\\\n]|\\.)*"|'
                  r"'(?:[^'\\\n]|\\.)*'",
                  lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    uses = [m for m in re.finditer(r'^(.*?)\b%s\b(\s*\()?' %
                                   re.escape(name), text, re.M)
            if (m.group(1)[:1].isspace() or not m.group(2)) and
            not any(a <= m.start() < b for a, b in bodies(text, name))]
    if not uses:
        dead.append(name)
print('dead:', ' '.join(dead) or 'none')
print('misnamed:', ' '.join(misnamed) or 'none')
