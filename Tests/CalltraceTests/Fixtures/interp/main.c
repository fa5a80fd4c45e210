// calc SCRIPT: runs each line of SCRIPT (or stdin) and prints its value or its error.
//   let NAME = EXPR     assigns
//   repeat N EXPR       evaluates EXPR N times, each in its own protected call, like a pcall loop
//   EXPR                prints the value
// Exits 0 when no line failed, 1 when some did, 2 when the script cannot be read.
#include "interp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf *handler;        // the innermost protected call
static char message[256];

void calc_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    longjmp(*handler, 1);
}

int protected_run(const char *src, long *value, char *error, unsigned size) {
    jmp_buf here;
    jmp_buf *outer = handler;
    volatile int failed = 0;
    handler = &here;
    if (setjmp(here) == 0) {
        struct lexer lx;
        lex_init(&lx, src);
        *value = parse_statement(&lx);
    } else {
        failed = 1;
        snprintf(error, size, "%s", message);
    }
    handler = outer;
    return failed ? -1 : 0;
}

__attribute__((noinline)) static int run_repeat(const char *rest, int line) {
    char *end;
    long n = strtol(rest, &end, 10);
    if (end == rest || n < 0) {
        printf("%d: error: repeat needs a count\n", line);
        return 1;
    }
    long value = 0, errors = 0;
    char error[256] = "";
    for (long i = 0; i < n; i++) {
        if (protected_run(end, &value, error, sizeof error) != 0) errors++;
    }
    if (errors) printf("%d: repeat %ld: %ld errors, last: %s\n", line, n, errors, error);
    else printf("%d: repeat %ld: %ld\n", line, n, value);
    return errors != 0;
}

__attribute__((noinline)) static int run_line(const char *text, int line) {
    while (*text == ' ' || *text == '\t') text++;
    if (*text == 0 || *text == '\n' || *text == '#') return 0;
    if (strncmp(text, "repeat ", 7) == 0) return run_repeat(text + 7, line);
    long value;
    char error[256];
    if (protected_run(text, &value, error, sizeof error) != 0) {
        printf("%d: error: %s\n", line, error);
        return 1;
    }
    printf("%d: %ld\n", line, value);
    return 0;
}

__attribute__((noinline)) static int run_script(FILE *in) {
    char text[4096];
    int line = 0, failures = 0;
    while (fgets(text, sizeof text, in)) failures += run_line(text, ++line);
    return failures;
}

int main(int argc, char **argv) {
    FILE *in = stdin;
    if (argc > 1 && !(in = fopen(argv[1], "r"))) {
        perror(argv[1]);
        return 2;
    }
    int failures = run_script(in);
    printf("%d lines failed\n", failures);
    return failures ? 1 : 0;
}
