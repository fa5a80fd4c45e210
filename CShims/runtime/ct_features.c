// The table of features (ct_feature.h), in the order their entry points run. Calibration comes
// first: its first measurement, in a drain pass, comes before the other features' work of that
// pass competes with it.
#include "ct_feature.h"
#include "ct_filter.h"
#include "ct_hang.h"
#include "ct_marks.h"
#include "ct_mute.h"
#include "ct_overhead.h"
#include "ct_sched.h"
#include "ct_thread.h"

#include <stdatomic.h>

static const struct ct_feature *const features[] = {
    &ct_filter_feature,
    &ct_overhead_feature,
    &ct_mute_feature,
    &ct_sched_feature,
    &ct_marks_feature,
    &ct_hang_feature,
};
#define CT_FEATURES (sizeof features / sizeof features[0])

// Set once every feature has opened: the drain thread's passes begin then. It runs as soon as the
// file exists, while the opening thread still writes the process and module records and opens the
// features; a pass before that would see a feature half-opened (the first calibration took the
// unset open time as long past and ran at once, on a hello world's exit path).
static _Atomic bool opened;

CT_NO_INSTRUMENT void ct_features_open(struct ct_file_header *h) {
    for (size_t i = 0; i < CT_FEATURES; i++)
        if (features[i]->open) features[i]->open(h);
    atomic_store_explicit(&opened, true, memory_order_release);
}

CT_NO_INSTRUMENT void ct_features_pass(void) {
    if (!atomic_load_explicit(&opened, memory_order_acquire)) return;
    for (size_t i = 0; i < CT_FEATURES; i++)
        if (features[i]->pass) features[i]->pass();
}

CT_NO_INSTRUMENT uint64_t ct_features_next_due_ns(uint64_t due) {
    for (size_t i = 0; i < CT_FEATURES; i++) {
        uint64_t d = features[i]->next_due_ns ? features[i]->next_due_ns() : 0;
        if (d && d < due) due = d;
    }
    return due;
}

CT_NO_INSTRUMENT void ct_features_stop(void) {
    for (size_t i = 0; i < CT_FEATURES; i++)
        if (features[i]->stop) features[i]->stop();
}

CT_NO_INSTRUMENT void ct_features_close(void) {
    for (size_t i = 0; i < CT_FEATURES; i++)
        if (features[i]->close) features[i]->close();
}

CT_NO_INSTRUMENT void ct_features_before_exec(void) {
    // A thread that restricted itself may make no system call of ours (ct_restrict.h).
    if (ct_self.state == CT_THREAD_RESTRICTED) return;
    for (size_t i = 0; i < CT_FEATURES; i++)
        if (features[i]->before_exec) features[i]->before_exec();
}

CT_NO_INSTRUMENT void ct_features_after_fork(void) {
    atomic_store_explicit(&opened, false, memory_order_relaxed); // the child's trace opens them again
    for (size_t i = 0; i < CT_FEATURES; i++)
        if (features[i]->after_fork) features[i]->after_fork();
}
