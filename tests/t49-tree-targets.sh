#!/bin/bash
# The tree targets from an empty cache, on a real kernel tree: Debian's
# linux-source-6.1 (the one tree CI has; 5.15/6.6 trees are not in CI).
# With BQLKIT_CACHE and BQLKIT_BUILD pointing at EMPTY directories, as on a
# fresh machine:
#   make vm-kernel TREE OUT     a bootable kernel from the clean tree (O=OUT)
#   make import SRC=TREE        the base, from the tree
#   make bench                  one short stock/kit boot pair on the kernel
#                               make vm-kernel built (its O= dir as KDIR);
#                               the kit's QEMU (lab/build-qemu.sh, keyed
#                               by content) from the suite's cache: t82
#                               builds the same one, ~8 min from nothing
#   make prepare-tree TREE      defconfig + the kit's drivers, modules_prepare
#                               (in a copy of the tree: O= builds need it clean)
#   make build KDIR=TREE        veth and mana against it (with the ABI check)
# t47 does the same for a matrix row; t41/t64 use 5.15/6.6 trees where a
# machine has them.
# The kit's cache and build directory start empty; the kernel tree and the
# O= directory of make vm-kernel are the user's, and are kept in the
# suite's cache (t49-tree/, keyed by the linux-source tarball) like a
# user's kernel build directory: the first run compiles the kernel (~15 min
# on 2 cores), later runs rebuild what changed (Kbuild; ~1 min).  Each run
# still configures, links, installs and boots it.  prepare-tree (which
# writes into the tree) gets a copy of the tree, so the kept one stays clean.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip tree-targets "BQLKIT_QUICK=1 (no kernel build, no VM)"
	exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
	skip tree-targets "make vm-kernel builds x86_64 kernels; this host is $(uname -m)"
	exit 0
fi
src=/usr/src/linux-source-6.1.tar.xz
if [ ! -f "$src" ]; then
	fail tree-targets "no $src (tests/setup.sh installs linux-source-6.1)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/bqlkit-t49.XXXXXX")
keep=$BQLKIT_CACHE/t49-tree
logs=$BQLKIT_BUILD/test-logs/t49
rm -rf "$logs"
mkdir -p "$logs"
# The build logs the errors name, and bench's results, live in $tmp: keep them.
cleanup() {
	mkdir -p "$logs/vm" && cp "$keep"/vm/*.log "$logs/vm/" 2>/dev/null || true
	(cd "$tmp" && find build build-bench results -maxdepth 3 \( -name '*.log' -o -name '*.json' -o -name '*.md' \) -print0 2>/dev/null |
		xargs -0 -r cp --parents -t "$logs") || true
	rm -rf "$tmp"
}
trap cleanup EXIT
suite_qemu=$BQLKIT_CACHE/qemu
export BQLKIT_CACHE=$tmp/cache BQLKIT_BUILD=$tmp/build
mkdir -p "$BQLKIT_CACHE" "$BQLKIT_BUILD"
check tree-targets-cache-is-empty test -z "$(find "$BQLKIT_CACHE" "$BQLKIT_BUILD" -mindepth 1 -print -quit)"
# The one thing shared with the suite's cache (after the check above).
mkdir -p "$suite_qemu"
ln -s "$suite_qemu" "$BQLKIT_CACHE/qemu"
echo "t49: logs in $logs (the build logs under $tmp are copied there at the end)" >&2
mk() { make -s -C "$BQLKIT_TOP" "$@"; }
# run NAME LOG CMD...: PASS NAME when CMD succeeds (its output in LOG), else
# FAIL with its last error line; returns CMD's status.
run() {
	local name=$1 log=$2 rc=0
	shift 2
	"$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(grep -m1 '^bqlkit: error:' "$log" || tail -1 "$log") (log: $log)"
	fi
	return "$rc"
}

# The kept tree and O= directory: made again when the tarball changed.
key=$(stat -c '%s %Y' "$src")
if [ "$(cat "$keep/key" 2>/dev/null)" != "$key" ]; then
	rm -rf "$keep"
	mkdir -p "$keep/src" "$keep/vm"
	tar -C "$keep/src" -xf "$src"
	echo "$key" >"$keep/key"
fi
tree=$(find "$keep/src" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*' -print -quit)
kv=$(kernel_version "$tree")

# --- make vm-kernel: the tree is clean (O= build) ---------------------------
# At the builder's default niceness (19, for a user's machine) this build
# waits for every build of the host lane beside it (tests/run.sh): 2287 s
# in a fresh run, and it heads the VM lane, the suite's longest.
start=$SECONDS
if VM_NICE=0 run tree-targets-vm-kernel "$logs/vm-kernel.log" mk vm-kernel TREE="$tree" OUT="$keep/vm"; then
	echo "t49: make vm-kernel (Linux $kv) in $((SECONDS - start)) s" >&2
	rel=$(cat "$keep/vm/include/config/kernel.release")
	kimg=$BQLKIT_CACHE/kernels/$rel
	check tree-targets-vm-kernel-release test "$rel" = "$kv-vm"
	check tree-targets-vm-kernel-image test -s "$kimg/boot/vmlinuz-$rel"
	check tree-targets-vm-kernel-veth-module test -n "$(find "$kimg/lib/modules/$rel" -name 'veth.ko*' -print -quit)"
	check tree-targets-vm-kernel-marked test "$(cat "$kimg/.bqlkit-tree-kernel")" = "$keep/vm"
fi

# --- make import: the base, from the tree ----------------------------------
if run tree-targets-import "$logs/import.log" mk import SRC="$tree"; then
	check tree-targets-import-manifest test -f "$BQLKIT_BUILD/bases/6.1/MANIFEST"
fi

# --- make bench on the kernel make vm-kernel built --------------------------
if [ -n "${rel:-}" ] && [ -f "$BQLKIT_BUILD/bases/6.1/MANIFEST" ]; then
	start=$SECONDS
	res=$tmp/results
	# Bases kept apart from a build directory that does not exist yet
	# (BQLKIT_BASES): bench makes the directory for its logs.  mttcg: the
	# quicker of the two modes for one short boot pair; the plugin counts
	# instructions either way.
	if run tree-targets-bench "$logs/bench.log" mk bench BENCH_KERNELS="$rel" BENCH_OUT="$res" \
		BQLKIT_BUILD="$tmp/build-bench" BQLKIT_BASES="$BQLKIT_BUILD/bases" \
		BENCH_MODE=mttcg BENCH_RUNS=1 BENCH_COST_COUNT=5000 BENCH_COST_TX_USECS=def BENCH_SPLIT=0 \
		BENCH_SECS=4 BENCH_TX_USECS=def BENCH_PAYLOADS=64 BENCH_SWEEP_PAYLOADS=none; then
		echo "t49: make bench (1 boot pair) in $((SECONDS - start)) s" >&2
		check tree-targets-bench-report test -s "$res/bench.md"
		# Both boots ran to the end, and every flood has its ratio.
		# The samples go beside the logs, apart from the summary results/ keeps.
		check tree-targets-bench-raw-apart python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
sys.exit("raw" in d or not (r["stock"] and r["kit"]))' "$res/bench-$rel.json" "$res/bench-$rel.raw.json"
		check tree-targets-bench-json python3 - "$res/bench-$rel.json" 1 <<'EOF'
import json, sys
path, runs = sys.argv[1], int(sys.argv[2])
d = json.load(open(path))
if d["runs_complete"] != {"stock": runs, "kit": runs}:
    sys.exit(f"{path}: runs_complete {d['runs_complete']}, expected {runs} of each")
for kind, key in (("slowed", "p50_ratio"), ("cost", "cost_ratio"), ("cost", "pps_ratio")):
    vals = [sc.get(key) for sc in d["scenarios"].values() if sc.get("kind") == kind]
    if not vals or not all(isinstance(v, (int, float)) and v > 0 for v in vals):
        sys.exit(f"{path}: {kind} {key} {vals}")
# The headline, top level: the ratios at the kit's defaults, and beside
# them the noise floor (none here: one stock flood of each kind; for
# loaded/idle the idle p50 of the two boots).
for key in ("cost_ratio", "pps_ratio", "p50_ratio", "p99_ratio", "kit_p50_vs_idle"):
    if not (isinstance(d.get(key), (int, float)) and d[key] > 0):
        sys.exit(f"{path}: top-level {key} {d.get(key)}")
    if key not in d.get("noise_floor", {}):
        sys.exit(f"{path}: noise_floor has no {key}: {d.get('noise_floor')}")
# The latency target against the slowed receiver's service time (a
# number: loaded minus idle may be anything in one boot).
if not isinstance(d.get("kit_p50_service_times"), (int, float)):
    sys.exit(f"{path}: top-level kit_p50_service_times {d.get('kit_p50_service_times')}")
EOF
	fi
else
	skip tree-targets-bench "no kernel from make vm-kernel or no base from make import (failed above)"
fi
# The QEMU this run reached through the symlink stays usable when $tmp is
# gone: no link in its build directories dangles or points into $tmp (a
# configure run through the symlink once left links into a removed t49
# directory, and every later QEMU build of that cache failed).
check tree-targets-qemu-cache-links test -z "$(find "$suite_qemu"/src-*/build-* -maxdepth 1 -type l \
	\( -xtype l -o -lname "$tmp/*" \) -print -quit 2>/dev/null)"

# --- make prepare-tree, build KDIR=: in a copy of the tree ------------------
cp -a "$tree" "$tmp/"
tree=$tmp/$(basename "$tree")
start=$SECONDS
if run tree-targets-prepare-tree "$logs/prepare-tree.log" mk prepare-tree TREE="$tree"; then
	echo "t49: make prepare-tree (Linux $kv) in $((SECONDS - start)) s" >&2
	check tree-targets-prepared test -f "$tree/.bqlkit-prepared"
	# The in-tree exports the kit keeps (mana's, for mana_ib) stand in for
	# the Module.symvers a prepared tree lacks.
	check tree-targets-abi-stand-in grep -q 'mana_gd_send_request' "$tree/Module.symvers"
	if [ -f "$BQLKIT_BUILD/bases/6.1/MANIFEST" ] &&
		run tree-targets-build "$logs/build.log" mk build KDIR="$tree"; then
		kr=$(cat "$tree/include/config/kernel.release")
		for drv in veth mana; do
			ko=$BQLKIT_BUILD/$kv/$drv.ko
			if [ ! -f "$ko" ]; then
				fail "tree-targets-build-$drv" "no $ko (log: $logs/build.log)"
				continue
			fi
			check "tree-targets-build-$drv-vermagic" bash -c "modinfo -F vermagic '$ko' | grep -q '^$kr '"
			check "tree-targets-build-$drv-series" bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=6.1'"
			check "tree-targets-build-$drv-bql" bash -c "nm -u '$ko' | grep -qw dql_completed"
		done
		has tree-targets-build-mana-abi-kept 'mana: ABI kept for .*exported symbols match' "$(cat "$logs/build.log")"
	fi
fi
