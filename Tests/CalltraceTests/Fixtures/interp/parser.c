// Recursive descent, evaluating as it parses:
//   statement := 'let' NAME '=' expr | expr
//   expr      := term (('+' | '-') term)*
//   term      := unary (('*' | '/' | '%') unary)*
//   unary     := '-' unary | primary
//   primary   := NUMBER | NAME | NAME '(' [expr (',' expr)*] ')' | '(' expr ')'
#include "interp.h"

#include <string.h>

static int nesting;

static void expect(struct lexer *lx, enum token_kind kind) {
    if (lx->tok.kind != kind)
        calc_error("expected %s, found %s", token_text(kind), token_text(lx->tok.kind));
    lex_next(lx);
}

static void enter_nested(void) {
    if (++nesting > CALC_MAX_NEST) calc_error("nesting too deep");
}

static long parse_call(struct lexer *lx, const char *name) {
    long args[4];
    int count = 0;
    enter_nested();
    lex_next(lx);   // '('
    if (lx->tok.kind != T_RPAREN) {
        for (;;) {
            if (count == 4) calc_error("too many arguments to %s", name);
            args[count++] = parse_expr(lx);
            if (lx->tok.kind != T_COMMA) break;
            lex_next(lx);
        }
    }
    expect(lx, T_RPAREN);
    nesting--;
    return call_builtin(name, args, count);
}

static long parse_primary(struct lexer *lx) {
    long value;
    switch (lx->tok.kind) {
    case T_NUMBER:
        value = lx->tok.number;
        lex_next(lx);
        return value;
    case T_NAME: {
        char name[32];
        strcpy(name, lx->tok.name);
        lex_next(lx);
        if (lx->tok.kind == T_LPAREN) return parse_call(lx, name);
        return var_get(name);
    }
    case T_LPAREN:
        enter_nested();
        lex_next(lx);
        value = parse_expr(lx);
        expect(lx, T_RPAREN);
        nesting--;
        return value;
    default:
        calc_error("unexpected %s", token_text(lx->tok.kind));
    }
}

static long parse_unary(struct lexer *lx) {
    if (lx->tok.kind == T_MINUS) {
        lex_next(lx);
        return -parse_unary(lx);
    }
    return parse_primary(lx);
}

static long parse_term(struct lexer *lx) {
    long value = parse_unary(lx);
    while (lx->tok.kind == T_STAR || lx->tok.kind == T_SLASH || lx->tok.kind == T_PERCENT) {
        enum token_kind op = lx->tok.kind;
        lex_next(lx);
        long rhs = parse_unary(lx);
        if (op == T_STAR) {
            if (__builtin_mul_overflow(value, rhs, &value)) calc_error("overflow");
        } else {
            if (rhs == 0) calc_error("division by zero");
            value = op == T_SLASH ? value / rhs : value % rhs;
        }
    }
    return value;
}

long parse_expr(struct lexer *lx) {
    long value = parse_term(lx);
    while (lx->tok.kind == T_PLUS || lx->tok.kind == T_MINUS) {
        enum token_kind op = lx->tok.kind;
        lex_next(lx);
        long rhs = parse_term(lx);
        if (op == T_PLUS ? __builtin_add_overflow(value, rhs, &value) : __builtin_sub_overflow(value, rhs, &value))
            calc_error("overflow");
    }
    return value;
}

long parse_statement(struct lexer *lx) {
    nesting = 0;
    long value;
    if (lx->tok.kind == T_NAME && strcmp(lx->tok.name, "let") == 0) {
        lex_next(lx);
        if (lx->tok.kind != T_NAME) calc_error("expected a name after let");
        char name[32];
        strcpy(name, lx->tok.name);
        lex_next(lx);
        expect(lx, T_EQUALS);
        value = parse_expr(lx);
        var_set(name, value);
    } else {
        value = parse_expr(lx);
    }
    if (lx->tok.kind != T_END) calc_error("unexpected %s after the expression", token_text(lx->tok.kind));
    return value;
}
