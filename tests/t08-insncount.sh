#!/bin/bash
# lab/insncount.py on a profile it can check by hand: a function built
# here, a guest console log whose kallsyms place it (as a BENCH_PROFILE=1
# boot prints them) and a profile with counts at two of its instructions
# and one outside it.  profile sums per function; annotate puts the counts
# beside the disassembly, per packet, and names a function it cannot find.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ic=$BQLKIT_TOP/lab/insncount.py

cat >"$tmp/m.c" <<'EOF'
int probe_fn(int a, int b)
{
	if (a > b)
		return a - b;
	return a * b + 3;
}

int other_fn(int a)
{
	return a + 1;
}
EOF
gcc -O2 -c -o "$tmp/m.o" "$tmp/m.c"
# probe_fn's second instruction: its offset in the object.
off2=$(objdump -d --no-show-raw-insn "$tmp/m.o" |
	awk '/<probe_fn>:/ { on = 1; next } on && /^ *[0-9a-f]+:/ { n++; if (n == 2) { sub(":", "", $1); print $1; exit } }')
base=ffffffffc0001000
other=ffffffffc0001100
addr2=$(printf '%x' $((0x$base + 0x$off2)))
{
	echo "BQLKIT mark label=cost.begin seq=1 cmd=begin"
	echo "BQLKIT mark label=cost.end seq=2 cmd=end"
	echo "BQLKIT kallsyms begin"
	printf '%s t probe_fn\t[m]\n%s t other_fn\t[m]\n' "$base" "$other" | gzip | base64
	echo "BQLKIT kallsyms end"
} >"$tmp/console.log"
{
	echo "# profile seq=2 begin=1 vcpus=2"
	echo "$base 4000 1000 3000"
	echo "$addr2 600 600 0"
	echo "$other 200 0 200"
} >"$tmp/prof"

out=$(python3 "$ic" profile "$tmp/prof" 2 "$tmp/console.log" 2>&1)
has insncount-profile-per-function '^ *4600 .* 1600 3000 probe_fn' "$out"
has insncount-profile-other-function '^ *200 .* 0 200 other_fn' "$out"

out=$(python3 "$ic" annotate "$tmp/prof" 2 "$tmp/console.log" "$tmp/m.o" probe_fn --per 100 2>&1)
has insncount-annotate-first-block '^ *40.00 *0 ' "$out"
has insncount-annotate-second-block "^ *6.00 *${off2#0} " "$out"
has insncount-annotate-total '^ *46.00 total' "$out"
lacks insncount-annotate-only-its-own '^ *2.00 ' "$out"

bad insncount-annotate-unknown-function "no text symbols named probe in the guest's kallsyms" \
	python3 "$ic" annotate "$tmp/prof" 2 "$tmp/console.log" "$tmp/m.o" probe
