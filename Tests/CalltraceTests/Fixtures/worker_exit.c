// exit() or a crash on a worker thread while main is inside a call (threshold 10 ms). argv[1]:
// "exit" (exit(6) from the worker) or "segv" (the worker writes through a null pointer).
//   main -> main_step (12 ms), then main_wait (sleeps up to 2 s for the worker to end the process)
//   worker: worker_thread -> worker_end: 25 ms of work, then waits until main is inside main_wait,
//   then 40 ms more and ends the process: main_wait lasts at least 40 ms however late either
//   thread is scheduled (a fixed 25 ms against main_step's 12 left it 13 ms, near the threshold).
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sleep.h"

static const char *mode = "exit";
static atomic_int main_waiting;

__attribute__((noinline)) void main_step(void) { sleep_ms(12); }

__attribute__((noinline)) void main_wait(void) {
    atomic_store(&main_waiting, 1);
    for (int i = 0; i < 200; i++) sleep_ms(10);
}

__attribute__((noinline)) void worker_end(void) {
    sleep_ms(25);
    while (!atomic_load(&main_waiting)) sleep_ms(1);
    sleep_ms(40);
    printf("worker ends the process by %s\n", mode);
    fflush(stdout);
    if (strcmp(mode, "segv") == 0) *(volatile int *)(uintptr_t)0 = 1;
    exit(6);
}

__attribute__((noinline)) void *worker_thread(void *arg) {
    worker_end();
    return arg;
}

int main(int argc, char **argv) {
    if (argc > 1) mode = argv[1];
    pthread_t t;
    pthread_create(&t, NULL, worker_thread, NULL);
    main_step();
    main_wait();
    printf("the worker did not end the process\n");
    return 1;
}
