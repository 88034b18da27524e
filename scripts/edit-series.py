#!/usr/bin/python3
"""Apply one source edit to every series of a driver, in the patch that
introduced the code, and regenerate the series (later patches follow).

Series that scripts/gen-series.sh generates from changes/ (make series)
are refused: there a change lives once, in changes/<driver>/, and is
edited there.  What this script still edits is a hand-kept series
(changes/<driver>/bases/<X.Y>/source says "hand-kept": mana's 6.6, which
has no base to generate it from), and copies of the kit without
changes/.

    edit-series.py [--driver veth] [--only 6.1,6.12] SPEC...

A SPEC file holds edit blocks:

    @ PATCH-GLOB [SERIES...]
    <<<<
    text as it is after that patch
    ====
    what it becomes
    >>>>

PATCH-GLOB names the patch of each series that gets the edit (fnmatch on
the file name, e.g. "*implement-byte-queue-limits*"); SERIES (default: every
series of the driver) restricts it.  The old text must occur exactly once
in the patched file after that patch; it is carried through the later
patches until one of them rewrites that text (said on stdout: that patch
then rewrites the edited text).  Otherwise nothing is written and the
error names the series and patch.  Then every series is
applied to its imported base (build/bases/X.Y, or $BQLKIT_BASES) patch by
patch, each patch rewritten as the difference between consecutive
snapshots, its DEP-3 header kept, and the series refreshed with the kit's
quiltrc so the result is what `make drift` expects.  Lines starting with
"#" outside blocks are comments.

With --new NAME --header FILE, the edits do not change the patch they
name: they become a new patch NAME (its DEP-3 header from FILE, ending
with the "---" line; NAME "NNNN-x.patch" takes the number after the named
patch's) right after it in each series (series file too); the
later patches follow as above.  Every edit must name the same patch.  A
series without an imported base is refused then (name the others with
--only).

A series with no imported base (6.6 here) is edited in its patch text
instead: the old text must be lines that patch adds (all "+" lines, in one
hunk, once in the patch); the hunk counts and the line numbers of its later
hunks and of the later patches' hunks in that file are recomputed; an edit
that overlaps a later patch's hunk is refused.  Nothing is applied then:
import the base and run `make drift` to prove it.
"""
import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(msg):
    sys.exit('edit-series: error: ' + msg)


def parse_spec(path):
    edits = []
    lines = open(path).read().split('\n')
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith('#'):
            i += 1
            continue
        if not line.startswith('@ '):
            die('%s:%d: expected "@ PATCH-GLOB [SERIES...]"' % (path, i + 1))
        words = line[2:].split()
        glob, only = words[0], words[1:]
        if lines[i + 1] != '<<<<':
            die('%s:%d: expected "<<<<"' % (path, i + 2))
        j = i + 2
        old = []
        while lines[j] != '====':
            old.append(lines[j])
            j += 1
        j += 1
        new = []
        while lines[j] != '>>>>':
            new.append(lines[j])
            j += 1
        edits.append({'glob': glob, 'only': only, 'where': '%s:%d' % (path, i + 1),
                      'old': '\n'.join(old) + '\n', 'new': '\n'.join(new) + '\n'})
        i = j + 1
    return edits


def series_patches(sdir):
    return [p.strip() for p in open(os.path.join(sdir, 'series'))
            if p.strip() and not p.startswith('#')]


def target_patch(e, series, patches, used):
    """Index of the patch of SERIES that edit E names, or None if E skips SERIES."""
    if e['only'] and series not in e['only']:
        return None
    hits = [k for k, p in enumerate(patches) if fnmatch.fnmatch(p, e['glob'])]
    if len(hits) != 1:
        die('%s: %s: %d patches match %s' % (e['where'], series, len(hits), e['glob']))
    used.add(e['where'])
    return hits[0]


def patch_files(text):
    return [ln[6:].strip() for ln in text.split('\n') if ln.startswith('+++ b/')]


def snapshots(base, sdir, patches, files):
    """Contents of FILES after 0..n patches (patch(1), fuzz 0)."""
    work = tempfile.mkdtemp(prefix='bqlkit-edit.')
    try:
        for f in files:
            os.makedirs(os.path.dirname(os.path.join(work, f)), exist_ok=True)
            shutil.copy(os.path.join(base, f), os.path.join(work, f))
        snaps = [{f: open(os.path.join(work, f)).read() for f in files}]
        for p in patches:
            r = subprocess.run(['patch', '-p1', '--fuzz=0', '-s', '--no-backup-if-mismatch',
                                '-i', os.path.join(sdir, p)], cwd=work,
                               capture_output=True, text=True)
            if r.returncode:
                die('%s: %s does not apply to the base: %s' % (sdir, p, r.stdout + r.stderr))
            snaps.append({f: open(os.path.join(work, f)).read() for f in files})
        return snaps
    finally:
        shutil.rmtree(work)


def udiff(f, a, b):
    with tempfile.TemporaryDirectory() as d:
        pa, pb = os.path.join(d, 'a'), os.path.join(d, 'b')
        open(pa, 'w').write(a)
        open(pb, 'w').write(b)
        r = subprocess.run(['diff', '-u', '-p', '--label', 'a/' + f, '--label', 'b/' + f,
                            pa, pb], capture_output=True, text=True)
        return r.stdout


def refresh(base, sdir, patches):
    """quilt push + refresh every patch against a copy of the base."""
    q = ['quilt', '--quiltrc', os.path.join(TOP, 'scripts', 'quiltrc')]
    with tempfile.TemporaryDirectory(prefix='bqlkit-edit.') as t:
        tree, pdir = os.path.join(t, 'tree'), os.path.join(t, 'patches')
        shutil.copytree(sdir, pdir)
        shutil.copytree(base, tree, ignore=shutil.ignore_patterns('MANIFEST'))
        env = dict(os.environ, QUILT_PATCHES=pdir)
        for p in patches:
            r = subprocess.run(q + ['push'], cwd=tree, env=env, capture_output=True, text=True)
            if r.returncode or 'offset' in r.stdout or 'fuzz' in r.stdout:
                die('%s: %s does not apply cleanly after the edit:\n%s' % (sdir, p, r.stdout + r.stderr))
            subprocess.run(q + ['refresh'], cwd=tree, env=env, check=True, capture_output=True)
        for p in patches:
            shutil.copy(os.path.join(pdir, p), os.path.join(sdir, p))


HUNK = re.compile(r'^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$')


def parse_patch(text):
    """[(kind, data)]: ('raw', line) or ('hunk', {file, os, oc, ns, nc, tail, lines})."""
    out, lines, i, cur = [], text.split('\n'), 0, None
    while i < len(lines):
        ln = lines[i]
        m = HUNK.match(ln)
        if m and cur:
            oc = int(m.group(2) if m.group(2) is not None else 1)
            nc = int(m.group(4) if m.group(4) is not None else 1)
            body, o, n = [], 0, 0
            i += 1
            while (o < oc or n < nc) and i < len(lines):
                b = lines[i]
                body.append(b)
                if b[:1] in (' ', '-', ''):
                    o += 1
                if b[:1] in (' ', '+', ''):
                    n += 1
                i += 1
            while i < len(lines) and lines[i].startswith('\\'):
                body.append(lines[i])
                i += 1
            out.append(('hunk', {'file': cur, 'os': int(m.group(1)), 'ns': int(m.group(3)),
                                 'oc0': oc, 'nc0': nc, 'tail': m.group(5), 'lines': body}))
            continue
        if ln.startswith('+++ b/'):
            cur = ln[6:].strip()
        out.append(('raw', ln))
        i += 1
    return out


def hunk_counts(lines):
    """(old-side, new-side) line counts of a hunk body."""
    return (sum(1 for b in lines if b[:1] in (' ', '-', '')),
            sum(1 for b in lines if b[:1] in (' ', '+', '')))


def unparse_patch(items):
    text = []
    for kind, d in items:
        if kind == 'raw':
            text.append(d)
            continue
        oc, nc = hunk_counts(d['lines'])
        text.append('@@ -%d,%d +%d,%d @@%s' % (d['os'], oc, d['ns'], nc, d['tail']))
        text.extend(d['lines'])
    return '\n'.join(text)


def edit_patch_text(sdir, series, edits, used):
    """Edit a base-less series in its patch text: [(patch, new text)]."""
    patches = series_patches(sdir)
    parsed = [parse_patch(open(os.path.join(sdir, p)).read()) for p in patches]
    moved = [[] for _ in patches]  # per patch: (file, new-side line, delta, length)
    for e in edits:
        k = target_patch(e, series, patches, used)
        if k is None:
            continue
        old = ['+' + x for x in e['old'].split('\n')[:-1]]
        new = ['+' + x for x in e['new'].split('\n')[:-1]]
        found = []
        for kind, d in parsed[k]:
            if kind != 'hunk':
                continue
            for j in range(len(d['lines']) - len(old) + 1):
                if d['lines'][j:j + len(old)] == old:
                    found.append((d, j))
        if len(found) != 1:
            die('%s: %s: no imported base, and the old text is %s lines that %s adds '
                '(without a base only added lines can be edited): make import SRC=...'
                % (e['where'], series, 'not' if not found else 'more than once',
                   patches[k]))
        d, j = found[0]
        at = d['ns'] + hunk_counts(d['lines'][:j])[1]
        # in the patch's original numbering: take out earlier edits above it
        at -= sum(dl for (f, a, dl, ln) in moved[k] if f == d['file'] and a < at)
        d['lines'][j:j + len(old)] = new
        moved[k].append((d['file'], at, len(new) - len(old), len(old)))
    # Renumber.  Positions are in each patch's original numbering: an edit
    # made in patch k sits at its original new-side line; before patch k+1
    # uses it, it is carried through nothing (k+1's old side is k's new
    # side), and through each later patch by that patch's original hunks.
    pending = []  # (file, line, delta, old length) in the current numbering
    for k, items in enumerate(parsed):
        hunks = [d for kind, d in items if kind == 'hunk']
        orig = [(d['file'], d['os'], d['oc0'], d['nc0']) for d in hunks]
        run = {}
        for d in hunks:
            o0 = d['os']
            for (f, at, dl, ln) in pending:
                if f == d['file'] and at < o0 + d['oc0'] and o0 < at + ln:
                    die('%s: an edit of %s overlaps a hunk of %s; import the base'
                        % (series, d['file'], patches[k]))
            d['os'] = o0 + sum(dl for (f, at, dl, ln) in pending if f == d['file'] and at < o0)
            d['ns'] = d['os'] + run.get(d['file'], 0)
            oc, nc = hunk_counts(d['lines'])
            run[d['file']] = run.get(d['file'], 0) + nc - oc
        carried = []
        for (f, at, dl, ln) in pending:
            carried.append((f, at + sum(n - o for (hf, ho, o, n) in orig
                                        if hf == f and ho + o <= at), dl, ln))
        pending = carried + moved[k]
    out = []
    for p, items in zip(patches, parsed):
        text = unparse_patch(items)
        if text != open(os.path.join(sdir, p)).read():
            out.append((p, text))
    return sdir, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--driver', default='veth')
    ap.add_argument('--only', default='', help='comma-separated series (default: all)')
    ap.add_argument('--new', default='', help='put the edits in a new patch of this name')
    ap.add_argument('--header', default='', help="the new patch's DEP-3 header (with --new)")
    ap.add_argument('spec', nargs='+')
    args = ap.parse_args()
    edits = [e for s in args.spec for e in parse_spec(s)]
    if bool(args.new) != bool(args.header):
        die('--new and --header go together')
    if args.new:
        if len({e['glob'] for e in edits}) != 1:
            die('--new: every edit must name the same patch')
        head_new = open(args.header).read()
        if not head_new.endswith('\n---\n'):
            die('%s: the header must end with a "---" line' % args.header)
    bases = os.environ.get('BQLKIT_BASES') or os.path.join(
        os.environ.get('BQLKIT_BUILD') or os.path.join(TOP, 'build'), 'bases')
    ddir = os.path.join(TOP, 'patches', args.driver)
    all_series = sorted(d for d in os.listdir(ddir)
                        if os.path.isfile(os.path.join(ddir, d, 'series')))
    wanted = args.only.split(',') if args.only else all_series
    generated = [x for x in wanted
                 if os.path.isfile(os.path.join(TOP, 'changes', args.driver, 'bases', x, 'series'))]
    if generated:
        die('%s/%s: generated from changes/%s/ (make series): edit the change there '
            '(one copy for every base), or name only hand-kept series with --only'
            % (args.driver, ','.join(generated), args.driver))
    used = set()
    results = {}
    textonly = {}
    for series in wanted:
        sdir = os.path.join(ddir, series)
        base = os.path.join(bases, series)
        if not os.path.isfile(os.path.join(base, 'MANIFEST')):
            if args.new:
                die('%s: no imported base: a new patch is made from the base '
                    '(make import SRC=..., or leave the series out with --only)' % series)
            textonly[series] = edit_patch_text(sdir, series, edits, used)
            continue
        patches = series_patches(sdir)
        if args.new and any(p[5:] == args.new[5:] for p in patches):
            die('%s: %s is already in the series' % (series, args.new[5:]))
        texts = [open(os.path.join(sdir, p)).read() for p in patches]
        files = []
        for t in texts:
            files += [f for f in patch_files(t) if f not in files]
        snaps = snapshots(base, sdir, patches, files)
        before = None
        for e in edits:
            t = target_patch(e, series, patches, used)
            if t is None:
                continue
            if args.new and before is None:
                before = (t, dict(snaps[t + 1]))
            for k in range(t + 1, len(snaps)):
                found = [f for f in files if snaps[k][f].count(e['old']) == 1]
                many = [f for f in files if snaps[k][f].count(e['old']) > 1]
                if k > t + 1 and not found and not many:
                    # A later patch rewrites this text: it now rewrites
                    # the edited text instead.
                    print('edit-series: %s: %s: %s rewrites the edited text; not carried further'
                          % (e['where'], series, patches[k - 1]))
                    break
                if len(found) != 1 or many:
                    die('%s: %s: the old text is %s after %s' % (
                        e['where'], series, 'ambiguous' if many or found else 'not found',
                        patches[k - 1]))
                f = found[0]
                snaps[k][f] = snaps[k][f].replace(e['old'], e['new'])
        if before is not None:
            # The edited snapshot becomes the new patch's; the named patch
            # keeps its own.
            t, snap = before
            name = args.new
            if name.startswith('NNNN-'):
                name = '%04d-%s' % (int(patches[t][:4]) + 1, name[5:])
            if name in patches or any(p[:5] == name[:5] for p in patches):
                die('%s: %s: the series already has a patch numbered %s' % (series, name, name[:4]))
            snaps.insert(t + 1, snap)
            patches.insert(t + 1, name)
            texts.insert(t + 1, head_new + '--- a/\n')
        new_texts = []
        for k, t in enumerate(texts):
            head = t[:t.index('\n--- a/') + 1]  # the DEP-3 header
            body = ''.join(udiff(f, snaps[k][f], snaps[k + 1][f]) for f in files
                           if f in patch_files(t) or snaps[k][f] != snaps[k + 1][f])
            new_texts.append(head + body)
        results[series] = (sdir, base, patches, texts, new_texts)
    unused = [e['where'] for e in edits if e['where'] not in used]
    if unused:
        die('edits that matched no series: ' + ', '.join(unused))
    for series, (sdir, changes) in textonly.items():
        for p, n in changes:
            open(os.path.join(sdir, p), 'w').write(n)
        print('edit-series: %s/%s: %s (no base: patch text edited, not applied; '
              'import the base and run make drift to check it)'
              % (args.driver, series, ', '.join(p for p, _ in changes) or 'unchanged'))
    for series, (sdir, base, patches, texts, new_texts) in results.items():
        if texts == new_texts:
            continue
        added = [k for k, p in enumerate(patches) if p not in series_patches(sdir)]
        for k in added:  # --new: the series file names it after its patch
            lines = open(os.path.join(sdir, 'series')).read().split('\n')
            lines.insert(lines.index(patches[k - 1]) + 1, patches[k])
            open(os.path.join(sdir, 'series'), 'w').write('\n'.join(lines))
            texts[k] = ''
        for p, t, n in zip(patches, texts, new_texts):
            if t != n:
                open(os.path.join(sdir, p), 'w').write(n)
        refresh(base, sdir, patches)
        changed = [p for p, t in zip(patches, texts)
                   if open(os.path.join(sdir, p)).read() != t]
        print('edit-series: %s/%s: %s' % (args.driver, series, ', '.join(changed) or 'unchanged'))


if __name__ == '__main__':
    main()
