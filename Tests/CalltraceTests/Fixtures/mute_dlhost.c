// Muting while libraries are loaded and unloaded: argv[1] is plugin_hot.so. Forty times: load it,
// call hot_work(50,000) (hot_leaf gets muted and patched while it runs), unload it; two threads
// do it at once, so dlclose meets the drain thread's patching. Prints a checksum that does not
// depend on timing.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const char *path;

__attribute__((noinline)) unsigned long cycle(void) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(2);
    }
    unsigned long (*work)(unsigned long) = (unsigned long (*)(unsigned long))dlsym(lib, "hot_work");
    unsigned long first = work ? work(50000) : 0;
    dlclose(lib);
    return first; // sink restarts at 0 with every load
}

static void *loop(void *arg) {
    unsigned long *sum = arg;
    for (int i = 0; i < 40; i++) *sum += cycle();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    path = argv[1];
    unsigned long a = 0, b = 0;
    pthread_t t;
    pthread_create(&t, NULL, loop, &a);
    loop(&b);
    pthread_join(t, NULL);
    printf("mute_dlhost: %d\n", a != 0 && b != 0);
    return 0;
}
