// Adaptive muting (MuteTests): tiny functions called millions of times under a root that sleeps.
//
//   mute hot N          main -> root: 30 ms asleep, then N rounds of tiny, tiny_void, left, right
//                       (left and right each hold an inlined copy of helper), then slow_step (15 ms)
//   mute threads T N    the same rounds on T threads at once, while the runtime patches them
//   mute sometimes N    N calls of sometimes(), of which every 1000th sleeps 2 ms
//   mute late N         N calls of left, then N of right: helper's copy in right first runs
//                       after helper was muted (its sites are learned and patched late)
//   mute fork N         N rounds, fork, then N more rounds and slow_step in both processes;
//                       each prints "parent|child PID checksum"
// stdout is a checksum of everything computed; stderr says how long root's loop took (loop_ns).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long tiny(unsigned long x) { return (x * 2654435761u) ^ (x >> 3); }

// void: gcc tail-calls the exit hook after the epilogue (jmp __cyg_profile_func_exit).
__attribute__((noinline)) void tiny_void(unsigned long x) { sink += x & 7; }

// gcc instruments each inlined copy of helper with helper's own enter and exit calls.
static inline unsigned long helper(unsigned long x) { return (x << 1) + 7; }
__attribute__((noinline)) unsigned long left(unsigned long x) { return helper(x) + 1; }
__attribute__((noinline)) unsigned long right(unsigned long x) { return helper(x ^ 3) ^ 5; }

static void sleep_ms(long ms) {
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {}
}

__attribute__((noinline)) void slow_step(void) { sleep_ms(15); }

static unsigned long rounds(unsigned long n, unsigned long seed) {
    unsigned long acc = seed;
    for (unsigned long i = 0; i < n; i++) {
        acc += tiny(i + seed);
        tiny_void(i);
        acc ^= left(i) + right(acc & 0xffff);
    }
    return acc;
}

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) unsigned long root(unsigned long n) {
    sleep_ms(30);
    unsigned long long t0 = now_ns();
    unsigned long acc = rounds(n, 1);
    fprintf(stderr, "loop_ns %llu\n", now_ns() - t0);
    slow_step();
    return acc;
}

struct worker { unsigned long n, seed, result; };

static void *work(void *arg) {
    struct worker *w = arg;
    w->result = rounds(w->n, w->seed);
    return NULL;
}

__attribute__((noinline)) unsigned long sometimes(unsigned long i) {
    if (i % 1000 == 999) sleep_ms(2);
    return i * 3 + 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "hot";
    if (strcmp(mode, "hot") == 0) {
        unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 3000000;
        unsigned long acc = root(n);
        printf("hot %lu %lu\n", acc, (unsigned long)sink);
    } else if (strcmp(mode, "threads") == 0) {
        int t = argc > 2 ? atoi(argv[2]) : 4;
        unsigned long n = argc > 3 ? strtoul(argv[3], NULL, 10) : 2000000;
        if (t < 1 || t > 64) return 2;
        pthread_t th[64];
        struct worker w[64];
        for (int i = 0; i < t; i++) {
            w[i] = (struct worker){ n, (unsigned long)i + 1, 0 };
            pthread_create(&th[i], NULL, work, &w[i]);
        }
        unsigned long acc = root(n / 2);
        for (int i = 0; i < t; i++) {
            pthread_join(th[i], NULL);
            printf("thread %d %lu\n", i, w[i].result);
        }
        printf("root %lu\n", acc);
    } else if (strcmp(mode, "sometimes") == 0) {
        unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 300000;
        unsigned long acc = 0;
        for (unsigned long i = 0; i < n; i++) acc += sometimes(i);
        printf("sometimes %lu\n", acc);
    } else if (strcmp(mode, "late") == 0) {
        unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
        unsigned long acc = 0;
        for (unsigned long i = 0; i < n; i++) acc += left(i);
        for (unsigned long i = 0; i < n; i++) acc ^= right(i + acc);
        printf("late %lu\n", acc);
    } else if (strcmp(mode, "fork") == 0) {
        unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
        unsigned long acc = rounds(n, 1);
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) return 3;
        acc += rounds(n, 2);
        slow_step();
        printf("%s %d %lu\n", child ? "parent" : "child", (int)getpid(), acc);
        fflush(stdout);
        if (child) waitpid(child, NULL, 0);
    } else {
        return 2;
    }
    return 0;
}
