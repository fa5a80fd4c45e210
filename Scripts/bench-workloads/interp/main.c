/* usage: interp N -- generates one script, then N times: parses it into a
 * fresh arena and runs it. `interp 0` is the start-up run (generation only).
 * Each round is roughly 12,000 calls (see `Scripts/bench`, which counts them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"

static unsigned rng_state = 12345;
static unsigned rng(void) {
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 16) & 0x7fff;
}

static char *emit(char *out, const char *s) {
    size_t n = strlen(s);
    memcpy(out, s, n);
    return out + n;
}

/* A random expression over variables v0..v7 and small constants. */
static char *gen_expr(char *out, int depth) {
    char buf[32];
    if (depth == 0 || rng() % 4 == 0) {
        if (rng() % 2) snprintf(buf, sizeof buf, "v%u", rng() % 8);
        else snprintf(buf, sizeof buf, "%u", rng() % 100 + 1);
        return emit(out, buf);
    }
    static const char ops[] = "+-*%+-";
    out = emit(out, "(");
    out = gen_expr(out, depth - 1);
    snprintf(buf, sizeof buf, " %c ", ops[rng() % 6]);
    out = emit(out, buf);
    out = gen_expr(out, depth - 1);
    return emit(out, ")");
}

static char *gen_program(char *out) {
    char buf[64];
    for (int v = 0; v < 8; v++) {
        snprintf(buf, sizeof buf, "v%d = %d;\n", v, v + 1);
        out = emit(out, buf);
    }
    out = emit(out, "i = 0;\nwhile (i < 20) {\n");
    for (int s = 0; s < 12; s++) {
        snprintf(buf, sizeof buf, "  v%u = ", rng() % 8);
        out = emit(out, buf);
        out = gen_expr(out, 3);
        out = emit(out, " % 1000003;\n");
        if (s % 4 == 3) {
            out = emit(out, "  if (v1 > v2) { print v1 - v2; }\n");
        }
    }
    out = emit(out, "  i = i + 1;\n}\nprint v0 + v7;\n");
    *out = 0;
    return out;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 100;
    static char src[1 << 16];
    gen_program(src);

    struct arena ar = { malloc(1 << 20), 0, 1 << 20 };
    int64_t checksum = 0;
    for (long r = 0; r < rounds; r++) {
        struct symtab syms = { .count = 0 };
        struct env env = { .printed = 0 };
        struct lexer lx;
        arena_reset(&ar);
        lexer_init(&lx, src);
        struct node *prog = parse_program(&lx, &ar, &syms);
        eval_stmt(prog, &env);
        checksum = checksum * 7 + env.printed;
    }
    printf("interp: %ld rounds, checksum %lld\n", rounds, (long long)checksum);
    free(ar.base);
    return 0;
}
