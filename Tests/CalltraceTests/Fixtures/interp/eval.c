// Variables and builtin functions.
#include "interp.h"

#include <string.h>

#define MAX_VARS 64

static struct { char name[32]; long value; } vars[MAX_VARS];
static int var_count;

long var_get(const char *name) {
    for (int i = 0; i < var_count; i++) {
        if (strcmp(vars[i].name, name) == 0) return vars[i].value;
    }
    calc_error("undefined variable %s", name);
}

void var_set(const char *name, long value) {
    for (int i = 0; i < var_count; i++) {
        if (strcmp(vars[i].name, name) == 0) {
            vars[i].value = value;
            return;
        }
    }
    if (var_count == MAX_VARS) calc_error("too many variables");
    strcpy(vars[var_count].name, name);
    vars[var_count++].value = value;
}

static long fact(long n) {
    if (n < 0) calc_error("fact of a negative number");
    if (n > 20) calc_error("fact(%ld) overflows", n);
    return n <= 1 ? 1 : n * fact(n - 1);
}

// Fails at the bottom of its recursion when n is negative: an error from deep inside a builtin.
static long fib(long n) {
    if (n > 25) calc_error("fib(%ld) is too slow", n);
    if (n < -20) calc_error("fib went below -20");
    if (n < 0) return fib(n - 1);
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static void arity(const char *name, int count, int wanted) {
    if (count != wanted) calc_error("%s takes %d argument%s, not %d", name, wanted, wanted == 1 ? "" : "s", count);
}

long call_builtin(const char *name, const long *args, int count) {
    if (strcmp(name, "abs") == 0) {
        arity(name, count, 1);
        return args[0] < 0 ? -args[0] : args[0];
    }
    if (strcmp(name, "max") == 0 || strcmp(name, "min") == 0) {
        arity(name, count, 2);
        return (name[1] == 'a') == (args[0] > args[1]) ? args[0] : args[1];
    }
    if (strcmp(name, "fact") == 0) {
        arity(name, count, 1);
        return fact(args[0]);
    }
    if (strcmp(name, "fib") == 0) {
        arity(name, count, 1);
        return fib(args[0]);
    }
    if (strcmp(name, "check") == 0) {
        arity(name, count, 1);
        if (args[0] == 0) calc_error("check failed");
        return args[0];
    }
    calc_error("unknown function %s", name);
}
