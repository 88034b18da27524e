#!/bin/bash
# The GitHub Actions workflow (.github/workflows/ci.yml): actionlint finds
# nothing (a broken copy it must catch proves it runs), its build matrix is
# generated from lab/matrix.conf (one job per row CI can run, nothing
# listed by hand), every path it caches is one the scripts read back
# (tests/workflow-caches.py), and the report job's merge of per-row cell
# JSON keeps matrix.conf's order and counts failures.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wf=$BQLKIT_TOP/.github/workflows/ci.yml

check workflow-actionlint "$BQLKIT_TOP/lab/lint-workflows.sh"
sed 's/fromJSON(needs\.rows\.outputs\.matrix)/fromJSON(needs.row.outputs.matrix)/' "$wf" >"$tmp/broken.yml"
out=$("$BQLKIT_TOP/lab/lint-workflows.sh" "$tmp/broken.yml" 2>&1) && rc=0 || rc=$?
check workflow-actionlint-catches-a-break test "$rc" -ne 0
has workflow-actionlint-names-it 'broken.yml:[0-9]*:[0-9]*: property "row" is not defined' "$out"

# The job matrix: exactly matrix.conf's rows, in order, all five fields, but
# the tree rows (no tree in CI: they could only end "not in CI").
want=$(awk '$1 !~ /^#/ && NF == 5 && $5 != "tree" { print $1, $2, $3, $4, $5 }' "$BQLKIT_TOP/lab/matrix.conf")
got=$(python3 "$BQLKIT_TOP/lab/matrix-rows.py" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["include"]:
    print(r["id"], r["suite"], r["arch"], r["meta"], r["env"])')
check workflow-matrix-is-matrix-conf test "$got" = "$want"
check workflow-matrix-rows-nonempty test "$(wc -l <<<"$got")" -ge 20
has workflow-uses-generated-matrix 'matrix: ${{ fromJSON(needs.rows.outputs.matrix) }}' "$(cat "$wf")"
has workflow-rows-job-runs-generator 'python3 lab/matrix-rows.py' "$(cat "$wf")"
has workflow-runs-readme-test-command 'run: make check$' "$(cat "$wf")"
# A row added to matrix.conf is a job, without touching the workflow.
{ cat "$BQLKIT_TOP/lab/matrix.conf"; echo "vendor-6.1-x  bookworm-security  amd64  linux-headers-amd64  host"; } >"$tmp/matrix.conf"
echo "tree-6.6-x  -  amd64  6.6  tree" >>"$tmp/matrix.conf"
rows=$(python3 "$BQLKIT_TOP/lab/matrix-rows.py" "$tmp/matrix.conf")
has workflow-new-row-is-a-job '"id":"vendor-6.1-x"' "$rows"
lacks workflow-tree-row-is-no-job '"id":"tree-' "$rows"
echo "bookworm-6.1 bookworm-security amd64 linux-headers-amd64 host" >>"$tmp/matrix.conf"
expect_error workflow-duplicate-row-refused 'duplicate row ids: bookworm-6.1' python3 "$BQLKIT_TOP/lab/matrix-rows.py" "$tmp/matrix.conf"

# The caches: only what the scripts read back, with what they need beside it
# (the chroot tarball's .packages), keyed by what the scripts say it is, not
# by the run (a key per run stores every run again).
check workflow-caches-read-back python3 "$BQLKIT_TOP/tests/workflow-caches.py" "$wf"
sed '/\.tar\.packages$/d' "$wf" >"$tmp/tar-alone.yml"
# shellcheck disable=SC2016 # a literal $BQLKIT_CACHE in the message
expect_error workflow-caches-catch-tarball-alone 'caches $BQLKIT_CACHE/chroots/\*-amd64.tar without .*tar.packages: lab/chroot-lib.sh, lab/matrix.sh refuses it alone' \
	python3 "$BQLKIT_TOP/tests/workflow-caches.py" "$tmp/tar-alone.yml"
sed 's|/linux-headers-\*\.deb$||' "$wf" >"$tmp/whole-dir.yml"
# shellcheck disable=SC2016 # a literal $BQLKIT_CACHE in the message
expect_error workflow-caches-catch-a-whole-directory 'caches $BQLKIT_CACHE/debs/\*-\*: more than the scripts read back there' \
	python3 "$BQLKIT_TOP/tests/workflow-caches.py" "$tmp/whole-dir.yml"
# A script that stops reading a cached path fails the check (fetch-source.sh
# downloading its .deb again every time).
mkdir -p "$tmp/top"
cp -a "$BQLKIT_TOP/scripts" "$tmp/top/"
# shellcheck disable=SC2016 # fetch-source.sh's $deb
sed -i 's/^if \[ ! -f "$deb" \]; then$/if true; then/' "$tmp/top/scripts/fetch-source.sh"
expect_error workflow-caches-catch-a-script-that-stops-reading 'linux-source-\*\.deb: scripts/fetch-source.sh no longer reads it' \
	python3 "$BQLKIT_TOP/tests/workflow-caches.py" "$wf" "$tmp/top"
has workflow-cache-keys-from-scripts 'lab/matrix.sh --cache-keys' "$(cat "$wf")"
lacks workflow-cache-keys-not-per-run 'run_id\|run_number\|run_attempt' "$(cat "$wf")"

# The report job: two rows' cell JSON, given in the wrong order.
cellj() { # ID STATUS
	printf '{"generated_seconds": 30, "drivers": ["veth"], "failed_cells": 0, "rows": [{"id": "%s", "suite": "s", "arch": "amd64", "kernel": "k-%s", "env": "host", "cells": {"veth": {"status": "%s", "detail": "-", "series": "6.1", "seconds": 1.0}}, "probe_disagreements": []}]}' "$1" "$1" "$2"
}
mkdir -p "$tmp/c1" "$tmp/c2" "$tmp/r"
cellj bookworm-6.12 FAIL >"$tmp/c1/matrix.json"
cellj bookworm-6.1 ok >"$tmp/c2/matrix.json"
python3 "$BQLKIT_TOP/lab/matrix-report.py" --merge "$tmp/r" "$tmp/c1/matrix.json" "$tmp/c2/matrix.json" >/dev/null && rc=0 || rc=$?
check workflow-report-exit-1-on-failed-cell test "$rc" -eq 1
check workflow-report-matrix-conf-order test "$(python3 -c 'import json,sys; print(" ".join(r["id"] for r in json.load(open(sys.argv[1]))["rows"]))' "$tmp/r/matrix.json")" = "bookworm-6.1 bookworm-6.12"
has workflow-report-md '^| bookworm-6.12 `k-bookworm-6.12` | amd64 | host | \*\*FAIL\*\*' "$(cat "$tmp/r/matrix.md")"
