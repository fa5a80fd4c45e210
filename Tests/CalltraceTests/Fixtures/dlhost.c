// dlopen/dlclose (threshold 1 ms): argv[1] and argv[2] are instrumented libraries with alpha_work
// and beta_work (3 ms each). The program loads A, calls it, unloads it, works (after_close, 12 ms),
// then does the same with B and once more with A:
//   main
//     call_plugin -> alpha_work -> alpha_inner
//     after_close
//     call_plugin -> beta_work -> beta_inner
//     after_close
//     call_plugin -> alpha_work -> alpha_inner
//     after_close
// Prints where each function was loaded.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "sleep.h"

__attribute__((noinline)) void call_plugin(const char *path, const char *name) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(2);
    }
    void (*fn)(void) = (void (*)(void))dlsym(lib, name);
    if (!fn) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        exit(2);
    }
    fn();
    printf("%s at %p\n", name, (void *)fn);
    dlclose(lib);
}

__attribute__((noinline)) void after_close(void) { sleep_ms(12); }

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    call_plugin(argv[1], "alpha_work");
    after_close();
    call_plugin(argv[2], "beta_work");
    after_close();
    call_plugin(argv[1], "alpha_work");
    after_close();
    return 0;
}
