// Start-up, exit and fork: the runtime's life within the process.
//
// Nothing happens unless asked: without any CALLTRACE_* setting (or in a set-uid program, where
// secure_getenv hides them all) the runtime creates no file and no thread, and every thread's hooks
// return after one TLS load. With a setting, the clock is calibrated at start-up and the trace file
// is created on the first hook of a recording thread (ct_trace.c).
#include "ct_start.h"
#include "ct_calls.h"
#include "ct_clock.h"
#include "ct_drain.h"
#include "ct_feature.h"
#include "ct_header.h"
#include "ct_log.h"
#include "ct_meta.h"
#include "ct_ring.h"
#include "ct_runtime.h"
#include "ct_sled_table.h"
#include "ct_thread.h"
#include "ct_trace.h"
#include "ct_syscall.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

// Muting may patch code: then the process registers for the barrier that follows a patch.
CT_NO_INSTRUMENT static bool may_patch(void) {
    return ct_rt.settings.mute == CT_MUTE_AUTO && ct_rt.settings.threshold != 0;
}

// Normal exit (return from main or exit() on any thread): calls still open on this thread and on
// the main thread are written as unfinished, with their cost so far; then the last calibration,
// metadata and the closed flag (ct_trace_close).
CT_NO_INSTRUMENT void ct_start_exit(void) {
    if (ct_self.state == CT_THREAD_RESTRICTED) {
        ct_trace_close_restricted();
        return;
    }
    // A vfork child that calls exit() runs on its parent's memory: nothing here is its to touch.
    // But its exit() empties the parent's list of exit handlers, ours among them (and glibc takes
    // no new ones after that), so the parent closes the trace from its exit() or main's return.
    if (ct_self.state == CT_THREAD_VFORKED || getpid() != ct_rt.pid) {
        ct_rt.exit_handler_lost = true;
        return;
    }
    ct_trace_close();
}

CT_NO_INSTRUMENT void ct_start_quick_exit(void) {
    if (ct_self.state == CT_THREAD_RESTRICTED) {
        ct_trace_close_restricted();
        return;
    }
    // A vfork child's _exit ends only the child; the trace in its memory is its parent's.
    if (ct_self.state == CT_THREAD_VFORKED || getpid() != ct_rt.pid) return;
    ct_trace_exit_quickly();
}

// The at_quick_exit handler. A vfork child's quick_exit runs (and so removes) the parent's
// handlers, ours among them: the parent's own quick_exit then closes the trace from its wrapper.
CT_NO_INSTRUMENT static void on_quick_exit(void) {
    if (ct_self.state == CT_THREAD_RESTRICTED) {
        ct_start_quick_exit();
        return;
    }
    if (ct_self.state == CT_THREAD_VFORKED || getpid() != ct_rt.pid) {
        ct_rt.quick_exit_handler_lost = true;
        return;
    }
    ct_start_quick_exit();
}

CT_NO_INSTRUMENT void ct_start_quick_exit_if_handler_lost(void) {
    if (!ct_rt.quick_exit_handler_lost || ct_self.state == CT_THREAD_VFORKED || getpid() != ct_rt.pid) return;
    ct_rt.quick_exit_handler_lost = false;
    ct_start_quick_exit();
}

static void on_key_destroyed(void *arg);

// In the child of fork(): the parent's trace, blocks and drain thread are not ours. Only
// async-signal-safe steps and no loader locks here (another thread of the parent may have been
// inside dlopen): the child opens its own trace on its first hook.
CT_NO_INSTRUMENT static void after_fork_in_child(void) {
    if (atomic_load_explicit(&ct_rt.init, memory_order_acquire) != CT_INIT_DONE || !ct_rt.enabled) return;
    ct_trace_forget();   // first: from here on nothing can reach the parent's trace
    ct_features_after_fork();
    ct_rt.pid = getpid();
    ct_rt.init_tick = ct_now(); // the child's own life starts now
    atomic_store_explicit(&ct_rt.main_tick, 0, memory_order_relaxed); // main was entered in the parent
    ct_runtime_register_barriers(may_patch()); // the child's memory map is new, and has one thread
    ct_thread_after_fork();
}

// ---- Calls before the runtime started --------------------------------------------------------
// The loader runs the program's .preinit_array functions before any library's constructor, libc's
// own start-up among them: the environment is not set up yet (`environ` is NULL), so no setting can
// be read, and a hook there that started the runtime would find none and leave the whole process
// untraced (no trace file at all, and no word of why). So until the runtime's constructor has run,
// a hook that finds no environment leaves the start to a later one (ct_runtime_init is false); the
// calls made meanwhile are not recorded, and the trace says so. A trace opened there would also
// start the drain thread before libc's start-up has run. With sleds, those calls are not timed
// either: a module's sleds are patched when its constructor registers them, after the preinit
// functions have run (ct_start_note_early_sleds).
static _Atomic bool constructed;  // the runtime's constructor has run
static _Atomic bool early_calls;  // instrumented code ran before it could start the runtime

// Said once, on stderr and in the trace (`lost` bit 11), when a setting asked for a trace.
CT_NO_INSTRUMENT static void note_early_calls(void) {
    static _Atomic bool said;
    if (!ct_rt.enabled || atomic_exchange_explicit(&said, true, memory_order_relaxed)) return;
    ct_runtime_note_lost(CT_LOST_EARLY);
    ct_warn("instrumented code ran before the runtime started (a .preinit_array function, run by the loader "
            "before any constructor): its calls and marks are not in the trace");
}

// The program's .preinit_array entries, from its dynamic section (found through the auxiliary
// vector: no loader call; a program with an interpreter has the PT_PHDR that gives its load bias).
// Into `fns`, at most `max`; how many there are.
CT_NO_INSTRUMENT static size_t preinit_functions(uintptr_t *fns, size_t max) {
    const ElfW(Phdr) *phdr = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t phnum = (size_t)getauxval(AT_PHNUM);
    if (!phdr) return 0;
    uintptr_t bias = 0;
    const ElfW(Dyn) *dyn = NULL;
    for (size_t i = 0; i < phnum; i++) {
        if (phdr[i].p_type == PT_PHDR) bias = (uintptr_t)phdr - phdr[i].p_vaddr;
        if (phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)phdr[i].p_vaddr;
    }
    if (!dyn) return 0;
    dyn = (const ElfW(Dyn) *)((uintptr_t)dyn + bias);
    uintptr_t array = 0;
    size_t bytes = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_PREINIT_ARRAY) array = dyn->d_un.d_ptr + bias;  // not relocated in place by the loader
        if (dyn->d_tag == DT_PREINIT_ARRAYSZ) bytes = dyn->d_un.d_val;
    }
    size_t n = array ? bytes / sizeof(uintptr_t) : 0;
    for (size_t i = 0; i < n && i < max; i++) fns[i] = ((const uintptr_t *)array)[i];
    return n;
}

CT_NO_INSTRUMENT void ct_start_note_early_sleds(void) {
    static _Atomic bool looked;
    if (atomic_load_explicit(&looked, memory_order_relaxed)) return;
    uintptr_t fns[64];
    size_t n = preinit_functions(fns, 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        if (ct_sled_table_has(fns[i])) {
            atomic_store_explicit(&looked, true, memory_order_relaxed);
            note_early_calls();
            return;
        }
    }
}

CT_NO_INSTRUMENT bool ct_runtime_init(void) {
    uint32_t s = atomic_load_explicit(&ct_rt.init, memory_order_acquire);
    if (s == CT_INIT_DONE) return true;
    if (!atomic_load_explicit(&constructed, memory_order_relaxed) && !environ) {
        atomic_store_explicit(&early_calls, true, memory_order_relaxed);
        return false;
    }
    if (s != CT_INIT_NOT_YET || !atomic_compare_exchange_strong_explicit(&ct_rt.init, &s, CT_INIT_RUNNING,
                                                                        memory_order_acq_rel, memory_order_acquire))
        return false;
    ct_settings_load(&ct_rt.settings);
    ct_rt.pid = getpid();
    ct_rt.enabled = ct_rt.settings.any_set;
    if (ct_rt.enabled && pthread_key_create(&ct_rt.thread_key, on_key_destroyed) != 0) ct_rt.enabled = false;
    if (ct_rt.enabled) {
        atomic_store_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
        ct_clock_start(&ct_rt.calib_tick0, &ct_rt.calib_ns0, &ct_rt.realtime_ns0);
        ct_runtime_register_barriers(may_patch()); // while the process has one thread: cheap
        ct_rt.init_tick = ct_now();
        ct_rt.first_call_tick = ct_rt.init_tick; // kept in a fork child: its calls began in the parent
        pthread_atfork(ct_meta_before_fork, ct_meta_after_fork_in_parent, after_fork_in_child);
        atexit(ct_start_exit);
        // quick_exit runs the at_quick_exit handlers, then glibc's internal _exit, which no wrapper
        // sees: ours, registered first, runs last, after the program's own handlers have run.
        at_quick_exit(on_quick_exit);
    }
    atomic_store_explicit(&ct_rt.init, CT_INIT_DONE, memory_order_release);
    if (atomic_load_explicit(&early_calls, memory_order_relaxed)) note_early_calls();
    return true;
}

// A thread ends: the calls it leaves open are recorded as unfinished, then its stream retires.
CT_NO_INSTRUMENT static void end_thread(struct ct_thread *t) {
    // Restricted, it gave everything back then (ct_restrict.h); under a filter on every thread,
    // no system call of ours may run.
    if (t->state == CT_THREAD_RESTRICTED || atomic_load_explicit(&ct_rt.no_calls, memory_order_relaxed)) return;
    // Counted as a jump: a record write the thread was in when it was cancelled asynchronously
    // (unwound from there without any wrapper of ours seeing it) is over for good, and its lane
    // is taken over rather than this thread's last records dropped as nested (ct_stream.h).
    if (t->state == CT_THREAD_ACTIVE) t->stream.jumps++;
    ct_calls_close_open(t, ct_now());
    ct_thread_end(t);
}

CT_NO_INSTRUMENT static void on_key_destroyed(void *arg) { end_thread(arg); }

// Early, so that the time before main is measured from here even when the first instrumented call
// comes late; the trace itself waits for that call.
__attribute__((constructor(101))) CT_NO_INSTRUMENT static void ct_start(void) {
    atomic_store_explicit(&constructed, true, memory_order_relaxed);
    ct_runtime_init();
}

// The main thread leaves with pthread_exit while other threads run on. When the last of them ends,
// glibc ends the process as if by exit(0); the drain thread, which is not the program's, must not
// keep it alive, so it ends now (its last pass writes the marks queued so far). With CALLTRACE_THREADS=main nothing records after this, so the
// trace's unused tail is cut off too; with `all`, the other threads record into the blocks left.
CT_NO_INSTRUMENT void ct_start_main_thread_exits(void) {
    if (ct_self.state == CT_THREAD_RESTRICTED) return;
    if (!ct_trace_is_open() || (pid_t)ct_syscall(SYS_gettid) != ct_rt.pid) return;
    end_thread(&ct_self);
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
