// For the settings tests (threshold 10 ms by default): main -> slow_step (12 ms), fast_step (4 ms),
// and a worker thread running worker_step (12 ms), which only CALLTRACE_THREADS=all records. Prints
// one line and exits with argv[1] (default 0).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "sleep.h"

__attribute__((noinline)) void slow_step(void) { sleep_ms(12); }
__attribute__((noinline)) void fast_step(void) { sleep_ms(4); }
__attribute__((noinline)) void worker_step(void) { sleep_ms(12); }

__attribute__((noinline)) void *worker(void *arg) {
    worker_step();
    return arg;
}

int main(int argc, char **argv) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    slow_step();
    fast_step();
    pthread_join(t, NULL);
    printf("settings: done\n");
    return argc > 1 ? atoi(argv[1]) : 0;
}
