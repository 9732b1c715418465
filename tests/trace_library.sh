#!/bin/sh
# libptconv-trace as its users get it: the library installed by libtool
# into a private prefix, the header and the pkg-config file beside it.  A
# program that sees only <ptconv/trace.h> (tests/writers/lib_consumer.c)
# builds with `pkg-config --cflags --libs ptconv-trace` under -std=c99
# -pedantic -Werror, and a C++ one includes the header; the shared
# library exports exactly the functions the header declares; the program,
# run against it, lists every record of real traces exactly as the
# suite's independent reader decodes them (cmp_dump.py), its seeks agree
# with its reading, and 4 threads with a handle each read the same records
# in parallel.
. "${top_srcdir:-.}/tests/lib/common.sh"
W="$top_srcdir/tests/writers"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v zstd >/dev/null || skip "zstd not installed"
command -v nm >/dev/null || skip "nm not installed"
[ -f "$top_builddir/libptconv-trace.la" ] || skip "libptconv-trace not built"
scratch
inst="$T/prefix"
mkdir -p "$inst/lib/pkgconfig" "$inst/include/ptconv"
"$top_builddir/libtool" --quiet --mode=install cp "$top_builddir/libptconv-trace.la" "$inst/lib/" \
	>"$T/lt" 2>&1 || { cat "$T/lt" >&2; fail "libtool install"; }
cp "$top_srcdir/include/ptconv/trace.h" "$inst/include/ptconv/"
sed -e "s|^prefix=.*|prefix=$inst|" -e "s|^exec_prefix=.*|exec_prefix=$inst|" \
	-e "s|^libdir=.*|libdir=$inst/lib|" -e "s|^includedir=.*|includedir=$inst/include|" \
	"$top_builddir/ptconv-trace.pc" > "$inst/lib/pkgconfig/ptconv-trace.pc"
[ -f "$inst/lib/libptconv-trace.so" ] || skip "no shared library (configured --disable-shared)"

# 1. Build as a user does.  The build's own compiler and flags (the
# sanitizers' when the suite runs under them) so that the program can link
# the library built with them.
flags=$(PKG_CONFIG_PATH="$inst/lib/pkgconfig" pkg-config --cflags --libs ptconv-trace) || fail "pkg-config"
${PTC_CC:-cc} ${PTC_CFLAGS:-} -std=c99 -pedantic -Wall -Wextra -Werror -pthread -o "$T/consumer" \
	"$W/lib_consumer.c" $flags ${PTC_LDFLAGS:-} 2>"$T/cc.err" || { cat "$T/cc.err" >&2; fail "build the consumer"; }
if command -v c++ >/dev/null; then
	printf '#include <ptconv/trace.h>\nint main() { ptc_trace_close(0); return 0; }\n' > "$T/c.cc"
	c++ -Wall -Werror -fsyntax-only $(PKG_CONFIG_PATH="$inst/lib/pkgconfig" pkg-config --cflags ptconv-trace) \
		"$T/c.cc" 2>"$T/cc.err" || { cat "$T/cc.err" >&2; fail "the header in C++"; }
fi
LD_LIBRARY_PATH="$inst/lib" ldd "$T/consumer" | grep -q "$inst/lib/libptconv-trace.so" ||
	fail "the consumer does not use the installed library"
echo "ok - built with pkg-config against the installed header and library"

# 2. Exactly the declared functions are exported.
sed -n 's/.*\(ptc_trace_[a-z_]*\)(.*/\1/p' "$inst/include/ptconv/trace.h" | sort -u > "$T/declared"
nm -D --defined-only "$inst/lib/libptconv-trace.so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort -u > "$T/exported"
[ -s "$T/declared" ] || fail "no functions found in the header"
cmp -s "$T/declared" "$T/exported" || { diff "$T/declared" "$T/exported" >&2; fail "exports differ from the header"; }
echo "ok - exports: $(wc -l < "$T/exported") functions, those of the header"

# 3. Real traces through the installed library against the independent
# reader: a real program's conversion with two losses (ptgen-trace's truth
# of tests/writers/prog.c, encoded by ptgen-encode), and the seeds of both
# format versions.
ENC="$top_builddir/tests/ptgen/ptgen-encode"
set --
if [ -x "$ENC" ]; then
	export TRUTH_NO_TIMES=1
	prog_truth
	"$ENC" -o "$T/l.data" --buildid-dir "$T/bid" --ovf-at 6000:100 --truncate 200@1500 "$T/prog.truth" \
		2>"$T/enc.err" || fail "ptgen-encode: $(cat "$T/enc.err")"
	"$PTCONV" convert "$T/l.data" -o "$T/o" --buildid-dir "$T/bid" -q
	[ $? -le 1 ] || fail "convert"
	set -- "$T"/o/trace.*.ptc
fi
n=0
for f in "$@" "$top_srcdir"/tests/fuzz/seeds/fuzz_ptc_trace/*.ptc; do
	LD_LIBRARY_PATH="$inst/lib" "$T/consumer" "$f" > "$T/dump" 2>"$T/err" || { cat "$T/err" >&2; fail "consumer on $f"; }
	python3 "$W/cmp_dump.py" "$f" < "$T/dump" >/dev/null || fail "$f: the installed library differs from read_ptc.py"
	grep -q "^# 4 parts read in parallel: the same records" "$T/dump" || fail "$f: no parallel read"
	n=$((n + 1))
done
[ $n -ge 6 ] || fail "only $n traces"
echo "ok - $n traces read through the installed library as the independent reader reads them, also by 4 threads"
