// Threads (threshold 10 ms):
//   main                       joins "early" first, then runs main_job while the others work
//     main_job        >= 20 ms
//   "early"  early_thread -> early_job (12 ms); names itself and exits before the others start
//   "late"   late_thread  -> late_job  (15 ms); named by main with pthread_setname_np
//   unnamed  quit_thread  -> quit_midway -> quit_step (12 ms), then pthread_exit from quit_midway
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include "sleep.h"

__attribute__((noinline)) void early_job(void) { sleep_ms(12); }
__attribute__((noinline)) void late_job(void) { sleep_ms(15); }
__attribute__((noinline)) void quit_step(void) { sleep_ms(12); }
__attribute__((noinline)) void main_job(void) { sleep_ms(20); }

__attribute__((noinline)) void quit_midway(void) {
    quit_step();
    sleep_ms(3);
    pthread_exit(NULL);
}

__attribute__((noinline)) void *early_thread(void *arg) {
    pthread_setname_np(pthread_self(), "early");
    early_job();
    return arg;
}

__attribute__((noinline)) void *late_thread(void *arg) {
    sleep_ms(2); // main names this thread meanwhile
    late_job();
    return arg;
}

__attribute__((noinline)) void *quit_thread(void *arg) {
    quit_midway();
    return arg;
}

int main(void) {
    pthread_t early, late, quit;
    pthread_create(&early, NULL, early_thread, NULL);
    pthread_join(early, NULL);
    pthread_create(&late, NULL, late_thread, NULL);
    pthread_setname_np(late, "late");
    pthread_create(&quit, NULL, quit_thread, NULL);
    main_job();
    pthread_join(late, NULL);
    pthread_join(quit, NULL);
    printf("threads: done\n");
    return 0;
}
