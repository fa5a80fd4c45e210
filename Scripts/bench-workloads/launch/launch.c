// A launch-shaped program for Scripts/bench (its launch section): four phases, one after the other
// from the first microsecond of main, each a function of its own that the trace shows:
//   parse_config  lexes a ~4 MB config (generated in 4 KB blocks from a fixed seed, as if read from
//                 a file) character by character through tiny functions (next_char, is_space,
//                 is_ident, is_digit, hash_step): millions of tiny calls;
//   sort_keys     sorts the ~200 k key hashes the parse collected with a recursive merge sort
//                 (merge_sort calls itself twice, then merges through the tiny key_less);
//   wait_io       sleeps 8 ms (nanosleep, resumed after a signal);
//   layout_lines  lays out 40 k lines of generated text: glyph_width and kern per character,
//                 wrapping at a fixed width.
// main is not instrumented and times each phase itself (CLOCK_MONOTONIC): "phase NAME NS" lines on
// stderr. stdout: one checksum line, the same for every build. No input, no files, no arguments.
//
// Built -O2 by plain gcc / clang (the untraced times) and through Scripts/calltrace-cc.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define CONFIG_BYTES (4u << 20)   // the config's size
#define BLOCK 4096                // generated (as if read) this much at a time
#define MAX_KEYS 300000           // room for the keys the config defines (~200 k)
#define WAIT_NS 8000000L          // wait_io's sleep
#define LAYOUT_LINES 40000
#define LAYOUT_WIDTH 480          // wrap width, in glyph_width units

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif
#define UNTIMED __attribute__((no_instrument_function))

static volatile uint64_t sink;      // what each phase leaves, so that no work is folded away

// ---------------------------------------------------------------- a deterministic source

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

NOINLINE static uint64_t rng(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static char *put_u(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do tmp[n++] = (char)('0' + v % 10); while (v /= 10);
    while (n) *p++ = tmp[--n];
    return p;
}

static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";

// The next block of the config: whole lines, at most cap bytes. A section header now and then, a
// comment now and then, else `name.part_N = VALUE`.
NOINLINE static size_t read_block(char *buf, size_t cap, unsigned long *line) {
    char *p = buf, *end = buf + cap - 64;
    while (p < end) {
        uint64_t r = rng();
        unsigned long n = (*line)++;
        if (n % 97 == 0) {
            *p++ = '[';
            for (int i = 0; i < 6; i++) *p++ = alnum[(r >> (5 * i)) % 26];
            *p++ = ']';
        } else if (n % 13 == 0) {
            memcpy(p, "# tuned ", 8);
            p = put_u(p + 8, r % 100000);
        } else {
            for (int i = 0; i < 4 + (int)(r & 3); i++) *p++ = alnum[(r >> (6 * i + 2)) % 36 % 26];
            *p++ = '.';
            for (int i = 0; i < 3; i++) *p++ = alnum[(r >> (5 * i + 30)) % 36];
            *p++ = ' ';
            *p++ = '=';
            *p++ = ' ';
            p = put_u(p, (r >> 45) % 100000);
        }
        *p++ = '\n';
    }
    return (size_t)(p - buf);
}

// ---------------------------------------------------------------- phase 1: parse the config

struct lexer { const char *p, *end; };

NOINLINE static int next_char(struct lexer *lx) { return lx->p < lx->end ? (unsigned char)*lx->p++ : -1; }
NOINLINE static int is_space(int c) { return c == ' ' || c == '\t'; }
NOINLINE static int is_digit(int c) { return c >= '0' && c <= '9'; }
NOINLINE static int is_ident(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}
NOINLINE static uint64_t hash_step(uint64_t h, int c) { return (h ^ (uint64_t)c) * 0x100000001b3ull; }

static uint64_t keys[MAX_KEYS];
static unsigned nkeys;

NOINLINE uint64_t parse_config(void) {
    static char buf[BLOCK];
    unsigned long line = 0, comments = 0, sections = 0;
    uint64_t values = 0, key = 0, value = 0;
    enum { START, KEY, EQ, VALUE, SKIP } state = START;
    for (size_t done = 0; done < CONFIG_BYTES;) {
        size_t n = read_block(buf, sizeof buf, &line);
        done += n;
        struct lexer lx = { buf, buf + n };
        for (int c; (c = next_char(&lx)) >= 0;) {
            switch (state) {
            case START:
                if (c == '#') { comments++; state = SKIP; }
                else if (c == '[') { sections++; state = SKIP; }
                else if (is_ident(c)) { key = hash_step(0xcbf29ce484222325ull, c); state = KEY; }
                break;
            case KEY:
                if (is_ident(c)) key = hash_step(key, c);
                else if (is_space(c) || c == '=') state = EQ;
                break;
            case EQ:
                if (is_digit(c)) { value = (uint64_t)(c - '0'); state = VALUE; }
                break;
            case VALUE:
                if (is_digit(c)) value = value * 10 + (uint64_t)(c - '0');
                else {
                    if (nkeys < MAX_KEYS) keys[nkeys++] = key ^ (value << 40);
                    values += value;
                    state = START;
                }
                break;
            case SKIP:
                if (c == '\n') state = START;
                break;
            }
        }
    }
    return values * 31 + comments * 7 + sections + nkeys;
}

// ---------------------------------------------------------------- phase 2: sort the keys, recursively

NOINLINE static int key_less(uint64_t a, uint64_t b) { return a < b; }

NOINLINE static void merge_sort(uint64_t *a, uint64_t *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2, i = 0, j = h, k = 0;
    merge_sort(a, tmp, h);
    merge_sort(a + h, tmp, n - h);
    while (i < h && j < n) tmp[k++] = key_less(a[j], a[i]) ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

NOINLINE uint64_t sort_keys(void) {
    static uint64_t tmp[MAX_KEYS];
    merge_sort(keys, tmp, nkeys);
    uint64_t sum = 0, unsorted = 0;
    for (unsigned i = 0; i < nkeys; i++) {
        unsorted += i && keys[i - 1] > keys[i];   // not 0: a wrong build (the checksum differs)
        sum = sum * 1099511628211ull + keys[i];
    }
    return sum + unsorted;
}

// ---------------------------------------------------------------- phase 3: wait

NOINLINE uint64_t wait_io(void) {
    struct timespec ts = { WAIT_NS / 1000000000L, WAIT_NS % 1000000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) { }
    return 1;
}

// ---------------------------------------------------------------- phase 4: lay out lines

static const char *const words[] = { "the", "quick", "launch", "of", "a", "program", "reads", "its",
    "configuration", "sorts", "keys", "and", "lays", "out", "lines", "before", "first", "frame", "is",
    "drawn", "on", "screen", "with", "glyphs", "kerned", "wrapped", "measured", "again" };
#define NWORDS (sizeof words / sizeof *words)

NOINLINE static int glyph_width(int c) {
    static const unsigned char w[128] = { ['i'] = 3, ['l'] = 3, ['t'] = 4, ['f'] = 4, ['r'] = 5, ['m'] = 11,
                                          ['w'] = 11, [' '] = 4 };
    return c < 128 && w[c] ? w[c] : 7;
}
NOINLINE static int kern(int a, int b) { return (a == 'f' && b == 'i') || (a == 'r' && b == 'n') ? -1 : 0; }

NOINLINE static size_t make_line(char *buf, unsigned i) {
    size_t n = 0;
    uint64_t r = (uint64_t)i * 0x9e3779b97f4a7c15ull + 12345;
    for (int w = 0; w < 8; w++) {
        r ^= r >> 29;
        r *= 0xbf58476d1ce4e5b9ull;
        const char *s = words[(r >> 33) % NWORDS];
        size_t len = strlen(s);
        memcpy(buf + n, s, len);
        n += len;
        buf[n++] = ' ';
    }
    buf[n] = 0;
    return n;
}

NOINLINE uint64_t layout_lines(void) {
    char buf[512];
    uint64_t rows = 0, total = 0;
    for (unsigned i = 0; i < LAYOUT_LINES; i++) {
        size_t n = make_line(buf, i);
        int x = 0, word = 0, prev = 0;
        for (size_t k = 0; k < n; k++) {
            int c = (unsigned char)buf[k];
            int w = glyph_width(c) + kern(prev, c);
            prev = c;
            if (c == ' ') {
                if (x + word > LAYOUT_WIDTH) { rows++; total += (uint64_t)x; x = 0; }
                x += word + w;
                word = 0;
            } else {
                word += w;
            }
        }
        rows++;
        total += (uint64_t)(x + word);
    }
    return rows * 1000003 + total;
}

// ---------------------------------------------------------------- main: not instrumented, times the phases

UNTIMED static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

UNTIMED int main(void) {
    static const struct { const char *name; uint64_t (*run)(void); } phases[] = {
        { "parse_config", parse_config }, { "sort_keys", sort_keys }, { "wait_io", wait_io },
        { "layout_lines", layout_lines },
    };
    long long took[4];
    uint64_t check = 0;
    for (int i = 0; i < 4; i++) {
        long long t0 = now_ns();
        uint64_t r = phases[i].run();
        took[i] = now_ns() - t0;
        sink = r;
        check = check * 0x100000001b3ull ^ r;
    }
    for (int i = 0; i < 4; i++) fprintf(stderr, "phase %s %lld\n", phases[i].name, took[i]);
    printf("launch checksum %016llx keys %u lines %u\n", (unsigned long long)check, nkeys, LAYOUT_LINES);
    return 0;
}
