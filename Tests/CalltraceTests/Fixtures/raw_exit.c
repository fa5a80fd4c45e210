// Threads that end with the raw exit system call (not exit_group, not pthread_exit), as strict
// seccomp programs do, with calls open. argv[1]:
//   "main":    main -> step (12 ms), prints, then main -> quit -> SYS_exit(7) on the only thread
//   "workers": main -> step, starts a worker, then main -> quit -> SYS_exit(5); the worker runs
//              worker_job (60 ms), prints, and ends the same way: worker -> quit -> SYS_exit(5)
// Untraced, the process ends when its last thread does, with that thread's status.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void step(void) { sleep_ms(12); }

__attribute__((noinline)) void worker_job(void) { sleep_ms(60); }

__attribute__((noinline, noreturn)) void quit(int code) {
    for (;;) syscall(SYS_exit, code);
}

__attribute__((noinline)) void *worker(void *arg) {
    worker_job();
    printf("raw_exit: worker done\n");
    fflush(stdout);
    quit(5);
    return arg;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "main";
    step();
    if (strcmp(mode, "workers") == 0) {
        pthread_t id;
        pthread_create(&id, NULL, worker, NULL);
        quit(5);
    }
    printf("raw_exit: main done\n");
    fflush(stdout);
    quit(7);
}
