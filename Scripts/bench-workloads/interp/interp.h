/* A small expression interpreter: the "realistic" bench workload. A lexer, a
 * recursive-descent parser building an AST in an arena, and a tree-walking
 * evaluator, each in its own file, with the call mix of a real front end:
 * many small functions (token peeking, character classes, variable lookup)
 * under a few deep recursive ones. */
#ifndef INTERP_H
#define INTERP_H
#include <stddef.h>
#include <stdint.h>

enum tok_kind { T_EOF, T_NUM, T_IDENT, T_WHILE, T_IF, T_PRINT, T_PUNCT };

struct token {
    enum tok_kind kind;
    int64_t num;       /* T_NUM */
    const char *start; /* T_IDENT, T_PUNCT: text */
    int len;
};

struct lexer {
    const char *src;
    size_t pos;
    struct token cur;
};

void lexer_init(struct lexer *lx, const char *src);
void lexer_next(struct lexer *lx);
int lexer_is(const struct lexer *lx, const char *punct);

enum node_kind { N_NUM, N_VAR, N_NEG, N_BIN, N_ASSIGN, N_WHILE, N_IF, N_PRINT, N_BLOCK };

struct node {
    enum node_kind kind;
    char op;           /* N_BIN: + - * / % < > = (==) */
    int64_t num;       /* N_NUM */
    int slot;          /* N_VAR, N_ASSIGN: variable slot */
    struct node *a, *b, *c;  /* children; N_BLOCK: a = first stmt, c = next */
};

struct arena {
    char *base;
    size_t used, cap;
};

void *arena_alloc(struct arena *ar, size_t size);
void arena_reset(struct arena *ar);

#define MAX_VARS 64
struct symtab {
    char names[MAX_VARS][16];
    int count;
};

struct node *parse_program(struct lexer *lx, struct arena *ar, struct symtab *syms);

struct env {
    int64_t vars[MAX_VARS];
    int64_t printed; /* checksum of print statements */
};

void eval_stmt(const struct node *n, struct env *env);
int64_t eval_expr(const struct node *n, const struct env *env);

#endif
