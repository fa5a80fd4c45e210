// A library with a hot, tiny function, for muting while libraries come and go (mute_dlhost.c).
static volatile unsigned long sink;

__attribute__((noinline)) void hot_leaf(unsigned long i) { sink += i * 2654435761u; }

__attribute__((noinline)) unsigned long hot_work(unsigned long n) {
    for (unsigned long i = 0; i < n; i++) hot_leaf(i);
    return sink;
}
