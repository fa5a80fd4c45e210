// A flight recorder's fixture: far more calls than a small CALLTRACE_LIMIT holds at threshold 0
// (some 3 million, 25 MB of records), in phases: phase_first's calls are the oldest, phase_last's
// the newest. With an argument N it kills itself with SIGKILL in the middle of round N, while the
// runtime is reusing blocks. With CALLTRACE_OUTPUT set it looks at its own trace file's size after
// each round and says on stderr the largest it saw.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sleep.h"

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i) { sink += i * 7 + 1; }

__attribute__((noinline)) void phase_first(void) {
    for (unsigned long i = 0; i < 1000; i++) leaf(i);
}

__attribute__((noinline)) void round_work(int round) {
    for (unsigned long i = 0; i < 100000; i++) leaf(i + (unsigned long)round);
}

__attribute__((noinline)) void phase_last(void) {
    for (unsigned long i = 0; i < 1000; i++) leaf(i);
}

static long long largest;

static void look_at_trace(void) {
    const char *path = getenv("CALLTRACE_OUTPUT");
    struct stat st;
    if (path && stat(path, &st) == 0 && st.st_size > largest) largest = st.st_size;
}

int main(int argc, char **argv) {
    int kill_in = argc > 1 ? atoi(argv[1]) : -1;
    phase_first();
    for (int round = 0; round < 30; round++) {
        if (round == kill_in) {
            for (unsigned long i = 0; i < 50000; i++) leaf(i);
            kill(getpid(), SIGKILL);
        }
        round_work(round);
        look_at_trace();
    }
    // A pause before the newest calls: the drain thread catches up with the burst (on a busy
    // machine the ring may have run dry), so phase_last's calls and main's find blocks.
    sleep_ms(30);
    phase_last();
    look_at_trace();
    printf("%lu\n", sink);
    if (getenv("CALLTRACE_OUTPUT")) fprintf(stderr, "largest trace seen: %lld\n", largest);
    return 0;
}
