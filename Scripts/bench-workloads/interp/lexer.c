#include <string.h>
#include "interp.h"

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\t'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

static void skip_space(struct lexer *lx) {
    while (is_space(lx->src[lx->pos])) lx->pos++;
}

static int keyword(const char *s, int len, const char *kw) {
    return (int)strlen(kw) == len && memcmp(s, kw, (size_t)len) == 0;
}

static void lex_number(struct lexer *lx) {
    int64_t v = 0;
    while (is_digit(lx->src[lx->pos])) v = v * 10 + (lx->src[lx->pos++] - '0');
    lx->cur.kind = T_NUM;
    lx->cur.num = v;
}

static void lex_word(struct lexer *lx) {
    const char *s = lx->src + lx->pos;
    int len = 0;
    while (is_alpha(s[len]) || is_digit(s[len])) len++;
    lx->pos += (size_t)len;
    lx->cur.start = s;
    lx->cur.len = len;
    if (keyword(s, len, "while")) lx->cur.kind = T_WHILE;
    else if (keyword(s, len, "if")) lx->cur.kind = T_IF;
    else if (keyword(s, len, "print")) lx->cur.kind = T_PRINT;
    else lx->cur.kind = T_IDENT;
}

static void lex_punct(struct lexer *lx) {
    const char *s = lx->src + lx->pos;
    lx->cur.kind = T_PUNCT;
    lx->cur.start = s;
    lx->cur.len = (s[0] == '=' && s[1] == '=') ? 2 : 1;
    lx->pos += (size_t)lx->cur.len;
}

void lexer_next(struct lexer *lx) {
    skip_space(lx);
    char c = lx->src[lx->pos];
    if (c == 0) lx->cur.kind = T_EOF;
    else if (is_digit(c)) lex_number(lx);
    else if (is_alpha(c)) lex_word(lx);
    else lex_punct(lx);
}

void lexer_init(struct lexer *lx, const char *src) {
    lx->src = src;
    lx->pos = 0;
    lexer_next(lx);
}

int lexer_is(const struct lexer *lx, const char *punct) {
    return lx->cur.kind == T_PUNCT && keyword(lx->cur.start, lx->cur.len, punct);
}
