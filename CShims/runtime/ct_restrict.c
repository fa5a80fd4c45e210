// Programs that restrict themselves (ct_restrict.h; why and what, docs/design.md "Programs that
// restrict themselves").
//
// A seccomp filter is classic BPF over `struct seccomp_data`. Before the program's filter goes on,
// it is run here on each system call the runtime may make on the threads it will govern, with the
// arguments the runtime passes: only an answer that lets the call happen or fail (ALLOW, LOG,
// ERRNO; the runtime takes a failed call in its stride) leaves the runtime its work there. Kill,
// trap, trace and notify answers, an instruction this interpreter does not know, or a program that
// does not return, count as forbidding it.
#include "ct_restrict.h"
#include "ct_calls.h"
#include "ct_clock.h"
#include "ct_drain.h"
#include "ct_format.h"
#include "ct_meta.h"
#include "ct_runtime.h"
#include "ct_signals.h"
#include "ct_first_call.h"
#include "ct_thread.h"
#include "ct_trace.h"
#include "ct_writer.h"
#include "ct_syscall.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct runtime_call {
    int nr;
    uint64_t args[6];
};

// What the runtime may do on a program thread: hand a block to the drain thread (futex), attach
// (its stack of calls and alternate signal stack, its id), end, record a crash (the fatal-signal
// handler), read the clock once the TSC is forbidden, sample a mute on an unrecorded thread.
static const struct runtime_call program_calls[] = {
    { SYS_futex, { 0, FUTEX_WAKE_PRIVATE, 1 } },
    { SYS_futex, { 0, FUTEX_WAIT_PRIVATE, 1 } },
    { SYS_gettid, { 0 } },
    { SYS_getpid, { 0 } },
    { SYS_mmap, { 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, (uint64_t)-1, 0 } },
    { SYS_munmap, { 0, 4096 } },
    { SYS_sigaltstack, { 0 } },
    { SYS_rt_sigaction, { SIGSEGV, 0, 0, 8 } },
    { SYS_rt_sigprocmask, { SIG_SETMASK, 0, 0, 8 } },
    { SYS_tgkill, { 0, 0, SIGSEGV } },
    { SYS_clock_gettime, { CLOCK_MONOTONIC } },
    { SYS_sched_yield, { 0 } },
};

// What the drain thread does: the file (open, map, grow, cut), /proc (the threads' states, names,
// the loader's list), waiting and patching.
static const struct runtime_call drain_calls[] = {
    { SYS_futex, { 0, FUTEX_WAIT_PRIVATE, 1 } },
    { SYS_futex, { 0, FUTEX_WAKE_PRIVATE, 1 } },
    { SYS_openat, { (uint64_t)AT_FDCWD, 0, 0 } },
    { SYS_read, { 3 } },
    { SYS_pread64, { 3 } },
    { SYS_close, { 3 } },
    { SYS_readlink, { 0 } },
    { SYS_fstat, { 3 } },
    { SYS_newfstatat, { (uint64_t)AT_FDCWD } },
    { SYS_fstatfs, { 3 } },
    { SYS_fallocate, { 3, 0 } },
    { SYS_ftruncate, { 3 } },
    { SYS_mmap, { 0, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0 } },
    { SYS_munmap, { 0, 65536 } },
    { SYS_madvise, { 0, 65536, MADV_POPULATE_WRITE } },
    { SYS_mprotect, { 0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC } },
    { SYS_membarrier, { 0 } },
    { SYS_prlimit64, { 0, RLIMIT_FSIZE } },
    { SYS_clock_gettime, { CLOCK_MONOTONIC } },
    { SYS_clock_nanosleep, { CLOCK_MONOTONIC } },
    { SYS_gettid, { 0 } },
    { SYS_getpid, { 0 } },
    { SYS_exit, { 0 } },
};

enum verdict { HARMLESS, FORBIDS };

// One run of `prog` on `d`: the action it returns (SECCOMP_RET_ACTION_FULL bits), or false when it
// cannot be told. The kernel checked nothing yet (the filter is not installed): every jump and
// memory index is checked here.
CT_NO_INSTRUMENT static bool run_filter(const struct sock_fprog *prog, const struct seccomp_data *d, uint32_t *ret) {
    if (!prog || !prog->filter || prog->len == 0 || prog->len > BPF_MAXINSNS) return false;
    const struct sock_filter *code = prog->filter;
    uint32_t n = prog->len, a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
    for (uint32_t pc = 0; pc < n; pc++) {
        const struct sock_filter *i = &code[pc];
        uint32_t k = i->k;
        switch (i->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            if (k > sizeof *d - 4 || (k & 3)) return false;
            memcpy(&a, (const uint8_t *)d + k, 4);
            continue;
        case BPF_LD | BPF_W | BPF_LEN: a = sizeof *d; continue;
        case BPF_LDX | BPF_W | BPF_LEN: x = sizeof *d; continue;
        case BPF_LD | BPF_IMM: a = k; continue;
        case BPF_LDX | BPF_IMM: x = k; continue;
        case BPF_LD | BPF_MEM: if (k >= BPF_MEMWORDS) return false; a = mem[k]; continue;
        case BPF_LDX | BPF_MEM: if (k >= BPF_MEMWORDS) return false; x = mem[k]; continue;
        case BPF_ST: if (k >= BPF_MEMWORDS) return false; mem[k] = a; continue;
        case BPF_STX: if (k >= BPF_MEMWORDS) return false; mem[k] = x; continue;
        case BPF_MISC | BPF_TAX: x = a; continue;
        case BPF_MISC | BPF_TXA: a = x; continue;
        case BPF_RET | BPF_K: *ret = k; return true;
        case BPF_RET | BPF_A: *ret = a; return true;
        case BPF_JMP | BPF_JA:
            if (k >= n - pc - 1) return false;
            pc += k;
            continue;
        default: break;
        }
        uint32_t v = BPF_SRC(i->code) == BPF_X ? x : k;
        if (BPF_CLASS(i->code) == BPF_ALU) {
            switch (BPF_OP(i->code)) {
            case BPF_ADD: a += v; break;
            case BPF_SUB: a -= v; break;
            case BPF_MUL: a *= v; break;
            case BPF_DIV: if (v == 0) { *ret = 0; return true; } a /= v; break;  // the kernel's answer: 0, a kill
            case BPF_MOD: if (v == 0) { *ret = 0; return true; } a %= v; break;
            case BPF_OR: a |= v; break;
            case BPF_AND: a &= v; break;
            case BPF_XOR: a ^= v; break;
            case BPF_LSH: a = v < 32 ? a << v : 0; break;
            case BPF_RSH: a = v < 32 ? a >> v : 0; break;
            case BPF_NEG: a = -a; break;
            default: return false;
            }
            continue;
        }
        if (BPF_CLASS(i->code) != BPF_JMP) return false;
        bool taken;
        switch (BPF_OP(i->code)) {
        case BPF_JEQ: taken = a == v; break;
        case BPF_JGT: taken = a > v; break;
        case BPF_JGE: taken = a >= v; break;
        case BPF_JSET: taken = (a & v) != 0; break;
        default: return false;
        }
        uint32_t skip = taken ? i->jt : i->jf;
        if (skip >= n - pc - 1) return false;
        pc += skip;
    }
    return false;  // ran off its end: the kernel would not have taken it
}

CT_NO_INSTRUMENT static enum verdict judge(const struct sock_fprog *prog, const struct runtime_call *calls, size_t count) {
    for (size_t c = 0; c < count; c++) {
        struct seccomp_data d = { .nr = calls[c].nr, .arch = AUDIT_ARCH_X86_64,
                                  .instruction_pointer = (uint64_t)(uintptr_t)&run_filter };
        memcpy(d.args, calls[c].args, sizeof d.args);
        uint32_t ret;
        if (!run_filter(prog, &d, &ret)) return FORBIDS;
        uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
        if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG && action != SECCOMP_RET_ERRNO) return FORBIDS;
    }
    return HARMLESS;
}

CT_NO_INSTRUMENT static void write_record(uint32_t stream, uint64_t tid, uint64_t tick, uint32_t what, uint32_t done) {
    if (!ct_trace_is_open()) return;
    uint8_t body[5 * 10], *q = body;
    q = ct_put_varint(q, stream);
    q = ct_put_varint(q, tid);
    q = ct_put_varint(q, tick);
    q = ct_put_varint(q, what);
    q = ct_put_varint(q, done);
    ct_meta_write_record(CT_REC_RESTRICTED, body, (size_t)(q - body));
}

// The calling thread will not be allowed what the runtime needs: its open calls are written as
// unfinished now (their cost so far), its stream and signal stack go, the runtime's fatal-signal
// handlers give way to the defaults (they could not run their system calls on it), and from now
// on its hooks return at once.
CT_NO_INSTRUMENT static void stop_here(uint32_t what, uint32_t done) {
    struct ct_thread *t = &ct_self;
    uint64_t now = ct_now();
    uint32_t stream = 0;
    uint64_t tid = (uint64_t)ct_syscall(SYS_gettid);
    if (t->state == CT_THREAD_ACTIVE) {
        stream = t->stream.id;
        ct_calls_close_open(t, now);
        ct_thread_end(t);
    }
    write_record(stream, tid, now, what, done);
    ct_signals_give_way();
    t->state = CT_THREAD_RESTRICTED;
}

CT_NO_INSTRUMENT static void note_here(uint32_t what, uint32_t done) {
    struct ct_thread *t = &ct_self;
    uint32_t stream = t->state == CT_THREAD_ACTIVE ? t->stream.id : 0;
    write_record(stream, (uint64_t)ct_syscall(SYS_gettid), ct_now(), what, done);
}

// Not on a vfork child (its memory and thread state are its parent's) nor before the runtime is
// set up; a thread restricted already has nothing left to give.
CT_NO_INSTRUMENT static bool applies(void) {
    uint32_t s = ct_self.state;
    return ct_rt.enabled && s != CT_THREAD_VFORKED && s != CT_THREAD_RESTRICTED && s != CT_THREAD_UNTRACED &&
           getpid() == ct_rt.pid;
}

CT_NO_INSTRUMENT static void before_strict(void) {
    if (!applies()) return;
    stop_here(CT_RESTRICT_STRICT, CT_RESTRICT_STOPPED);
}

CT_NO_INSTRUMENT static void before_filter(const struct sock_fprog *prog, bool every_thread) {
    if (!applies()) return;
    struct ct_thread *t = &ct_self;
    // A thread that has not run a hook yet would open the trace (and start the drain thread, which
    // would inherit the filter) on its first one: that happens now, before the filter.
    if (t->state == CT_THREAD_NEW) ct_first_call(t, true);
    bool program_ok = judge(prog, program_calls, sizeof program_calls / sizeof program_calls[0]) == HARMLESS;
    bool drain_ok = !every_thread || judge(prog, drain_calls, sizeof drain_calls / sizeof drain_calls[0]) == HARMLESS;
    if (program_ok && drain_ok) {
        // The drain thread goes on under the filter: it starts no thread of its own from then on
        // (ct_hang_capture_prepare), whose system calls the lists above do not hold.
        if (every_thread) atomic_store_explicit(&ct_rt.drain_filtered, true, memory_order_release);
        note_here(every_thread ? CT_RESTRICT_FILTER_ALL : CT_RESTRICT_FILTER, CT_RESTRICT_TIMED_ON);
        return;
    }
    if (!every_thread) {
        // The threads this one starts inherit the filter, and nothing tells them apart from others.
        atomic_store_explicit(&ct_rt.new_threads_restricted, true, memory_order_release);
        stop_here(CT_RESTRICT_FILTER, CT_RESTRICT_STOPPED);
        return;
    }
    // Every thread gets it, the drain thread too: the trace is closed now, as at exit (this
    // thread's open calls and main's written as unfinished, the drain thread's last writes), and no
    // thread's calls are timed after that; with the program's threads forbidden our system calls
    // too, none makes one any more (ct_ring_wake, thread ends).
    atomic_store_explicit(&ct_rt.new_threads_restricted, true, memory_order_release);
    note_here(CT_RESTRICT_FILTER_ALL, CT_RESTRICT_STOPPED_ALL);
    ct_trace_close();
    ct_drain_stop(false);   // and joined: gone before the filter, which it would not survive
    if (!program_ok) atomic_store_explicit(&ct_rt.no_calls, true, memory_order_release);
    ct_signals_give_way();
    t->state = CT_THREAD_RESTRICTED;
}

CT_NO_INSTRUMENT void ct_restrict_before_prctl(int option, unsigned long a2, unsigned long a3) {
    if (option == PR_SET_TSC && a2 == PR_TSC_SIGSEGV) {
        // Timing goes on, with the clock's system call (ct_clock.h).
        ct_clock_stop_tsc(ct_rt.calib_tick0, ct_rt.calib_ns0);
        if (applies()) note_here(CT_RESTRICT_TSC, CT_RESTRICT_CLOCK_CALL);
    } else if (option == PR_SET_SECCOMP && a2 == SECCOMP_MODE_STRICT) {
        before_strict();
    } else if (option == PR_SET_SECCOMP && a2 == SECCOMP_MODE_FILTER) {
        before_filter((const struct sock_fprog *)a3, false);
    }
}

CT_NO_INSTRUMENT void ct_restrict_before_seccomp(unsigned long op, unsigned long flags, const void *args) {
    if (op == SECCOMP_SET_MODE_STRICT) {
        before_strict();
    } else if (op == SECCOMP_SET_MODE_FILTER) {
        before_filter(args, (flags & SECCOMP_FILTER_FLAG_TSYNC) != 0);
    }
}

CT_NO_INSTRUMENT bool ct_restrict_is_self(void) { return ct_self.state == CT_THREAD_RESTRICTED; }
