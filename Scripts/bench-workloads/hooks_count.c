/* Counts the calls a -finstrument-functions binary makes (enter hooks), so the
 * bench can divide by the real number of calls. Writes the count to the file
 * named by BENCH_COUNT_FILE (or stderr) at exit. Not a contender. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))
#define EXPORT __attribute__((no_instrument_function, visibility("default")))

static uint64_t calls;

EXPORT void __cyg_profile_func_enter(void *fn, void *site) { (void)fn; (void)site; calls++; }
EXPORT void __cyg_profile_func_exit(void *fn, void *site) { (void)fn; (void)site; }

__attribute__((destructor)) NO_INSTRUMENT static void count_fini(void) {
    const char *path = getenv("BENCH_COUNT_FILE");
    FILE *f = path ? fopen(path, "w") : stderr;
    if (!f) return;
    fprintf(f, "%llu\n", (unsigned long long)calls);
    if (path) fclose(f);
}
