#!/bin/bash
# The front door: README is short, has the two commands near its top, a
# Layout naming every top-level folder, a support table that is what
# lab/support-table.py generates, and links that lead somewhere;
# make help follows the pipeline in 40 lines and, with make help-bench,
# names every target the Makefile declares.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
readme=$BQLKIT_TOP/README.md
# none NAME WHAT LIST: PASS when LIST is empty, else FAIL naming WHAT and LIST.
none() {
	if [ -z "$3" ]; then pass "$1"; else fail "$1" "$2: $3"; fi
}

# README: at most 200 lines, the two commands (as code lines) in the first 30.
check readme-at-most-200-lines test "$(wc -l <"$readme")" -le 200
top30=$(head -n 30 "$readme")
has readme-install-in-first-30-lines '^    make install ' "$top30"
has readme-check-in-first-30-lines '^    make check ' "$top30"

# make help: at most 40 lines; every .PHONY target is named as "make TARGET"
# by make help or make help-bench, and neither names a target that is not.
help=$(make -s -C "$BQLKIT_TOP" help)
help_bench=$(make -s -C "$BQLKIT_TOP" help-bench)
check help-at-most-40-lines test "$(wc -l <<<"$help")" -le 40
phony=$(awk '/^\.PHONY:/ { on = 1; sub(/^\.PHONY:/, "") }
	on { c = sub(/\\$/, ""); print; if (!c) on = 0 }' "$BQLKIT_TOP/Makefile" | tr -s ' \t' '\n' | grep . | sort -u)
check help-phony-list-read test "$(wc -l <<<"$phony")" -ge 20
named=$(printf '%s\n%s\n' "$help" "$help_bench" | grep -o 'make [a-z][a-z-]*' | cut -d' ' -f2 | sort -u)
missing=$(comm -23 <(echo "$phony") <(echo "$named") | paste -sd' ')
none help-names-every-phony-target "in neither make help nor make help-bench" "$missing"
unknown=$(comm -13 <(echo "$phony") <(echo "$named") | paste -sd' ')
none help-names-only-phony-targets "named but not in .PHONY" "$unknown"
# make help-bench: every knob make bench passes on.
knobs=$(sed -n '/^BENCH_KNOBS :=/,/[^\\]$/p' "$BQLKIT_TOP/Makefile" | sed 's/^BENCH_KNOBS :=//; s/\\$//' | tr -s ' \t' '\n' | grep .)
missing=$(for k in $knobs BENCH_REPORT_ONLY; do grep -q "$k=" <<<"$help_bench" || echo "$k"; done | paste -sd' ')
none help-bench-names-every-knob "not in make help-bench" "$missing"

# Layout: every top-level folder git tracks, and the generated build/.
layout=$(awk '/^## / { on = ($0 == "## Layout") } on' "$readme")
if dirs=$(git -C "$BQLKIT_TOP" ls-files 2>/dev/null | sed -n 's,/.*,,p' | sort -u) && [ -n "$dirs" ]; then
	missing=$(for d in $dirs build; do grep -qF "    $d/ " <<<"$layout" || echo "$d/"; done | paste -sd' ')
	none readme-layout-names-every-folder "not in README's Layout" "$missing"
else
	skip readme-layout-names-every-folder "not a git checkout: no list of tracked folders"
fi

# The support table is the generator's, and the check catches one that is not.
check readme-support-table-current python3 "$BQLKIT_TOP/lab/support-table.py" --check "$readme"
sed '/^| veth | 5.10 |/s/| [^|]* |$/| edited by hand |/' "$readme" >"$tmp/README.md"
check readme-support-table-edit-differs test "$(grep -c 'edited by hand' "$tmp/README.md")" -eq 1
out=$(python3 "$BQLKIT_TOP/lab/support-table.py" --check "$tmp/README.md" 2>&1) && rc=0 || rc=$?
check readme-support-table-check-catches-an-edit test "$rc" -eq 1
has readme-support-table-check-shows-diff '^-| veth | 5.10 | .* edited by hand |$' "$out"

# Relative links in README and the pages it leads to: the file exists, and
# an #anchor is one of its headings (GitHub's slugs).
out=$(python3 - "$BQLKIT_TOP" README.md docs/*.md results/README.md <<'EOF' 2>&1
import os, re, sys
top = sys.argv[1]
def slugs(path):
    out, seen, fence = set(), {}, False
    for line in open(path):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#+\s+(.*?)\s*$", line)
        if m:
            s = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out
bad = n = 0
for rel in sys.argv[2:]:
    src = os.path.join(top, rel)
    fence = False
    for no, line in enumerate(open(src), 1):
        if line.startswith("```"):
            fence = not fence
        if fence or line.startswith("    "):
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):
            if re.match(r"[a-z]+:", target):
                continue
            n += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(src), path)) if path else src
            if not os.path.exists(dest):
                print(f"{rel}:{no}: {target}: no such file"); bad += 1
            elif anchor and (not dest.endswith(".md") or anchor not in slugs(dest)):
                print(f"{rel}:{no}: {target}: no heading #{anchor}"); bad += 1
print(f"{n} links, {bad} broken")
sys.exit(1 if bad or not n else 0)
EOF
) && rc=0 || rc=$?
if [ "$rc" -eq 0 ]; then
	pass readme-links-lead-somewhere
else
	fail readme-links-lead-somewhere "$(paste -sd';' <<<"$out")"
fi

# Every bench summary in results/ (veth's and mana's) keeps the four ratios
# and a noise floor for each at top level (null where that run measured no
# such thing), so one reader serves every kernel and driver.
missing=$(cd "$BQLKIT_TOP" && python3 - <<'EOF2'
import glob, json
want = ("cost_ratio", "p50_ratio", "p99_ratio", "pps_ratio")
for f in sorted(glob.glob("results/**/bench*.json", recursive=True)):
    if f.endswith(".raw.json"):
        continue  # a bench's parsed samples, not a summary (not committed)
    d = json.load(open(f))
    nf = d.get("noise_floor") if isinstance(d.get("noise_floor"), dict) else {}
    gone = [k for k in want if k not in d] + [f"noise_floor.{k}" for k in want if k not in nf]
    if gone:
        print(f"{f}: {' '.join(gone)}")
EOF2
)
none bench-json-top-level-keys "bench summaries without the top-level keys" "$(paste -sd';' <<<"$missing")"
