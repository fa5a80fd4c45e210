// A flight recorder's fixture for events written all along: per round 500 frames, a "round" mark
// and a short "request" span, with 2,000 calls, for 200 rounds: about 1.5 MB of events and 3 MB of
// calls against a 1 MiB CALLTRACE_LIMIT. A "launch" mark, a "session" span (with a "ready"
// milestone) and a "forever" span (never ended) come first; a "last" mark and the session's end
// come last, after a pause that lets the drain thread empty the marks' queue.
#include <stdio.h>
#include "calltrace.h"
#include "sleep.h"

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i) { sink += i * 7 + 1; }

__attribute__((noinline)) void round_work(int round) {
    uint64_t request = calltrace_span_begin("request", NULL);
    for (unsigned long i = 0; i < 2000; i++) leaf(i + (unsigned long)round);
    calltrace_span_end(request);
}

int main(void) {
    calltrace_mark("launch");
    uint64_t session = calltrace_span_begin("session", "whole run");
    calltrace_span_begin("forever", NULL);
    calltrace_span_point(session, "ready");
    for (int round = 0; round < 200; round++) {
        char extra[16];
        snprintf(extra, sizeof extra, "%d", round);
        calltrace_mark_extra("round", extra);
        for (int frame = 0; frame < 500; frame++) calltrace_frame();
        round_work(round);
        sleep_ms(5);  // the drain thread empties the marks' queue (1,024 events)
    }
    sleep_ms(50);
    calltrace_mark("last");
    calltrace_span_end(session);
    printf("%lu\n", sink);
    return 0;
}
