// setns into a mount namespace needs a process whose threads share no working directory or root
// (CLONE_FS) with another. The program enters its own mount namespace, makes a new one
// (unshare(CLONE_NEWNS)) and goes back to the first:
//   main -> before_step, enter_own, make_new, go_back
// Prints what each call returned.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int original = -1;

__attribute__((no_instrument_function)) static void report(const char *what, int r) {
    printf("%s: %s\n", what, r == 0 ? "ok" : strerror(errno));
}

__attribute__((noinline)) void before_step(void) { original = open("/proc/self/ns/mnt", O_RDONLY); }

__attribute__((noinline)) void enter_own(void) { report("setns own", setns(original, CLONE_NEWNS)); }

__attribute__((noinline)) void make_new(void) { report("unshare", unshare(CLONE_NEWNS)); }

__attribute__((noinline)) void go_back(void) { report("setns back", setns(original, CLONE_NEWNS)); }

int main(void) {
    before_step();
    enter_own();
    make_new();
    go_back();
    return 0;
}
