/* libFuzzer target: the text codecs of src/util/text.c, which see request
 * fields (cmd strings, base64 stdin and files) and raw command output.
 * Invariants checked beyond "no crash":
 *  - shlex_split: the words fit in the input, and splitting a re-quoted join
 *    of them gives the same words back;
 *  - base64: what decodes re-encodes to the input (padding aside), and what
 *    is encoded decodes back;
 *  - utf8_lossy: the output is valid UTF-8, and valid input passes unchanged;
 *  - utf8_complete_prefix: keeps back at most 3 bytes, none of valid input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* cbuf_head of a buffer never written to is NULL + 0, which UBSan reports. */
static const uint8_t *head(const cbuf *b)
{
    return b->data ? cbuf_head(b) : (const uint8_t *)"";
}

/* Appends w as one single-quoted shell word: ' becomes '\''. */
static void quote_word(cbuf *b, const char *w)
{
    cbuf_append(b, "'", 1);
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            cbuf_append(b, "'\\''", 4);
        else
            cbuf_append(b, p, 1);
    }
    cbuf_append(b, "'", 1);
}

static void check_shlex(const uint8_t *d, size_t n)
{
    char *s = cella_malloc(n + 1);
    memcpy(s, d, n);
    s[n] = '\0';
    char **words = NULL;
    cella_err e;
    if (shlex_split(s, &words, &e) == 0) {
        if (!words)
            abort();
        /* Every output byte comes from a distinct input byte. */
        size_t total = 0;
        for (char **w = words; *w; w++)
            total += strlen(*w);
        if (total > strlen(s))
            abort();
        cbuf j;
        cbuf_init(&j);
        for (size_t i = 0; words[i]; i++) {
            if (i)
                cbuf_append(&j, " ", 1);
            quote_word(&j, words[i]);
        }
        cbuf_append(&j, "", 1);
        char **again = NULL;
        if (shlex_split((const char *)cbuf_head(&j), &again, &e) != 0)
            abort();
        size_t i = 0;
        for (; words[i] && again[i]; i++)
            if (strcmp(words[i], again[i]) != 0)
                abort();
        if (words[i] || again[i])
            abort();
        cella_strv_free(again);
        cbuf_free(&j);
        cella_strv_free(words);
    }
    cella_free(s);
}

static void check_base64(const uint8_t *d, size_t n)
{
    cella_err e;
    cbuf out;
    cbuf_init(&out);
    if (base64_decode(&out, (const char *)d, n, &e) == 0) {
        cbuf enc;
        cbuf_init(&enc);
        base64_encode(&enc, head(&out), cbuf_avail(&out));
        size_t in_len = n, enc_len = cbuf_avail(&enc);
        while (in_len > 0 && d[in_len - 1] == '=')
            in_len--;
        while (enc_len > 0 && head(&enc)[enc_len - 1] == '=')
            enc_len--;
        if (in_len != enc_len || (in_len && memcmp(d, head(&enc), in_len) != 0))
            abort();
        cbuf_free(&enc);
    }
    cbuf_free(&out);

    /* And the other way: anything encoded decodes back to itself. */
    cbuf enc, dec;
    cbuf_init(&enc);
    cbuf_init(&dec);
    base64_encode(&enc, d, n);
    if (base64_decode(&dec, (const char *)head(&enc), cbuf_avail(&enc), &e) != 0 ||
        cbuf_avail(&dec) != n || (n && memcmp(head(&dec), d, n) != 0))
        abort();
    cbuf_free(&enc);
    cbuf_free(&dec);
}

static void check_utf8(const uint8_t *d, size_t n)
{
    cbuf out;
    cbuf_init(&out);
    utf8_lossy(&out, d, n);
    if (!utf8_valid(head(&out), cbuf_avail(&out)))
        abort();
    bool valid = utf8_valid(d, n);
    if (valid && (cbuf_avail(&out) != n || (n && memcmp(head(&out), d, n) != 0)))
        abort();
    cbuf_free(&out);

    size_t k = utf8_complete_prefix(d, n);
    if (k > n || n - k > 3)
        abort();
    if (valid && k != n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    check_shlex(d, n);
    check_base64(d, n);
    check_utf8(d, n);
    return 0;
}
