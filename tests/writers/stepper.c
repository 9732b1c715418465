/* Test-only oracle: run a program under ptrace single-stepping and write its
 * exact user-mode execution as a ground-truth file (tests/ptgen/ground-truth.md,
 * lines V T M B E) plus, with -i, every executed instruction's IP one per line.
 * Single-threaded programs only; shares no code with the writers. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

static FILE *out, *ips;
static ZydisDecoder dec;

static void maps(pid_t pid, const char *outpath)
{
	char path[64], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char perm[8], name[512] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %511s", &s, &e, perm, &off, name) < 4 ||
		    perm[2] != 'x')
			continue;
		if (!strcmp(name, "[vdso]")) {
			char dump[1024], mem[64];
			uint8_t *b = malloc(e - s);
			int fd;
			FILE *d;
			snprintf(dump, sizeof(dump), "%s.vdso", outpath);
			snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
			fd = open(mem, O_RDONLY);
			if (b && fd >= 0 && pread(fd, b, e - s, s) == (ssize_t)(e - s) && (d = fopen(dump, "wb"))) {
				fwrite(b, 1, e - s, d);
				fclose(d);
				fprintf(out, "M 0 %d %d 0x%lx 0x%lx 0x0 5 - [vdso] %s\n", pid, pid, s, e - s, dump);
			}
			if (fd >= 0)
				close(fd);
			free(b);
		} else if (name[0] == '/') {
			fprintf(out, "M 0 %d %d 0x%lx 0x%lx 0x%lx 5 - %s\n", pid, pid, s, e - s, off, name);
		}
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	const char *outpath = NULL, *ipspath = NULL;
	struct user_regs_struct regs;
	uint64_t t = 0, insns = 0, ip;
	int opt, status, mapped = 0, repeat = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "o:i:")) != -1) {
		if (opt == 'o')
			outpath = optarg;
		else if (opt == 'i')
			ipspath = optarg;
		else
			return 2;
	}
	if (!outpath || optind >= argc)
		return 2;
	out = fopen(outpath, "w");
	ips = ipspath ? fopen(ipspath, "w") : NULL;
	if (!out)
		return 1;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	pid = fork();
	if (!pid) {
		/* The same address layout as ptgen-trace (ASLR off): glibc's
		 * strlen takes another path when a stack buffer's address lands
		 * near a page end, so with a random stack the two executions
		 * differed now and then. */
		personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execv(argv[optind], argv + optind);
		_exit(127);
	}
	waitpid(pid, &status, 0);	/* stopped at the first instruction after exec */
	fprintf(out, "V 1\nT 0 %d %d prog\n", pid, pid);
	for (;;) {
		uint8_t b[16];
		struct iovec l = { b, 16 }, r;
		ZydisDecodedInstruction zi;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		uint64_t next;
		int kind = -1, taken = 1;
		uint64_t target = 0;

		if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
			break;
		ip = regs.rip;
		if (!mapped) {
			maps(pid, outpath);
			mapped = 1;
		}
		r.iov_base = (void *)ip;
		r.iov_len = 16;
		if (process_vm_readv(pid, &l, 1, &r, 1, 0) < 1 ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, b, 16, &zi, ops))) {
			fprintf(stderr, "stepper: cannot decode at 0x%" PRIx64 "\n", ip);
			return 1;
		}
		/* A rep-prefixed instruction traps once per iteration: count
		 * it once, as the hardware's instruction counts do. */
		if (!repeat) {
			if (ips)
				fprintf(ips, "0x%" PRIx64 "\n", ip);
			insns++;
			t++;
		}
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0)
			break;
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			/* The last instruction (exit_group) is a far branch. */
			fprintf(out, "B %" PRIu64 " %d 0x%" PRIx64 " 0x0 6 1 %u %" PRIu64 "\n", t, pid, ip,
				zi.length, insns);
			fprintf(out, "X %" PRIu64 " %d %d\nE %" PRIu64 " %d\n", t, pid, pid, t, pid);
			break;
		}
		if (WSTOPSIG(status) != SIGTRAP) {
			fprintf(stderr, "stepper: signal %d: not supported\n", WSTOPSIG(status));
			return 1;
		}
		ptrace(PTRACE_GETREGS, pid, 0, &regs);
		next = regs.rip;
		repeat = next == ip;
		if (repeat)
			continue;
		switch (zi.meta.category) {
		case ZYDIS_CATEGORY_COND_BR:
			kind = 5;
			ZydisCalcAbsoluteAddress(&zi, &ops[0], ip, &target);
			taken = next != ip + zi.length;
			break;
		case ZYDIS_CATEGORY_UNCOND_BR:
			kind = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ? 0 : 1;
			target = next;
			break;
		case ZYDIS_CATEGORY_CALL:
			kind = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ? 2 : 3;
			target = next;
			break;
		case ZYDIS_CATEGORY_RET:
			kind = 4;
			target = next;
			break;
		case ZYDIS_CATEGORY_SYSCALL:
		case ZYDIS_CATEGORY_INTERRUPT:
			kind = 6;
			target = 0;
			break;
		default:
			if (next != ip + zi.length) {
				/* Some hypervisors (seen on an AMD EPYC guest) trap
				 * an instruction they emulate (CPUID) only after
				 * the next one: that one ran too, and must have
				 * been no branch to end where the thread is. */
				uint64_t ip2 = ip + zi.length;

				r.iov_base = (void *)ip2;
				if (process_vm_readv(pid, &l, 1, &r, 1, 0) < 1 ||
				    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, b, 16, &zi, ops)) ||
				    zi.meta.category == ZYDIS_CATEGORY_COND_BR ||
				    zi.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
				    zi.meta.category == ZYDIS_CATEGORY_CALL || zi.meta.category == ZYDIS_CATEGORY_RET ||
				    zi.meta.category == ZYDIS_CATEGORY_SYSCALL ||
				    zi.meta.category == ZYDIS_CATEGORY_INTERRUPT || next != ip2 + zi.length) {
					fprintf(stderr, "stepper: 0x%" PRIx64 " is no branch but went to 0x%" PRIx64 "\n",
						ip, next);
					return 1;
				}
				if (ips)
					fprintf(ips, "0x%" PRIx64 "\n", ip2);
				insns++;
				t++;
			}
			break;
		}
		if (kind >= 0) {
			fprintf(out, "B %" PRIu64 " %d 0x%" PRIx64 " 0x%" PRIx64 " %d %d %u %" PRIu64 "\n",
				t, pid, ip, target, kind, taken, zi.length, insns);
			if (kind == 6)
				fprintf(out, "R %" PRIu64 " %d 0x%" PRIx64 "\n", t, pid, next);
			insns = 0;
		}
	}
	fclose(out);
	if (ips)
		fclose(ips);
	return 0;
}
