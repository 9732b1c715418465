/* Corpus: no libc at all (-nostdlib -static), its own _start and system
 * calls in inline asm, and no REP string instructions, so that valgrind's
 * instruction count (which counts each REP iteration) is the exact
 * instruction count.  With the argument "crash" it dies by SIGSEGV.
 * It also runs conditional branches whose target is their fall-through,
 * at global labels, with flags the test knows (see trace-objdump.sh). */
typedef unsigned long size_t;

static long sys3(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static void put(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	sys3(1, 1, (long)s, (long)n);	/* write(1, s, n) */
}

__attribute__((noinline)) static unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static void put_uint(unsigned v)
{
	char buf[16];
	int i = 15;

	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(buf + i);
}

/* Taken: ptg_jz_taken (ZF=1), ptg_jrcxz (rcx=0), ptg_loop the first time
 * (rcx 2 -> 1); not taken: ptg_jz_not_taken (ZF=0), ptg_loop the second
 * time (rcx 1 -> 0).  The next IP is the same either way. */
static void zero_offset_branches(void)
{
	__asm__ volatile("xor %%eax, %%eax\n"
			 ".globl ptg_jz_taken\n"
			 "ptg_jz_taken: jz 1f\n"
			 "1: cmp $1, %%eax\n"
			 ".globl ptg_jz_not_taken\n"
			 "ptg_jz_not_taken: jz 2f\n"
			 "2: xor %%ecx, %%ecx\n"
			 ".globl ptg_jrcxz\n"
			 "ptg_jrcxz: jrcxz 3f\n"
			 "3: mov $2, %%ecx\n"
			 "4:\n"
			 ".globl ptg_loop\n"
			 "ptg_loop: loop 5f\n"
			 "5: test %%ecx, %%ecx\n"
			 "jnz 4b\n"
			 : : : "rax", "rcx", "cc");
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

__attribute__((used)) static void cmain(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);

	if (argc > 1 && streq(argv[1], "crash"))
		*(volatile int *)16 = 1;
	zero_offset_branches();
	put("nolibc fib(15)=");
	put_uint(fib(15));
	put("\n");
	sys3(231, 0, 0, 0);		/* exit_group(0) */
}

__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call cmain\n"
	"	hlt\n");
