// A service that runs for a while and starts a short thread every few hundred microseconds, named
// "quick-N": most of them make no call long enough to record (quick_job); every 100th is named
// "slow-N" and makes one (slow_job, 2 ms). A "ticker" thread names itself and makes a slow call (tick, 2 ms) every
// 20 ms for the whole run. argv[1]: how long to run (ms, default 2000); argv[2]: microseconds
// between threads (default 300); then any of these words:
//   count   argv[1] is how many threads to start instead
//   frames  the ticker also queues 400 frames every 4 ms (some 100,000 a second: events enough to
//           fill a small CALLTRACE_LIMIT within a second or two)
//   kill    end with SIGKILL while the ticker still runs (else it is stopped and joined)
// Prints the threads started.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <calltrace.h>
#include "sleep.h"

static volatile unsigned long sink;
static volatile int stopping, frames;

__attribute__((no_instrument_function)) static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

__attribute__((noinline)) void quick_job(void) { sink++; }
__attribute__((noinline)) void slow_job(void) { sleep_ms(2); }
__attribute__((noinline)) void tick(void) { sleep_ms(2); }

__attribute__((noinline)) void *short_thread(void *arg) {
    long n = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "%s-%ld", n % 100 == 99 ? "slow" : "quick", n);
    pthread_setname_np(pthread_self(), name);
    if (n % 100 == 99) slow_job();
    else quick_job();
    return NULL;
}

__attribute__((noinline)) void *ticker(void *arg) {
    pthread_setname_np(pthread_self(), "ticker");
    while (!stopping) {
        tick();
        for (int round = 0; round < 4; round++) {
            for (int i = 0; frames && i < 400; i++) calltrace_frame();
            sleep_ms(4);
        }
    }
    return arg;
}

int main(int argc, char **argv) {
    long run_ms = argc > 1 ? atol(argv[1]) : 2000, every_us = argc > 2 ? atol(argv[2]) : 300;
    int kill_at_end = 0, count = 0;
    for (int i = 3; i < argc; i++) {
        kill_at_end |= strcmp(argv[i], "kill") == 0;
        count |= strcmp(argv[i], "count") == 0;
        frames |= strcmp(argv[i], "frames") == 0;
    }
    pthread_t tick_thread;
    pthread_create(&tick_thread, NULL, ticker, NULL);
    long start = now_ms(), started = 0;
    while (count ? started < run_ms : now_ms() - start < run_ms) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_thread, (void *)started) == 0) {
            pthread_join(t, NULL);
            started++;
        }
        struct timespec gap = { 0, every_us * 1000L };
        nanosleep(&gap, NULL);
    }
    printf("started %ld\n", started);
    fflush(stdout);
    if (kill_at_end) {
        sleep_ms(50);  // the drain thread's poll (20 ms) has seen the last names
        kill(getpid(), SIGKILL);
    }
    stopping = 1;
    pthread_join(tick_thread, NULL);
    return 0;
}
