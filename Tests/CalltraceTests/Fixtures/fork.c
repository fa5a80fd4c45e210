// fork (threshold 10 ms). argv[1] says which thread forks: "main" (default) or "thread" (a worker,
// which the child adopts as its main thread). Parent and child each print one line.
//   parent: main -> before_fork (12 ms), spawn_child (fast in the parent), parent_work (20 ms)
//   child:  the forking call goes on: spawn_child -> child_work (15 ms), then the child returns
//           from main ("main") or calls exit(0) from the worker ("thread")
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void before_fork(void) { sleep_ms(12); }
__attribute__((noinline)) void child_work(void) { sleep_ms(15); }
__attribute__((noinline)) void parent_work(void) { sleep_ms(20); }

__attribute__((noinline)) pid_t spawn_child(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) child_work();
    return pid;
}

__attribute__((noinline)) void *fork_thread(void *arg) {
    pid_t pid = spawn_child();
    if (pid == 0) {
        printf("child %d\n", getpid());
        exit(0);
    }
    *(pid_t *)arg = pid;
    return NULL;
}

int main(int argc, char **argv) {
    before_fork();
    pid_t pid;
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, fork_thread, &pid);
        pthread_join(t, NULL);
    } else {
        pid = spawn_child();
        if (pid == 0) {
            printf("child %d\n", getpid());
            return 0;
        }
    }
    parent_work();
    int status = 0;
    waitpid(pid, &status, 0);
    printf("parent %d\n", getpid());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}
