// SIGUSR1 handlers installed with SA_ONSTACK while the program set no alternate stack: they run on
// the one the runtime gives a recording thread. argv[1]:
//   "main":   an instrumented handler on the main thread (stack cleared first):
//             main -> scrub, work -> handler -> inner
//   "thread": the same on a worker started after a 1 MiB hole was unmapped (as a freed big malloc
//             block leaves), so the runtime's stack for the worker may land above its stack:
//             worker_main -> work -> handler -> inner
//   "big":    an uninstrumented handler with a 128 KiB local array: main -> work
// Prints "onstack: <mode> hits=<n>".
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static volatile int hits;

__attribute__((noinline)) void inner(void) { hits++; }

void handler(int sig) { (void)sig; inner(); }

__attribute__((no_instrument_function)) static void big_handler(int sig) {
    volatile char big[128 * 1024];
    big[0] = (char)sig;
    big[sizeof big - 1] = 1;
    hits += big[0] + big[sizeof big - 1];
}

__attribute__((noinline)) void scrub(void) {
    volatile char buf[65536];
    memset((char *)buf, 0, sizeof buf);
}

__attribute__((noinline)) void work(void) { raise(SIGUSR1); }

__attribute__((noinline)) void worker_main(void) { work(); }

static void *worker(void *arg) { (void)arg; worker_main(); return NULL; }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "main";
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = strcmp(mode, "big") == 0 ? big_handler : handler;
    sa.sa_flags = SA_ONSTACK;  // "on the alternate stack, if there is one"
    sigaction(SIGUSR1, &sa, NULL);
    if (strcmp(mode, "thread") == 0) {
        void *hole = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (hole != MAP_FAILED) munmap(hole, 1 << 20);
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_join(t, NULL);
    } else {
        if (strcmp(mode, "main") == 0) scrub();
        work();
    }
    printf("onstack: %s hits=%d\n", mode, hits);
    return 0;
}
