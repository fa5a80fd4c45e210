// C++ names: namespaces, templates, methods, overloads; each call sleeps past a 5 ms threshold.
#include <cstdio>
#include "sleep.h"

namespace app {
namespace io {
template <typename T> struct Loader {
    __attribute__((noinline)) T load(T value) {
        sleep_ms(6);
        return value + 1;
    }
};
}  // namespace io

__attribute__((noinline)) int render(int frames) { sleep_ms(6); return frames; }
__attribute__((noinline)) double render(double scale) { sleep_ms(6); return scale; }
}  // namespace app

int main() {
    app::io::Loader<int> ints;
    app::io::Loader<double> doubles;
    int a = ints.load(1);
    double b = doubles.load(2.0);
    std::printf("%d %.1f %d %.1f\n", a, b, app::render(3), app::render(4.0));
    return 0;
}
