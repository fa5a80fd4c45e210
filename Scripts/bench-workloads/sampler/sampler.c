// What the thread-state sampler costs (Scripts/bench --sampler-only): the main thread spends
// SECONDS inside one slow call, in one of four ways, and at the end prints how much CPU time the
// process's other threads (the runtime's drain thread: this program starts none) used, against
// the wall time.
//   cpu      computing throughout (sampled; running, so the system call is not read)
//   blocked  alternating 1 ms sleeps and 1 ms of computing (sampled every 2 ms, each read whole)
//   idle     one long sleep (sampled; nothing changes, so samples are left out)
//   fast     no call open long: short calls from an uninstrumented loop (not sampled at all)
//   quiet    a short call every millisecond from an uninstrumented loop that sleeps between (the
//            drain thread's own passes, nothing sampled: the baseline)
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double seconds = 3;
static volatile unsigned long sink;

__attribute__((no_instrument_function)) static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(double s) {
    double end = now() + s;
    while (now() < end) sink++;
}

__attribute__((noinline)) static void nap(double s) {
    struct timespec t = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
    nanosleep(&t, 0);
}

__attribute__((noinline)) static void long_call(const char *mode) {
    double end = now() + seconds;
    if (!strcmp(mode, "cpu")) spin(seconds);
    else if (!strcmp(mode, "idle")) nap(seconds);
    else while (now() < end) { nap(0.001); spin(0.001); }
}

__attribute__((noinline)) static void short_call(void) { for (int i = 0; i < 1000; i++) sink++; }

// CPU time of every thread but the calling one, in ns.
__attribute__((no_instrument_function)) static unsigned long long others_cpu(void) {
    unsigned long long sum = 0;
    long self = syscall(SYS_gettid);
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || atol(e->d_name) == self) continue;
        char path[64], buf[128];
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(buf, sizeof buf, f)) sum += strtoull(buf, 0, 10);
        if (f) fclose(f);
    }
    if (d) closedir(d);
    return sum;
}

__attribute__((no_instrument_function)) int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "blocked";
    if (argc > 2) seconds = atof(argv[2]);
    double start = now();
    if (!strcmp(mode, "quiet")) {
        double end = start + seconds;
        struct timespec t = { 0, 1000000 };
        while (now() < end) {
            short_call();
            nanosleep(&t, 0);
        }
    } else if (!strcmp(mode, "fast")) {
        double end = start + seconds;
        while (now() < end) short_call();
    } else {
        long_call(mode);
    }
    double wall = now() - start;
    printf("%s wall_ns %.0f others_cpu_ns %llu\n", mode, wall * 1e9, others_cpu());
    return 0;
}
