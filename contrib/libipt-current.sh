#!/bin/sh
# Build and test ptconv against a libipt other than the system's (issue 15:
# the same source must work with libipt 2.0 and with current libipt).
#
#	contrib/libipt-current.sh [LIBIPT] [MAKE-CHECK-ARGUMENTS...]
#
# LIBIPT is a libipt source tree (with CMakeLists.txt) or a git repository
# to clone (LIBIPT_REF, default its default branch, picks the commit or
# tag; default repository: Intel's upstream on GitHub).  libipt is built with
# cmake into a prefix under a temporary folder, the project's files (the
# working tree's content, tracked files only) are copied next to it and
# built against that prefix (rpath, so no LD_LIBRARY_PATH), then `make check`
# runs with the remaining arguments (e.g. TESTS='tests/pt_corners.sh').
# Prints the libipt version used and the suite's totals; exits with make
# check's status.  KEEP=1 keeps the temporary folder (it is printed);
# JOBS (default 2) is make's -j.  Not part of `make check`.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-https://github.com/intel/libipt.git}
[ $# -gt 0 ] && shift
jobs=${JOBS:-2}
for tool in cmake git autoreconf make; do
	command -v $tool >/dev/null || { echo "libipt-current: $tool is missing" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/libipt-current.XXXXXX")
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then echo "libipt-current: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
log() { echo "libipt-current: $*"; }

if [ -f "$src/CMakeLists.txt" ]; then
	lsrc=$(cd "$src" && pwd)
else
	log "cloning $src ${LIBIPT_REF:-}"
	git clone -q "$src" "$work/libipt-src"
	[ -n "${LIBIPT_REF:-}" ] && git -C "$work/libipt-src" checkout -q "$LIBIPT_REF"
	lsrc=$work/libipt-src
fi
desc=$(git -C "$lsrc" describe --tags --always 2>/dev/null || echo "$lsrc")
log "building libipt $desc"
cmake -S "$lsrc" -B "$work/libipt-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_INSTALL_PREFIX="$work/prefix" -DCMAKE_INSTALL_LIBDIR=lib >"$work/libipt.log" 2>&1 &&
	make -C "$work/libipt-build" -j"$jobs" >>"$work/libipt.log" 2>&1 &&
	make -C "$work/libipt-build" install >>"$work/libipt.log" 2>&1 ||
	{ tail -20 "$work/libipt.log" >&2; log "libipt build failed"; exit 2; }
pre=$work/prefix
grep -E '^#define LIBIPT_VERSION_(MAJOR|MINOR|PATCH)' "$pre/include/intel-pt.h" | awk '{ printf "%s%s", s, $3; s = "." } END { print "" }' |
	sed 's/^/libipt-current: header version /'

# the project's tracked files as they are in the working tree
mkdir "$work/ptconv"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -xf - -C "$work/ptconv"
else
	(cd "$top" && tar cf - --exclude=./autom4te.cache .) | (cd "$work/ptconv" && tar xf -)
fi
cd "$work/ptconv"
log "building ptconv against it"
{ autoreconf -fi && ./configure -q CPPFLAGS="-I$pre/include" \
	LDFLAGS="-L$pre/lib -Wl,-rpath,$pre/lib" && make -j"$jobs"; } >"$work/ptconv.log" 2>&1 ||
	{ tail -30 "$work/ptconv.log" >&2; log "ptconv build failed"; exit 2; }
bin=src/ptconv
[ -x src/.libs/ptconv ] && bin=src/.libs/ptconv
ldd "$bin" | grep -q "$pre/lib/libipt" ||
	{ ldd "$bin" >&2; log "ptconv is not linked with $pre/lib/libipt"; exit 2; }
log "running make check $*"
rc=0
make -j"$jobs" check "$@" >"$work/check.log" 2>&1 || rc=$?
grep -E '^(FAIL|XPASS|ERROR):' "$work/check.log" || true
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$work/check.log" | sed 's/^/libipt-current: /'
[ $rc -eq 0 ] || { KEEP=1; log "make check failed ($rc): $work/ptconv/test-suite.log"; }
exit $rc
