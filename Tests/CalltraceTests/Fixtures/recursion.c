// Recursion, the shape of most real work (MuteRecursionTests): the slow calls of a recursive
// function are its outer calls, still open while its millions of fast inner calls run. main is not
// instrumented and times each root call itself; built with -DUNTRACED the functions carry no hooks
// at all, so that build's times are the code's own.
//
//   recursion walk_sort DEPTH N   walk() over a complete binary tree of DEPTH levels, then sort()
//                                 (quicksort: partition, swap) of N pseudo-random ints
//   recursion fib N               fib(N)
//   recursion mutual N            even(N): even calls odd calls even ..., each with two branches
//   recursion fnptr N             fib through a function pointer (fib_ptr)
//   recursion sleepy DEPTH SHIFT  nap() over a complete binary tree of DEPTH levels: every 2^SHIFT-th
//                                 node visited sleeps 1 ms, so a call's cost has an exact lower
//                                 bound (1 ms per sleep beneath it) while millions of fast calls run
//   recursion threads DEPTH SHIFT nap() over its own tree on each of two threads at once (nap_thread)
//   recursion repeat DEPTH SHIFT K  K root calls of nap() in a row, 5 ms asleep between them
// stdout: "NAME MS RESULT" per root call, timed by main (the result is a checksum).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "sleep.h"

#ifdef UNTRACED
#define HOOKED __attribute__((no_instrument_function, noinline))
#else
#define HOOKED __attribute__((noinline))
#endif
#define PLAIN __attribute__((no_instrument_function))

struct node {
    struct node *left, *right;
    long value;
};

HOOKED long walk(const struct node *n) {
    if (!n) return 0;
    return n->value + walk(n->left) + 3 * walk(n->right);
}

static __thread unsigned long visits;
static unsigned long nap_mask;

HOOKED long nap(const struct node *n) {
    if (!n) return 0;
    if ((++visits & nap_mask) == 0) sleep_ms(1);
    return n->value + nap(n->left) + 3 * nap(n->right);
}

HOOKED void swap(int *a, int *b) {
    int t = *a;
    *a = *b;
    *b = t;
}

HOOKED long partition(int *a, long lo, long hi) {
    int pivot = a[lo + (hi - lo) / 2];
    swap(&a[lo + (hi - lo) / 2], &a[hi]);
    long store = lo;
    for (long i = lo; i < hi; i++) {
        if (a[i] < pivot) swap(&a[i], &a[store++]);
    }
    swap(&a[store], &a[hi]);
    return store;
}

HOOKED void sort(int *a, long lo, long hi) {
    if (lo >= hi) return;
    long p = partition(a, lo, hi);
    sort(a, lo, p - 1);
    sort(a, p + 1, hi);
}

HOOKED long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

HOOKED long odd(long n);
HOOKED long even(long n) { return n < 2 ? 1 : odd(n - 1) + odd(n - 2); }
HOOKED long odd(long n) { return n < 2 ? 2 : even(n - 1) + even(n - 2); }

static long (*volatile fib_target)(long);
HOOKED long fib_ptr(long n) { return n < 2 ? n : fib_target(n - 1) + fib_target(n - 2); }

PLAIN static struct node *build(int depth, long *next) {
    if (depth == 0) return NULL;
    struct node *n = malloc(sizeof *n);
    n->value = (*next)++ % 7;
    n->left = build(depth - 1, next);
    n->right = build(depth - 1, next);
    return n;
}

PLAIN static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

PLAIN static void report(const char *name, double t0, long result) {
    printf("%s %.3f %ld\n", name, now_ms() - t0, result);
}

PLAIN static void *nap_thread(void *depth) {
    long next = 1;
    return (void *)nap(build((int)(long)depth, &next));
}

PLAIN int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "walk_sort";
    long a1 = argc > 2 ? atol(argv[2]) : 20;
    long a2 = argc > 3 ? atol(argv[3]) : 1000000;
    long a3 = argc > 4 ? atol(argv[4]) : 1;
    nap_mask = (1ul << (a2 < 63 ? a2 : 20)) - 1;
    fib_target = fib_ptr;
    long next = 1;
    double t0;
    if (mode[0] == 'w') {
        struct node *tree = build((int)a1, &next);
        int *a = malloc(sizeof *a * (size_t)a2);
        unsigned x = 12345;
        for (long i = 0; i < a2; i++) a[i] = (int)((x = x * 1103515245u + 12345u) >> 1);
        t0 = now_ms();
        report("walk", t0, walk(tree));
        t0 = now_ms();
        sort(a, 0, a2 - 1);
        long sum = 0;
        for (long i = 1; i < a2; i++) sum += a[i - 1] <= a[i];
        report("sort", t0, sum);
    } else if (mode[0] == 'f' && mode[1] == 'i') {
        t0 = now_ms();
        report("fib", t0, fib(a1));
    } else if (mode[0] == 'm') {
        t0 = now_ms();
        report("even", t0, even(a1));
    } else if (mode[0] == 'f') {
        t0 = now_ms();
        report("fib_ptr", t0, fib_target(a1));
    } else if (mode[0] == 's') {
        struct node *tree = build((int)a1, &next);
        t0 = now_ms();
        report("nap", t0, nap(tree));
    } else if (mode[0] == 't') {
        pthread_t th[2];
        t0 = now_ms();
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, nap_thread, (void *)a1);
        long sum = 0;
        for (int i = 0; i < 2; i++) {
            void *r;
            pthread_join(th[i], &r);
            sum += (long)r;
        }
        report("nap_thread", t0, sum);
    } else if (mode[0] == 'r') {
        struct node *tree = build((int)a1, &next);
        for (long k = 0; k < a3; k++) {
            sleep_ms(5);
            t0 = now_ms();
            report("nap", t0, nap(tree));
        }
    }
    return 0;
}
