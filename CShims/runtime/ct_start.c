// Start-up, exit and fork: the runtime's life within the process.
//
// Nothing happens unless asked: without any CALLTRACE_* setting (or in a set-uid program, where
// secure_getenv hides them all) the runtime creates no file and no thread, and every thread's hooks
// return after one TLS load. With a setting, the clock is calibrated at start-up and the trace file
// is created on the first hook of a recording thread (ct_trace.c).
#include "ct_runtime.h"
#include "ct_overhead.h"
#include "ct_clock.h"
#include "ct_drain.h"
#include "ct_header.h"
#include "ct_marks.h"
#include "ct_meta.h"
#include "ct_patch.h"
#include "ct_ring.h"
#include "ct_thread.h"
#include "ct_trace.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ct_runtime ct_rt;

// Process start from /proc/self/stat (field 22, clock ticks since boot), as CLOCK_MONOTONIC ns, so
// that the time the program spent before the runtime (the dynamic loader, constructors) shows.
CT_NO_INSTRUMENT static uint64_t process_start_ns(void) {
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); // the command name may hold spaces and parentheses
    if (!p) return 0;
    unsigned long long start = 0;
    // p moves to the space before each field in turn: field 3 (state) after ")", up to field 22.
    for (int field = 3; field <= 22 && p; field++) p = strchr(p + 1, ' ');
    if (!p || sscanf(p + 1, "%llu", &start) != 1) return 0;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) return 0;
    // CLOCK_BOOTTIME runs ahead of CLOCK_MONOTONIC by the time the machine was suspended.
    struct timespec mono, boot;
    ct_clock_gettime(CLOCK_MONOTONIC, &mono);
    ct_clock_gettime(CLOCK_BOOTTIME, &boot);
    int64_t suspended = ((int64_t)boot.tv_sec - (int64_t)mono.tv_sec) * 1000000000 + (boot.tv_nsec - mono.tv_nsec);
    if (suspended < 0) suspended = 0;
    uint64_t start_boot_ns = start * (1000000000u / (uint64_t)hz);
    if (start_boot_ns < (uint64_t)suspended) return 0;
    return start_boot_ns - (uint64_t)suspended;
}

// Normal exit (return from main or exit() on any thread): calls still open on this thread and on
// the main thread are written as unfinished, with their cost so far; then the last metadata,
// calibration and the closed flag.
CT_NO_INSTRUMENT void ct_start_exit(void) {
    // A vfork child that calls exit() runs on its parent's memory: nothing here is its to touch.
    // But its exit() empties the parent's list of exit handlers, ours among them (and glibc takes
    // no new ones after that), so the parent closes the trace from its exit() or main's return.
    if (ct_self.state == CT_THREAD_VFORKED || getpid() != ct_rt.pid) {
        ct_rt.exit_handler_lost = true;
        return;
    }
    if (!ct_trace_is_open()) return;
    // A last measurement of the hooks' cost: the reader applies the lowest one to every call.
    ct_overhead_recalibrate(&ct_self, 0, true);
    uint64_t now = ct_now();
    ct_thread_close_open_frames(&ct_self, now);
    ct_thread_close_main_from_elsewhere(now);
    ct_stream_seal(&ct_self.stream);
    ct_meta_thread_final(ct_self.stream.id, ct_self.stream.tid);
    ct_trace_close(now);
}

static void on_key_destroyed(void *arg);

// In the child of fork(): the parent's trace, blocks and drain thread are not ours. Only
// async-signal-safe steps and no loader locks here (another thread of the parent may have been
// inside dlopen): the child opens its own trace on its first hook.
CT_NO_INSTRUMENT static void after_fork_in_child(void) {
    if (atomic_load_explicit(&ct_rt.init, memory_order_acquire) != CT_INIT_DONE || !ct_rt.enabled) return;
    ct_trace_forget();   // first: from here on nothing can reach the parent's trace
    ct_patch_after_fork();
    ct_rt.pid = getpid();
    ct_rt.process_start_ns = process_start_ns(); // the child's own life starts now
    ct_rt.init_tick = ct_now();
    atomic_store_explicit(&ct_rt.main_tick, 0, memory_order_relaxed); // main was entered in the parent
    ct_marks_after_fork();
    ct_thread_after_fork();
}

CT_NO_INSTRUMENT bool ct_runtime_init(void) {
    uint32_t s = atomic_load_explicit(&ct_rt.init, memory_order_acquire);
    if (s == CT_INIT_DONE) return true;
    if (s != CT_INIT_NOT_YET || !atomic_compare_exchange_strong_explicit(&ct_rt.init, &s, CT_INIT_RUNNING,
                                                                        memory_order_acq_rel, memory_order_acquire))
        return false;
    ct_settings_load(&ct_rt.settings);
    ct_rt.pid = getpid();
    ct_rt.enabled = ct_rt.settings.any_set;
    if (ct_rt.enabled && pthread_key_create(&ct_rt.thread_key, on_key_destroyed) != 0) ct_rt.enabled = false;
    if (ct_rt.enabled) {
        atomic_store_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
        ct_rt.process_start_ns = process_start_ns();
        ct_clock_start(&ct_rt.calib_tick0, &ct_rt.calib_ns0, &ct_rt.realtime_ns0);
        ct_rt.init_tick = ct_now();
        pthread_atfork(ct_meta_before_fork, ct_meta_after_fork_in_parent, after_fork_in_child);
        atexit(ct_start_exit);
    }
    atomic_store_explicit(&ct_rt.init, CT_INIT_DONE, memory_order_release);
    return true;
}

CT_NO_INSTRUMENT static void on_key_destroyed(void *arg) { ct_thread_end(arg); }

// Early, so that the time before main is measured from here even when the first instrumented call
// comes late; the trace itself waits for that call.
__attribute__((constructor(101))) CT_NO_INSTRUMENT static void ct_start(void) { ct_runtime_init(); }

// The main thread leaves with pthread_exit while other threads run on. When the last of them ends,
// glibc ends the process as if by exit(0); the drain thread, which is not the program's, must not
// keep it alive, so it ends now. With CALLTRACE_THREADS=main nothing records after this, so the
// trace's unused tail is cut off too; with `all`, the other threads record into the blocks left.
CT_NO_INSTRUMENT void ct_start_main_thread_exits(void) {
    if (!ct_trace_is_open() || (pid_t)syscall(SYS_gettid) != ct_rt.pid) return;
    ct_thread_end(&ct_self);
    ct_marks_flush();
    if (ct_rt.settings.threads == CT_THREADS_ALL) {
        ct_drain_stop(false);
        ct_ring_set_starved(CT_LOST_NO_DRAIN);
    } else {
        ct_drain_stop(true);
    }
}


// The program calls exit() or main returns: normally our atexit handler does the work later; if a
// vfork child's exit() took it off the list, it is done now.
CT_NO_INSTRUMENT void ct_start_exit_if_handler_lost(void) {
    if (!ct_rt.exit_handler_lost || ct_self.state == CT_THREAD_VFORKED || getpid() != ct_rt.pid) return;
    ct_rt.exit_handler_lost = false;
    ct_start_exit();
}
