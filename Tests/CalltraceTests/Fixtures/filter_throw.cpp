// CALLTRACE_FILTER=inside (FilterTests): a C++ exception thrown through an included call and caught
// outside it. Three rounds of main -> guard -> inside -> thrower, where thrower throws and guard
// catches and calls after; then main -> quiet_guard -> inside -> thrower, caught in quiet_guard,
// which returns at once, and main calls after. Each of inside, thrower and after calls leaf once.
// Recorded with the filter: inside, thrower and their two leaf calls, 4 times; never after nor its
// leaf call. stdout: a checksum.
#include <cstdio>
#include <stdexcept>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i) { sink += i * 3 + 1; }
__attribute__((noinline)) void after(int i) { leaf((unsigned long)i + 100); }

__attribute__((noinline)) void thrower(int i) {
    leaf((unsigned long)i + 10);
    throw std::runtime_error("out");
}

__attribute__((noinline)) void inside(int i) {
    leaf((unsigned long)i);
    thrower(i);
    sink++;
}

__attribute__((noinline)) void guard(int i) {
    try {
        inside(i);
    } catch (const std::exception &) {
        after(i);
    }
}

__attribute__((noinline)) void quiet_guard(int i) {
    try {
        inside(i);
    } catch (const std::exception &) {
        sink++;
    }
}

int main() {
    for (int i = 0; i < 3; i++) guard(i);
    quiet_guard(3);
    after(3);
    std::printf("checksum %lu\n", sink);
    return 0;
}
