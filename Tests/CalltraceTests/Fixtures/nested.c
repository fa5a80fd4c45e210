// Nested slow calls with a known tree (threshold 10 ms):
//   main
//     load_config            >= 38 ms
//       parse_section        >= 12 ms
//       parse_section        >= 12 ms
//     draw_frame             >= 20 ms
// plus 1000 calls of quick() that must not appear. Prints a line and exits with argv[1] (default 0).
#include <stdio.h>
#include <stdlib.h>
#include "sleep.h"

__attribute__((noinline)) int quick(int x) { return x * 3 + 1; }

__attribute__((noinline)) void parse_section(int n) {
    sleep_ms(12);
    printf("section %d\n", n);
}

__attribute__((noinline)) void load_config(void) {
    parse_section(1);
    parse_section(2);
    sleep_ms(14);
}

__attribute__((noinline)) void draw_frame(void) { sleep_ms(20); }

int main(int argc, char **argv) {
    int sum = 0;
    load_config();
    for (int i = 0; i < 1000; i++) sum += quick(i);
    draw_frame();
    printf("nested: done %d\n", sum);
    return argc > 1 ? atoi(argv[1]) : 0;
}
