#!/usr/bin/env python3
"""readme_files.py ROOT FOLDER - the .c/.h files of FOLDER (under ROOT)
that its README.md does not name, and the names in it with no such file.

A name is a backticked x.c, x.h, x.{c,h}, x.c/.h or x.c/h; a module's
.c and .h count as named when either is.  In engine/ and rtlib/, whose
READMEs name files in prose, the whole README counts; elsewhere only its
file table (the lines starting with '|').  A name counts as one with no
file only when it looks like the folder's own (its prefix before '_' is
one a file there has) and no file of that stem is in FOLDER.  Prints
"unnamed: A B ..." and "absent: C ..." ("none" when empty)."""
import os
import re
import sys

root, folder = sys.argv[1], sys.argv[2]
d = os.path.join(root, folder)
files = sorted(f for f in os.listdir(d) if re.fullmatch(r'[\w.-]+\.[ch]', f))
text = open(os.path.join(d, 'README.md')).read()
if folder not in ('engine', 'rtlib'):
    text = '\n'.join(l for l in text.split('\n') if l.startswith('|'))
named = set()
for tok in re.findall(r'`([^`]+)`', text):
    for m in re.finditer(r'(?<![\w/.])(\w+)\.(\{c,h\}|c/\.h|c/h|c|h)(?![\w/])',
                         tok):
        stem, ext = m.groups()
        exts = ['c', 'h'] if ext in ('{c,h}', 'c/.h', 'c/h') else [ext]
        named.update(f'{stem}.{e}' for e in exts)
stems = {n.rsplit('.', 1)[0] for n in named}
fstems = {f.rsplit('.', 1)[0] for f in files}
prefixes = {f.split('_')[0] for f in files}
unnamed = [f for f in files if f.rsplit('.', 1)[0] not in stems]
absent = sorted(n for n in named if n.split('_')[0] in prefixes and
                n.rsplit('.', 1)[0] not in fstems)
print('unnamed:', ' '.join(unnamed) or 'none')
print('absent:', ' '.join(absent) or 'none')
