# Shared helpers for the shell tests (sourced).  Tests exit 0 on success,
# 1 on failure and 77 when what they need (perf, ../shared) is absent.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
: "${PTC_SHARED:=$top_srcdir/../shared}"
PTCONV="$top_builddir/src/ptconv"

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
need_shared() { [ -d "$PTC_SHARED/data" ] || skip "shared data not found at $PTC_SHARED"; }
need_perf() { [ -n "${PERF:-}" ] && [ -x "$PERF" ] || PERF=$(command -v perf) || skip "Linux perf not installed"; }
# A scratch directory removed when the test ends.
scratch() { T=$(mktemp -d "${TMPDIR:-/tmp}/ptconv-test.XXXXXX"); trap 'rm -rf "$T"' EXIT; }
