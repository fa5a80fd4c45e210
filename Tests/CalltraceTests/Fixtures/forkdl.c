// fork while another thread is inside dlopen/dlclose (threshold 0): a thread loads and unloads
// argv[1] in a loop while main forks argv[2] children (default 40). Each child runs instrumented
// code (child_work) and ends with _exit(). Not exit(): glibc's exit handlers lock
// __exit_funcs_lock, which dlopen and dlclose (__cxa_finalize) take too, and a fork child of a
// thread that held it hangs in exit() even untraced (seen here about once in 100 forks under load,
// with the fixture built without the runtime); POSIX allows only async-signal-safe calls there.
// The parent gives each child 10 s, then kills it, counts it as hung and forks no more (one hang
// is the answer).
// Prints "forkdl: N children, H hung, F failed" and exits 1 if any hung or failed.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sleep.h"

static atomic_int stop;
static const char *library;

__attribute__((noinline)) int child_leaf(int x) {
    __asm__ volatile("");
    return x + 1;
}

__attribute__((noinline)) int child_work(void) {
    int sum = 0;
    for (int i = 0; i < 100; i++) sum += child_leaf(i);
    return sum;
}

__attribute__((noinline)) void *loader_thread(void *arg) {
    while (!atomic_load(&stop)) {
        void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (lib) dlclose(lib);
    }
    return arg;
}

// 0: exited with status 0; 1: hung and killed; 2: anything else.
__attribute__((noinline)) int wait_for(pid_t child) {
    for (int waited = 0; waited < 10000; waited++) {
        int status;
        pid_t r = waitpid(child, &status, WNOHANG);
        if (r == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 2;
        if (r < 0) return 2;
        sleep_ms(1);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    library = argv[1];
    int children = argc > 2 ? atoi(argv[2]) : 40, hung = 0, failed = 0;
    pthread_t loader;
    pthread_create(&loader, NULL, loader_thread, NULL);
    for (int i = 0; i < children; i++) {
        sleep_ms(2);  // let the loader get inside dlopen or dlclose
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            _exit(child_work() == 5050 ? 0 : 3);
        }
        if (child < 0) { perror("fork"); return 2; }
        int r = wait_for(child);
        hung += r == 1;
        failed += r == 2;
        if (hung) {
            children = i + 1;
            break;
        }
    }
    atomic_store(&stop, 1);
    pthread_join(loader, NULL);
    printf("forkdl: %d children, %d hung, %d failed\n", children, hung, failed);
    return hung || failed ? 1 : 0;
}
