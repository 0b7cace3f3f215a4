// C kernels for package scan: int8 dot products with top-n selection.
#ifndef MICRO_RAG_SCAN_H
#define MICRO_RAG_SCAN_H

#include <stdint.h>

enum { SCAN_GENERIC = 0, SCAN_AVX2 = 1, SCAN_AVX512VNNI = 2 };

// scan_best_kernel returns the fastest kernel this CPU (and OS) supports.
int scan_best_kernel(void);

// scan_has_kernel reports whether kernel k can run here.
int scan_has_kernel(int k);

// scan_topn scores rows [lo, hi) of codes (row stride `stride`, a multiple of
// 64, zero padded) against the int8 query q (stride bytes, zero padded) as
// dot(row, q) * scales[row] (rowsums[row] is the sum of the row's codes),
// and writes the best n (score descending, row
// ascending on ties) to out_s/out_i, best first. scratch holds 2*stride+64
// bytes. Returns how many were written. All memory belongs to the caller.
int scan_topn(const int8_t *codes, const float *scales,
              const int32_t *rowsums, int64_t stride,
              int64_t lo, int64_t hi, const int8_t *q, int32_t n, int kernel,
              uint8_t *scratch, float *out_s, int32_t *out_i);

#endif
