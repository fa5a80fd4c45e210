// CALLTRACE_FILTER=inside (FilterTests): a C++ exception thrown through an included call and caught
// outside it. Three rounds of main -> guard -> inside -> thrower, where thrower throws and guard
// catches and calls after; then main -> quiet_guard -> inside -> thrower, caught in quiet_guard,
// which returns at once, and main calls after. Each of inside, thrower and after calls leaf once.
// Recorded with CALLTRACE_FILTER=inside: inside, thrower and their two leaf calls, 4 times; never
// after nor its leaf call. Then main -> inside_keeps -> thrower, caught in inside_keeps (an exception
// that stays inside an included call), which calls leaf and returns, and main calls after: with
// CALLTRACE_FILTER=inside,inside_keeps its leaf call is recorded too, the last after is not.
// stdout: a checksum.
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

__attribute__((noinline)) void inside_keeps(int i) {
    try {
        thrower(i);
    } catch (const std::exception &) {
        leaf((unsigned long)i + 20);
    }
}

int main() {
    for (int i = 0; i < 3; i++) guard(i);
    quiet_guard(3);
    after(3);
    inside_keeps(4);
    after(4);
    std::printf("checksum %lu\n", sink);
    return 0;
}
