// A flight recorder's fixture for what its events stream keeps, under a 1 MiB CALLTRACE_LIMIT at
// threshold 0. Modes:
//   names  6,000 marks, each with a name of its own ("loaded file-000000.dat", ...), 300 calls
//          after each: more names than the runtime keeps a latest mark for (256), so it forgets the
//          oldest and says so; the calls are never starved.
//   open   150 spans begun first and never ended (a 130-byte extra text each, "conn 000" ...),
//          each with a milestone, then 100,000 frames with 300 calls each 100: every begin and
//          milestone outlives the reuse of its block.
#include <stdio.h>
#include <string.h>
#include "calltrace.h"
#include "sleep.h"

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i) { sink += i * 7 + 1; }

__attribute__((noinline)) void work(int round) {
    for (unsigned long i = 0; i < 300; i++) leaf(i + (unsigned long)round);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "names";
    if (strcmp(mode, "names") == 0) {
        for (int round = 0; round < 6000; round++) {
            char name[64];
            snprintf(name, sizeof name, "loaded file-%06d.dat", round);
            calltrace_mark(name);
            work(round);
            if (round % 200 == 199) sleep_ms(2);  // the drain thread empties the marks' queue
        }
    } else {
        for (int s = 0; s < 150; s++) {
            char name[16], extra[160];
            snprintf(name, sizeof name, "conn %03d", s);
            snprintf(extra, sizeof extra, "connection %03d from 10.0.0.%d, a long description of what this "
                     "span is about ..............................................", s, s);
            uint64_t span = calltrace_span_begin(name, extra);
            calltrace_span_point(span, "accepted");
            if (s % 50 == 49) sleep_ms(5);
        }
        for (int round = 0; round < 100000; round++) {
            calltrace_frame();
            if (round % 100 == 0) work(round);
            if (round % 500 == 499) sleep_ms(1);
        }
    }
    sleep_ms(30);
    calltrace_mark("last");
    printf("%lu\n", sink);
    return 0;
}
