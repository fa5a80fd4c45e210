// main ends with pthread_exit while two workers still run (threshold 10 ms): the process exits
// with status 0 when the last worker ends, as it would untraced.
//   main -> main_step (12 ms), then pthread_exit
//   worker_thread -> worker_job (30 ms) in each worker; the last one prints the count
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include "sleep.h"

static atomic_int finished;

__attribute__((noinline)) void main_step(void) { sleep_ms(12); }

__attribute__((noinline)) void worker_job(void) { sleep_ms(30); }

__attribute__((noinline)) void *worker_thread(void *arg) {
    worker_job();
    if (atomic_fetch_add(&finished, 1) == 1) {
        printf("main_exit: 2 workers done\n");
        fflush(stdout);
    }
    return arg;
}

int main(void) {
    pthread_t ids[2];
    for (int i = 0; i < 2; i++) pthread_create(&ids[i], NULL, worker_thread, NULL);
    main_step();
    pthread_exit(NULL);
}
