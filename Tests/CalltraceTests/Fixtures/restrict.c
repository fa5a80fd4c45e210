// A program that restricts itself, as sandboxes and small secure programs do, then computes
// through instrumented calls and prints its result. argv[1] picks the restriction:
//   strict, strict-syscall   seccomp strict mode (prctl, or the seccomp system call); the program
//                            then may only read, write, exit and sigreturn: it ends with the raw
//                            exit system call, status 3
//   tsc, tsc-syscall         prctl(PR_SET_TSC, PR_TSC_SIGSEGV): rdtsc faults from then on
//   kill-filter              a seccomp filter that kills the process on futex (which the program
//                            itself never makes), allowing everything else
//   allow-filter             a filter that kills only on ptrace
//   tsync-filter             the kill-filter on every thread (SECCOMP_FILTER_FLAG_TSYNC)
// Before it restricts itself it naps 30 ms in `before`; after, `nap` sleeps 40 ms and `compute`
// spins. Output: "result N" (the same traced and untraced), and for tsc its nap's own measure.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long n) {
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++) s += (i * i) ^ (s >> 3);
    return s;
}

__attribute__((noinline)) unsigned long compute(void) {
    unsigned long s = 0;
    for (int k = 0; k < 20; k++) s += work(1000000 + (unsigned long)k);
    return s;
}

// Sleeps through the system calls alone: with the TSC forbidden the vDSO's clock faults too.
__attribute__((noinline)) long nap(long ms) {
    struct timespec a, b, d = { ms / 1000, (ms % 1000) * 1000000 };
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
    syscall(SYS_nanosleep, &d, NULL);
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
}

__attribute__((noinline)) void before(void) { sink = (unsigned long)nap(30); }

// Writes "result N\n" with write alone (strict mode allows nothing else).
static void say(const char *what, unsigned long v) {
    char buf[64], tmp[24];
    size_t n = strlen(what), k = 0;
    memcpy(buf, what, n);
    buf[n++] = ' ';
    do { tmp[k++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (k) buf[n++] = tmp[--k];
    buf[n++] = '\n';
    syscall(SYS_write, 1, buf, n);
}

static struct sock_fprog filter_killing(int nr) {
    static struct sock_filter code[6];
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    };
    memcpy(code, prog, sizeof prog);
    static struct sock_filter with_allow[7];
    memcpy(with_allow, code, sizeof code);
    with_allow[6] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    return (struct sock_fprog){ .len = 7, .filter = with_allow };
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    before();
    if (!strcmp(mode, "strict") || !strcmp(mode, "strict-syscall")) {
        int r = !strcmp(mode, "strict") ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)
                                        : (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL);
        if (r != 0) { perror("seccomp strict"); return 2; }
        say("result", compute() % 1000003);
        syscall(SYS_exit, 3);
    }
    if (!strcmp(mode, "tsc") || !strcmp(mode, "tsc-syscall")) {
        int r = !strcmp(mode, "tsc") ? prctl(PR_SET_TSC, PR_TSC_SIGSEGV)
                                     : (int)syscall(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
        if (r != 0) { perror("PR_SET_TSC"); return 2; }
        long ns = nap(40);
        say("result", compute() % 1000003);
        say("nap_ns", (unsigned long)ns);
        return 0;
    }
    if (!strcmp(mode, "kill-filter") || !strcmp(mode, "allow-filter") || !strcmp(mode, "tsync-filter")) {
        struct sock_fprog prog = filter_killing(!strcmp(mode, "allow-filter") ? SYS_ptrace : SYS_futex);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) { perror("no_new_privs"); return 2; }
        int r = !strcmp(mode, "tsync-filter")
                    ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)
                    : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
        if (r != 0) { perror("seccomp filter"); return 2; }
        long ns = nap(40);
        say("result", compute() % 1000003);
        sink = (unsigned long)ns;
        return 0;
    }
    fprintf(stderr, "usage: restrict strict|strict-syscall|tsc|tsc-syscall|kill-filter|allow-filter|tsync-filter\n");
    return 2;
}
