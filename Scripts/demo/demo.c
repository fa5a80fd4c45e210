// The bundled demo for calltrace: a pretend application start-up with a few slow steps.
// Build it with Scripts/calltrace-cc, run it, and read its cost tree (Scripts/setup does all three).
#include <stdio.h>
#include <string.h>
#include <time.h>

// A stand-in for real work (file reads, rendering): left uninstrumented so the tree shows the
// application's own functions.
__attribute__((no_instrument_function)) static void work_for(long ms) {
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static unsigned checksum(const char *text) {
    unsigned h = 2166136261u;
    for (; *text; text++) h = (h ^ (unsigned char)*text) * 16777619u;
    return h;
}

__attribute__((noinline)) void parse_section(const char *name) {
    work_for(12);
    (void)checksum(name);
}

__attribute__((noinline)) void load_config(void) {
    const char *sections[] = { "window", "fonts", "plugins" };
    for (int i = 0; i < 3; i++) {
        if (strcmp(sections[i], "plugins") == 0) work_for(3);   // fast: below the threshold
        else parse_section(sections[i]);
    }
    work_for(14);
}

__attribute__((noinline)) void warm_cache(int entries) {
    unsigned sum = 0;
    char key[32];
    for (int i = 0; i < entries; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        sum += checksum(key);    // many tiny calls: timed, never recorded
    }
    work_for(20);
    if (sum == 42) puts("lucky");
}

__attribute__((noinline)) void draw_first_frame(void) { work_for(25); }

int main(void) {
    load_config();
    warm_cache(100000);
    draw_first_frame();
    puts("demo: started");
    return 0;
}
