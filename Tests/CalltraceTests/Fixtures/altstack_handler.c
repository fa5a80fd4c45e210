// An instrumented SIGUSR1 handler on an alternate signal stack (sigaltstack + SA_ONSTACK).
// argv[1] "main": the main thread's alternate stack is malloc'ed; "thread": a worker's is mmap'ed
// before the worker starts, so it lies above the worker's own stack (mmap hands out lower addresses
// as it goes). The thread's stack is cleared first, so no stale return address lies below.
//   main|worker_main -> scrub, work -> (raise x3) handler -> inner
// Prints "altstack: <mode> hits=3".
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { ALT_SIZE = 1 << 16 };

static volatile int hits;
static void *worker_alt;

__attribute__((noinline)) void inner(void) { hits++; }

void handler(int sig) { (void)sig; inner(); }

__attribute__((noinline)) void scrub(void) {
    volatile char buf[65536];
    memset((char *)buf, 0, sizeof buf);
}

__attribute__((noinline)) void work(int n) {
    for (int i = 0; i < n; i++) raise(SIGUSR1);  // raise: to the calling thread
}

__attribute__((no_instrument_function)) static void use_alt_stack(void *base) {
    stack_t ss = { .ss_sp = base, .ss_size = ALT_SIZE, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0) { perror("sigaltstack"); exit(2); }
}

__attribute__((noinline)) void worker_main(void) {
    use_alt_stack(worker_alt);
    scrub();
    work(3);
}

static void *worker(void *arg) { (void)arg; worker_main(); return NULL; }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "main";
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    if (strcmp(mode, "thread") == 0) {
        worker_alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (worker_alt == MAP_FAILED) { perror("mmap"); return 2; }
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_join(t, NULL);
    } else {
        use_alt_stack(malloc(ALT_SIZE));
        scrub();
        work(3);
    }
    printf("altstack: %s hits=%d\n", mode, hits);
    return 0;
}
