// Many short-lived threads (threshold 10 ms, CALLTRACE_THREADS=all): argv[1] rounds (default 4) of
// argv[2] threads (default 32) started together; each runs pool_thread -> job (12 ms) and exits.
// main -> run_round for each round. Prints the number of threads that ran.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "sleep.h"

__attribute__((noinline)) void job(void) { sleep_ms(12); }

__attribute__((noinline)) void *pool_thread(void *arg) {
    job();
    return arg;
}

__attribute__((noinline)) int run_round(int threads) {
    pthread_t ids[256];
    int started = 0;
    for (int i = 0; i < threads && i < 256; i++) started += pthread_create(&ids[i], NULL, pool_thread, NULL) == 0;
    for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
    return started;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 4, threads = argc > 2 ? atoi(argv[2]) : 32, ran = 0;
    for (int r = 0; r < rounds; r++) ran += run_round(threads);
    printf("many_threads: %d\n", ran);
    return 0;
}
