// Calls the hooks did not end the usual way, and the decision to record a call: the frames a
// longjmp or an exception skipped, the calls still open at exit or at a crash (this thread's and
// the main thread's). Used by the hooks and by the exit, crash and jump paths.
#ifndef CT_CALLS_H
#define CT_CALLS_H

#include "ct_overhead.h"
#include "ct_thread.h"

// Is a call of `duration` ticks (at least the threshold) with `descendants` timed calls beneath it
// recorded? Its cost, the hooks' overhead taken out, still reaches the threshold, or a call beneath
// it was recorded (`callee_kept`: its duration holds the callee's, so it passed the threshold too,
// and without the rule a constant that grew between the two exits, from none before the first
// calibration, would leave a depth gap: docs/design.md, "Overhead compensation"); and it is not
// one of the calibration's calls. Inline: at threshold 0 it runs for every call.
CT_NO_INSTRUMENT static inline bool ct_calls_keep(uintptr_t fn, uint64_t duration, uint64_t descendants,
                                                  uint64_t untimed, bool callee_kept) {
    if (ct_threshold_ticks != 0 && !callee_kept &&
        duration - ct_overhead_of(descendants, untimed, duration) < ct_threshold_ticks)
        return false;
    return !(CT_UNLIKELY(atomic_load_explicit(&ct_overhead_running, memory_order_relaxed)) &&
             ct_overhead_is_calibration(fn));
}
// Whether the call at stack index `depth` that started at `start` had a callee kept: a call kept
// one index up started after it (`kept_starts` is the thread's, ct_thread.h). By start time rather
// than by a level the last decision left: a signal handler's call that ends between this call's pop
// and its decision is a sibling, one index down, and neither takes this call's callee for its own
// nor writes over it; nor can a value left by calls that ended long ago force anything.
CT_NO_INSTRUMENT static inline bool ct_calls_callee_kept(const struct ct_thread *t, uint64_t depth, uint64_t start) {
    return depth + 1 < t->cap && *(volatile const uint64_t *)&t->kept_starts[depth + 1] >= start;
}
// A call ended after `duration` ticks, at least the threshold: is it recorded (ct_calls_keep)? If
// so its start is noted, before the record is written, so that a thread that takes the stream
// over meanwhile (ct_calls_close_from_elsewhere) keeps its caller, and *c is the record to write.
CT_NO_INSTRUMENT static inline bool ct_calls_decide(struct ct_thread *t, const struct ct_frame *f, uint64_t depth,
                                                    uint64_t duration, unsigned flags, struct ct_call_record *c) {
    *c = (struct ct_call_record){ f->fn, f->site, f->start, duration, depth, (t->calls - f->calls) / 2,
                                  t->untimed - f->untimed, flags };
    bool at_threshold = ct_threshold_ticks != 0; // at threshold 0 every call is kept: nothing to note
    if (!ct_calls_keep(f->fn, duration, c->descendants, c->untimed,
                       at_threshold && ct_calls_callee_kept(t, depth, f->start)))
        return false;
    if (at_threshold) *(volatile uint64_t *)&t->kept_starts[depth] = f->start;
    atomic_signal_fence(memory_order_seq_cst);
    return true;
}
// Records the call if ct_calls_decide says so.
CT_NO_INSTRUMENT static inline void ct_calls_record(struct ct_thread *t, const struct ct_frame *f, uint64_t depth,
                                                    uint64_t duration, unsigned flags) {
    struct ct_call_record c;
    if (ct_calls_decide(t, f, depth, duration, flags, &c)) ct_stream_write_call(&t->stream, &c);
}
// Pops frames [new_depth, depth) that will never see their exit hook, recording the slow ones with
// `flags` and a cost that runs to `end` (or to the jump that left them, when one was seen).
void ct_calls_close(struct ct_thread *t, uint64_t depth, uint64_t new_depth, uint64_t end, unsigned flags);
// Records the open frames (innermost first, as exits would) as unfinished and stops recording.
void ct_calls_close_open(struct ct_thread *t, uint64_t end);
// A longjmp or an unwinding step is about to leave frames behind, called from `caller_sp`: frames
// below it are gone already (left by an earlier jump); the next ones to go leave now.
void ct_calls_note_jump(uintptr_t caller_sp);
// At exit or a crash on another thread: records the main thread's open calls as unfinished and
// closes its stream. Async-signal-safe.
void ct_calls_close_main_from_elsewhere(uint64_t end);
// The same for any recording thread `m`, from another thread; with `running` false, `m` is known to
// have ended (the raw exit system call: ct_raw_exit.c), and nothing needs taking over. Once per
// thread: a later call (a second thread crashing at the same time) finds it taken and returns.
void ct_calls_close_from_elsewhere(struct ct_thread *m, uint64_t end, bool running);

#endif
