#!/bin/sh
# Converting the real Intel PT captures, whose binaries are absent: the
# conversion finishes, reports each missing image once with its build-id,
# counts what it could not walk, writes summary.json, never crashes.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_shared
scratch
for f in "$PTC_SHARED"/data/intel_pt/perf.data.intel_pt-4.14 \
	 "$PTC_SHARED"/data/intel_pt/perf.data.piped.intel_pt-4.14; do
	for eng in walker libipt; do
		rm -rf "$T/out"
		"$PTCONV" "$f" -o "$T/out" -f text,cbpexp --engine=$eng --buildid-dir "$T/none" 2>"$T/err"
		st=$?
		[ $st -eq 0 ] || { cat "$T/err"; fail "ptconv exited $st on $f"; }
		# exactly one warning per missing image, naming its build-id
		# (the pipe-mode capture recorded none for it: perf buildid-list
		# says "build-id -" too)
		n=$(grep -c 'warning: .*ld-2.23.so (build-id ' "$T/err")
		[ "$n" = 1 ] || { cat "$T/err"; fail "ld-2.23.so reported $n times"; }
		case $f in *piped*) ;; *)
			grep -q 'ld-2.23.so (build-id a3f83cd3799ef4149d3763cee54dd18b967b7ddb)' "$T/err" ||
				fail "the build-id of ld-2.23.so is not named";;
		esac
		grep -q '"no-image": [1-9]' "$T/out/summary.json" || fail "no no-image gaps counted"
		grep -q '"lost_trace_bytes": [1-9]' "$T/out/summary.json" || fail "skipped bytes not counted"
		"$PTCONV" "$f" -o "$T/out" --strict -q --buildid-dir "$T/none"
		[ $? -eq 1 ] || fail "--strict with gaps must exit 1"
		echo "ok - $(basename "$f") ($eng): $(tail -1 "$T/err")"
	done
done
# not Intel PT / not a recording: clear errors, documented exit statuses
printf 'garbage' >"$T/bad"
"$PTCONV" "$T/bad" -o "$T/o2" 2>"$T/err"; st=$?
[ $st -eq 3 ] || fail "garbage input: exit $st, want 3"
"$PTCONV" packets "$T/bad" 2>/dev/null; [ $? -eq 3 ] || fail "packets on garbage must exit 3"
exit 0
