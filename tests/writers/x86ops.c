/* The x86 instructions that the simulators' readers model differently
 * (ptconv-formats(5)), each executed ARG times (default 50): push and pop
 * (also of memory), leave, rep stos/movs and the other string
 * instructions, RIP-relative, absolute and indexed stores, a store of two
 * value registers, locked read-modify-writes, a SIMD store, a taken je
 * over a 2-byte instruction (target pc + 4) and system calls. */
#include <stdlib.h>

char rip_var[64];
unsigned abs_var[4];

__attribute__((noinline)) static long frame(long x)
{
	long r;

	/* a frame built and left by hand: push %rbp ... leave */
	__asm__ volatile("push %%rbp\n\tmov %%rsp, %%rbp\n\tsub $32, %%rsp\n\t"
			 "mov %1, -8(%%rbp)\n\tmov -8(%%rbp), %0\n\tleave"
			 : "=r"(r) : "r"(x) : "memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	static char src[256], dst[256];
	static unsigned arr[64];
	int i, n = argc > 1 ? atoi(argv[1]) : 50;
	long acc = 0, tmp;

	for (i = 0; i < n; i++) {
		void *d = dst, *s = src;
		long c = 37;
		/* rep stosb, rep stosq, rep movsb, movsq, lodsb, scasb, cmpsb */
		__asm__ volatile("cld\n\trep stosb" : "+D"(d), "+c"(c) : "a"(i) : "memory");
		d = dst, c = 4;
		__asm__ volatile("rep stosq" : "+D"(d), "+c"(c) : "a"(0L) : "memory");
		d = dst, s = src, c = 19;
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(c) : : "memory");
		d = dst, s = src;
		__asm__ volatile("movsq\n\tlodsb\n\tscasb\n\tcmpsb" : "+D"(d), "+S"(s) : : "rax", "memory", "cc");
		/* push and pop of registers and of memory */
		__asm__ volatile("push %1\n\tpushq (%2)\n\tpop %0\n\tpop %0" : "=&r"(tmp) : "r"(acc), "r"(arr) : "memory");
		acc += tmp;
		/* RIP-relative and absolute stores, indexed store, two values */
		__asm__ volatile("andb $0xdf, rip_var(%%rip)\n\tmovl %k0, abs_var\n\t"
				 "movl %k0, (%1,%2,4)\n\tstc\n\tadcl %k0, (%1)"
				 : : "r"(i), "r"(arr), "r"((long)(i & 63)) : "memory", "cc");
		/* locked read-modify-writes and a SIMD store */
		tmp = 1;
		__asm__ volatile("lock xaddq %0, (%1)\n\tlock cmpxchgq %0, (%1)\n\tmovdqu %%xmm0, (%2)"
				 : "+r"(tmp) : "r"(arr), "r"(dst) : "rax", "memory", "cc");
		/* je over a 2-byte instruction: taken, to its pc + 4 */
		__asm__ volatile("xor %%eax, %%eax\n\tje 1f\n\txchg %%ax, %%ax\n1:" : : : "rax", "cc");
		/* a system call (getpid) */
		__asm__ volatile("syscall" : "=a"(tmp) : "a"(39L) : "rcx", "r11", "memory");
		acc += frame(i) + (tmp > 0);
	}
	return acc < 0;	/* 0: the tracers take a failure for theirs */
}
