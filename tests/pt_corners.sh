#!/bin/sh
# Corners of the Intel PT specification (issue 15): packet sequences written
# with libipt's encoder over tiny hand-assembled images
# (tests/unit/test_pt_corners.c, where each case's branches are worked out
# from the instructions and the packets), converted as raw PT (`--pt FILE
# --image CODE:BASE`) by every engine: each must give exactly those
# branches and gaps.  Where the libipt engine cannot, the case says why and
# what it gives instead (NAME.libipt: the reason in # lines).  Errata cases
# run with the CPU they name (--cpu), and their branches were checked by
# test_pt_corners against libipt's instruction flow decoder with the
# erratum's workaround on.  The walker's engines also run with windows of
# 64 bytes (PTCONV_WINDOW_BYTES), so that every later PSB starts a window
# that must continue the walk: the same output, the gaps' offsets and the
# lost trace bytes included.
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
while read -r name base cpu; do
	# the CPU, where the case needs libipt's errata workarounds
	cpuopt=
	[ "$cpu" = - ] || cpuopt="--cpu $cpu"
	for e in walker steps query libipt walker:64 steps:64 query:64; do
		win=${e#*:}
		[ "$win" = "$e" ] && win=
		e=${e%:*}
		o="$T/$e$win"
		tag="$e${win:+,windows-of-$win-bytes}"
		rm -rf "$o"
		# shellcheck disable=SC2086
		PTCONV_WINDOW_BYTES=$win \
		"$PTCONV" --pt "$T/c/$name.pt" --image "$T/c/$name.code:$base" -f text -o "$o" -q --strict \
			--engine=$e $cpuopt
		rc=$?
		[ $rc -le 1 ] || fail "$name: --engine=$tag exited $rc"
		norm "$o/raw.txt" > "$T/got"
		want="$T/c/$name.expect"
		if [ $e = libipt ] && [ -f "$T/c/$name.libipt" ]; then
			grep -v '^#' "$T/c/$name.libipt" > "$T/want.libipt"
			want="$T/want.libipt"
		fi
		if ! cmp -s "$want" "$T/got"; then
			echo "--- $name, --engine=$tag: want" >&2
			cat "$want" >&2
			echo "--- got" >&2
			cat "$o/raw.txt" >&2
			bad="$bad $name/$tag"
			continue
		fi
		if [ -n "$win" ]; then
			cmp -s "$T/$e/raw.txt" "$o/raw.txt" || bad="$bad $name/$tag(not the output of one window)"
			[ "$(grep -m1 '"lost_trace_bytes"' "$T/$e/summary.json")" = \
			  "$(grep -m1 '"lost_trace_bytes"' "$o/summary.json")" ] ||
				bad="$bad $name/$tag(other lost_trace_bytes than in one window)"
		fi
		# with --strict: exit status 1 exactly when there are gaps
		if grep -q '^gap' "$want"; then [ $rc -eq 1 ]; else [ $rc -eq 0 ]; fi ||
			bad="$bad $name/$tag(exit $rc)"
		# summary.json counts the decode gaps
		ndec=$(grep -c '^gap decode' "$want")
		grep -q "\"decode\": $ndec\b" "$o/summary.json" || bad="$bad $name/$tag(summary: not $ndec decode gaps)"
		# a gap for what libipt does not know names it (NAME.detail)
		if [ -f "$T/c/$name.detail" ] && grep -q '^gap' "$want"; then
			grep ' gap ' "$o/raw.txt" | grep -qF -e "$(cat "$T/c/$name.detail")" ||
				bad="$bad $name/$tag(the gap does not name $(cat "$T/c/$name.detail"))"
		fi
	done
	n=$((n + 1))
	case "$bad" in *" $name/"*) continue ;; esac
	lim=
	[ -f "$T/c/$name.libipt" ] && lim=" (libipt: $(sed -n 's/^# //p' "$T/c/$name.libipt" | tr '\n' ' '))"
	[ -f "$T/c/$name.detail" ] && ! [ -f "$T/c/$name.libipt" ] && lim=" (a gap naming the $(cat "$T/c/$name.detail"))"
	echo "ok - $name: $(grep -vc '^gap' "$T/c/$name.expect") branches, $(grep -c '^gap' "$T/c/$name.expect") gaps, every engine$lim"
done < "$T/c/cases"
[ $n -gt 0 ] || fail "no cases"
[ -z "$bad" ] || fail "wrong:$bad"
exit 0
