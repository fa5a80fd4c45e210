// A longjmp that starts and ends inside a SIGUSR1 handler, while another thread sends the main
// thread SIGUSR1 in a loop and main calls f() in rounds of 100: handlers land anywhere in main's
// hooks, record writes among them. main starts once the sender runs and stops once 4000 handlers
// ran, or after 10000 rounds (which bounds the trace when a busy machine gives the sender little
// time) or 1 s. How many ran is not the point, so it is not printed.
//   main -> f...; handler -> leaf, leaf (anywhere)
// Prints "handler_jumps: done" (the sum, stored in a volatile, is only there so that the loop is
// not optimised away).
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { HANDLERS = 4000 };

static volatile int handled, started, stop, leaves;
static pthread_t main_thread;
static volatile long result;

__attribute__((noinline)) void leaf(void) { leaves++; }  // not empty: clang would drop the call

void handler(int sig) {
    (void)sig;
    jmp_buf jb;
    if (!setjmp(jb)) {
        leaf();
        longjmp(jb, 1);
    }
    leaf();
    handled++;
}

__attribute__((no_instrument_function)) static void *sender(void *arg) {
    (void)arg;
    started = 1;
    while (!stop) pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

__attribute__((noinline)) int f(int x) { return x + 1; }

__attribute__((no_instrument_function)) static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    while (!started) { }  // the storm is on before main's loop starts
    double start = now();
    long sum = 0;
    for (int round = 0; round < 10000 && handled < HANDLERS && now() - start < 1.0; round++) {
        for (int i = 0; i < 100; i++) sum += f(i);
    }
    stop = 1;
    pthread_join(t, NULL);
    result = sum;  // how many rounds ran depends on the machine: never printed (it once was, which
                   // made an untraced run's output differ from a traced one's under load)
    printf("handler_jumps: done\n");
    return 0;
}
