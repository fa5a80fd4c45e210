#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"

void *arena_alloc(struct arena *ar, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (ar->used + size > ar->cap) {
        fprintf(stderr, "interp: arena full\n");
        exit(2);
    }
    void *p = ar->base + ar->used;
    ar->used += size;
    return p;
}

void arena_reset(struct arena *ar) { ar->used = 0; }

static struct node *new_node(struct arena *ar, enum node_kind kind) {
    struct node *n = arena_alloc(ar, sizeof *n);
    memset(n, 0, sizeof *n);
    n->kind = kind;
    return n;
}

static void expect(struct lexer *lx, const char *punct) {
    if (!lexer_is(lx, punct)) {
        fprintf(stderr, "interp: expected '%s' at %zu\n", punct, lx->pos);
        exit(2);
    }
    lexer_next(lx);
}

static int slot_of(struct symtab *syms, const char *name, int len) {
    for (int i = 0; i < syms->count; i++)
        if ((int)strlen(syms->names[i]) == len && memcmp(syms->names[i], name, (size_t)len) == 0)
            return i;
    if (syms->count == MAX_VARS || len >= 16) {
        fprintf(stderr, "interp: too many variables\n");
        exit(2);
    }
    memcpy(syms->names[syms->count], name, (size_t)len);
    syms->names[syms->count][len] = 0;
    return syms->count++;
}

struct parser {
    struct lexer *lx;
    struct arena *ar;
    struct symtab *syms;
};

static struct node *parse_expr(struct parser *p);

static struct node *parse_primary(struct parser *p) {
    struct lexer *lx = p->lx;
    struct node *n;
    if (lx->cur.kind == T_NUM) {
        n = new_node(p->ar, N_NUM);
        n->num = lx->cur.num;
        lexer_next(lx);
    } else if (lx->cur.kind == T_IDENT) {
        n = new_node(p->ar, N_VAR);
        n->slot = slot_of(p->syms, lx->cur.start, lx->cur.len);
        lexer_next(lx);
    } else {
        expect(lx, "(");
        n = parse_expr(p);
        expect(lx, ")");
    }
    return n;
}

static struct node *parse_unary(struct parser *p) {
    if (lexer_is(p->lx, "-")) {
        lexer_next(p->lx);
        struct node *n = new_node(p->ar, N_NEG);
        n->a = parse_unary(p);
        return n;
    }
    return parse_primary(p);
}

static struct node *binary(struct parser *p, char op, struct node *a, struct node *b) {
    struct node *n = new_node(p->ar, N_BIN);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

static struct node *parse_term(struct parser *p) {
    struct node *n = parse_unary(p);
    while (lexer_is(p->lx, "*") || lexer_is(p->lx, "/") || lexer_is(p->lx, "%")) {
        char op = p->lx->cur.start[0];
        lexer_next(p->lx);
        n = binary(p, op, n, parse_unary(p));
    }
    return n;
}

static struct node *parse_sum(struct parser *p) {
    struct node *n = parse_term(p);
    while (lexer_is(p->lx, "+") || lexer_is(p->lx, "-")) {
        char op = p->lx->cur.start[0];
        lexer_next(p->lx);
        n = binary(p, op, n, parse_term(p));
    }
    return n;
}

static struct node *parse_expr(struct parser *p) {
    struct node *n = parse_sum(p);
    if (lexer_is(p->lx, "<") || lexer_is(p->lx, ">") || lexer_is(p->lx, "==")) {
        char op = p->lx->cur.start[0];
        lexer_next(p->lx);
        n = binary(p, op, n, parse_sum(p));
    }
    return n;
}

static struct node *parse_block(struct parser *p);

static struct node *parse_stmt(struct parser *p) {
    struct lexer *lx = p->lx;
    struct node *n;
    if (lx->cur.kind == T_WHILE || lx->cur.kind == T_IF) {
        n = new_node(p->ar, lx->cur.kind == T_WHILE ? N_WHILE : N_IF);
        lexer_next(lx);
        expect(lx, "(");
        n->a = parse_expr(p);
        expect(lx, ")");
        n->b = parse_block(p);
    } else if (lx->cur.kind == T_PRINT) {
        lexer_next(lx);
        n = new_node(p->ar, N_PRINT);
        n->a = parse_expr(p);
        expect(lx, ";");
    } else {
        if (lx->cur.kind != T_IDENT) {
            fprintf(stderr, "interp: statement expected at %zu\n", lx->pos);
            exit(2);
        }
        n = new_node(p->ar, N_ASSIGN);
        n->slot = slot_of(p->syms, lx->cur.start, lx->cur.len);
        lexer_next(lx);
        expect(lx, "=");
        n->a = parse_expr(p);
        expect(lx, ";");
    }
    return n;
}

/* A list of statements up to '}' or the end: N_BLOCK nodes chained through c. */
static struct node *parse_stmts(struct parser *p) {
    struct node *head = NULL, **tail = &head;
    while (p->lx->cur.kind != T_EOF && !lexer_is(p->lx, "}")) {
        struct node *b = new_node(p->ar, N_BLOCK);
        b->a = parse_stmt(p);
        *tail = b;
        tail = &b->c;
    }
    return head;
}

static struct node *parse_block(struct parser *p) {
    expect(p->lx, "{");
    struct node *n = parse_stmts(p);
    expect(p->lx, "}");
    return n;
}

struct node *parse_program(struct lexer *lx, struct arena *ar, struct symtab *syms) {
    struct parser p = { lx, ar, syms };
    return parse_stmts(&p);
}
