/* A minimal reader of little-endian float32 .npy files (format 1.0/2.0),
 * enough for the examples' inputs and expected outputs. */
#ifndef GE_EXAMPLES_NPY_H
#define GE_EXAMPLES_NPY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct npy_f32 {
    int64_t shape[8];
    size_t rank;
    float *data;
    size_t count;
} npy_f32;

/* Returns 0 on success; prints why and returns -1 otherwise. */
static int npy_read_f32(const char *path, npy_f32 *out) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        fprintf(stderr, "%s is not an .npy file\n", path);
        fclose(f);
        return -1;
    }
    size_t hlen = pre[8] | (pre[9] << 8);
    if (pre[6] >= 2) { /* format 2.0: a 4-byte header length */
        if (fread(pre + 10, 1, 2, f) != 2) {
            fclose(f);
            return -1;
        }
        hlen = pre[8] | (pre[9] << 8) | ((size_t)pre[10] << 16) | ((size_t)pre[11] << 24);
    }
    char *h = (char *)calloc(hlen + 1, 1);
    if (!h || fread(h, 1, hlen, f) != hlen || !strstr(h, "'<f4'") ||
        strstr(h, "'fortran_order': True")) {
        fprintf(stderr, "%s: only C-order little-endian float32 arrays are read\n", path);
        free(h);
        fclose(f);
        return -1;
    }
    const char *s = strstr(h, "'shape': (");
    out->rank = 0;
    out->count = 1;
    for (s = s ? s + 10 : NULL; s && *s && *s != ')' && out->rank < 8;) {
        char *end;
        long long d = strtoll(s, &end, 10);
        if (end == s) break;
        out->shape[out->rank++] = d;
        out->count *= (size_t)d;
        s = end;
        while (*s == ',' || *s == ' ') s++;
    }
    free(h);
    out->data = (float *)malloc(out->count * sizeof(float) + 1);
    if (!out->data || fread(out->data, sizeof(float), out->count, f) != out->count) {
        fprintf(stderr, "%s: truncated data\n", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

#endif
