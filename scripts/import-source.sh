#!/bin/bash
# Import the files the kit's drivers need from a kernel source into a base.
#
#   import-source.sh SOURCE [PACKAGE_VERSION]
#
# SOURCE is a linux-source-X.Y tarball (.tar.xz/.tar.gz/.tar.bz2/.tar), an
# unpacked kernel tree, or a git tree (GIT_REV selects the commit, default
# HEAD).  A line of an import.list is a path, a glob (* ? [..], never
# matching '/') or alternatives "A|B" (files may move between releases); each
# line of a driver's list must match at least one file.  The files land in
# build/bases/X.Y/ (BQLKIT_BASES overrides build/bases) with a MANIFEST:
# upstream version, distro package version when known, the source and its
# sha256, its provenance (distro, user or test), and the sha256 of every
# file imported.
# The base is replaced as a whole or not at all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: import-source.sh SOURCE [PACKAGE_VERSION]"
[ -z "${BQLKIT_FOR_KERNEL:-}" ] || valid_kver "$BQLKIT_FOR_KERNEL"
src=$1
pkgver=${2:-}
[ -e "$src" ] || die "kernel source '$src' does not exist (give a linux-source-X.Y tarball, a kernel tree or a git tree; Debian: apt-get install linux-source-X.Y)"
src=$(readlink -f "$src")

# The list of files: common ones plus each driver's.
lists=("$BQLKIT_TOP/scripts/import.list")
for d in $BQLKIT_DRIVERS; do
	lists+=("$BQLKIT_TOP/drivers/$d/import.list")
done
mapfile -t paths < <(grep -hv '^[[:space:]]*\(#\|$\)' "${lists[@]}" | tr '|' '\n' | sort -u)

# expand_in DIR PATTERN: the files under DIR matching PATTERN (a path or glob).
expand_in() {
	(cd "$1" && compgen -G "$2" | while read -r f; do [ -f "$f" ] && echo "$f"; done) || true
}

stage=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-import.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/tree"

start=$(date +%s.%N)
if [ -f "$src" ]; then
	kind=tarball
	case $src in
	*.tar.xz | *.txz) dec=(xz -T0 -dc) ;;
	*.tar.gz | *.tgz) dec=(gzip -dc) ;;
	*.tar.bz2) dec=(bzip2 -dc) ;;
	*.tar.zst) dec=(zstd -dc) ;;
	*.tar) dec=(cat) ;;
	*) die "'$src' is not a tarball this kit reads (.tar.xz, .tar.gz, .tar.bz2, .tar.zst, .tar)" ;;
	esac
	step "importing from $src (decompressing, this takes ~10 s)"
	# Tarballs have one top directory (linux-source-X.Y/); match below it.
	pats=()
	for p in "${paths[@]}"; do
		pats+=("*/$p")
	done
	"${dec[@]}" "$src" 2>"$stage/dec.err" | tar -x -C "$stage/tree" --strip-components=1 \
		--wildcards --no-wildcards-match-slash "${pats[@]}" 2>"$stage/tar.err" || true
	# A truncated or corrupted archive: the decompressor or tar says so.
	# (Missing members are reported per file below.)
	if [ -s "$stage/dec.err" ] || grep -qv 'Not found in archive\|Exiting with failure status' "$stage/tar.err"; then
		die "cannot read '$src', it is truncated or corrupted: $(cat "$stage/dec.err" "$stage/tar.err" | grep -v 'Not found in archive' | head -1) (re-download it; Debian: apt-get install --reinstall linux-source-X.Y)"
	fi
elif [ -e "$src/.git" ] || [ "$(git -C "$src" rev-parse --is-bare-repository 2>/dev/null)" = true ]; then
	kind=git
	rev=${GIT_REV:-HEAD}
	step "importing from git tree $src at $rev"
	present=()
	for p in "${paths[@]}"; do
		case $p in
		*[*?[]*)
			# A glob: list its directory at $rev; '*' must not cross a '/'.
			while read -r f; do
				# shellcheck disable=SC2053 # $p is a glob on purpose
				[[ $f == $p && ${f//[!\/]/} == "${p//[!\/]/}" ]] && present+=("$f")
			done < <(git -C "$src" ls-tree -r --name-only "$rev" -- "$(dirname "$p")/" 2>/dev/null)
			;;
		# (In the tree at $rev, whether or not its object is here.)
		*) [ -n "$(git -C "$src" ls-tree "$rev" -- "$p" 2>/dev/null)" ] && present+=("$p") ;;
		esac
	done
	[ ${#present[@]} -gt 0 ] || die "'$src' at $rev has none of the files the kit needs: not a kernel tree?"
	# Each file from git's objects, not through git archive: that reads
	# the whole tree, and in a partial clone (git clone --filter=blob:none,
	# often with a sparse checkout) it fetches every file's object, or
	# prints "error: invalid object" of those it cannot.  An object that is
	# not here git fetches from the clone's remote, where it can.
	mapfile -t unread < <(printf '%s\n' "${present[@]/#/$rev:}" |
		git -C "$src" cat-file --batch-check 2>/dev/null | awk -v r="$rev:" '$NF == "missing" { print substr($1, length(r) + 1) }')
	[ ${#unread[@]} -eq 0 ] ||
		die "'$src' lacks the git objects of ${#unread[@]} file(s) the kit imports (${unread[0]}$([ ${#unread[@]} -eq 1 ] || echo ', ...')), and git could not fetch them (a partial clone whose remote is not reachable): give a full clone, a kernel tree or a tarball, or import with the clone's remote reachable"
	while IFS=$'\t' read -r meta p; do
		mkdir -p "$stage/tree/$(dirname "$p")"
		git -C "$src" cat-file blob "$rev:$p" >"$stage/tree/$p" || die "cannot read $p from '$src' at $rev"
		[ "${meta%% *}" != 100755 ] || chmod +x "$stage/tree/$p"
	done < <(git -C "$src" ls-tree "$rev" -- "${present[@]}")
	src="$src@$(git -C "$src" rev-parse "$rev")"
elif [ -d "$src" ]; then
	kind=tree
	step "importing from kernel tree $src"
	for p in "${paths[@]}"; do
		while read -r f; do
			mkdir -p "$stage/tree/$(dirname "$f")"
			cp -p "$src/$f" "$stage/tree/$f"
		done < <(expand_in "$src" "$p")
	done
else
	die "'$src' is neither a tarball nor a directory"
fi

sv=${BQLKIT_SRCVER:-}
if ver=$(kernel_version "$stage/tree"); then
	[ -z "$sv" ] || [ "$sv" = "$ver" ] ||
		die "SRCVER=$sv, but the Makefile of '$src' says $ver: drop SRCVER= (it is for driver files without their top Makefile)"
elif [ -n "$sv" ]; then
	[[ $sv =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "SRCVER=$sv is not a kernel version X.Y.Z (e.g. SRCVER=5.15.0)"
	ver=$sv
else
	die "'$src' has no top-level Makefile with VERSION/PATCHLEVEL/SUBLEVEL: not a kernel source (driver files alone: give SRCVER=X.Y.Z, the release they are from)"
fi
series=$(series_of "$ver")
refuse_series "$series" "importing '$src'"

# A driver none of whose files are in the source is absent from that
# release (mana before 5.13): the base goes without it.  A driver with only
# some of its files means a truncated or foreign tree.
missing=()
present_drivers=()
absent_drivers=()
for d in $BQLKIT_DRIVERS; do
	dmissing=()
	lines=0
	while read -r line; do
		lines=$((lines + 1))
		found=
		IFS='|' read -ra alts <<<"$line"
		for p in "${alts[@]}"; do
			[ -n "$(expand_in "$stage/tree" "$p")" ] && found=1
		done
		[ -n "$found" ] || dmissing+=("$d:$line")
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$BQLKIT_TOP/drivers/$d/import.list")
	if [ ${#dmissing[@]} -eq "$lines" ]; then
		absent_drivers+=("$d")
		note "$d is not in Linux $ver: the $series base goes without it"
	else
		present_drivers+=("$d")
		missing+=("${dmissing[@]}")
	fi
done
[ ${#missing[@]} -eq 0 ] || die "source $ver ('$src') lacks ${missing[*]}: a truncated or foreign tree?"
[ ${#present_drivers[@]} -gt 0 ] || die "source $ver ('$src') has none of the kit's drivers ($BQLKIT_DRIVERS): not a kernel tree?"

# The Debian package version of a tarball from a linux-source package.
if [ -z "$pkgver" ] && [ "$kind" = tarball ]; then
	pkg=$(dpkg-query -S "$src" 2>/dev/null | cut -d: -f1 | head -1) || true
	[ -n "${pkg:-}" ] && pkgver="$pkg $(dpkg-query -W -f='${Version}' "$pkg")"
fi

# Where the source comes from decides whether the base may ship in the DKMS
# source and the .deb (scripts/make-dkms-source.sh): a distro's package, a
# source the user gave; never a test's import of anything else (the suite
# sets BQLKIT_PROVENANCE=test; the kit's own fixtures are tests' whoever
# imports them).
if [ -n "$pkgver" ]; then
	provenance=distro
elif [ "${BQLKIT_PROVENANCE:-}" = test ] || [[ $src == "$BQLKIT_TOP/tests/"* ]]; then
	provenance="test"
else
	provenance=user
fi

{
	echo "# bqlkit base manifest: files imported from a kernel source (not committed)"
	echo "version=$ver"
	echo "series=$series"
	echo "package=${pkgver:-unknown}"
	echo "source=$src"
	echo "source_kind=$kind"
	echo "provenance=$provenance"
	if [ "$kind" = tarball ]; then
		echo "source_sha256=$(sha256sum "$src" | cut -d' ' -f1)"
	fi
	echo "drivers=${present_drivers[*]}"
	if [ -n "${BQLKIT_FOR_KERNEL:-}" ]; then
		# Given for this kernel, with these headers, only.
		echo "kernel=$BQLKIT_FOR_KERNEL"
		echo "kernel_version=$(kernel_version "$(kdir_for "$BQLKIT_FOR_KERNEL")")"
		echo "kernel_package=$(distro_version "$(kdir_for "$BQLKIT_FOR_KERNEL")")"
	fi
	echo "absent=${absent_drivers[*]}"
	echo "imported=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# sha256 path"
	(cd "$stage/tree" && find . -type f ! -name MANIFEST -printf '%P\n' | LC_ALL=C sort | xargs sha256sum)
} >"$stage/tree/MANIFEST"

dest=$(base_dir "$series")
mkdir -p "$(dirname "$dest")"
if [ -d "$dest" ]; then
	old=$(manifest_get "$dest" version)
	[ "$old" = "$ver" ] || note "replacing base $series ($old) with $ver"
	rm -rf "$dest.old"
	mv "$dest" "$dest.old"
fi
mv "$stage/tree" "$dest"
rm -rf "$dest.old"
end=$(date +%s.%N)
step "imported base $series: Linux $ver${pkgver:+ ($pkgver)}, $(grep -c '^[0-9a-f]\{64\} ' "$dest/MANIFEST") files in $(printf '%.1f' "$(echo "$end - $start" | bc)") s -> $dest"
