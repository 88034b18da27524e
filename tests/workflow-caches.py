#!/usr/bin/env python3
"""Every path a workflow caches (actions/cache steps' `path:`) is one the
kit's scripts read back from BQLKIT_CACHE, cached with what they need
beside it.

usage: workflow-caches.py WORKFLOW [TOP]

Prints one line per problem and exits 1 if any (tests/t06-workflow.sh).
READS names, for each path the workflow may cache (as ci.yml writes it,
${{ env.BQLKIT_CACHE }} as $BQLKIT_CACHE and any other ${{ ... }} as *),
the script under TOP (default: this checkout) that reads it back and the
text it does so with: a script that no longer has that text no longer
reads the path, and its entry fails.  A path not in READS is refused: a
cache of a path nothing reads is storage spent for nothing.
"""
import fnmatch
import os
import re
import sys

READS = [
    # lab/matrix.sh chroot_dir: the tarball of a suite's chroot, unpacked
    # when its .packages says it was made with the package list it wants,
    # else made again (lab/chroot-lib.sh chroot_cached, its KEYFILE).
    ("$BQLKIT_CACHE/chroots/*-amd64.tar", "lab/matrix.sh",
     'tar=$BQLKIT_CACHE/chroots/$1-amd64.tar'),
    ("$BQLKIT_CACHE/chroots/*-amd64.tar", "lab/matrix.sh",
     'tar -xf "$tar" -C "$dir"'),
    ("$BQLKIT_CACHE/chroots/*-amd64.tar", "lab/chroot-lib.sh",
     'if [ -s "$tar" ] && [ "$(cat "$keyfile" 2>/dev/null)" = "$key" ]'),
    ("$BQLKIT_CACHE/chroots/*-amd64.tar.packages", "lab/matrix.sh",
     'chroot_cached --prepare chroot_prepare "$tar" "$tar.packages" "$include"'),
    ("$BQLKIT_CACHE/chroots/*-amd64.tar.packages", "lab/chroot-lib.sh",
     '[ "$(cat "$keyfile" 2>/dev/null)" = "$key" ]'),
    # lab/get-headers.sh: apt-get download in the suite's and arch's
    # directory keeps a .deb it finds there; it is unpacked from there.
    ("$BQLKIT_CACHE/debs/*-*/linux-headers-*.deb", "lab/get-headers.sh",
     'debs=$BQLKIT_CACHE/debs/$suite-$arch'),
    ("$BQLKIT_CACHE/debs/*-*/linux-headers-*.deb", "lab/get-headers.sh",
     '(cd "$debs" && apt_p apt-get download -qq'),
    # scripts/fetch-source.sh (row_base in matrix.sh): the candidate
    # version's .deb, downloaded only when missing.
    ("$BQLKIT_CACHE/debs/*-all/linux-source-*.deb", "scripts/fetch-source.sh",
     'debs=$BQLKIT_CACHE/debs/$suite-all'),
    ("$BQLKIT_CACHE/debs/*-all/linux-source-*.deb", "scripts/fetch-source.sh",
     'if [ ! -f "$deb" ]; then'),
]
# Not in READS, though read: $BQLKIT_CACHE/apt (scripts/apt-private.sh
# fetches lists older than a day again: a cached copy is stale by the next
# run), $BQLKIT_CACHE/src (fetch-source.sh unpacks the tarball again from
# the .deb, which it must have anyway), $BQLKIT_CACHE/headers (their kbuild
# links point at the host's linux-kbuild package, which get-headers.sh
# installs only when it unpacks them).

# A path cached without the other is refused by its reader.
NEEDS = [("$BQLKIT_CACHE/chroots/*-amd64.tar", "$BQLKIT_CACHE/chroots/*-amd64.tar.packages")]


def cache_steps(lines):
    """(line number, [path entries]) of each actions/cache step."""
    steps = []
    for n, line in enumerate(lines):
        m = re.match(r"^(\s*)(?:- )?uses:\s*actions/cache(?:/restore|/save)?@", line)
        if not m:
            continue
        key = len(line) - len(line.lstrip(" -"))
        # The step: back to its "- " line, on while lines are indented more.
        start = n
        while start > 0 and not re.match(r"^\s*- ", lines[start]):
            start -= 1
        end = n + 1
        while end < len(lines) and (not lines[end].strip() or
                                    len(lines[end]) - len(lines[end].lstrip(" ")) >= key):
            end += 1
        paths = None
        for i in range(start, end):
            pm = re.match(r"^(\s*)path:\s*(.*?)\s*$", lines[i])
            if not pm:
                continue
            indent, value = len(pm.group(1)), pm.group(2)
            if value in ("|", "|-"):
                paths = []
                j = i + 1
                while j < end and (not lines[j].strip() or
                                   len(lines[j]) - len(lines[j].lstrip(" ")) > indent):
                    if lines[j].strip():
                        paths.append(lines[j].strip())
                    j += 1
            elif value and not value.startswith((">", "|")):
                paths = [value]
            else:
                paths = [f"(a path: of a form this check does not read: {value!r})"]
        steps.append((n + 1, paths))
    return steps


def normal(path):
    path = re.sub(r"\$\{\{\s*env\.BQLKIT_CACHE\s*\}\}", "$BQLKIT_CACHE", path)
    return re.sub(r"\$\{\{.*?\}\}", "*", path)


def covers(cached, read):
    """The cached path (a glob, or a directory) holds the files of read."""
    sample = read.replace("*", "x")
    return fnmatch.fnmatchcase(sample, cached) or sample.startswith(cached.rstrip("/") + "/")


def main():
    wf = sys.argv[1]
    top = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lines = open(wf).read().split("\n")
    problems = []
    readers = {}
    for path, script, text in READS:
        readers.setdefault(path, [])
        try:
            found = text in open(os.path.join(top, script)).read()
        except OSError:
            found = False
        if not found:
            problems.append(f"{path}: {script} no longer reads it (no '{text}')")
        readers[path].append(script)
    for n, paths in cache_steps(lines):
        if paths is None:
            problems.append(f"{wf}:{n}: an actions/cache step without path:")
            continue
        cached = [normal(p) for p in paths]
        for p in cached:
            if p in readers:
                continue
            under = [r for r in readers if covers(p, r)]
            if under:
                problems.append(f"{wf}:{n}: caches {p}: more than the scripts read back there "
                                f"({', '.join(under)})")
            else:
                problems.append(f"{wf}:{n}: caches {p}: not a path READS names "
                                f"(what the scripts read back: {', '.join(readers)})")
        for a, b in NEEDS:
            if any(covers(p, a) for p in cached) and not any(covers(p, b) for p in cached):
                problems.append(f"{wf}:{n}: caches {a} without {b}: "
                                f"{', '.join(sorted(set(readers[b])))} refuses it alone")
    print("\n".join(problems))
    return 1 if problems else 0


sys.exit(main())
