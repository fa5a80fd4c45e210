// vfork children share the parent's memory until they exec or exit (threshold 10 ms): two children
// each call an instrumented function (child_call, 12 ms) and end with _exit(), or with argv[1]
// "exit" the second calls exit() instead. Neither may write, record into or close the parent's
// trace:
//   main -> before_vfork (12 ms), [children], after_vfork (15 ms)
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void before_vfork(void) { sleep_ms(12); }

__attribute__((noinline)) void child_call(void) { sleep_ms(12); }

__attribute__((noinline)) void after_vfork(void) { sleep_ms(15); }

__attribute__((noinline)) static int run_child(int use_exit) {
    pid_t child = vfork();
    if (child == 0) {
        child_call();
        if (use_exit) exit(0);
        _exit(0);
    }
    if (child < 0) return -1;
    int status;
    if (waitpid(child, &status, 0) != child) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    int use_exit = argc > 1 && argv[1][0] == 'e';
    before_vfork();
    int a = run_child(0), b = run_child(use_exit);
    after_vfork();
    printf("vfork: children %d %d\n", a, b);
    return 0;
}
