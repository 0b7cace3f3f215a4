#include "scan.h"

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SCAN_X86 1
#endif

// Rows are scored in blocks so the kernels stay free of selection logic.
#define BLOCK 64

// SIMD kernels prefetch this many bytes ahead: a little over one block, so
// that the next block's rows arrive while the selection loop runs. Measured
// 15-25% faster at 100k rows than relying on the hardware prefetcher alone.
#define PREFETCH 16384

typedef void (*dots_fn)(const int8_t *rows, int64_t stride, int nrows,
                        const uint8_t *prep, int32_t *out);

// ---- 4-bit codes: a row's 64-byte chunk c holds dims 128c+i (low nibble of
// byte i) and 128c+64+i (high nibble), each as code+8 in [1, 15]. prep is the
// int8 query over 2*stride dims; the caller subtracts 8*sum(q). ----

static void prep4(const int8_t *q, int64_t stride, uint8_t *prep) {
  memcpy(prep, q, (size_t)(2 * stride));
}

static void dots4_generic(const int8_t *rows, int64_t stride, int nrows,
                          const uint8_t *prep, int32_t *out) {
  const int8_t *q = (const int8_t *)prep;
  for (int r = 0; r < nrows; r++) {
    const uint8_t *x = (const uint8_t *)rows + (int64_t)r * stride;
    int32_t acc = 0;
    for (int64_t j = 0; j < stride; j++) {
      const int8_t *qc = q + 2 * (j & ~(int64_t)63) + (j & 63);
      acc += (int32_t)(x[j] & 15) * qc[0] + (int32_t)(x[j] >> 4) * qc[64];
    }
    out[r] = acc;
  }
}

#ifdef SCAN_X86

// ---- AVX2 and AVX-512 VNNI ----

__attribute__((target("avx2,fma"))) static inline int32_t
avx2_hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v),
                            _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

#define VNNI_TARGET "avx512f,avx512bw,avx512vnni"

// vnni_sum4 adds the lanes of four accumulators: out[k] = sum(a_k).
__attribute__((target(VNNI_TARGET))) static inline __m128i
vnni_sum4(__m512i a0, __m512i a1, __m512i a2, __m512i a3) {
  __m256i b0 = _mm256_add_epi32(_mm512_castsi512_si256(a0),
                                _mm512_extracti64x4_epi64(a0, 1));
  __m256i b1 = _mm256_add_epi32(_mm512_castsi512_si256(a1),
                                _mm512_extracti64x4_epi64(a1, 1));
  __m256i b2 = _mm256_add_epi32(_mm512_castsi512_si256(a2),
                                _mm512_extracti64x4_epi64(a2, 1));
  __m256i b3 = _mm256_add_epi32(_mm512_castsi512_si256(a3),
                                _mm512_extracti64x4_epi64(a3, 1));
  __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(b0, b1),
                                _mm256_hadd_epi32(b2, b3));
  return _mm_add_epi32(_mm256_castsi256_si128(h),
                       _mm256_extracti128_si256(h, 1));
}

// AVX2 4-bit: nibbles (u8) times the query (s8) with vpmaddubsw; a pair sums
// to at most 2*15*127, two pairs to 7620, so int16 never saturates.
__attribute__((target("avx2,fma"))) static inline __m256i
avx2_step4(__m256i acc, const int8_t *q, const uint8_t *x) {
  const __m256i ones = _mm256_set1_epi16(1), low = _mm256_set1_epi8(15);
  __m256i v = _mm256_loadu_si256((const __m256i *)x);
  __m256i lo = _mm256_and_si256(v, low);
  __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  __m256i p = _mm256_add_epi16(
      _mm256_maddubs_epi16(lo, _mm256_load_si256((const __m256i *)q)),
      _mm256_maddubs_epi16(hi, _mm256_load_si256((const __m256i *)(q + 64))));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(p, ones));
}

__attribute__((target("avx2,fma"))) static void
dots4_avx2(const int8_t *rows, int64_t stride, int nrows, const uint8_t *prep,
           int32_t *out) {
  const int8_t *q = (const int8_t *)prep;
  int r = 0;
  for (; r + 4 <= nrows; r += 4) {
    const uint8_t *x0 = (const uint8_t *)rows + (int64_t)r * stride;
    const uint8_t *x1 = x0 + stride, *x2 = x1 + stride, *x3 = x2 + stride;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t j = 0; j < stride; j += 32) {
      _mm_prefetch((const char *)(x0 + PREFETCH + 4 * j), _MM_HINT_T0);
      _mm_prefetch((const char *)(x0 + PREFETCH + 4 * j + 64), _MM_HINT_T0);
      const int8_t *qj = q + 2 * (j & ~(int64_t)63) + (j & 63);
      a0 = avx2_step4(a0, qj, x0 + j);
      a1 = avx2_step4(a1, qj, x1 + j);
      a2 = avx2_step4(a2, qj, x2 + j);
      a3 = avx2_step4(a3, qj, x3 + j);
    }
    out[r] = avx2_hsum(a0);
    out[r + 1] = avx2_hsum(a1);
    out[r + 2] = avx2_hsum(a2);
    out[r + 3] = avx2_hsum(a3);
  }
  // The last 0-3 rows of a range: rare enough for the portable loop.
  dots4_generic(rows + (int64_t)r * stride, stride, nrows - r, prep, out + r);
}

// AVX-512 VNNI 4-bit: vpdpbusd takes the nibbles as its unsigned operand
// and the query as the signed one, two instructions per 64 bytes.
__attribute__((target(VNNI_TARGET))) static inline __m512i
vnni_step4(__m512i acc, const int8_t *q, const uint8_t *x) {
  const __m512i low = _mm512_set1_epi8(15);
  __m512i v = _mm512_loadu_si512((const void *)x);
  acc = _mm512_dpbusd_epi32(acc, _mm512_and_si512(v, low),
                            _mm512_load_si512((const void *)q));
  return _mm512_dpbusd_epi32(acc, _mm512_and_si512(_mm512_srli_epi16(v, 4), low),
                             _mm512_load_si512((const void *)(q + 64)));
}

__attribute__((target(VNNI_TARGET))) static void
dots4_vnni(const int8_t *rows, int64_t stride, int nrows, const uint8_t *prep,
           int32_t *out) {
  const int8_t *q = (const int8_t *)prep;
  int r = 0;
  for (; r + 4 <= nrows; r += 4) {
    const uint8_t *x0 = (const uint8_t *)rows + (int64_t)r * stride;
    const uint8_t *x1 = x0 + stride, *x2 = x1 + stride, *x3 = x2 + stride;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t j = 0; j < stride; j += 64) {
      for (int l = 0; l < 256; l += 64)
        _mm_prefetch((const char *)(x0 + PREFETCH + 4 * j + l), _MM_HINT_T0);
      a0 = vnni_step4(a0, q + 2 * j, x0 + j);
      a1 = vnni_step4(a1, q + 2 * j, x1 + j);
      a2 = vnni_step4(a2, q + 2 * j, x2 + j);
      a3 = vnni_step4(a3, q + 2 * j, x3 + j);
    }
    _mm_storeu_si128((__m128i *)(out + r), vnni_sum4(a0, a1, a2, a3));
  }
  dots4_generic(rows + (int64_t)r * stride, stride, nrows - r, prep, out + r);
}

#endif  // SCAN_X86

int scan_has_kernel(int k) {
  switch (k) {
    case SCAN_GENERIC:
      return 1;
#ifdef SCAN_X86
    case SCAN_AVX2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") != 0;
    case SCAN_AVX512VNNI:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
#endif
  }
  return 0;
}

int scan_best_kernel(void) {
  if (scan_has_kernel(SCAN_AVX512VNNI)) return SCAN_AVX512VNNI;
  if (scan_has_kernel(SCAN_AVX2)) return SCAN_AVX2;
  return SCAN_GENERIC;
}

// ---- top-n selection: a min-heap whose root is the worst kept hit ----

static inline int worse(float sa, int32_t ia, float sb, int32_t ib) {
  return sa < sb || (sa == sb && ia > ib);
}

static void sift_down(float *hs, int32_t *hi, int len, int at) {
  float s = hs[at];
  int32_t id = hi[at];
  for (;;) {
    int c = 2 * at + 1;
    if (c >= len) break;
    if (c + 1 < len && worse(hs[c + 1], hi[c + 1], hs[c], hi[c])) c++;
    if (!worse(hs[c], hi[c], s, id)) break;
    hs[at] = hs[c];
    hi[at] = hi[c];
    at = c;
  }
  hs[at] = s;
  hi[at] = id;
}

static void sift_up(float *hs, int32_t *hi, int at) {
  float s = hs[at];
  int32_t id = hi[at];
  while (at > 0) {
    int p = (at - 1) / 2;
    if (!worse(s, id, hs[p], hi[p])) break;
    hs[at] = hs[p];
    hi[at] = hi[p];
    at = p;
  }
  hs[at] = s;
  hi[at] = id;
}

int scan_topn(const int8_t *codes, const float *scales, const uint64_t *dead,
              int64_t stride, int64_t lo, int64_t hi, int32_t row0,
              const int8_t *q, int32_t n, int kernel, uint8_t *scratch,
              int len, float *out_s, int32_t *out_i) {
  if (n <= 0 || hi <= lo) return len;
  // 64-byte aligned query preparation so kernels may use aligned loads.
  uint8_t *prep = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
  dots_fn dots = dots4_generic;
  int32_t corr = 0;
  prep4(q, stride, prep);
  for (int64_t j = 0; j < 2 * stride; j++) corr += 8 * (int32_t)q[j];
  switch (kernel) {
#ifdef SCAN_X86
    case SCAN_AVX2:
      dots = dots4_avx2;
      break;
    case SCAN_AVX512VNNI:
      dots = dots4_vnni;
      break;
#endif
    default:
      break;
  }

  int32_t d[BLOCK];
  for (int64_t r0 = lo; r0 < hi; r0 += BLOCK) {
    int cnt = hi - r0 < BLOCK ? (int)(hi - r0) : BLOCK;
    dots(codes + r0 * stride, stride, cnt, prep, d);
    for (int k = 0; k < cnt; k++) {
      int64_t r = r0 + k;
      float s = (float)(d[k] - corr) * scales[r];
      // Rows come in order: a tie with the worst kept hit loses.
      if (len == n && !(s > out_s[0])) continue;
      // Dead rows are rare: test them only when they would enter.
      if (dead && (dead[r >> 6] >> (r & 63) & 1)) continue;
      int32_t id = row0 + (int32_t)r;
      if (len < n) {
        out_s[len] = s;
        out_i[len] = id;
        sift_up(out_s, out_i, len);
        len++;
      } else {
        out_s[0] = s;
        out_i[0] = id;
        sift_down(out_s, out_i, len, 0);
      }
    }
  }
  return len;
}

void scan_sort(float *out_s, int32_t *out_i, int len) {
  // Heap sort in place: repeatedly move the worst to the end.
  for (int end = len - 1; end > 0; end--) {
    float ts = out_s[0];
    int32_t ti = out_i[0];
    out_s[0] = out_s[end];
    out_i[0] = out_i[end];
    out_s[end] = ts;
    out_i[end] = ti;
    sift_down(out_s, out_i, end, 0);
  }
}
