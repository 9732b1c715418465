/* ptgen-trace: the exact user-mode execution of a program, under ptrace.
 *
 *   ptgen-trace [-o OUT.truth] [--vdso-dir DIR] [--slice N] [--max-insns N]
 *               [--single-step] [--aslr] [-v] -- PROGRAM ARGS...
 *
 * Forks, lets the child PTRACE_TRACEME and exec PROGRAM, then follows
 * every thread of every process it creates, one thread at a time, and
 * writes what executed as a ground truth (tests/ptgen/ground-truth.md):
 * every branch with its kind, direction and the instructions before it,
 * every entry into and exit from user mode, the executable mappings, the
 * threads and processes.  It is the oracle of the test suite, so it
 * decides nothing from a model of the program: every line is what the
 * CPU did, as the next RIP after each step shows (or, in the default
 * engine, the breakpoint where a run of known code stopped: see "runs to
 * breakpoints" below).
 *
 * The tracer's exit status is the traced program's (128 + signal when a
 * signal killed it), 127 when it cannot be executed, 77 when ptrace is not
 * permitted here (so that tests can skip), 1 on a tracer error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "common/trace_event.h"
#include "aspace.h"
#include "insn.h"

#define PTG_EXIT_NOEXEC 127
#define PTG_EXIT_SKIP 77
#define PTG_PATH_MAX 512	/* instructions walked per run */
#define PTG_NBP 4		/* debug registers for breakpoints */
#define PTG_SEG_MAX 16
#define PTG_DR7_ALL 0x55	/* DR0-DR3 enabled, execute, local */

enum thread_state {
	TH_NEW,		/* announced by its parent, initial stop not seen yet */
	TH_READY,	/* stopped by us between two steps */
	TH_INFLIGHT,	/* resumed into a system call that blocks */
	TH_DEAD,
};

struct proc {
	pid_t pid;
	struct ptg_aspace *as;
	int live;		/* threads not dead */
};

struct thread {
	pid_t tid;
	struct proc *proc;	/* NULL while only its initial stop was seen */
	enum thread_state state;
	int seen_stop;		/* its initial SIGSTOP arrived */
	int pending_r;		/* next executed instruction starts with an R line */
	int pending_sig;	/* signal to deliver before the next instruction */
	uint64_t count;		/* instructions since the last B/A line */
	uint64_t total;		/* instructions executed */
	uint64_t branches;
	struct user_regs_struct regs;	/* valid when TH_READY */
	/* The step in flight while TH_INFLIGHT. */
	struct ptg_insn insn;
	long sysno;		/* rax before the step: the system call number */
	int bits;		/* its code's mode: 32 in a compatibility-mode
				 * (32-bit) task, else 64 (from cs) */
	uint64_t pre_flags;	/* rflags and rcx before the step, for */
	uint64_t pre_rcx;	/* conditional branches to their fall-through */
	uint64_t dr[4];		/* debug registers 0-3 as last set */
	uint64_t dr7;		/* their enable bits as last set */
	int b_pending;		/* far insn stepped, its B line not written yet */
	int done;		/* its stop arrived, not processed yet */
	int done_status;
};

static struct {
	FILE *out;
	const char *vdso_dir;
	uint64_t slice;
	uint64_t max_insns;
	uint64_t now;		/* global instruction counter = time */
	uint64_t steps;
	struct thread **threads;	/* in creation order */
	size_t nthreads, cap;
	struct thread *last_stepped;
	pid_t root_pid;
	int root_status;
	int root_done;
	int verbose;
	int aslr;		/* --aslr: keep address-space randomisation */
	int single_step;	/* --single-step: no runs to breakpoints */
	int soft_bp;		/* --int3: the runs' breakpoints are int3
				 * instructions, not debug registers */
	uint64_t runs;
} g = { .slice = 10000 };

/* SIGINT/SIGTERM to the tracer: end the trace cleanly (E lines). */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptgen-trace: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptgen-trace: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- output ------------------------------------------------------------ */

static void put_word(const char *p)
{
	for (; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch <= ' ' || ch == '\\' || ch == 0x7f)
			fprintf(g.out, "\\%03o", ch);
		else
			fputc(ch, g.out);
	}
}

static void read_comm(pid_t tid, char *buf, size_t sz)
{
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/comm", (int)tid);
	snprintf(buf, sz, "?");
	f = fopen(name, "re");
	if (!f)
		return;
	if (fgets(buf, (int)sz, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static void emit_T(struct thread *t)
{
	char comm[64];

	read_comm(t->tid, comm, sizeof(comm));
	fprintf(g.out, "T %" PRIu64 " %d %d ", g.now, (int)t->proc->pid,
		(int)t->tid);
	put_word(comm);
	fputc('\n', g.out);
}

static void emit_C(struct thread *t, int exec)
{
	char comm[64];

	read_comm(t->tid, comm, sizeof(comm));
	fprintf(g.out, "C %" PRIu64 " %d %d %d ", g.now, (int)t->proc->pid,
		(int)t->tid, exec);
	put_word(comm);
	fputc('\n', g.out);
}

static void emit_R(struct thread *t, uint64_t ip)
{
	fprintf(g.out, "R %" PRIu64 " %d 0x%" PRIx64 "%s\n", g.now, (int)t->tid,
		ip, t->bits == 32 ? " 32" : "");
}

static void emit_A(struct thread *t, uint64_t ip)
{
	fprintf(g.out, "A %" PRIu64 " %d 0x%" PRIx64 " %" PRIu64 "\n", g.now,
		(int)t->tid, ip, t->count);
	t->total += t->count;
	t->count = 0;
}

/* The branch insn executed: count it and write its B line. */
static void emit_B(struct thread *t, const struct ptg_insn *insn, int taken)
{
	g.now++;
	t->count++;
	fprintf(g.out, "B %" PRIu64 " %d 0x%" PRIx64 " 0x%" PRIx64
		" %d %d %u %" PRIu64 "\n", g.now, (int)t->tid, insn->ip,
		insn->target, insn->kind, taken, insn->len, t->count);
	t->total += t->count;
	t->count = 0;
	t->branches++;
}

/* t's far instruction (system call) executed: its B line, preceded by the
 * R line when it is the first instruction since user mode resumed.  This
 * happens at the first event of the call (the lines of a clone or an exec
 * come after the call) or when the step ends. */
static void flush_far(struct thread *t)
{
	if (!t->b_pending)
		return;
	t->b_pending = 0;
	if (t->pending_r) {
		emit_R(t, t->insn.ip);
		t->pending_r = 0;
	}
	emit_B(t, &t->insn, 1);
}

/* t's instruction at ip executes: the R line if user mode resumes here. */
static void resumed(struct thread *t, uint64_t ip)
{
	if (t->pending_r) {
		emit_R(t, ip);
		t->pending_r = 0;
	}
}

static int refresh_maps(struct thread *t)
{
	struct ptg_mline_ctx m = {
		.out = g.out, .time = g.now, .pid = t->proc->pid,
		.tid = t->tid, .vdso_dir = g.vdso_dir,
	};

	return ptg_aspace_refresh(t->proc->as, &m);
}

/* ---- threads ----------------------------------------------------------- */

static struct thread *find_thread(pid_t tid)
{
	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i]->tid == tid && g.threads[i]->state != TH_DEAD)
			return g.threads[i];
	return NULL;
}

static struct thread *new_thread(pid_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));

	if (!t)
		fatal("out of memory");
	if (g.nthreads == g.cap) {
		g.cap = g.cap ? 2 * g.cap : 16;
		g.threads = realloc(g.threads, g.cap * sizeof(*g.threads));
		if (!g.threads)
			fatal("out of memory");
	}
	t->tid = tid;
	t->state = TH_NEW;
	t->pending_r = 1;
	g.threads[g.nthreads++] = t;
	return t;
}

static struct proc *new_proc(pid_t pid, int inherit)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		fatal("out of memory");
	p->pid = pid;
	p->as = ptg_aspace_open(pid, inherit);
	if (!p->as)
		fatal("cannot read the mappings of process %d: %s", (int)pid,
		      strerror(errno));
	return p;
}

/* The code segment selector of 32-bit user code on x86-64 Linux
 * (__USER32_CS; 64-bit code runs with __USER_CS, 0x33). */
#define USER32_CS 0x23

static void get_regs(struct thread *t)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs) < 0)
		fatal("PTRACE_GETREGS of thread %d: %s", (int)t->tid,
		      strerror(errno));
	t->bits = t->regs.cs == USER32_CS ? 32 : 64;
}

/* Decode t's instruction at ip (ptg_insn_decode()) in the mode of t's
 * code. */
static int decode(struct thread *t, struct ptg_insn *in, uint64_t ip, const uint8_t *buf, size_t n)
{
	ptg_insn_set_mode(t->bits);
	return ptg_insn_decode(in, ip, buf, n);
}

static pid_t tgid_of(pid_t tid)
{
	char name[64], line[256];
	pid_t tgid = tid;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)tid);
	f = fopen(name, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* The thread ended (exited or killed): its last instructions, E and X. */
static void thread_exit(struct thread *t, int status)
{
	if (t->count)
		emit_A(t, t->regs.rip);
	fprintf(g.out, "E %" PRIu64 " %d\n", g.now, (int)t->tid);
	if (t->proc) {
		fprintf(g.out, "X %" PRIu64 " %d %d\n", g.now,
			(int)t->proc->pid, (int)t->tid);
		if (t->tid == g.root_pid) {
			g.root_status = status;
			g.root_done = 1;
		}
		if (--t->proc->live == 0) {
			ptg_aspace_free(t->proc->as);
			t->proc->as = NULL;
		}
	}
	if (g.verbose)
		fprintf(stderr, "ptgen-trace: thread %d: %" PRIu64
			" instructions, %" PRIu64 " branches\n", (int)t->tid,
			t->total, t->branches);
	t->state = TH_DEAD;
}

static void became_ready(struct thread *t)
{
	t->state = TH_READY;
	get_regs(t);
}

/* A thread reported its first stop and its parent has announced it. */
static void check_new(struct thread *t)
{
	if (t->state == TH_NEW && t->seen_stop && t->proc)
		became_ready(t);
}

/* PTRACE_EVENT_CLONE/FORK/VFORK in thread u: announce the new thread. */
static void on_clone(struct thread *u, int event)
{
	unsigned long msg = 0;
	struct thread *c;
	pid_t tid, pid;

	if (ptrace(PTRACE_GETEVENTMSG, u->tid, NULL, &msg) < 0)
		fatal("PTRACE_GETEVENTMSG: %s", strerror(errno));
	tid = (pid_t)msg;
	c = find_thread(tid);
	if (!c)
		c = new_thread(tid);
	pid = tgid_of(tid);
	if (event == PTRACE_EVENT_CLONE && pid == u->proc->pid) {
		c->proc = u->proc;
	} else {
		c->proc = new_proc(pid, 1);
	}
	c->proc->live++;
	fprintf(g.out, "F %" PRIu64 " %d %d %d %d\n", g.now,
		(int)u->proc->pid, (int)u->tid, (int)pid, (int)tid);
	emit_T(c);
	check_new(c);
}

/* PTRACE_EVENT_EXEC in thread u: a new program, a new address space. */
static void on_exec(struct thread *u)
{
	unsigned long former = 0;
	struct proc *p = u->proc;

	if (ptrace(PTRACE_GETEVENTMSG, u->tid, NULL, &former) == 0 &&
	    (pid_t)former != u->tid)
		warn("thread %lu of process %d called execve: its other "
		     "threads are not followed exactly", former, (int)p->pid);
	ptg_aspace_free(p->as);
	p->as = ptg_aspace_open(p->pid, 0);
	if (!p->as)
		fatal("cannot read the mappings of process %d: %s", (int)p->pid,
		      strerror(errno));
	emit_C(u, 1);
	if (refresh_maps(u) < 0)
		fatal("cannot read the mappings of process %d", (int)p->pid);
	u->pending_r = 1;
	u->count = 0;
	/* execve drops the debug registers. */
	memset(u->dr, 0, sizeof(u->dr));
	u->dr7 = 0;
}

static void resume_step(struct thread *t, int sig)
{
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0)
		fatal("PTRACE_SINGLESTEP of thread %d: %s", (int)t->tid,
		      strerror(errno));
}

/* A report from a thread other than the one being stepped. */
static void on_other(pid_t tid, int status)
{
	struct thread *t = find_thread(tid);

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (t)
			thread_exit(t, status);
		return;
	}
	if (!t) {
		/* A new thread's initial stop, before its parent's event. */
		t = new_thread(tid);
		t->seen_stop = 1;
		return;
	}
	switch (t->state) {
	case TH_NEW:
		t->seen_stop = 1;
		check_new(t);
		break;
	case TH_INFLIGHT:
		t->done = 1;
		t->done_status = status;
		break;
	default:
		break;
	}
}

/* Handles event stops (clone, fork, exec) and resumes the thread; returns
 * 1 when the event was a vfork (the parent now blocks until the child
 * execs or exits). */
static int on_event(pid_t tid, int status)
{
	struct thread *t = find_thread(tid);
	int event = status >> 16;

	if (!t)
		fatal("event %d from unknown thread %d", event, (int)tid);
	flush_far(t);
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_clone(t, event);
		break;
	case PTRACE_EVENT_EXEC:
		on_exec(t);
		break;
	default:
		break;
	}
	resume_step(t, 0);
	return event == PTRACE_EVENT_VFORK;
}

/* Waits until t's step ends and stores its status: 1, or 0 when it did
 * not end within timeout_ms (< 0: wait for ever).  Reports of other
 * threads that arrive meanwhile are handled. */
static int wait_thread(struct thread *t, int timeout_ms, int *status)
{
	struct timespec deadline;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st,
				  __WALL | (timeout_ms >= 0 ? WNOHANG : 0));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			fatal("waitpid: %s", strerror(errno));
		}
		if (r == 0) {
			struct timespec now, left;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = deadline.tv_sec - now.tv_sec;
			left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
			if (left.tv_sec < 0)
				return 0;
			if (sigtimedwait(&chld, NULL, &left) < 0 &&
			    errno == EAGAIN)
				timeout_ms = 0;
			continue;
		}
		if (WIFSTOPPED(st) && (st >> 16)) {
			if (on_event(r, st) && r == t->tid)
				return 0;
			continue;
		}
		if (r == t->tid) {
			*status = st;
			return 1;
		}
		on_other(r, st);
	}
}

/* Waits for any report (when no thread can run). */
static void wait_any(void)
{
	int st;
	pid_t r = waitpid(-1, &st, __WALL);

	if (r < 0) {
		if (errno == EINTR)
			return;
		fatal("waitpid: %s", strerror(errno));
	}
	if (WIFSTOPPED(st) && (st >> 16))
		on_event(r, st);
	else
		on_other(r, st);
}

/* Whether a SIGTRAP stop of t is the trap of its single-step (or of the
 * delivery of a signal while stepping) rather than a SIGTRAP signal. */
static int is_step_trap(struct thread *t)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0)
		return 1;
	return si.si_code > 0 && si.si_code < 0x80;
}

/* exit and exit_group of 32-bit tasks (the i386 system call table). */
#define SYS32_exit 1
#define SYS32_exit_group 252

/* Does t's system call end t (exit) or its whole process (exit_group)? */
static int is_exit(const struct thread *t, int group)
{
	if (t->bits == 32)
		return t->sysno == (group ? SYS32_exit_group : SYS32_exit);
	return t->sysno == (group ? SYS_exit_group : SYS_exit);
}

/* Whether system call nr of t may change its executable mappings; in a
 * 32-bit task (another table, and more calls that map: mmap2, ipc) every
 * call is taken to (the maps are read again, and only what changed
 * becomes M lines). */
static int is_maps_syscall(const struct thread *t, long nr)
{
	if (t->bits == 32)
		return 1;
	switch (nr) {
	case SYS_mmap:
	case SYS_mprotect:
	case SYS_munmap:
	case SYS_mremap:
	case SYS_brk:
	case SYS_execve:
	case SYS_execveat:
	case SYS_shmat:
	case SYS_shmdt:
	case SYS_pkey_mprotect:
	case SYS_remap_file_pages:
		return 1;
	}
	return 0;
}

/* Whether the thread sleeps in the kernel (state S or D in /proc): it
 * waits for something, maybe another traced thread, and will not report
 * by itself soon.  A thread that was woken is R until it stops. */
static int sleeping(struct thread *t)
{
	char name[96], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/task/%d/stat",
		 (int)t->proc->pid, (int)t->tid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* Only a running (R) or stopped (t, T) thread reports soon; a
	 * zombie leader (Z) reports when its whole group has ended. */
	return p && p[1] == ' ' && p[2] != 'R' && p[2] != 't' && p[2] != 'T';
}

static int others_live(struct thread *t)
{
	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i] != t && g.threads[i]->state != TH_DEAD &&
		    g.threads[i]->proc)
			return 1;
	return 0;
}

/* Waits for the end of t's system call.  Returns 1 with *status, or 0 when
 * t sleeps in the kernel while other threads could run: it may wait for
 * one of them (futex, wait4, a pipe, ...).  Whether it sleeps depends on
 * what the program did, not on timing, so the interleaving is
 * reproducible (except for sleeps that end by time, like nanosleep). */
static int wait_syscall(struct thread *t, int *status)
{
	int ended_by_exit = (is_exit(t, 0) && t->tid != t->proc->pid) || is_exit(t, 1);

	if (ended_by_exit || !others_live(t))
		return wait_thread(t, -1, status);
	for (;;) {
		if (wait_thread(t, 1, status))
			return 1;
		if (t->state == TH_DEAD)
			return 0;
		if (sleeping(t))
			return 0;
	}
}

/* The step of t (insn) ended with status. */
static void complete_step(struct thread *t, struct ptg_insn *insn,
			  int status)
{
	int far = insn->kind == PTC_BR_FAR;
	uint64_t next;
	int sig;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		/* Killed before its instruction ran, unless that was the
		 * call that ended it. */
		if (t->b_pending && (is_exit(t, 0) || is_exit(t, 1)))
			flush_far(t);
		t->b_pending = 0;
		thread_exit(t, status);
		return;
	}
	sig = WSTOPSIG(status);
	t->state = TH_READY;
	get_regs(t);
	next = t->regs.rip;
	if (far) {
		int trap = sig == SIGTRAP && is_step_trap(t);

		if (!trap && next == insn->ip && t->b_pending) {
			/* A signal came before the call. */
			t->b_pending = 0;
			t->pending_sig = sig;
			return;
		}
		/* User mode resumes wherever the next instruction is,
		 * possibly a signal handler. */
		flush_far(t);
		t->pending_r = 1;
		if (is_maps_syscall(t, t->sysno) && refresh_maps(t) < 0)
			fatal("cannot read the mappings of process %d",
			      (int)t->proc->pid);
		if (!trap)
			t->pending_sig = sig;
		return;
	}
	if (sig == SIGTRAP && next == insn->ip && !insn->rep &&
	    !(insn->kind != PTG_NOT_BRANCH && insn->target == insn->ip) &&
	    !is_step_trap(t)) {
		t->pending_sig = sig;
		return;
	}
	if (sig != SIGTRAP) {
		/* A signal stopped the thread before the instruction ran
		 * (a fault, or an asynchronous signal). */
		if (next != insn->ip)
			warn("thread %d: signal %d after 0x%" PRIx64
			     " moved to 0x%" PRIx64, (int)t->tid, sig, insn->ip,
			     next);
		t->pending_sig = sig;
		return;
	}
	resumed(t, insn->ip);
	if (insn->kind != PTG_NOT_BRANCH) {
		int taken;

		/* Only a conditional branch can be not taken (an indirect
		 * jump to the next instruction is taken). */
		if (insn->kind != PTC_BR_COND)
			taken = 1;
		else if (insn->target == insn->ip + insn->len)
			taken = ptg_cond_taken(insn, t->pre_flags,
					       t->pre_rcx);
		else
			taken = next != insn->ip + insn->len;
		/* An indirect branch's target is where it went. */
		if (insn->kind == PTC_BR_JMP_IND ||
		    insn->kind == PTC_BR_CALL_IND || insn->kind == PTC_BR_RET)
			insn->target = next;
		emit_B(t, insn, taken);
		return;
	}
	if (next == insn->ip && insn->rep)
		return;		/* one iteration; the instruction goes on */
	if (next != insn->ip + insn->len)
		warn("thread %d: 0x%" PRIx64 " is no branch but went to 0x%"
		     PRIx64, (int)t->tid, insn->ip, next);
	g.now++;
	t->count++;
}

/* Signal disposition in the thread's process. */
enum { SIG_CAUGHT, SIG_IGNORED, SIG_FATAL };

static int disposition(struct thread *t, int sig)
{
	char name[64], line[256];
	unsigned long long ign = 0, cgt = 0, bit = 1ULL << (sig - 1);
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)t->tid);
	f = fopen(name, "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			sscanf(line, "SigIgn: %llx", &ign);
			sscanf(line, "SigCgt: %llx", &cgt);
		}
		fclose(f);
	}
	if (cgt & bit)
		return SIG_CAUGHT;
	if (ign & bit)
		return SIG_IGNORED;
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	/* Job-control stops are not modelled: the thread keeps running. */
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return SIG_IGNORED;
	}
	return SIG_FATAL;
}

/* Delivers t's pending signal.  A handler starts without executing an
 * instruction: that is an asynchronous exit (A) unless user mode was not
 * resumed yet since a system call (then the R line simply goes to the
 * handler). */
static void deliver_signal(struct thread *t)
{
	int sig = t->pending_sig, status;
	uint64_t ip = t->regs.rip;

	t->pending_sig = 0;
	if (disposition(t, sig) == SIG_IGNORED)
		return;
	resume_step(t, sig);
	if (!wait_thread(t, -1, &status))
		fatal("thread %d blocked while a signal was delivered",
		      (int)t->tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (!t->pending_r)
			emit_A(t, ip);
		thread_exit(t, status);
		return;
	}
	get_regs(t);
	if (t->regs.rip != ip && !t->pending_r) {
		emit_A(t, ip);
		t->pending_r = 1;
	}
	if (WSTOPSIG(status) != SIGTRAP)
		t->pending_sig = WSTOPSIG(status);
}

static int set_dr(struct thread *t, int i, uint64_t v)
{
	if (ptrace(PTRACE_POKEUSER, t->tid,
		   (void *)offsetof(struct user, u_debugreg[i]), (void *)v) < 0)
		return -1;
	return 0;
}

/* Before a single-step at ip: a debug register still armed there would
 * stop the thread before the instruction (unless RF says to go on). */
static void disarm_at(struct thread *t, uint64_t ip)
{
	if (!t->dr7 || (t->regs.eflags & 0x10000))
		return;
	for (int i = 0; i < PTG_NBP; i++) {
		if (t->dr[i] != ip || !(t->dr7 & (1u << (2 * i))))
			continue;
		if (set_dr(t, i, 0) < 0)
			fatal("cannot clear a breakpoint in thread %d: %s",
			      (int)t->tid, strerror(errno));
		t->dr[i] = 0;
	}
}

/* CPUID, which a hypervisor emulates: some (seen on an AMD EPYC guest)
 * deliver the single-step trap of an emulated instruction only after the
 * next one, which the step would then miss.  So the thread runs over it
 * to a software breakpoint on the next instruction instead (CPUID always
 * falls through), and stops exactly there whatever the hypervisor. */
static int is_cpuid(const struct ptg_insn *insn, const uint8_t *buf)
{
	return insn->kind == PTG_NOT_BRANCH && insn->len == 2 && buf[0] == 0x0f && buf[1] == 0xa2;
}

static void run_over(struct thread *t, struct ptg_insn *insn)
{
	uint64_t at = insn->ip + insn->len;
	long word;
	int status;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, t->tid, (void *)at, NULL);
	if (errno)
		fatal("thread %d: cannot read the code at 0x%" PRIx64 ": %s", (int)t->tid, at, strerror(errno));
	if (ptrace(PTRACE_POKETEXT, t->tid, (void *)at, (void *)((word & ~0xffL) | 0xcc)) < 0)
		fatal("thread %d: cannot set a breakpoint at 0x%" PRIx64 ": %s", (int)t->tid, at, strerror(errno));
	if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) < 0)
		fatal("PTRACE_CONT of thread %d: %s", (int)t->tid, strerror(errno));
	if (!wait_thread(t, -1, &status))
		fatal("thread %d blocked in CPUID", (int)t->tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		complete_step(t, insn, status);
		return;
	}
	if (ptrace(PTRACE_POKETEXT, t->tid, (void *)at, (void *)word) < 0)
		fatal("thread %d: cannot restore the code at 0x%" PRIx64 ": %s", (int)t->tid, at, strerror(errno));
	get_regs(t);
	if (WSTOPSIG(status) == SIGTRAP && t->regs.rip == at + 1) {
		/* the breakpoint: back to the instruction it replaced */
		t->regs.rip = at;
		if (ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs) < 0)
			fatal("PTRACE_SETREGS of thread %d: %s", (int)t->tid, strerror(errno));
		complete_step(t, insn, status);
	} else if (t->regs.rip == at) {
		/* a signal after CPUID ran, before the breakpoint */
		complete_step(t, insn, W_STOPCODE(SIGTRAP));
		t->pending_sig = WSTOPSIG(status);
	} else {
		/* a signal before it ran */
		complete_step(t, insn, status);
	}
}

static void step(struct thread *t)
{
	struct ptg_insn *insn = &t->insn;
	uint8_t buf[16];
	size_t n;
	int status;

	if (t->pending_sig) {
		deliver_signal(t);
		return;
	}
	n = ptg_aspace_read(t->proc->as, t->regs.rip, buf, sizeof(buf));
	if (n == 0 || decode(t, insn, t->regs.rip, buf, n) < 0)
		fatal("thread %d: no instruction at 0x%llx", (int)t->tid,
		      t->regs.rip);
	disarm_at(t, t->regs.rip);
	t->sysno = (long)t->regs.rax;
	t->pre_flags = t->regs.eflags;
	t->pre_rcx = t->regs.rcx;
	g.steps++;
	t->b_pending = insn->kind == PTC_BR_FAR;
	if (t->b_pending)
		insn->target = 0;
	if (is_cpuid(insn, buf)) {
		run_over(t, insn);
		return;
	}
	resume_step(t, 0);
	if (!(insn->kind == PTC_BR_FAR ? wait_syscall(t, &status) :
					  wait_thread(t, -1, &status))) {
		/* It sleeps in its system call, which therefore ran. */
		flush_far(t);
		t->state = TH_INFLIGHT;
		t->done = 0;
		return;
	}
	complete_step(t, insn, status);
}

/* ---- runs to breakpoints -----------------------------------------------
 *
 * Single-stepping costs a debug trap per instruction.  Straight-line code
 * needs no trap to be known: from the current IP the tracer walks the code
 * as far as it is sure where control goes (instructions that fall through,
 * direct jumps and calls), and lets the thread run to hardware instruction
 * breakpoints where that certainty ends.  Where a conditional branch ends
 * the walk, both its successors are walked on, and breakpoints go at the
 * ends of those walks (four debug registers: up to four ends): the one
 * that fires says which way each conditional went.  Returns, indirect
 * branches and system calls end a walk and are single-stepped.
 *
 * The walked code is a tree of segments that never contains an address
 * twice nor a breakpoint address, so the thread follows exactly one path
 * of it to one breakpoint, and wherever a signal stops it, its IP says
 * exactly how far it went.  The result is the same ground truth as
 * single-stepping every instruction (--single-step), which the tests check,
 * at a fraction of the traps.  Where debug registers do not stop the
 * thread, int3 instructions stand in for them (soft_arm() below).
 */


/* Instructions insn[first .. first+n-1].  A segment whose last instruction
 * is a conditional branch (cond) forks: its successor d (0 fall-through,
 * 1 target) is next[d], where segment child[d] starts, or a breakpoint
 * when child[d] is -1.  Any other segment ends at the breakpoint next[0]. */
struct seg {
	size_t first, n;
	int cond;
	uint64_t next[2];
	int child[2];
	int parent, dir;	/* -1 for the root */
};

struct tree {
	struct ptg_insn insn[PTG_PATH_MAX];
	size_t n;
	struct seg seg[PTG_SEG_MAX];
	int nseg;
	uint64_t bp[PTG_NBP];
	int bp_seg[PTG_NBP], bp_dir[PTG_NBP];
	int nbp;
};

static int on_tree(const struct tree *tr, uint64_t ip)
{
	for (size_t i = 0; i < tr->n; i++)
		if (tr->insn[i].ip == ip)
			return 1;
	return 0;
}

static int is_bp(const struct tree *tr, uint64_t ip, int except)
{
	for (int i = 0; i < tr->nbp; i++)
		if (i != except && tr->bp[i] == ip)
			return 1;
	return 0;
}

/* Walks a segment from ip, appending to tr->insn, at most up to limit
 * instructions in the tree.  except: the breakpoint this segment replaces
 * (-1 for the root).  Returns 0, or -1 when the segment must not be (it
 * would meet another breakpoint). */
static int walk_seg(struct thread *t, struct tree *tr, struct seg *sg,
		    uint64_t ip, size_t limit, int except,
		    const struct ptg_insn *first)
{
	sg->first = tr->n;
	sg->n = 0;
	sg->cond = 0;
	sg->child[0] = sg->child[1] = -1;
	for (;;) {
		struct ptg_insn *in = &tr->insn[tr->n];
		uint8_t buf[16];
		size_t got;
		uint64_t fall;

		if (is_bp(tr, ip, except))
			return -1;
		if (on_tree(tr, ip)) {
			/* Back on known code: end before the instruction
			 * that led here (an address the tree holds once). */
			if (!sg->n)
				return -1;
			tr->n--;
			sg->n--;
			ip = tr->insn[tr->n].ip;
			break;
		}
		if (tr->n >= limit)
			break;
		if (first && first->ip == ip) {
			/* A return or indirect branch whose target the
			 * registers and memory tell before it executes. */
			*in = *first;
			tr->n++;
			sg->n++;
			ip = in->target;
			continue;
		}
		got = ptg_aspace_read(t->proc->as, ip, buf, sizeof(buf));
		if (got == 0 || decode(t, in, ip, buf, got) < 0 ||
		    in->nowalk)
			break;
		fall = ip + in->len;
		if (in->kind == PTG_NOT_BRANCH) {
			tr->n++;
			sg->n++;
			ip = fall;
			continue;
		}
		if (in->kind == PTC_BR_JMP || in->kind == PTC_BR_CALL) {
			tr->n++;
			sg->n++;
			ip = in->target;
			continue;
		}
		if (in->kind == PTC_BR_COND && in->target != fall &&
		    !on_tree(tr, in->target) && !on_tree(tr, fall) &&
		    !on_tree(tr, ip) && !is_bp(tr, in->target, except) &&
		    !is_bp(tr, fall, except)) {
			tr->n++;
			sg->n++;
			sg->cond = 1;
			sg->next[0] = fall;
			sg->next[1] = in->target;
			return 0;
		}
		break;
	}
	sg->next[0] = ip;
	return 0;
}

static void add_bp(struct tree *tr, uint64_t ip, int segi, int dir)
{
	tr->bp[tr->nbp] = ip;
	tr->bp_seg[tr->nbp] = segi;
	tr->bp_dir[tr->nbp] = dir;
	tr->nbp++;
}

/* The segment's breakpoints. */
static void seg_bps(struct tree *tr, int segi)
{
	struct seg *sg = &tr->seg[segi];

	add_bp(tr, sg->next[0], segi, 0);
	if (sg->cond)
		add_bp(tr, sg->next[1], segi, 1);
}

/* Walks the tree from t's IP; no breakpoint (nbp 0) means: single-step. */
static int read64(void *ctx, uint64_t addr, uint64_t *v)
{
	return ptg_aspace_peek(ctx, addr, v, sizeof(*v));
}

/* When t stands at a return or an indirect jump or call, where it goes:
 * nothing can change the registers or the memory it reads before it
 * executes (the other threads are stopped; a signal would stop t before
 * it). */
static int known_target(struct thread *t, struct ptg_insn *in)
{
	uint8_t buf[16];
	size_t got = ptg_aspace_read(t->proc->as, t->regs.rip, buf,
				     sizeof(buf));

	if (got == 0 || decode(t, in, t->regs.rip, buf, got) < 0)
		return 0;
	if (in->kind != PTC_BR_RET && in->kind != PTC_BR_JMP_IND &&
	    in->kind != PTC_BR_CALL_IND)
		return 0;
	return ptg_insn_indirect_target(in, buf, got, &t->regs, read64,
					t->proc->as, &in->target) == 0;
}

static void walk(struct thread *t, struct tree *tr, uint64_t limit)
{
	struct ptg_insn first;

	tr->n = 0;
	tr->nseg = 0;
	tr->nbp = 0;
	if (limit > PTG_PATH_MAX)
		limit = PTG_PATH_MAX;
	if (walk_seg(t, tr, &tr->seg[0], t->regs.rip, limit, -1,
		     known_target(t, &first) ? &first : NULL) < 0 ||
	    !tr->seg[0].n)
		return;
	tr->seg[0].parent = tr->seg[0].dir = -1;
	tr->nseg = 1;
	seg_bps(tr, 0);
	/* Grow the tree at its breakpoints while debug registers last: a
	 * breakpoint after a conditional branch becomes the start of a
	 * segment. */
	for (int i = 0; i < tr->nbp && tr->nseg < PTG_SEG_MAX; i++) {
		struct seg *sg = &tr->seg[tr->nseg];
		struct seg *parent = &tr->seg[tr->bp_seg[i]];
		size_t saved = tr->n;

		if (!parent->cond)
			continue;
		if (walk_seg(t, tr, sg, tr->bp[i], limit, i, NULL) < 0 ||
		    !sg->n ||
		    tr->nbp + sg->cond > PTG_NBP) {
			tr->n = saved;
			continue;
		}
		/* The new segment's ends must be no other breakpoint. */
		if (is_bp(tr, sg->next[0], i) ||
		    (sg->cond && is_bp(tr, sg->next[1], i))) {
			tr->n = saved;
			continue;
		}
		sg->parent = tr->bp_seg[i];
		sg->dir = tr->bp_dir[i];
		parent->child[sg->dir] = tr->nseg;
		/* Its first breakpoint replaces this one, a second one is
		 * added at the end. */
		tr->bp[i] = sg->next[0];
		tr->bp_seg[i] = tr->nseg;
		tr->bp_dir[i] = 0;
		if (sg->cond)
			add_bp(tr, sg->next[1], tr->nseg, 1);
		tr->nseg++;
		i--;		/* the replaced breakpoint may grow again */
	}
}

/* The instructions of one segment executed (n of them); the last one,
 * when it is the segment's conditional branch, went to next. */
static void seg_executed(struct thread *t, const struct ptg_insn *in,
			 size_t n, uint64_t next)
{
	if (n)
		resumed(t, in[0].ip);
	for (size_t i = 0; i < n; i++) {
		switch (in[i].kind) {
		case PTG_NOT_BRANCH:
			g.now++;
			t->count++;
			break;
		case PTC_BR_COND:
			emit_B(t, &in[i], next == in[i].target);
			break;
		default:
			emit_B(t, &in[i], 1);
			break;
		}
	}
}

/* The thread went from the root down to segment segi, through n of its
 * instructions, and on to next if it went through all of them. */
static void tree_executed(struct thread *t, struct tree *tr, int segi,
			  size_t n, uint64_t next)
{
	int chain[PTG_SEG_MAX], depth = 0;

	for (int s = segi; s >= 0; s = tr->seg[s].parent)
		chain[depth++] = s;
	while (depth-- > 0) {
		struct seg *sg = &tr->seg[chain[depth]];

		if (depth) {
			struct seg *below = &tr->seg[chain[depth - 1]];

			seg_executed(t, &tr->insn[sg->first], sg->n,
				     sg->next[below->dir]);
		} else {
			seg_executed(t, &tr->insn[sg->first], n, next);
		}
	}
}

/* Arms the tree's breakpoints.  All four debug registers stay enabled: an
 * address left from an earlier run is harmless unless it is on the tree
 * (the thread executes nothing else before it stops), so only those are
 * cleared (to 0, which no run executes), and a breakpoint a register
 * already holds stays there: loops meet the same addresses again, and
 * every ptrace call counts. */
static void arm(struct thread *t, const struct tree *tr)
{
	int slot[PTG_NBP], used[PTG_NBP] = { 0 };

	for (int i = 0; i < tr->nbp; i++) {
		slot[i] = -1;
		for (int j = 0; j < PTG_NBP; j++)
			if (!used[j] && t->dr[j] == tr->bp[i]) {
				slot[i] = j;
				used[j] = 1;
				break;
			}
	}
	for (int i = 0; i < tr->nbp; i++) {
		int j = -1;

		if (slot[i] >= 0)
			continue;
		/* Prefer a register that must change anyway. */
		for (int k = 0; k < PTG_NBP && j < 0; k++)
			if (!used[k] && (!t->dr[k] || on_tree(tr, t->dr[k])))
				j = k;
		for (int k = 0; k < PTG_NBP && j < 0; k++)
			if (!used[k])
				j = k;
		used[j] = 1;
		if (set_dr(t, j, tr->bp[i]) < 0)
			fatal("cannot set a breakpoint in thread %d: %s",
			      (int)t->tid, strerror(errno));
		t->dr[j] = tr->bp[i];
	}
	for (int j = 0; j < PTG_NBP; j++) {
		if (used[j] || !t->dr[j] || !on_tree(tr, t->dr[j]))
			continue;
		if (set_dr(t, j, 0) < 0)
			fatal("cannot clear a breakpoint in thread %d: %s",
			      (int)t->tid, strerror(errno));
		t->dr[j] = 0;
	}
	if (t->dr7 != PTG_DR7_ALL) {
		if (set_dr(t, 7, PTG_DR7_ALL) < 0)
			fatal("cannot arm breakpoints in thread %d: %s",
			      (int)t->tid, strerror(errno));
		t->dr7 = PTG_DR7_ALL;
	}
}

/* Whether the tree can run to int3 breakpoints: not when one would lie
 * inside an instruction of the tree (code that overlaps itself). */
static int soft_fits(const struct tree *tr)
{
	for (size_t k = 0; k < tr->n; k++)
		for (int i = 0; i < tr->nbp; i++)
			if (tr->bp[i] > tr->insn[k].ip && tr->bp[i] < tr->insn[k].ip + tr->insn[k].len)
				return 0;
	return 1;
}

/* Software breakpoints, where debug registers do not work (or --int3):
 * an int3 over the first byte of each of the tree's breakpoint addresses
 * while the thread runs, the code put back as soon as it stops.  Nothing
 * else runs meanwhile: the other threads are stopped, or in a system call
 * that a single-step began (which stops them before their next
 * instruction), and straight-line code makes no system call, so neither
 * a child nor another thread ever sees an int3.  An address in no code
 * mapping gets none: the thread faults there, and stops where the
 * breakpoint would have stopped it.  orig: the bytes they replace, from
 * the code cache; armed: which got one. */
static void soft_arm(struct thread *t, const struct tree *tr, uint8_t *orig, int *armed)
{
	static const uint8_t int3 = 0xcc;

	for (int i = 0; i < tr->nbp; i++) {
		armed[i] = ptg_aspace_read(t->proc->as, tr->bp[i], &orig[i], 1) == 1;
		if (armed[i] && ptg_aspace_poke(t->proc->as, tr->bp[i], &int3, 1) < 0)
			fatal("thread %d: cannot set a breakpoint at 0x%" PRIx64 ": %s", (int)t->tid,
			      tr->bp[i], strerror(errno));
	}
}

static void soft_disarm(struct thread *t, const struct tree *tr, const uint8_t *orig, const int *armed)
{
	for (int i = 0; i < tr->nbp; i++)
		if (armed[i] && ptg_aspace_poke(t->proc->as, tr->bp[i], &orig[i], 1) < 0)
			fatal("thread %d: cannot restore the code at 0x%" PRIx64 ": %s", (int)t->tid,
			      tr->bp[i], strerror(errno));
}

/* Runs t through the walked tree, or single-steps one instruction. */
static void advance(struct thread *t, uint64_t limit)
{
	static struct tree tr;
	uint8_t orig[PTG_NBP];
	int armed[PTG_NBP];
	uint64_t r;
	int status, sig, hit = -1;

	if (t->pending_sig || g.single_step) {
		step(t);
		return;
	}
	walk(t, &tr, limit);
	if (!tr.nbp || (g.soft_bp && !soft_fits(&tr))) {
		step(t);
		return;
	}
	if (g.soft_bp)
		soft_arm(t, &tr, orig, armed);
	else
		arm(t, &tr);
	g.runs++;
	if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) < 0)
		fatal("PTRACE_CONT of thread %d: %s", (int)t->tid,
		      strerror(errno));
	if (!wait_thread(t, -1, &status))
		fatal("thread %d blocked in straight-line code", (int)t->tid);
	if (g.soft_bp && !WIFEXITED(status) && !WIFSIGNALED(status))
		soft_disarm(t, &tr, orig, armed);
	if (WIFEXITED(status))
		/* Straight-line code makes no exit call: it ran past the
		 * breakpoints (breakpoints_fire() passed, though). */
		fatal("thread %d exited during a run to breakpoints from 0x%" PRIx64 ": they did not fire",
		      (int)t->tid, tr.insn[0].ip);
	if (WIFSIGNALED(status)) {
		/* Killed from outside: how far it got is unknown. */
		thread_exit(t, status);
		return;
	}
	sig = WSTOPSIG(status);
	get_regs(t);
	r = t->regs.rip;
	if (g.soft_bp && sig == SIGTRAP) {
		/* An int3 traps after itself: back to the instruction it
		 * stood for, which did not execute. */
		for (int i = 0; i < tr.nbp; i++)
			if (armed[i] && tr.bp[i] + 1 == r)
				hit = i;
		if (hit >= 0) {
			t->regs.rip = r = tr.bp[hit];
			if (ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs) < 0)
				fatal("PTRACE_SETREGS of thread %d: %s", (int)t->tid, strerror(errno));
		}
	}
	for (int i = 0; i < tr.nbp; i++)
		if (tr.bp[i] == r)
			hit = i;
	if (hit >= 0) {
		struct seg *sg = &tr.seg[tr.bp_seg[hit]];

		tree_executed(t, &tr, tr.bp_seg[hit], sg->n, r);
	} else {
		size_t k;
		int s;

		for (k = 0; k < tr.n && tr.insn[k].ip != r; k++)
			;
		if (k == tr.n)
			fatal("thread %d stopped at 0x%" PRIx64 ", off the code "
			      "walked from 0x%" PRIx64, (int)t->tid, r,
			      tr.insn[0].ip);
		for (s = 0; s < tr.nseg; s++)
			if (k >= tr.seg[s].first &&
			    k < tr.seg[s].first + tr.seg[s].n)
				break;
		tree_executed(t, &tr, s, k - tr.seg[s].first, 0);
	}
	if (sig != SIGTRAP || hit < 0)
		t->pending_sig = sig;
}

/* ---- scheduling -------------------------------------------------------- */

/* Threads whose blocking system call ended become runnable here, at a
 * scheduling point, not whenever their report happened to arrive. */
static void reap_inflight(void)
{
	for (size_t i = 0; i < g.nthreads; i++) {
		struct thread *t = g.threads[i];

		/* A thread woken by what the others did is running towards
		 * its stop: wait for it, so that it is runnable here
		 * whatever the timing. */
		while (t->state == TH_INFLIGHT && !t->done && !sleeping(t)) {
			int status;

			if (wait_thread(t, 1, &status)) {
				t->done = 1;
				t->done_status = status;
			}
		}
		if (t->state == TH_INFLIGHT && t->done) {
			t->done = 0;
			complete_step(t, &t->insn, t->done_status);
		}
	}
}

static int any_live(void)
{
	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i]->state != TH_DEAD && g.threads[i]->proc)
			return 1;
	return 0;
}

/* The next runnable thread after cur in creation order (round robin). */
static struct thread *pick(struct thread *cur)
{
	size_t start = 0;

	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i] == cur)
			start = i + 1;
	for (size_t k = 0; k < g.nthreads; k++) {
		struct thread *t = g.threads[(start + k) % g.nthreads];

		if (t->state == TH_READY)
			return t;
	}
	return NULL;
}

/* --max-insns reached: end every thread's trace and kill the programs. */
static void stop_all(void)
{
	for (size_t i = 0; i < g.nthreads; i++) {
		struct thread *t = g.threads[i];

		if (t->state == TH_DEAD || !t->proc)
			continue;
		if (t->state == TH_INFLIGHT)
			flush_far(t);	/* it is in its system call */
		if (t->state == TH_READY && t->count)
			emit_A(t, t->regs.rip);
		fprintf(g.out, "E %" PRIu64 " %d\n", g.now, (int)t->tid);
	}
	for (size_t i = 0; i < g.nthreads; i++) {
		struct thread *t = g.threads[i];

		if (t->state != TH_DEAD && t->proc)
			kill(t->proc->pid, SIGKILL);
		t->state = TH_DEAD;
	}
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static void run(void)
{
	struct thread *cur = NULL;
	uint64_t left = 0, before, used;

	while (any_live()) {
		if (g.max_insns && g.now >= g.max_insns) {
			fprintf(stderr, "ptgen-trace: stopped after %" PRIu64
				" instructions (--max-insns)\n", g.now);
			stop_all();
			return;
		}
		if (interrupted) {
			fprintf(stderr, "ptgen-trace: interrupted after %" PRIu64
				" instructions\n", g.now);
			stop_all();
			return;
		}
		if (!cur || cur->state != TH_READY || left == 0) {
			struct thread *next;

			reap_inflight();
			next = pick(cur);
			if (!next) {
				wait_any();
				continue;
			}
			cur = next;
			left = g.slice;
		}
		if (cur != g.last_stepped) {
			fprintf(g.out, "S %" PRIu64 " %d\n", g.now,
				(int)cur->tid);
			g.last_stepped = cur;
		}
		before = g.now;
		advance(cur, g.max_insns && g.max_insns - g.now < left ?
			     g.max_insns - g.now : left);
		used = g.now - before;
		/* Turns are counted in instructions, not in steps (a REP
		 * iteration or a signal delivery is a step but no
		 * instruction), so that both engines switch at the same
		 * instruction. */
		left -= used < left ? used : left;
	}
}

/* ---- start ------------------------------------------------------------- */

struct child_error {
	int what;		/* 0 ptrace, 1 exec */
	int err;
};

static void child(char **argv, int errfd, const sigset_t *mask)
{
	struct child_error e = { 0, 0 };

	sigprocmask(SIG_SETMASK, mask, NULL);
	/* The same addresses at every run make the ground truth
	 * reproducible. */
	if (!g.aslr)
		personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
		e.err = errno;
		if (write(errfd, &e, sizeof(e)) < 0)
			_exit(126);
		_exit(126);
	}
	raise(SIGSTOP);
	execvp(argv[0], argv);
	e.what = 1;
	e.err = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(PTG_EXIT_NOEXEC);
	_exit(PTG_EXIT_NOEXEC);
}

static void no_ptrace(int err)
{
	fprintf(stderr, "ptgen-trace: ptrace is not permitted here (%s); "
		"see /proc/sys/kernel/yama/ptrace_scope\n", strerror(err));
	exit(PTG_EXIT_SKIP);
}

/* Starts argv under ptrace and returns its first thread, stopped at the
 * exec of the program. */
static struct thread *start(char **argv)
{
	int fds[2], st;
	sigset_t block, old;
	struct child_error e;
	struct thread *t;
	pid_t pid;
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXEC;

	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (pipe2(fds, O_CLOEXEC) < 0)
		fatal("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fatal("fork: %s", strerror(errno));
	if (pid == 0)
		child(argv, fds[1], &old);
	close(fds[1]);
	if (waitpid(pid, &st, __WALL) < 0)
		fatal("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st)) {
		if (read(fds[0], &e, sizeof(e)) == sizeof(e) && e.what == 0)
			no_ptrace(e.err);
		fatal("the child did not start");
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)opts) < 0) {
		if (errno == EPERM)
			no_ptrace(errno);
		fatal("PTRACE_SETOPTIONS: %s", strerror(errno));
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0)
		fatal("PTRACE_CONT: %s", strerror(errno));
	if (waitpid(pid, &st, __WALL) < 0)
		fatal("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st) || (st >> 16) != PTRACE_EVENT_EXEC) {
		if (read(fds[0], &e, sizeof(e)) == sizeof(e) && e.what == 1) {
			fprintf(stderr, "ptgen-trace: cannot execute %s: %s\n",
				argv[0], strerror(e.err));
			exit(PTG_EXIT_NOEXEC);
		}
		fatal("%s did not reach its exec", argv[0]);
	}
	close(fds[0]);
	g.root_pid = pid;
	t = new_thread(pid);
	t->proc = new_proc(pid, 0);
	t->proc->live = 1;
	t->seen_stop = 1;
	fprintf(g.out, "V 1\n");
	emit_T(t);
	emit_C(t, 1);
	if (refresh_maps(t) < 0)
		fatal("cannot read the mappings of %s", argv[0]);
	/* The exec stop is inside execve: one step returns to user mode,
	 * at the entry, with nothing executed yet. */
	resume_step(t, 0);
	if (waitpid(pid, &st, __WALL) < 0)
		fatal("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st))
		fatal("%s ended at its exec", argv[0]);
	became_ready(t);
	if (WSTOPSIG(st) != SIGTRAP)
		t->pending_sig = WSTOPSIG(st);
	return t;
}

/* Tracer and tracees take turns, never run together: on one CPU, a step
 * costs no cross-CPU wake-up (a third less time per step in a VM). */
static void pin_to_one_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Whether hardware instruction breakpoints fire here: some hypervisors
 * accept the debug registers and never stop the guest at them, and runs
 * to breakpoints would then let the program run to its end unseen.  A
 * child stops at one in a function of its own, or every instruction is
 * single-stepped. */
static __attribute__((noinline)) void probe_target(void)
{
	__asm__ volatile("nop");
}

static int breakpoints_fire(void)
{
	int status, fired = 0;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (!pid) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			raise(SIGSTOP);
		probe_target();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status) &&
	    ptrace(PTRACE_POKEUSER, pid, (void *)offsetof(struct user, u_debugreg[0]),
		   (void *)(uintptr_t)probe_target) == 0 &&
	    ptrace(PTRACE_POKEUSER, pid, (void *)offsetof(struct user, u_debugreg[7]), (void *)1L) == 0 &&
	    ptrace(PTRACE_CONT, pid, NULL, NULL) == 0 && waitpid(pid, &status, 0) == pid &&
	    WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) {
		struct user_regs_struct regs;

		fired = ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0 &&
			regs.rip == (uintptr_t)probe_target;
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == pid && !WIFEXITED(status) && !WIFSIGNALED(status))
		;
	return fired;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ptgen-trace [-o OUT.truth] [--vdso-dir DIR] [--slice N]\n"
"                   [--max-insns N] [--single-step] [--aslr] [-v]\n"
"                   -- PROGRAM ARGS...\n"
"Single-steps PROGRAM (and its threads and child processes) and writes the\n"
"exact user-mode execution as a ptgen ground truth (default: stdout).\n"
"  -o FILE          write the ground truth to FILE\n"
"  --vdso-dir DIR   where to dump the vDSO image (default: the directory of\n"
"                   FILE, or . when writing to stdout)\n"
"  --slice N        instructions a thread runs before the next one (10000)\n"
"  --max-insns N    stop after N instructions (E lines end every thread)\n"
"  --single-step    single-step every instruction (slow reference mode;\n"
"                   by default straight-line code runs to a breakpoint,\n"
"                   where hardware breakpoints work)\n"
"  --int3           the runs' breakpoints are int3 instructions written\n"
"                   into the code while the thread runs (the default where\n"
"                   hardware breakpoints do not fire)\n"
"  --aslr           keep address-space layout randomisation (default: off,\n"
"                   so that runs are reproducible)\n"
"  -v               per-thread counts on stderr\n");
}

static uint64_t number(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s || s[0] == '-')
		fatal("%s: not a number: %s", opt, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "vdso-dir", required_argument, NULL, 'd' },
		{ "slice", required_argument, NULL, 's' },
		{ "max-insns", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "single-step", no_argument, NULL, '1' },
		{ "int3", no_argument, NULL, '3' },
		{ "aslr", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL;
	char *dir = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "+o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		case 'd': g.vdso_dir = optarg; break;
		case 's':
			g.slice = number(optarg, "--slice");
			if (!g.slice)
				fatal("--slice must be at least 1");
			break;
		case 'm': g.max_insns = number(optarg, "--max-insns"); break;
		case 'v': g.verbose = 1; break;
		case '1': g.single_step = 1; break;
		case '3': g.soft_bp = 1; break;
		case 'a': g.aslr = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (outpath && strcmp(outpath, "-")) {
		g.out = fopen(outpath, "we");
		if (!g.out)
			fatal("cannot create %s: %s", outpath, strerror(errno));
	} else {
		g.out = stdout;
	}
	setvbuf(g.out, NULL, _IOFBF, 1 << 20);
	if (!g.vdso_dir) {
		const char *slash = outpath ? strrchr(outpath, '/') : NULL;

		if (slash) {
			dir = strndup(outpath, (size_t)(slash - outpath) + !(slash - outpath));
			if (!dir)
				fatal("out of memory");
			g.vdso_dir = dir;
		} else {
			g.vdso_dir = ".";
		}
	}
	pin_to_one_cpu();
	if (!g.single_step && !g.soft_bp && !breakpoints_fire()) {
		g.soft_bp = 1;
		if (g.verbose)
			fprintf(stderr, "ptgen-trace: hardware breakpoints do not fire here: "
				"runs to int3 instructions instead\n");
	}
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_interrupt;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	start(argv + optind);
	run();
	if (fflush(g.out) || ferror(g.out) || (g.out != stdout && fclose(g.out)))
		fatal("cannot write %s: %s", outpath ? outpath : "stdout",
		      strerror(errno));
	if (g.verbose)
		fprintf(stderr, "ptgen-trace: %" PRIu64 " instructions, %"
			PRIu64 " steps, %" PRIu64 " runs\n", g.now, g.steps,
			g.runs);
	free(dir);
	if (interrupted)
		return 128 + interrupted;
	if (!g.root_done)
		return 0;
	if (WIFSIGNALED(g.root_status))
		return 128 + WTERMSIG(g.root_status);
	return WEXITSTATUS(g.root_status);
}
