// CALLTRACE_FILTER with C++ names (FilterTests): main calls ns::Klass::method_a (3 ms asleep) and
// ns::Klass::method_b(int) (2 ms), each once, and helper(int) (4 ms), which calls
// ns::Klass::method_a again.
#include "sleep.h"

#include <cstdio>

namespace ns {
struct Klass {
    int value = 1;
    __attribute__((noinline)) void method_a() { sleep_ms(3); value++; }
    __attribute__((noinline)) void method_b(int n) { sleep_ms(2); value += n; }
};
}  // namespace ns

__attribute__((noinline)) int helper(int n) {
    ns::Klass k;
    k.method_a();
    sleep_ms(4);
    return k.value + n;
}

int main() {
    ns::Klass k;
    k.method_a();
    k.method_b(2);
    std::printf("value %d %d\n", k.value, helper(1));
    return 0;
}
