// C kernels for package scan: 4-bit dot products with top-n selection.
#ifndef MICRO_RAG_SCAN_H
#define MICRO_RAG_SCAN_H

#include <stdint.h>

enum { SCAN_GENERIC = 0, SCAN_AVX2 = 1, SCAN_AVX512VNNI = 2 };

// scan_best_kernel returns the fastest kernel this CPU (and OS) supports.
int scan_best_kernel(void);

// scan_has_kernel reports whether kernel k can run here.
int scan_has_kernel(int k);

// scan_topn scores rows [lo, hi) of 4-bit codes (row stride `stride`, a
// multiple of 64, zero padded; layout in scan.c) against the int8 query q
// (2*stride values) as dot(row, q) * scales[row] and keeps the best n
// (score descending, row ascending on ties) in the min-heap out_s/out_i,
// which already holds len entries from earlier calls over lower rows. A
// row whose bit is set in dead (bit r%64 of dead[r/64]; dead may be NULL)
// never enters. Rows are numbered row0 + r. scratch holds 2*stride+64
// bytes. Returns the heap's new length. All memory belongs to the caller.
int scan_topn(const int8_t *codes, const float *scales, const uint64_t *dead,
              int64_t stride, int64_t lo, int64_t hi, int32_t row0,
              const int8_t *q, int32_t n, int kernel, uint8_t *scratch,
              int len, float *out_s, int32_t *out_i);

// scan_sort turns a heap left by scan_topn into a list, best first.
void scan_sort(float *out_s, int32_t *out_i, int len);

#endif
