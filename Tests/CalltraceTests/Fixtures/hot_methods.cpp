// hot_methods: a hot method and a hot template instance, for `calltrace exclude-list` on C++.
//
//   hot_methods [ROUNDS]   (default 20000)
//
// calc::Acc::step and calc::twice<int> each run ROUNDS times and take nanoseconds. gcc matches
// exclusion names against `calc::Acc::step` and `calc::twice<int>`; the list can name the first.
#include <cstdio>
#include <cstdlib>

namespace calc {
struct Acc {
    unsigned total = 1;
    __attribute__((noinline)) void step(unsigned x) { total = total * 31 + x; }
};

template <typename T> __attribute__((noinline)) T twice(T x) { return x * 2 + 1; }
}  // namespace calc

int main(int argc, char **argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 20000;
    calc::Acc acc;
    unsigned x = 0;
    for (int i = 0; i < rounds; i++) acc.step(static_cast<unsigned>(i));
    for (int i = 0; i < rounds; i++) x = calc::twice<unsigned>(x);
    std::printf("checksum %u %u\n", acc.total, x);
    return 0;
}
