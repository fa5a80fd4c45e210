#include "interp.h"

#include <ctype.h>
#include <string.h>

void lex_init(struct lexer *lx, const char *src) {
    lx->src = src;
    lx->pos = src;
    lex_next(lx);
}

static void lex_number(struct lexer *lx) {
    long n = 0;
    while (isdigit((unsigned char)*lx->pos)) {
        int digit = *lx->pos++ - '0';
        if (n > (__LONG_MAX__ - digit) / 10) calc_error("number too large");
        n = n * 10 + digit;
    }
    lx->tok.kind = T_NUMBER;
    lx->tok.number = n;
}

static void lex_name(struct lexer *lx) {
    size_t len = 0;
    while (isalnum((unsigned char)*lx->pos) || *lx->pos == '_') {
        if (len + 1 >= sizeof lx->tok.name) calc_error("name too long");
        lx->tok.name[len++] = *lx->pos++;
    }
    lx->tok.name[len] = 0;
    lx->tok.kind = T_NAME;
}

void lex_next(struct lexer *lx) {
    while (*lx->pos == ' ' || *lx->pos == '\t') lx->pos++;
    char c = *lx->pos;
    if (c == 0 || c == '\n' || c == '#') {
        lx->tok.kind = T_END;
        return;
    }
    if (isdigit((unsigned char)c)) return lex_number(lx);
    if (isalpha((unsigned char)c) || c == '_') return lex_name(lx);
    static const char singles[] = "+-*/%(),=";
    static const enum token_kind kinds[] = { T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_LPAREN,
                                             T_RPAREN, T_COMMA, T_EQUALS };
    const char *hit = strchr(singles, c);
    if (!hit) calc_error("unexpected character '%c' at column %d", c, (int)(lx->pos - lx->src) + 1);
    lx->pos++;
    lx->tok.kind = kinds[hit - singles];
}

const char *token_text(enum token_kind kind) {
    static const char *const text[] = { "end of line", "number", "name", "'+'", "'-'", "'*'", "'/'",
                                         "'%'", "'('", "')'", "','", "'='" };
    return text[kind];
}
