// CALLTRACE_FILTER on a library loaded with dlopen (FilterTests): main -> load_plugin, which loads
// argv[1] (plugin_a.c: alpha_work -> alpha_inner, 2 ms) and waits 200 ms, so that the runtime's
// drain thread (its passes are 1-8 ms apart) has matched the new module's functions before any of
// them runs; then main -> call_twice -> alpha_work twice, and after_load (1 ms). stdout: "called 2".
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "sleep.h"

typedef void (*work_fn)(void);

__attribute__((noinline)) work_fn load_plugin(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(2);
    }
    work_fn fn = (work_fn)dlsym(lib, "alpha_work");
    if (!fn) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        exit(2);
    }
    sleep_ms(200);
    return fn;
}

__attribute__((noinline)) void call_twice(work_fn fn) {
    fn();
    fn();
}

__attribute__((noinline)) void after_load(void) { sleep_ms(1); }

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    work_fn fn = load_plugin(argv[1]);
    call_twice(fn);
    after_load();
    printf("called 2\n");
    return 0;
}
