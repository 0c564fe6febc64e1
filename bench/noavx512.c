/*
 * noavx512.so - run a peer as on an AVX2 machine: an LD_PRELOAD library
 * that hides AVX-512 from CPUID, so that ONNX Runtime (whose MLAS picks
 * its kernels by CPUID and has no setting to cap them) runs its AVX2
 * kernels, as on the Zen 2 hosts, beside aoe under AOE_MAX_ISA=avx2.
 *
 *   LD_PRELOAD=bench/noavx512.so NODE_OPTIONS=--disable-wasm-trap-handler \
 *       node bench/ort-run.js ...
 *
 * How: the kernel's CPUID faulting (arch_prctl ARCH_SET_CPUID, 0; the
 * cpuid_fault flag in /proc/cpuinfo) makes every CPUID instruction of the
 * process raise SIGSEGV.  The handler turns CPUID back on for its thread,
 * runs the instruction, clears the AVX-512 bits of leaf 7 from the
 * result, turns it off again and steps over the instruction.  The
 * setting passes to threads and children and ends at execve.  Where the
 * kernel or CPU has no CPUID faulting the library says so and exits 1:
 * a figure said to be AVX2 must not come from AVX-512 code.
 *
 * Node's WebAssembly trap handler takes SIGSEGV after this library has,
 * and does not hand a fault it does not own back (the process dies at
 * the first CPUID): hence --disable-wasm-trap-handler.  XGETBV is not
 * trapped, so the OS still reports the AVX-512 register state; programs
 * that look at CPUID's feature bits first (MLAS, glibc, oneDNN) see an
 * AVX2 machine.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* Leaf 7, subleaf 0: the AVX-512 bits of EBX, ECX and EDX. */
#define EBX7 (1u << 16 | 1u << 17 | 1u << 21 | 1u << 26 | 1u << 27 | \
    1u << 28 | 1u << 30 | 1u << 31)
#define ECX7 (1u << 1 | 1u << 6 | 1u << 11 | 1u << 12 | 1u << 14)
#define EDX7 (1u << 2 | 1u << 3 | 1u << 8 | 1u << 23)
/* Leaf 7, subleaf 1: AVX512_BF16 in EAX. */
#define EAX71 (1u << 5)

static long
cpuid_on(int on)
{
	return syscall(SYS_arch_prctl, ARCH_SET_CPUID, on);
}

static void
on_segv(int sig, siginfo_t *si, void *p)
{
	ucontext_t *uc = p;
	greg_t *r = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *)r[REG_RIP];
	unsigned leaf = (unsigned)r[REG_RAX], sub = (unsigned)r[REG_RCX];
	unsigned a, b, c, d;

	(void)si;
	if (ip[0] != 0x0f || ip[1] != 0xa2) {
		/* Not CPUID: the fault is real; it recurs and kills. */
		signal(sig, SIG_DFL);
		return;
	}
	cpuid_on(1);
	__cpuid_count(leaf, sub, a, b, c, d);
	cpuid_on(0);
	if (leaf == 7 && sub == 0) {
		b &= ~EBX7;
		c &= ~ECX7;
		d &= ~EDX7;
	} else if (leaf == 7 && sub == 1)
		a &= ~EAX71;
	r[REG_RAX] = a;
	r[REG_RBX] = b;
	r[REG_RCX] = c;
	r[REG_RDX] = d;
	r[REG_RIP] += 2;
}

__attribute__((constructor)) static void
noavx512_init(void)
{
	static const char msg[] = "noavx512.so: cannot trap CPUID here "
	    "(no cpuid_fault): refusing to run\n";
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0 || cpuid_on(0) != 0) {
		(void)!write(2, msg, sizeof(msg) - 1);
		_exit(1);
	}
}
