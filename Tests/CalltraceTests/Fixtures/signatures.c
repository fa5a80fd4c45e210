// Signatures spread over several lines: report --lines gives each function the line that holds its
// name (marked "name:" in a comment), not the `){` line where its code starts.
#include <stdio.h>

__attribute__((noinline)) int
spread(int a, // name:spread
       int b,
       int c) {
    return a * b + c;
}

__attribute__((noinline)) static int closing(int a, int b // name:closing
) {
    return a - b;
}

__attribute__((noinline)) int oneline(int a) { return a + 1; } // name:oneline

int
main(int argc, char **argv) // name:main
{
    (void)argv;
    printf("%d\n", spread(argc, 2, 3) + closing(argc, 1) + oneline(argc));
    return 0;
}
