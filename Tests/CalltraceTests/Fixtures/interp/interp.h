// calc: a small expression interpreter (the fixture for calltrace's longjmp tests). Errors anywhere
// (lexer, parser, builtins) unwind with longjmp to the innermost protected call, through however
// many recursive-descent frames are open, as Lua's lua_error does.
#ifndef CALC_INTERP_H
#define CALC_INTERP_H

#include <setjmp.h>

// How deep parentheses and calls may nest; deeper is the error "nesting too deep". Each level is
// four parser frames (parse_expr, parse_term, parse_unary, parse_primary).
#define CALC_MAX_NEST 40

enum token_kind { T_END, T_NUMBER, T_NAME, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_LPAREN,
                  T_RPAREN, T_COMMA, T_EQUALS };

struct token {
    enum token_kind kind;
    long number;
    char name[32];
};

struct lexer {
    const char *src;
    const char *pos;
    struct token tok;   // the current token
};

// lexer.c
void lex_init(struct lexer *lx, const char *src);
void lex_next(struct lexer *lx);
const char *token_text(enum token_kind kind);

// parser.c: parses and evaluates in one pass.
long parse_statement(struct lexer *lx);
long parse_expr(struct lexer *lx);

// eval.c
long var_get(const char *name);
void var_set(const char *name, long value);
long call_builtin(const char *name, const long *args, int count);

// main.c: errors and protected calls.
__attribute__((noreturn, format(printf, 1, 2))) void calc_error(const char *fmt, ...);
// Runs parse_statement over `src`; returns 0 and sets *value, or -1 with the message in `error`.
int protected_run(const char *src, long *value, char *error, unsigned size);

#endif
