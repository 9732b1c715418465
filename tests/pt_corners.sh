#!/bin/sh
# Corners of the Intel PT specification (issue 15): packet sequences written
# with libipt's encoder over tiny hand-assembled images
# (tests/unit/test_pt_corners.c, where each case's branches are worked out
# from the instructions and the packets), converted as raw PT (`--pt FILE
# --image CODE:BASE`) by every engine: each must give exactly those
# branches and gaps.  Where the libipt engine cannot, the case says why and
# what it gives instead (NAME.libipt: the reason in # lines).
. "${top_srcdir:-.}/tests/lib/common.sh"
scratch
GEN="$top_builddir/tests/unit/test_pt_corners"
[ -x "$GEN" ] || fail "$GEN not built (make check TESTS=)"
mkdir "$T/c"
"$GEN" "$T/c" || fail "test_pt_corners exited $?"
# `-f text` without the comments, the thread and the gaps' offsets
norm() {
	awk '/^#/ { next } $2 == "gap" { print "gap", $3; next } { $1 = ""; sub(/^ /, ""); print }' "$1"
}
n=0 bad=
while read -r name base; do
	for e in walker steps query libipt; do
		rm -rf "$T/$e"
		"$PTCONV" --pt "$T/c/$name.pt" --image "$T/c/$name.code:$base" -f text -o "$T/$e" -q --strict \
			--engine=$e
		rc=$?
		[ $rc -le 1 ] || fail "$name: --engine=$e exited $rc"
		norm "$T/$e/raw.txt" > "$T/got"
		want="$T/c/$name.expect"
		if [ $e = libipt ] && [ -f "$T/c/$name.libipt" ]; then
			grep -v '^#' "$T/c/$name.libipt" > "$T/want.libipt"
			want="$T/want.libipt"
		fi
		if ! cmp -s "$want" "$T/got"; then
			echo "--- $name, --engine=$e: want" >&2
			cat "$want" >&2
			echo "--- got" >&2
			cat "$T/$e/raw.txt" >&2
			bad="$bad $name/$e"
			continue
		fi
		# with --strict: exit status 1 exactly when there are gaps
		if grep -q '^gap' "$want"; then [ $rc -eq 1 ]; else [ $rc -eq 0 ]; fi ||
			bad="$bad $name/$e(exit $rc)"
	done
	n=$((n + 1))
	case "$bad" in *" $name/"*) continue ;; esac
	lim=
	[ -f "$T/c/$name.libipt" ] && lim=" (libipt: $(sed -n 's/^# //p' "$T/c/$name.libipt" | tr '\n' ' '))"
	echo "ok - $name: $(grep -vc '^gap' "$T/c/$name.expect") branches, $(grep -c '^gap' "$T/c/$name.expect") gaps, every engine$lim"
done < "$T/c/cases"
[ $n -gt 0 ] || fail "no cases"
[ -z "$bad" ] || fail "wrong:$bad"
exit 0
