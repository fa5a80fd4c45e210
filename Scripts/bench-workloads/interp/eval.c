#include "interp.h"

static int64_t load(const struct env *env, int slot) { return env->vars[slot]; }

static int64_t apply(char op, int64_t a, int64_t b) {
    switch (op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return b ? a / b : 0;
    case '%': return b ? a % b : 0;
    case '<': return a < b;
    case '>': return a > b;
    default:  return a == b;
    }
}

int64_t eval_expr(const struct node *n, const struct env *env) {
    switch (n->kind) {
    case N_NUM: return n->num;
    case N_VAR: return load(env, n->slot);
    case N_NEG: return -eval_expr(n->a, env);
    default:    return apply(n->op, eval_expr(n->a, env), eval_expr(n->b, env));
    }
}

static void eval_block(const struct node *b, struct env *env) {
    for (; b; b = b->c) eval_stmt(b->a, env);
}

void eval_stmt(const struct node *n, struct env *env) {
    switch (n->kind) {
    case N_ASSIGN: env->vars[n->slot] = eval_expr(n->a, env); break;
    case N_PRINT:  env->printed = env->printed * 31 + eval_expr(n->a, env); break;
    case N_IF:     if (eval_expr(n->a, env)) eval_block(n->b, env); break;
    case N_WHILE:  while (eval_expr(n->a, env)) eval_block(n->b, env); break;
    default:       eval_block(n, env); break;
    }
}
