/* The tokenizer's internals, shared by its files (code_lex.c, code_lex_num.c). */
#ifndef CELLA_CODE_LEX_INT_H
#define CELLA_CODE_LEX_INT_H

#include "code/code_lex.h"

static inline int col_of(const code_lexer *lx, const char *at)
{
    return (int)(at - lx->line_start) + 1;
}

static inline bool is_id_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static inline bool is_id_char(unsigned char c)
{
    return is_id_start(c) || (c >= '0' && c <= '9');
}

/* A number at lx->p (a digit, or '.' and a digit). */
int code_lex_number(code_lexer *lx, code_tok *t);

#endif
