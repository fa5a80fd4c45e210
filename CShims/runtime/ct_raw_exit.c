#include "ct_raw_exit.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_calls.h"
#include "ct_feature.h"
#include "ct_meta.h"
#include "ct_open_frames.h"
#include "ct_proc.h"
#include "ct_thread.h"


// The main thread's (the thread group leader's) state, thread count and exit code (as waitpid
// reports it; Linux 3.5). False when they cannot be read.
CT_NO_INSTRUMENT static bool read_leader(char *state, long *threads, int *exit_code) {
    long long fields[53];
    if (!ct_proc_stat(state, fields, 52)) return false;
    *threads = (long)fields[20];
    *exit_code = (int)fields[52];
    return true;
}

CT_NO_INSTRUMENT static void close_gone_thread(struct ct_thread *t, void *context) {
    uint64_t end = *(const uint64_t *)context;
    ct_calls_close_from_elsewhere(t, end, false);
    ct_meta_thread_final(t->stream.id, t->stream.tid);
}

// How it is told. The main thread's stat says 'Z' (a zombie) once it has ended while other threads
// of the process live on; the thread count still includes it, and the drain thread. So:
// - main gone, more than those two: program threads run on. The drain thread must not outlive
//   them: the kernel gives the process the status of its last thread to end, which no thread of
//   ours could know. It records main's open calls and ends, as for pthread_exit from main.
// - main gone, only those two: the drain thread is the last thread. Main's exit code is in its
//   stat; the drain thread closes the trace and ends the process with it.
// Both are seen at the drain thread's next poll (20 ms). A program whose main thread and last
// other thread both end within one poll gets main's status rather than the other thread's.
CT_NO_INSTRUMENT enum ct_program_state ct_raw_exit_poll(int *status) {
    char state;
    long threads;
    int code;
    if (!read_leader(&state, &threads, &code) || (state != 'Z' && state != 'X')) return CT_PROGRAM_RUNS;
    uint64_t now = ct_now();
    struct ct_thread *main_thread = ct_thread_main();
    if (threads > 2) {
        if (main_thread) {
            ct_calls_close_from_elsewhere(main_thread, now, false);
            ct_meta_thread_final(main_thread->stream.id, main_thread->stream.tid);
            ct_open_frames_remove(main_thread);
        }
        return CT_PROGRAM_MAIN_GONE;   // the drain thread's stop writes the marks queued so far
    }
    ct_open_frames_take_all(close_gone_thread, &now);
    ct_features_close();
    *status = (code >> 8) & 0xff;
    return CT_PROGRAM_GONE;
}
