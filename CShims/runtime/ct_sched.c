// Sampling where each recording thread's time goes, and why it is done this way
// (docs/design.md, "Why a call was slow"):
//
// - Only the kernel knows when a thread ran, waited for a CPU or slept. sched_info keeps two sums
//   per thread (CONFIG_SCHED_INFO, on in distribution kernels, with or without CONFIG_SCHEDSTATS)
//   and shows them in /proc/self/task/TID/schedstat: the time on a CPU and the run delay (runnable,
//   waiting for one). No setup, no privilege (unlike perf's sched_switch tracepoint), and the hooks
//   stay untouched: nothing here runs on a program thread.
// - What a blocked thread waits in the kernel shows without touching it:
//   /proc/self/task/TID/syscall (the system call and its arguments, or "running"), its `wchan`
//   outside a system call (a page fault's I/O), and for a descriptor argument what
//   /proc/self/task/TID/fd/N links to. Read only when the thread did not run throughout the
//   interval; the link only when the call or its descriptor changed.
// - Only threads inside a long call are sampled: one whose outermost open call (ct_open_frames.c)
//   is older than a quarter of the threshold. A thread's first sample, when it starts recording,
//   is the baseline; after its long call, one more sample closes the interval. So an idle or fast
//   thread costs nothing after its first sample.
// - The drain thread makes passes anyway (1-8 ms apart; sooner when this sampler wants one); it
//   reads each file with pread on a descriptor it keeps open. The descriptors live in the drain
//   thread's own descriptor table (ct_drain.c), so the program never sees them and they never take
//   one of its numbers. A drain thread that ended (paused around unshare/setns, or the parent's, in
//   a fork child) took its table with it: its numbers mean nothing to the next one, which starts
//   afresh (`S.owner_*`, `owner_thread`), without closing numbers that are not its own.
// - Cost: a read after the drain thread's sleep costs 2-8 us (cold caches; measured on a VM), so a
//   thread is read every 2 ms while what it does changes, and every 4, then 8 ms while it does not
//   (running throughout, or blocked in the same call); a thread blocked at its last sample whose
//   CPU time has not moved since (one clock read) is not read further. At most
//   CT_SCHED_READS_PER_PASS threads a pass, however many record. Measured (Scripts/bench
//   --sampler-only and CPU-time clocks around the pass): 0.07-0.13 % of a core for a main thread
//   computing inside a slow call, 0.3 % for one alternating 1 ms sleeps and 1 ms of work (the
//   worst case), about 0.05 % for one that never stays in a long call.
// - Each sample is a THREAD_STATE record of the two cumulative sums and the state at that moment;
//   the reader spreads each interval's growth over the calls it overlaps. A sample that shows
//   nothing new (blocked in the same call, no time on a CPU since) is not written: the interval
//   from the last one written says the same.
// - The records go into the metadata stream (ct_meta.c) or a flight recorder's events stream
//   (ct_event_stream.c), which the drain thread writes already, under their locks; a thread's own
//   stream is written by its thread alone.
#include "ct_sched.h"
#include "ct_proc.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_event_stream.h"
#include "ct_open_frames.h"
#include "ct_runtime.h"
#include "ct_writer.h"
#include "ct_syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// A thread whose state changed is read every 2 ms; one whose state did not, every 4, then 8 ms.
#define CT_SCHED_PERIOD_NS 2000000ull
#define CT_SCHED_QUIET_PERIOD_NS 8000000ull
// The drain thread is woken early when a recording thread wants blocks; a pass this soon after
// the last sampled one samples nothing (so a burst of wakes costs no reads).
#define CT_SCHED_MIN_GAP_NS 1800000ull
#define CT_SCHED_READS_PER_PASS 2u
#define CT_SCHED_OPENS_PER_PASS 2u
// A thread is sampled while its outermost open call is older than threshold / this.
#define CT_SCHED_GATE_DIVISOR 4u
// Threads watched at once (each holds a descriptor); beyond that, threads go unsampled and the
// header says so (CT_SCHED_PARTIAL).
#define CT_SCHED_MAX_THREADS 256u
#define CT_SCHED_TARGET_MAX 120u
// A sample that shows nothing new is left out, but a record is written at least this often.
#define CT_SCHED_MAX_SILENCE_NS 256000000ull

struct watched {
    uint32_t stream;
    uint64_t tid;
    int fd;            // schedstat
    int syscall_fd;    // syscall: -1 until first needed, -2 when it cannot be read
    uint64_t cpu;      // time on a CPU at the last sample, ns
    uint64_t delay;    // run delay at the last sample, ns
    uint64_t tick;     // when that sample was taken
    uint64_t ns;       // the same, CLOCK_MONOTONIC
    uint64_t period;   // ns until the next sample: short while the thread's state changes
    uint64_t due;      // CLOCK_MONOTONIC ns of the next sample
    bool hot;          // sampled since its long call began: one more sample once it ends
    bool skipped;      // the last sample showed nothing new and was not written (see `sample`)
    uint64_t written_ns; // when the last record was written
    // The state at the last sample (CT_STATE_*), and for a system call its number and arguments,
    // and what the descriptor or the wait was (reused while they stay the same).
    uint32_t kind;
    long nr;
    uint64_t arg0, arg1;
    char target[CT_SCHED_TARGET_MAX];
};

static struct {
    // Whose descriptors `w` holds: the trace and the process (and `owner_thread`).
    struct ct_file_header *owner_header;
    pid_t owner_pid;
    bool unavailable;               // no schedstat file: nothing more to do for this trace
    // By slot of the thread registry (ct_meta.h): the stream last taken from it (a slot taken
    // again holds another stream, never one seen before).
    uint32_t seen[CT_META_MAX_THREADS];
    uint32_t next;                  // where the next pass starts reading, round-robin
    uint64_t last_pass_ns;
    uint64_t next_due;              // the earliest `due` of the watched threads: no pass before it
    uint32_t n;
    struct watched w[CT_SCHED_MAX_THREADS];
} S;

// Set in the drain thread that opened the descriptors: a drain thread started later (with a new
// descriptor table) finds it clear.
static CT_TLS bool owner_thread;

CT_NO_INSTRUMENT static void set_flag(struct ct_file_header *h, uint32_t flag) {
    if (!(atomic_load_explicit(&h->sched_flags, memory_order_relaxed) & flag))
        atomic_fetch_or_explicit(&h->sched_flags, flag, memory_order_relaxed);
}

// A new trace, process or drain thread: forget what the last one had (never closing: those
// numbers belonged to another descriptor table).
CT_NO_INSTRUMENT static void start_over(struct ct_file_header *h) {
    S.owner_header = h;
    S.owner_pid = ct_rt.pid;
    owner_thread = true;
    memset(S.seen, 0, sizeof S.seen);
    S.next = S.n = 0;
    S.unavailable = false;
    h->sched_period_us = (uint32_t)(CT_SCHED_PERIOD_NS / 1000);
    // This thread's own file tells whether the kernel keeps sched_info at all, and whether /proc
    // shows the task directory the threads are read from (a container may hide it: a mount over
    // /proc/PID/task leaves /proc/self/schedstat readable, and every thread would seem to have
    // ended before its first sample).
    int fd = ct_proc_open_task((uint64_t)ct_syscall(SYS_gettid), "schedstat");
    uint64_t cpu, delay;
    if (fd < 0 || !ct_proc_read_schedstat(fd, &cpu, &delay)) {
        S.unavailable = true;
        set_flag(h, CT_SCHED_UNAVAILABLE);
    } else {
        set_flag(h, CT_SCHED_SAMPLED);
    }
    if (fd >= 0) close(fd);
}

// The names of the system calls a thread is commonly blocked in (others go by number), and
// whether the first argument is a descriptor worth naming.
struct syscall_name { long nr; const char *name; bool fd; };
static const struct syscall_name syscall_names[] = {
    { SYS_read, "read", true }, { SYS_write, "write", true },
    { SYS_pread64, "pread", true }, { SYS_pwrite64, "pwrite", true },
    { SYS_readv, "readv", true }, { SYS_writev, "writev", true },
    { SYS_preadv, "preadv", true }, { SYS_pwritev, "pwritev", true },
    { SYS_recvfrom, "recv", true }, { SYS_sendto, "send", true },
    { SYS_recvmsg, "recvmsg", true }, { SYS_sendmsg, "sendmsg", true },
    { SYS_recvmmsg, "recvmmsg", true }, { SYS_sendmmsg, "sendmmsg", true },
    { SYS_connect, "connect", true }, { SYS_accept, "accept", true }, { SYS_accept4, "accept", true },
    { SYS_fsync, "fsync", true }, { SYS_fdatasync, "fdatasync", true }, { SYS_flock, "flock", true },
    { SYS_fcntl, "fcntl", true }, { SYS_ioctl, "ioctl", true }, { SYS_sendfile, "sendfile", true },
    { SYS_splice, "splice", true }, { SYS_ftruncate, "ftruncate", true }, { SYS_fallocate, "fallocate", true },
    { SYS_openat, "open", false }, { SYS_close, "close", false },
    { SYS_futex, "futex", false },
    { SYS_nanosleep, "nanosleep", false }, { SYS_clock_nanosleep, "nanosleep", false },
    { SYS_ppoll, "poll", false }, { SYS_pselect6, "select", false },
    { SYS_epoll_pwait, "epoll_wait", false },
    { SYS_wait4, "wait", false }, { SYS_waitid, "wait", false },
    { SYS_rt_sigtimedwait, "sigwait", false }, { SYS_rt_sigsuspend, "sigsuspend", false },
    { SYS_msync, "msync", false }, { SYS_sync, "sync", false },
    { SYS_mmap, "mmap", false }, { SYS_munmap, "munmap", false }, { SYS_madvise, "madvise", false },
    { SYS_sched_yield, "sched_yield", false },
#ifdef SYS_restart_syscall
    { SYS_restart_syscall, "restarted wait", false },
#endif
#ifdef SYS_poll
    { SYS_poll, "poll", false }, { SYS_select, "select", false }, { SYS_pause, "pause", false },
    { SYS_epoll_wait, "epoll_wait", false }, { SYS_open, "open", false },
#endif
#ifdef SYS_epoll_pwait2
    { SYS_epoll_pwait2, "epoll_wait", false },
#endif
#ifdef SYS_futex_waitv
    { SYS_futex_waitv, "futex", false },
#endif
#ifdef SYS_clock_nanosleep_time64
    { SYS_clock_nanosleep_time64, "nanosleep", false },
#endif
};

CT_NO_INSTRUMENT static const struct syscall_name *syscall_named(long nr) {
    for (size_t i = 0; i < sizeof syscall_names / sizeof syscall_names[0]; i++) {
        if (syscall_names[i].nr == nr) return &syscall_names[i];
    }
    return NULL;
}

// Parses /proc/.../syscall: "running", "-1 SP PC" (blocked outside a system call), or
// "NR ARG1 ... ARG6 SP PC" (numbers in hex but for NR).
CT_NO_INSTRUMENT static uint32_t parse_syscall(const char *text, long *nr, uint64_t *arg0, uint64_t *arg1) {
    if (strncmp(text, "running", 7) == 0) return CT_STATE_RUNNING;
    char *end;
    long n = strtol(text, &end, 10);
    if (end == text) return CT_STATE_UNKNOWN;
    if (n < 0) return CT_STATE_BLOCKED_OTHER;
    *nr = n;
    const char *p = end;
    *arg0 = strtoull(p, &end, 16);
    p = end;
    *arg1 = strtoull(p, &end, 16);
    return CT_STATE_BLOCKED_SYSCALL;
}

// What the thread is doing now, into `w`'s state (its target kept while nothing changed).
CT_NO_INSTRUMENT static void read_state(struct watched *w) {
    // A thread that ended meanwhile (ENOENT, ESRCH) is not one whose file cannot be read: its
    // next schedstat read says it ended.
    if (w->syscall_fd == -1) {
        w->syscall_fd = ct_proc_open_task(w->tid, "syscall");
        if (w->syscall_fd < 0) {
            int error = errno;
            w->syscall_fd = -2;
            if (error != ENOENT && error != ESRCH) set_flag(S.owner_header, CT_SCHED_STATE_UNREADABLE);
        }
    }
    char text[256];
    errno = 0;
    if (w->syscall_fd < 0 || ct_proc_pread(w->syscall_fd, text, sizeof text) <= 0) {
        int error = errno;
        if (w->syscall_fd >= 0 && error != ENOENT && error != ESRCH) set_flag(S.owner_header, CT_SCHED_STATE_UNREADABLE);
        w->kind = CT_STATE_UNKNOWN;
        w->target[0] = '\0';
        return;
    }
    long nr = -1;
    uint64_t arg0 = 0, arg1 = 0;
    uint32_t kind = parse_syscall(text, &nr, &arg0, &arg1);
#ifdef SYS_restart_syscall
    // A wait a signal interrupted (a handler ran, or the hang watchdog's capture) goes on as
    // restart_syscall: still the call the last sample saw, when it saw one.
    if (kind == CT_STATE_BLOCKED_SYSCALL && nr == SYS_restart_syscall && w->kind == CT_STATE_BLOCKED_SYSCALL) {
        nr = w->nr;
        arg0 = w->arg0;
        arg1 = w->arg1;
    }
#endif
    bool same = kind == w->kind && nr == w->nr && arg0 == w->arg0 && arg1 == w->arg1;
    w->kind = kind;
    w->nr = nr;
    w->arg0 = arg0;
    w->arg1 = arg1;
    if (same && kind != CT_STATE_BLOCKED_OTHER) return;
    w->target[0] = '\0';
    if (kind == CT_STATE_BLOCKED_SYSCALL) {
        const struct syscall_name *known = syscall_named(nr);
        if (known && known->fd && arg0 < (1u << 30))
            ct_proc_fd_target(w->tid, (long)arg0, w->target, sizeof w->target);
    } else if (kind == CT_STATE_BLOCKED_OTHER) {
        // Blocked outside a system call (a page fault waiting for I/O): where in the kernel.
        if (ct_proc_read_task(w->tid, "wchan", w->target, sizeof w->target) < 0) w->target[0] = '\0';
    }
}

CT_NO_INSTRUMENT static void write_record(const struct watched *w) {
    // Six varints (stream, tid, tick, cpu, delay, kind), the number, the name (a length and at
    // most 23 bytes: "syscall " and a long's digits), the argument, and the target.
    uint8_t body[6 * 10 + 10 + (1 + 23) + 10 + (1 + CT_SCHED_TARGET_MAX)], *q = body;
    q = ct_put_varint(q, w->stream);
    q = ct_put_varint(q, w->tid);
    q = ct_put_varint(q, w->tick);
    q = ct_put_varint(q, w->cpu);
    q = ct_put_varint(q, w->delay);
    q = ct_put_varint(q, w->kind);
    if (w->kind == CT_STATE_BLOCKED_SYSCALL) {
        const struct syscall_name *known = syscall_named(w->nr);
        char number[24];
        const char *name = known ? known->name : number;
        if (!known) snprintf(number, sizeof number, "syscall %ld", w->nr);
        size_t len = strnlen(name, 23);
        q = ct_put_varint(q, (uint64_t)w->nr);
        q = ct_put_varint(q, len);
        memcpy(q, name, len);
        q += len;
        q = ct_put_varint(q, w->arg0);
    }
    if (w->kind == CT_STATE_BLOCKED_SYSCALL || w->kind == CT_STATE_BLOCKED_OTHER) {
        size_t len = strnlen(w->target, sizeof w->target - 1);
        q = ct_put_varint(q, len);
        memcpy(q, w->target, len);
        q += len;
    }
    ct_event_stream_write(CT_REC_THREAD_STATE, body, (size_t)(q - body));
}

// The thread's time on a CPU, to the nanosecond: its CPU-time clock brings a running thread's
// sum up to date (schedstat's first field lags up to a scheduler tick behind, 4 ms at HZ=250).
// Any thread of the process may read it (clock_gettime(2), "thread CPU-time clocks").
CT_NO_INSTRUMENT static bool cpu_time(uint64_t tid, uint64_t *ns) {
    clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6u); // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)
    struct timespec ts;
    if (ct_syscall(SYS_clock_gettime, clock, &ts) != 0) return false;
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return true;
}

// The thread's time on a CPU and its run delay now; false when it has ended.
CT_NO_INSTRUMENT static bool read_times(const struct watched *w, uint64_t *cpu, uint64_t *delay) {
    uint64_t stat_cpu;
    if (!ct_proc_read_schedstat(w->fd, &stat_cpu, delay)) return false;
    if (!cpu_time(w->tid, cpu)) *cpu = stat_cpu;
    return true;
}

// Reads one watched thread and writes what it shows (`closing`: whatever it shows, the last
// sample after a long call); false when it has ended (its slot is then free).
CT_NO_INSTRUMENT static bool sample(struct watched *w, uint64_t now, bool closing) {
    uint64_t cpu, delay;
    uint64_t tick = ct_now(), ns = ct_monotonic_ns();
    // Blocked at the last sample and not run since (its CPU time, one clock read, has not moved):
    // still blocked in the same call, as far as a record would say; nothing more is read.
    if (!closing && w->kind != CT_STATE_RUNNING && ns - w->written_ns < CT_SCHED_MAX_SILENCE_NS
        && cpu_time(w->tid, &cpu) && cpu == w->cpu) {
        w->tick = tick;
        w->ns = ns;
        w->skipped = true;
        if (w->period < CT_SCHED_QUIET_PERIOD_NS) w->period *= 2;
        w->due = now + w->period - (CT_SCHED_PERIOD_NS - CT_SCHED_MIN_GAP_NS);
        return true;
    }
    if (!read_times(w, &cpu, &delay)) {
        // The thread has ended. A sample left out as showing nothing new was its last: written
        // now, it closes the thread's last interval (a thread that ends right after its long call
        // would have none). What came after it is not known.
        if (w->skipped) write_record(w);
        w->skipped = false;
        return false;
    }
    uint64_t wall = ns - w->ns;
    uint64_t ran = cpu > w->cpu ? cpu - w->cpu : 0, waited = delay > w->delay ? delay - w->delay : 0;
    // The last sample, as taken: written first when it was left out and this one shows a change,
    // so that the reader knows how long the state it showed lasted.
    struct watched before = *w;
    // A thread that ran (or waited to) nearly all the interval is running: its system call is
    // not read.
    if (ran + waited >= wall - wall / 8) {
        w->kind = CT_STATE_RUNNING;
        w->target[0] = '\0';
    } else {
        read_state(w);
    }
    bool changed = w->kind != before.kind || w->nr != before.nr || w->arg0 != before.arg0;
    // Blocked in the same call as at the last sample, with no time on or waiting for a CPU since:
    // the record before says the same, and this one is left out (for a while).
    bool same = !changed && ran == 0 && waited == 0 && w->kind != CT_STATE_RUNNING
        && ns - w->written_ns < CT_SCHED_MAX_SILENCE_NS;
    w->cpu = cpu;
    w->delay = delay;
    w->tick = tick;
    w->ns = ns;
    if (closing || !same) {
        if (w->skipped) write_record(&before);
        write_record(w);
        w->written_ns = ns;
        w->skipped = false;
    } else {
        w->skipped = true;
    }
    if (changed) w->period = CT_SCHED_PERIOD_NS;
    else if (w->period < CT_SCHED_QUIET_PERIOD_NS) w->period *= 2;
    // From this pass, not from the last due time: a pass that comes late does not bring the next on.
    w->due = now + w->period - (CT_SCHED_PERIOD_NS - CT_SCHED_MIN_GAP_NS);
    return true;
}

// Threads that started recording since the last pass: open their files and take a first sample,
// the baseline of their first long call.
CT_NO_INSTRUMENT static void watch_new_threads(struct ct_file_header *h, uint64_t now) {
    uint32_t slots = ct_meta_thread_slots();
    for (uint32_t i = 0, opened = 0; i < slots && opened < CT_SCHED_OPENS_PER_PASS; i++) {
        uint32_t stream;
        uint64_t tid;
        // A slot free or being filled is looked at again on the next pass.
        if (!ct_meta_thread_at(i, &stream, &tid) || S.seen[i] == stream) continue;
        S.seen[i] = stream;
        opened++;
        if (S.n == CT_SCHED_MAX_THREADS) {
            set_flag(h, CT_SCHED_PARTIAL);
            continue;
        }
        int fd = ct_proc_open_task(tid, "schedstat");
        int error = fd < 0 ? errno : 0;
        struct watched *w = &S.w[S.n];
        memset(w, 0, sizeof *w);
        w->fd = fd;
        w->tid = tid;
        if (fd >= 0 && read_times(w, &w->cpu, &w->delay)) {
            w->tick = ct_now();
            w->ns = w->written_ns = ct_monotonic_ns();
            w->period = CT_SCHED_PERIOD_NS;
            w->due = now + CT_SCHED_MIN_GAP_NS;
            w->syscall_fd = -1;
            w->stream = stream;
            w->nr = -1;
            // Its state is not read: it has just made its first call, and what it may be blocked
            // in now is the runtime's own start (waiting for this thread), over at once. Taken as
            // running, the interval up to the next sample is laid out by that sample's state.
            w->kind = CT_STATE_RUNNING;
            write_record(w);
            S.n++;
            continue;
        }
        if (fd >= 0) close(fd); // read but not understood: not a file this sampler knows
        // Unless it has ended already: a short thread may end between the open and the read.
        bool ended = fd < 0 ? error == ENOENT || error == ESRCH : !ct_proc_task_listed(tid);
        if (!ended) set_flag(h, CT_SCHED_PARTIAL);
    }
}

// The listed threads' outermost open calls, taken once a pass (one hold of the list's lock, which
// program threads take only when they start and end recording).
static struct ct_open_frames_oldest oldest[CT_SCHED_MAX_THREADS * 4];
static uint32_t oldest_n;

enum { NOT_LISTED, SHORT_CALL, LONG_CALL };

// How old the outermost open call must be: a quarter of the threshold, and at least the samples'
// own spacing (CT_SCHED_MIN_GAP_NS): a younger call is split from the baseline and the next sample
// all the same, and at threshold 0 sampling from the first call on kept the drain thread busy as
// a short program exited (whose exit then waited for it).
CT_NO_INSTRUMENT static uint64_t gate_ticks(void) {
    uint64_t quarter = ct_threshold_ticks / CT_SCHED_GATE_DIVISOR;
    uint64_t floor = (uint64_t)((double)CT_SCHED_MIN_GAP_NS * ct_rt.ticks_per_ns);
    return quarter > floor ? quarter : floor;
}

// Whether `w` is inside a call long enough to be sampled; NOT_LISTED when it no longer records
// (it ended), or the list had no room for it.
CT_NO_INSTRUMENT static int call_state(const struct watched *w, uint64_t now_tick) {
    for (uint32_t i = 0; i < oldest_n; i++) {
        if (oldest[i].tid != w->tid) continue;
        uint64_t start = oldest[i].start;
        return start && now_tick > start && now_tick - start >= gate_ticks() ? LONG_CALL : SHORT_CALL;
    }
    return NOT_LISTED;
}

// How often a thread outside a long call is looked at: a quarter of the threshold, within 2-8 ms.
CT_NO_INSTRUMENT static uint64_t gate_period_ns(void) {
    double rate = ct_rt.ticks_per_ns > 0 ? ct_rt.ticks_per_ns : 1.0;
    uint64_t quarter = (uint64_t)((double)ct_threshold_ticks / CT_SCHED_GATE_DIVISOR / rate);
    if (quarter < CT_SCHED_MIN_GAP_NS) return CT_SCHED_MIN_GAP_NS;
    return quarter > CT_SCHED_QUIET_PERIOD_NS ? CT_SCHED_QUIET_PERIOD_NS : quarter;
}

CT_NO_INSTRUMENT static void forget(struct watched *w) {
    close(w->fd);
    if (w->syscall_fd >= 0) close(w->syscall_fd);
    *w = S.w[--S.n];
}

CT_NO_INSTRUMENT static uint64_t next_due_ns(void) {
    return S.unavailable || !owner_thread ? 0 : S.next_due;
}

CT_NO_INSTRUMENT static void sample_pass(void) {
    uint64_t now = ct_monotonic_ns();
    // Before anything else (most passes end here while no thread waits): each page a pass
    // touches after the drain thread's sleep is a cache and TLB miss, some 1 us on a VM.
    if (now - S.last_pass_ns < CT_SCHED_MIN_GAP_NS || (now < S.next_due && owner_thread)) return;
    S.last_pass_ns = now;
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    if (h != S.owner_header || ct_rt.pid != S.owner_pid || !owner_thread) start_over(h);
    if (S.unavailable) return;
    watch_new_threads(h, now);
    oldest_n = ct_open_frames_oldest_starts(oldest, sizeof oldest / sizeof oldest[0]);
    uint64_t now_tick = ct_now();
    // Round-robin from where the last pass stopped, so that every thread gets its turn.
    uint32_t reads = 0;
    for (uint32_t looked = 0, n = S.n; looked < n && S.n > 0 && reads < CT_SCHED_READS_PER_PASS; looked++) {
        if (S.next >= S.n) S.next = 0;
        struct watched *w = &S.w[S.next];
        if (now < w->due) {
            S.next++;
            continue;
        }
        int state = call_state(w, now_tick);
        if (state == NOT_LISTED && !w->hot) {
            // Ended (or beyond the list): one read tells; an ended thread's slot is freed.
            reads++;
            uint64_t cpu, delay;
            if (read_times(w, &cpu, &delay)) {
                w->due = now + gate_period_ns();
                S.next++;
            } else {
                if (w->skipped) write_record(w);
                forget(w);
            }
            continue;
        }
        bool long_call = state == LONG_CALL;
        if (!long_call && !w->hot) {
            // Not in a long call: not read, only looked at again (in the passes the drain thread
            // makes anyway while the threshold is long).
            w->period = CT_SCHED_PERIOD_NS;
            w->due = now + gate_period_ns();
            S.next++;
            continue;
        }
        reads++;
        // The first sample of a long call is as short as can be after the last one; after it,
        // one more closes its last interval.
        if (!w->hot) w->period = CT_SCHED_PERIOD_NS;
        w->hot = long_call;
        if (sample(w, now, !long_call)) {
            S.next++;
            continue;
        }
        forget(w);                  // the thread has ended (ESRCH): its slot goes to the last one
    }
    // New threads are looked for when a watched one is due, at least every 8 ms.
    S.next_due = now + CT_SCHED_QUIET_PERIOD_NS - (CT_SCHED_PERIOD_NS - CT_SCHED_MIN_GAP_NS);
    for (uint32_t i = 0; i < S.n; i++) {
        if (S.w[i].due < S.next_due) S.next_due = S.w[i].due;
    }
}

// The drain thread's last pass is over: one last sample of each thread in a long call, so that
// its last state (perhaps left out) reaches the trace. Not when the exiting thread stops the
// sampler instead: the descriptors are the drain thread's.
CT_NO_INSTRUMENT static void stop(void) {
    if (!owner_thread || S.unavailable || ct_header_get() != S.owner_header || ct_rt.pid != S.owner_pid) return;
    uint64_t now = ct_monotonic_ns();
    for (uint32_t i = 0; i < S.n; i++) {
        if (S.w[i].hot || S.w[i].skipped) (void)sample(&S.w[i], now, true);
    }
}

const struct ct_feature ct_sched_feature = {
    .name = "sched",
    .pass = sample_pass,
    .next_due_ns = next_due_ns,
    .stop = stop,
};
