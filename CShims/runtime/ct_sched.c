// Sampling run delay, and why it is done this way:
//
// - Only the kernel knows when a thread was runnable but not running. sched_info keeps that sum
//   per thread (CONFIG_SCHED_INFO, on in distribution kernels, with or without CONFIG_SCHEDSTATS)
//   and shows it in /proc/self/task/TID/schedstat: no setup, no privilege (unlike perf's
//   sched_switch tracepoint), and the hooks stay untouched.
// - The drain thread makes passes anyway (1-8 ms apart; sooner when this sampler wants one); it
//   reads each recording thread's file with pread on a descriptor it keeps open. The descriptors
//   live in the drain thread's own descriptor table (ct_drain.c), so the program never sees them and they never take one of its numbers.
//   A drain thread that ended (paused around unshare/setns, or the parent's, in a fork child)
//   took its table with it: its numbers mean nothing to the next one, which starts afresh
//   (`S.owner_*`, `owner_thread`), without closing numbers that are not its own.
// - Cost: a read after the drain thread's sleep costs 2-8 us (cold caches; measured on a VM), so a thread is
//   read every 2 ms only while it is being kept waiting (its last sample grew); while it is not,
//   its period doubles up to 8 ms. At most CT_SCHED_READS_PER_PASS reads a pass, however many
//   threads record: measured, about 0.1% of a core for a thread that never waits, 0.2% for one
//   kept waiting all the time, under 0.5% at most; more threads are read in turn, further apart.
// - The kernel adds a wait to run_delay only when the thread gets the CPU back, so a sample's
//   growth is the waits that ended since the previous sample, which may have begun before it. The
//   record says when the two samples were taken and leaves the rest to the reader.
// - The records go into the metadata stream (ct_meta.c) or a flight recorder's events stream
//   (ct_event_stream.c), which the drain thread writes already, under their locks; a thread's own stream is written by its thread alone.
#include "ct_sched.h"
#include "ct_proc.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_event_stream.h"
#include "ct_runtime.h"
#include "ct_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

// A thread kept waiting is read every 2 ms; one that is not, every 4, then 8 ms.
#define CT_SCHED_PERIOD_NS 2000000ull
#define CT_SCHED_QUIET_PERIOD_NS 8000000ull
// The drain thread is woken early when a recording thread wants blocks; a pass this soon after
// the last sampled one samples nothing (so a burst of wakes costs no reads).
#define CT_SCHED_MIN_GAP_NS 1800000ull
#define CT_SCHED_READS_PER_PASS 2u
#define CT_SCHED_OPENS_PER_PASS 2u
// Threads watched at once (each holds a descriptor); beyond that, threads go unsampled and the
// header says so (CT_SCHED_PARTIAL).
#define CT_SCHED_MAX_THREADS 256u

struct watched {
    uint32_t stream;
    uint64_t tid;
    int fd;
    uint64_t delay;    // run_delay at the last sample, ns
    uint64_t tick;     // when that sample was taken
    uint64_t period;   // ns until the next sample: short while the thread is kept waiting
    uint64_t due;      // CLOCK_MONOTONIC ns of the next sample
};

static struct {
    // Whose descriptors `w` holds: the trace and the process (and `owner_thread`).
    struct ct_file_header *owner_header;
    pid_t owner_pid;
    bool unavailable;               // no schedstat file: nothing more to do for this trace
    uint32_t registered;            // entries of the thread registry looked at so far
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

// The second number of "sum_exec_runtime run_delay pcount\n".

// A new trace, process or drain thread: forget what the last one had (never closing: those
// numbers belonged to another descriptor table).
CT_NO_INSTRUMENT static void start_over(struct ct_file_header *h) {
    S.owner_header = h;
    S.owner_pid = ct_rt.pid;
    owner_thread = true;
    S.registered = S.next = S.n = 0;
    S.unavailable = false;
    h->sched_period_us = (uint32_t)(CT_SCHED_PERIOD_NS / 1000);
    // The process's own file tells whether the kernel keeps sched_info at all.
    int fd = ct_proc_open_task(0, "schedstat");
    uint64_t delay;
    if (fd < 0 || !ct_proc_read_run_delay(fd, &delay)) {
        S.unavailable = true;
        set_flag(h, CT_SCHED_UNAVAILABLE);
    } else {
        set_flag(h, CT_SCHED_SAMPLED);
    }
    if (fd >= 0) close(fd);
}

// Threads that started recording since the last pass: open their files and take a first sample.
CT_NO_INSTRUMENT static void watch_new_threads(struct ct_file_header *h, uint64_t now) {
    uint32_t count = ct_meta_thread_count();
    for (uint32_t opened = 0; S.registered < count && opened < CT_SCHED_OPENS_PER_PASS; opened++) {
        uint32_t stream;
        uint64_t tid;
        if (!ct_meta_thread_at(S.registered, &stream, &tid)) break; // its slot is being filled: next pass
        S.registered++;
        if (S.n == CT_SCHED_MAX_THREADS) {
            set_flag(h, CT_SCHED_PARTIAL);
            continue;
        }
        int fd = ct_proc_open_task(tid, "schedstat");
        struct watched *w = &S.w[S.n];
        if (fd >= 0 && ct_proc_read_run_delay(fd, &w->delay)) {
            w->tick = ct_now();
            w->period = CT_SCHED_PERIOD_NS;
            w->due = now + CT_SCHED_MIN_GAP_NS;
            w->fd = fd;
            w->stream = stream;
            w->tid = tid;
            S.n++;
            continue;
        }
        if (fd >= 0) close(fd);
        if (errno != ENOENT && errno != ESRCH) set_flag(h, CT_SCHED_PARTIAL); // else: it has ended already
    }
}

CT_NO_INSTRUMENT static void write_record(const struct watched *w, uint64_t tick, uint64_t grown) {
    uint8_t body[50], *q = body;
    q = ct_put_varint(q, w->stream);
    q = ct_put_varint(q, w->tid);
    q = ct_put_varint(q, w->tick);
    q = ct_put_varint(q, tick - w->tick);
    q = ct_put_varint(q, grown);
    ct_event_stream_write(CT_REC_RUN_DELAY, body, (size_t)(q - body));
}

// Reads one watched thread; false when it has ended (its slot is then free).
CT_NO_INSTRUMENT static bool sample(struct watched *w, uint64_t now) {
    uint64_t delay;
    if (!ct_proc_read_run_delay(w->fd, &delay)) return false;
    uint64_t tick = ct_now();
    if (delay > w->delay) {
        write_record(w, tick, delay - w->delay);
        w->delay = delay;
        w->period = CT_SCHED_PERIOD_NS;
    } else if (w->period < CT_SCHED_QUIET_PERIOD_NS) {
        w->period *= 2;
    }
    w->tick = tick;
    // From this pass, not from the last due time: a pass that comes late does not bring the next on.
    w->due = now + w->period - (CT_SCHED_PERIOD_NS - CT_SCHED_MIN_GAP_NS);
    return true;
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
    // Round-robin from where the last pass stopped, so that every thread gets its turn.
    uint32_t reads = 0;
    for (uint32_t looked = 0, n = S.n; looked < n && S.n > 0 && reads < CT_SCHED_READS_PER_PASS; looked++) {
        if (S.next >= S.n) S.next = 0;
        struct watched *w = &S.w[S.next];
        if (now < w->due) {
            S.next++;
            continue;
        }
        reads++;
        if (sample(w, now)) {
            S.next++;
            continue;
        }
        close(w->fd);               // the thread has ended (ESRCH): its slot goes to the last one
        *w = S.w[--S.n];
    }
    // New threads are looked for when a watched one is due, at least every 8 ms.
    S.next_due = now + CT_SCHED_QUIET_PERIOD_NS - (CT_SCHED_PERIOD_NS - CT_SCHED_MIN_GAP_NS);
    for (uint32_t i = 0; i < S.n; i++) {
        if (S.w[i].due < S.next_due) S.next_due = S.w[i].due;
    }
}

const struct ct_feature ct_sched_feature = {
    .name = "sched",
    .pass = sample_pass,
    .next_due_ns = next_due_ns,
};
