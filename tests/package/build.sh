#!/bin/bash
# Builds the Debian packages from a copy of the tree, as a builder would
# (dpkg-buildpackage -us -uc -b; the unit tests are left to the other
# stages: DEB_BUILD_OPTIONS=nocheck), then lints them: lintian must report
# no error and no warning that the package does not override.
#
#   build.sh SRC WORK     the packages land in WORK/debs
set -uo pipefail
src=$1 work=$2
. "$src/tests/package/lib.sh"

tree=$work/src/taskbox
rm -rf "$work/src" "$work/debs"
mkdir -p "$tree" "$work/debs"
# The sources, as a checkout has them (git: tracked and new files, nothing
# ignored; else the tree without its build directories).
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z -co --exclude-standard |
		tar -cf - --no-recursion --null -T -) | tar -C "$tree" -xf -
else
	tar -C "$src" --exclude=./build --exclude=./tests/node_modules \
		-cf - . | tar -C "$tree" -xf -
fi

start=$(date +%s)
if (cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=${JOBS:-2}" \
	dpkg-buildpackage -us -uc -b) >"$work/dpkg-buildpackage.log" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b ($(($(date +%s) - start)) s)"
else
	tail -n 40 "$work/dpkg-buildpackage.log" | sed 's/^/  | /'
	die "dpkg-buildpackage -us -uc -b"
fi
mv "$work"/src/*.deb "$work"/src/*.changes "$work"/src/*.buildinfo "$work/debs/"
ls "$work/debs"

lintian --fail-on error,warning --display-info "$work"/debs/*.changes \
	>"$work/lintian.log" 2>&1
rc=$?
sed 's/^/  lintian: /' "$work/lintian.log"
check "lintian: no error, no warning left unexplained" [ "$rc" -eq 0 ]
exit $((failures > 0))
