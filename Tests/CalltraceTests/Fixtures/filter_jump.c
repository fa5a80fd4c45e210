// CALLTRACE_FILTER=inside (FilterTests): longjmp out of an included call. Three rounds of
// main -> guard -> inside -> bail, where bail longjmps back to guard, which then calls after; then
// main -> quiet_guard -> inside -> bail, jumping back to quiet_guard, which returns at once (its
// exit is the first hook after the jump), and main calls after. Each of inside, bail and after calls
// leaf once. Recorded with CALLTRACE_FILTER=inside: inside, bail and their two leaf calls, 4 times;
// never after nor its leaf call. Then main -> inside_keeps -> bail, which jumps back into
// inside_keeps (a jump that stays inside an included call), which calls leaf and returns, and main
// calls after: with CALLTRACE_FILTER=inside,inside_keeps its leaf call is recorded too, the last
// after is not. stdout: a checksum.
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i) { sink += i * 3 + 1; }
__attribute__((noinline)) void after(int i) { leaf((unsigned long)i + 100); }

__attribute__((noinline)) void bail(int i) {
    leaf((unsigned long)i + 10);
    longjmp(env, 1);
}

__attribute__((noinline)) void inside(int i) {
    leaf((unsigned long)i);
    bail(i);
    sink++;
}

__attribute__((noinline)) void guard(int i) {
    if (setjmp(env) == 0) inside(i);
    after(i);
}

__attribute__((noinline)) void quiet_guard(int i) {
    if (setjmp(env) == 0) inside(i);
}

__attribute__((noinline)) void inside_keeps(int i) {
    if (setjmp(env) == 0) bail(i);
    leaf((unsigned long)i + 20);
}

int main(void) {
    for (int i = 0; i < 3; i++) guard(i);
    quiet_guard(3);
    after(3);
    inside_keeps(4);
    after(4);
    printf("checksum %lu\n", sink);
    return 0;
}
