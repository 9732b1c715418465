# contrib/: scripts for users and developers (installers, benchmarks, flows).
EXTRA_DIST += contrib/install-deps.sh
EXTRA_DIST += contrib/fuzz.sh

# `make example`: the README's first command.  Builds a small program, records
# its real execution as an Intel PT perf.data with the ground-truth generator
# (no PT hardware needed), then shows and converts the recording with ptconv.
# The program is built without the project's CFLAGS so that a sanitizer build
# does not trace sanitizer runtime code.
EXTRA_DIST += contrib/example/sortsum.c
example: src/ptconv tests/ptgen/ptgen-trace tests/ptgen/ptgen-encode tests/ptgen/truth-check
	@rm -rf example && mkdir -p example
	$(CC) -O2 -o example/sortsum $(srcdir)/contrib/example/sortsum.c
	tests/ptgen/ptgen-trace -o example/sortsum.truth -- example/sortsum
	tests/ptgen/ptgen-encode --buildid-dir example/buildid -o example/perf.data example/sortsum.truth
	src/ptconv info --buildid-dir example/buildid example/perf.data
	src/ptconv convert example/perf.data --buildid-dir example/buildid -f ptconv,cbpexp,text -o example/sortsum.ptconv
	@echo "first branches (example/sortsum.ptconv/*.txt):"; grep -v '^#' example/sortsum.ptconv/*.txt | head -5
	src/ptconv stats example/sortsum.ptconv/trace.*.ptc | head -12
	@echo "ground truth of the real execution (instructions, branches):"; tests/ptgen/truth-check --stats example/sortsum.truth | tail -1
.PHONY: example
clean-local: clean-example
clean-example:
	rm -rf example
.PHONY: clean-example
