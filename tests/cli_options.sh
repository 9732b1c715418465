#!/bin/sh
# Options are parsed by type (issue 19): a value that is not what the
# option takes is a usage error (exit status 2) that names the option and
# the value, before the input is read; a valid one is taken.
. "${top_srcdir:-.}/tests/lib/common.sh"
scratch
: > "$T/in.data"	# (never read: every case fails on its options first)
nbad=0
bad() {
	nbad=$((nbad + 1))
	"$PTCONV" "$T/in.data" -o "$T/o" -q "$@" 2>"$T/err"
	st=$?
	[ $st = 2 ] || fail "$*: exit status $st, want 2 (usage): $(cat "$T/err")"
	grep -q -- "$1" "$T/err" || fail "$*: the option not named: $(cat "$T/err")"
	grep -q -- "'$2'" "$T/err" || fail "$*: the value not named: $(cat "$T/err")"
	[ -e "$T/o" ] && fail "$*: an output directory was made"
	return 0
}
bad -j abc; bad -j -3; bad -j 99999999999; bad -j 0; bad -j 2x
bad --pid abc; bad --pid -1; bad --pid 12abc; bad --pid 99999999999
bad --tid abc; bad --tid -1
bad --time 5,1; bad --time abc; bad --time -5,10; bad --time 5,x
bad --zstd-level 99; bad --zstd-level abc
bad --max-open-outputs 0; bad --bbv -5; bad --engine fast
WALK="$top_builddir/tests/ptgen/ptgen-walk"
n=0
if [ -x "$WALK" ]; then
	"$WALK" --branches 2000 --seed 1 -o "$T/w.data" "$(walk_binary)" >/dev/null 2>&1 || fail "ptgen-walk"
	for f in "champsim:99:not an option of champsim" "bt9:xz:not an option of bt9" "nosuch:unknown format"; do
		fmt=$(echo "$f" | sed 's/:[^:]*$//'); why=${f##*:}
		"$PTCONV" "$T/w.data" -o "$T/o" -q -f "$fmt" 2>"$T/err"
		st=$?
		[ $st = 2 ] || fail "-f $fmt: exit status $st, want 2"
		grep -q "$fmt" "$T/err" && grep -q "$why" "$T/err" || fail "-f $fmt: $(cat "$T/err")"
		n=$((n + 1))
	done
fi
echo "ok - $nbad malformed option values refused with exit status 2, the option and value named; $n bad formats"
# valid values pass the parsing (the empty input then fails as input: 3)
for a in "-j 3" "--pid 0" "--tid 4194304" "--time 5,5" "--time ,7" "--time 7," "--zstd-level -1"; do
	"$PTCONV" "$T/in.data" -o "$T/o" -q $a 2>"$T/err"
	st=$?
	[ $st = 3 ] || fail "$a: exit status $st, want 3 (the empty input): $(cat "$T/err")"
done
echo "ok - valid values are taken"
