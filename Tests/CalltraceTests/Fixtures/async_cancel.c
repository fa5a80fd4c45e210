// Threads cancelled asynchronously (PTHREAD_CANCEL_ASYNCHRONOUS) inside instrumented calls, with
// every call recorded: each of THREADS workers runs work -> step -> spin, busy, until main cancels
// it (after it has run at least 3 ms); the cancellation lands anywhere, the hooks included.
// Prints "async_cancel: <n> cancelled".
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { THREADS = 150 };

static atomic_int started;
static volatile unsigned long sink;

__attribute__((noinline)) void spin(void) {
    for (int i = 0; i < 50; i++) sink += (unsigned long)i;
}

// About a millisecond of spins: at a 1 ms threshold, records are being written all the time.
__attribute__((noinline)) void step(void) {
    for (int i = 0; i < 4000; i++) spin();
}

__attribute__((noinline)) void work(void) {
    for (;;) step();
}

static void *worker(void *arg) {
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    atomic_fetch_add(&started, 1);
    work();
    return arg;
}

static void sleep_us(long us) {
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0) { }
}

int main(void) {
    int cancelled = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0) break;
        while (atomic_load(&started) <= i) sleep_us(100);
        sleep_us(3000 + (i % 13) * 170);
        void *result = NULL;
        if (pthread_cancel(t) == 0 && pthread_join(t, &result) == 0 && result == PTHREAD_CANCELED) cancelled++;
    }
    printf("async_cancel: %d cancelled\n", cancelled);
    return 0;
}
