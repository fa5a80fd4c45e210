// Functions bearing the symbol names Rust and Swift compilers give (asm labels): calltrace sees
// only symbol names, so these stand in for Rust and Swift functions. Plus C functions whose
// names merely start like mangled ones, which must keep their names.
#define NOINLINE __attribute__((noinline))

// Rust, legacy scheme: demangles to mycrate::legacy (the ::h<hash> suffix dropped).
void rust_legacy(void) __asm__("_ZN7mycrate6legacy17h0123456789abcdefE");
// Rust, v0 scheme: demangles to mycrate::example.
void rust_v0(void) __asm__("_RNvCs15kBYyAo9fc_7mycrate7example");
// Swift 5 with the leading underscore of older toolchains: main.bar() -> ().
void swift_underscore(void) __asm__("_$s4main3baryyF");
// Swift 4: main.baz() -> ().
void swift_4(void) __asm__("_T04main3bazyyF");
#ifdef __clang__
// Swift 5 (`$s`) and 4.2 (`$S`): gcc's assembler reads a leading `$` as an immediate, clang's quotes it.
void swift_5(void) __asm__("$s4main3fooyyF");
void swift_42(void) __asm__("$S4main3quxyyF");
#endif

NOINLINE void rust_legacy(void) { __asm__ volatile(""); }
NOINLINE void rust_v0(void) { __asm__ volatile(""); }
NOINLINE void swift_underscore(void) { __asm__ volatile(""); }
NOINLINE void swift_4(void) { __asm__ volatile(""); }
#ifdef __clang__
NOINLINE void swift_5(void) { __asm__ volatile(""); }
NOINLINE void swift_42(void) { __asm__ volatile(""); }
#endif

// C names that only look mangled: not one of them is a valid mangled name.
NOINLINE void Zap(void) { __asm__ volatile(""); }
NOINLINE void _Reset(void) { __asm__ volatile(""); }
NOINLINE void _Zombie(void) { __asm__ volatile(""); }
NOINLINE void _T0tally(void) { __asm__ volatile(""); }

int main(void) {
    rust_legacy();
    rust_v0();
    swift_underscore();
    swift_4();
#ifdef __clang__
    swift_5();
    swift_42();
#endif
    Zap();
    _Reset();
    _Zombie();
    _T0tally();
    return 0;
}
