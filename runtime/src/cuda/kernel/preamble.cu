// dlspan kernel preamble: types, parameters and element operations shared by every generated
// kernel. Plain C++17 with no CUDA header, so that the same text compiles under NVRTC for the GPU
// and under a host C++ compiler (with DLSPAN_HOST defined) for the host-logic tests.

#ifdef DLSPAN_HOST
// Host build: kernels become plain functions run by a grid loop; the intrinsics become the exact
// operations they stand for (compile with -ffp-contract=off, as the GPU build uses --fmad=false).
struct dl_dim3 { unsigned int x, y, z; };
static dl_dim3 blockIdx, threadIdx, gridDim, blockDim;
#define DL_KERNEL extern "C" void
#define DL_DEV static inline
#define DL_MEMBER inline  // device functions that cannot be static: members, explicit specialisations
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return (unsigned int)(((unsigned long long)a * b) >> 32);
}
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float __uint_as_float(unsigned int x) { float f; __builtin_memcpy(&f, &x, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int x; __builtin_memcpy(&x, &f, 4); return x; }
static inline double __longlong_as_double(long long x) { double f; __builtin_memcpy(&f, &x, 8); return f; }
static inline long long __double_as_longlong(double f) { long long x; __builtin_memcpy(&x, &f, 8); return x; }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
// Kernels with barriers (the tiled ones) run each phase for every thread of the block in turn, so
// the host runner calls them once per block; a block's shared memory is a static of the kernel.
static inline void __syncthreads() {}
#define DL_SHARED static
#define DL_EACH_THREAD for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
#else
#define DL_KERNEL extern "C" __global__ void __launch_bounds__(256)
#define DL_DEV __device__ __forceinline__
#define DL_MEMBER __device__ __forceinline__
#define DL_SHARED __shared__
#define DL_EACH_THREAD
#endif

// 128-bit integers: g++ has them; NVRTC with --device-int128 (passed for modules that use them).
#if defined(DLSPAN_HOST) || defined(__CUDACC_RTC_INT128__)
#define DL_HAS_INT128 1
typedef __int128 dl_i128;
typedef unsigned __int128 dl_u128;
#endif

typedef unsigned long long dl_u64;
typedef long long dl_i64;

// Storage types, layout-identical to the Rust element types.
template <int N, int A> struct alignas(A) dl_bytes { unsigned char b[N]; };
template <class S, int N, int A> struct alignas(A) dl_lanes { S v[N]; };
template <class S> struct dl_complex { S re, im; };
struct alignas(2) dl_f16 { unsigned short bits; };
struct alignas(2) dl_bf16 { unsigned short bits; };
struct dl_f8e3m4 { unsigned char bits; };
struct dl_f8e4m3 { unsigned char bits; };
struct dl_f8e4m3b11fnuz { unsigned char bits; };
struct dl_f8e4m3fn { unsigned char bits; };
struct dl_f8e4m3fnuz { unsigned char bits; };
struct dl_f8e5m2 { unsigned char bits; };
struct dl_f8e5m2fnuz { unsigned char bits; };
struct dl_f8e8m0fnu { unsigned char bits; };
// kDLBool: one byte, nonzero meaning true. Producers store any byte there, and a C++ `bool` holding
// one other than 0 and 1 is undefined behaviour: kernels read `bits != 0`, and copies and casts
// write 0 or 1 (`dl_truth`), so no `bool` output ever holds another byte.
struct dl_bool { unsigned char bits; };

// A boolean, or lanes of booleans, as the bytes 0 and 1.
DL_DEV dl_bool dl_truth(dl_bool x) { return dl_bool{(unsigned char)(x.bits != 0)}; }
template <int N, int A> DL_DEV dl_lanes<dl_bool, N, A> dl_truth(dl_lanes<dl_bool, N, A> x) {
  for (int k = 0; k < N; ++k) x.v[k].bits = (unsigned char)(x.v[k].bits != 0);
  return x;
}

// V elements of T moved as one aligned load or store (V * sizeof(T) is a power of two).
template <class T, int V> struct alignas(sizeof(T) * V) dl_pack { T e[V]; };

// Kernel parameters, passed by value; mirrored by `Params` on the Rust side.
#define DL_MAX_RANK 16
struct dl_operand {
  dl_u64 ptr;                  // address of the element at index 0
  dl_i64 stride[DL_MAX_RANK];  // in elements, merged axes, outermost first
};
struct alignas(16) dl_params {
  dl_u64 n;                          // number of elements
  int ndim;                          // merged axes
  int reserved;
  dl_i64 extent[DL_MAX_RANK];
  unsigned int magic[DL_MAX_RANK];   // 32-bit division by extent[k]: (umulhi(x, magic) + x) >> shift
  unsigned int shift[DL_MAX_RANK];
  dl_operand op[8];                  // the output (the primary view) first, then the inputs
  alignas(16) unsigned char scalar[128];  // scalar arguments, each at its offset
};
static_assert(sizeof(dl_params) == 1488, "dl_params mirrors the Rust Params struct");

// A scalar argument of any element type, read byte by byte (its alignment may exceed the
// parameter buffer's).
template <class T> DL_DEV T dl_scalar(const unsigned char* bytes) {
  union { T value; unsigned char b[sizeof(T)]; } u;
  for (int k = 0; k < (int)sizeof(T); ++k) u.b[k] = bytes[k];
  return u.value;
}

// IEEE binary16 and bfloat16 to and from binary32, bit for bit as the `half` crate converts
// (round to nearest even, NaN payloads kept with the quiet bit set).
DL_DEV float dl_f16_to_f32(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
  unsigned int exp = h & 0x7C00u;
  unsigned int man = h & 0x03FFu;
  if ((h & 0x7FFFu) == 0) return __uint_as_float(sign);
  if (exp == 0x7C00u) {
    return __uint_as_float(man == 0 ? (sign | 0x7F800000u) : (sign | 0x7FC00000u | (man << 13)));
  }
  if (exp == 0) {
    int e = 0;
    while ((man & 0x0400u) == 0) { man <<= 1; ++e; }
    man &= 0x03FFu;
    return __uint_as_float(sign | ((unsigned int)(127 - 15 - e + 1) << 23) | (man << 13));
  }
  return __uint_as_float(sign | (((exp >> 10) + 127 - 15) << 23) | (man << 13));
}

DL_DEV unsigned short dl_f32_to_f16(float value) {
  unsigned int x = __float_as_uint(value);
  unsigned int sign = x & 0x80000000u, exp = x & 0x7F800000u, man = x & 0x007FFFFFu;
  if (exp == 0x7F800000u) {
    unsigned int nan_bit = man == 0 ? 0u : 0x0200u;
    return (unsigned short)((sign >> 16) | 0x7C00u | nan_bit | (man >> 13));
  }
  unsigned int half_sign = sign >> 16;
  int half_exp = (int)(exp >> 23) - 127 + 15;
  if (half_exp >= 0x1F) return (unsigned short)(half_sign | 0x7C00u);
  if (half_exp <= 0) {
    if (14 - half_exp > 24) return (unsigned short)half_sign;
    man |= 0x00800000u;
    unsigned int half_man = man >> (14 - half_exp);
    unsigned int round_bit = 1u << (13 - half_exp);
    if ((man & round_bit) != 0 && (man & (3 * round_bit - 1)) != 0) half_man += 1;
    return (unsigned short)(half_sign | half_man);
  }
  unsigned int bits = half_sign | ((unsigned int)half_exp << 10) | (man >> 13);
  unsigned int round_bit = 0x00001000u;
  if ((man & round_bit) != 0 && (man & (3 * round_bit - 1)) != 0) bits += 1;
  return (unsigned short)bits;
}

DL_DEV float dl_bf16_to_f32(unsigned short b) {
  unsigned int bits = (b & 0x7FFFu) > 0x7F80u ? (b | 0x0040u) : b;
  return __uint_as_float(bits << 16);
}

DL_DEV unsigned short dl_f32_to_bf16(float value) {
  unsigned int x = __float_as_uint(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((x >> 16) | 0x0040u);
  unsigned int round_bit = 0x00008000u;
  if ((x & round_bit) != 0 && (x & (3 * round_bit - 1)) != 0) return (unsigned short)((x >> 16) + 1);
  return (unsigned short)(x >> 16);
}

// Arithmetic as Rust computes it: integers wrap (through unsigned types: signed overflow is
// undefined in C++), floats round each operation (never fused), half types compute in binary32 and
// round back after each operation.
#define DL_WRAPPING(T, U)                                                                         \
  DL_DEV T dl_add(T a, T b) { return (T)(U)((U)a + (U)b); }                                     \
  DL_DEV T dl_mul(T a, T b) { return (T)(U)((U)a * (U)b); }
DL_WRAPPING(signed char, unsigned int)
DL_WRAPPING(unsigned char, unsigned int)
DL_WRAPPING(short, unsigned int)
DL_WRAPPING(unsigned short, unsigned int)
DL_WRAPPING(int, unsigned int)
DL_WRAPPING(unsigned int, unsigned int)
DL_WRAPPING(long long, unsigned long long)
DL_WRAPPING(unsigned long long, unsigned long long)
#ifdef DL_HAS_INT128
DL_WRAPPING(dl_i128, dl_u128)
DL_WRAPPING(dl_u128, dl_u128)
#endif
DL_DEV float dl_add(float a, float b) { return __fadd_rn(a, b); }
DL_DEV float dl_mul(float a, float b) { return __fmul_rn(a, b); }
DL_DEV double dl_add(double a, double b) { return __dadd_rn(a, b); }
DL_DEV double dl_mul(double a, double b) { return __dmul_rn(a, b); }
DL_DEV dl_f16 dl_add(dl_f16 a, dl_f16 b) {
  return dl_f16{dl_f32_to_f16(__fadd_rn(dl_f16_to_f32(a.bits), dl_f16_to_f32(b.bits)))};
}
DL_DEV dl_f16 dl_mul(dl_f16 a, dl_f16 b) {
  return dl_f16{dl_f32_to_f16(__fmul_rn(dl_f16_to_f32(a.bits), dl_f16_to_f32(b.bits)))};
}
DL_DEV dl_bf16 dl_add(dl_bf16 a, dl_bf16 b) {
  return dl_bf16{dl_f32_to_bf16(__fadd_rn(dl_bf16_to_f32(a.bits), dl_bf16_to_f32(b.bits)))};
}
DL_DEV dl_bf16 dl_mul(dl_bf16 a, dl_bf16 b) {
  return dl_bf16{dl_f32_to_bf16(__fmul_rn(dl_bf16_to_f32(a.bits), dl_bf16_to_f32(b.bits)))};
}

// Element casts: dlspan::dtype::cast, bit for bit. A value is taken exactly and rounded once:
// narrow targets (f16, bf16, FP8) are reached from a float that holds the value exactly or rounded
// to odd at 24 bits, which makes the final rounding to nearest exact to the value (Boldo and
// Melquiond); NaN is tested before any hardware conversion, so no result depends on how the
// hardware treats NaN (NVIDIA's conversions return their canonical NaN, x86 keeps the payload and
// sign): a NaN becomes the target's quiet NaN with the input's sign, as on the CPU.

// 2^n (n in the normal exponent range; 2^128 as a float is infinity).
DL_DEV float dl_pow2(float, int n) { return __uint_as_float((unsigned int)(127 + n) << 23); }
DL_DEV double dl_pow2(double, int n) { return __longlong_as_double((long long)(1023 + n) << 52); }
DL_DEV bool dl_negative(float x) { return (__float_as_uint(x) >> 31) != 0; }
DL_DEV bool dl_negative(double x) { return __double_as_longlong(x) < 0; }

// The quiet NaN of each type, with a sign: what a cast of NaN produces.
DL_DEV float dl_nan_f32(bool negative) { return __uint_as_float((negative ? 0x80000000u : 0u) | 0x7FC00000u); }
DL_DEV double dl_nan_f64(bool negative) {
  return __longlong_as_double((long long)((negative ? 0x8000000000000000ull : 0ull) | 0x7FF8000000000000ull));
}

// A double rounded to float toward zero, the lowest bit set when inexact (round to odd); a finite
// value beyond float's range becomes the largest float; NaN keeps its sign.
DL_DEV float dl_odd_f32(double x) {
  if (x != x) return dl_nan_f32(dl_negative(x));
  const float rounded = (float)x;
  if ((double)rounded == x) return rounded;
  unsigned int bits = __float_as_uint(rounded);
  const dl_u64 magnitude_mask = 0x7FFFFFFFFFFFFFFFull;
  const double rounded_magnitude = __longlong_as_double((long long)((dl_u64)__double_as_longlong((double)rounded) & magnitude_mask));
  const double magnitude = __longlong_as_double((long long)((dl_u64)__double_as_longlong(x) & magnitude_mask));
  if (rounded_magnitude > magnitude) bits -= 1;
  return __uint_as_float(bits | 1u);
}

// An unsigned integer rounded to odd at 24 bits (exact below 2^24), as float.
DL_DEV float dl_odd_f32_u64(dl_u64 m) {
  if (m < (1ull << 24)) return (float)(unsigned int)m;
  const int dropped = 40 - __clzll((long long)m);  // bits below the top 24
  const dl_u64 kept = (m >> dropped) | (dl_u64)((m & ((1ull << dropped) - 1)) != 0);
  return (float)(unsigned int)kept * dl_pow2(0.0f, dropped);
}
DL_DEV float dl_odd_f32_i64(long long x) {
  return x < 0 ? -dl_odd_f32_u64(0ull - (dl_u64)x) : dl_odd_f32_u64((dl_u64)x);
}

#ifdef DL_HAS_INT128
DL_DEV int dl_clz128(dl_u128 m) {
  const dl_u64 high = (dl_u64)(m >> 64);
  return high != 0 ? __clzll((long long)high) : 64 + __clzll((long long)(dl_u64)m);
}
// `m` keeping its top `keep` bits (m >= 2^64 > 2^keep), the lowest kept bit set when any dropped
// bit was (round to odd); `dropped` receives the number of bits dropped.
DL_DEV dl_u64 dl_odd_bits(dl_u128 m, int keep, int& dropped) {
  dropped = 128 - keep - dl_clz128(m);
  const dl_u128 low = m & ((((dl_u128)1) << dropped) - 1);
  return (dl_u64)(m >> dropped) | (dl_u64)(low != 0);
}
DL_DEV float dl_odd_f32_u128(dl_u128 m) {
  if ((m >> 64) == 0) return dl_odd_f32_u64((dl_u64)m);
  int dropped;
  const dl_u64 kept = dl_odd_bits(m, 24, dropped);
  return (float)(unsigned int)kept * dl_pow2(0.0f, dropped);
}
DL_DEV float dl_odd_f32_i128(dl_i128 x) {
  return x < 0 ? -dl_odd_f32_u128((dl_u128)0 - (dl_u128)x) : dl_odd_f32_u128((dl_u128)x);
}
// Rounded to nearest even, as Rust's `as`: rounded to odd at 64 bits, then by the hardware (the
// product overflows to infinity where the value rounds beyond the largest float).
template <class F> DL_DEV F dl_u128_to_float(dl_u128 m) {
  if ((m >> 64) == 0) return (F)(dl_u64)m;
  int dropped;
  const dl_u64 kept = dl_odd_bits(m, 64, dropped);
  return (F)kept * dl_pow2((F)0, dropped);
}
template <class F> DL_DEV F dl_i128_to_float(dl_i128 x) {
  return x < 0 ? -dl_u128_to_float<F>((dl_u128)0 - (dl_u128)x) : dl_u128_to_float<F>((dl_u128)x);
}
#endif

// A float in range truncated to an integer (C++ conversion, toward zero); the 128-bit ones
// assembled from the double's significand.
template <class I> struct dl_truncate {
  template <class F> static DL_MEMBER I from(F x) { return (I)x; }
};
#ifdef DL_HAS_INT128
DL_DEV dl_u128 dl_truncate_u128(double magnitude) {
  if (magnitude < 0x1p64) return (dl_u64)magnitude;
  const dl_u64 bits = (dl_u64)__double_as_longlong(magnitude);
  const int exponent = (int)(bits >> 52) - 1023;
  const dl_u64 significand = (bits & ((1ull << 52) - 1)) | (1ull << 52);
  return (dl_u128)significand << (exponent - 52);
}
template <> struct dl_truncate<dl_u128> {
  template <class F> static DL_MEMBER dl_u128 from(F x) { return dl_truncate_u128((double)x); }
};
template <> struct dl_truncate<dl_i128> {
  template <class F> static DL_MEMBER dl_i128 from(F x) {
    const dl_u128 magnitude = dl_truncate_u128(x < 0 ? -(double)x : (double)x);
    return (dl_i128)(x < 0 ? (dl_u128)0 - magnitude : magnitude);
  }
};
#endif

// Rust `as` from floating point (float or double) to an integer of BITS bits: toward zero,
// saturating at the bounds, NaN to 0. U is the unsigned type of I's width.
template <class I, class U, int BITS, bool SIGNED, class F> DL_DEV I dl_float_to_int(F x) {
  if (x != x) return (I)0;
  const F above = dl_pow2(x, SIGNED ? BITS - 1 : BITS);  // the first value above the range
  if (x >= above) return SIGNED ? (I)((((U)1) << (BITS - 1)) - 1) : (I)(~(U)0);
  if (SIGNED ? x <= -above : x <= (F)-1) return SIGNED ? (I)(((U)1) << (BITS - 1)) : (I)0;
  return dl_truncate<I>::from(x);
}

// Casts into f16, bf16, f32 and f64 of a float or double holding the value (or its odd rounding):
// NaN becomes the target's quiet NaN with the input's sign.
DL_DEV dl_f16 dl_cast_f16(float v) {
  return dl_f16{v != v ? (unsigned short)((dl_negative(v) ? 0x8000u : 0u) | 0x7E00u) : dl_f32_to_f16(v)};
}
DL_DEV dl_bf16 dl_cast_bf16(float v) {
  return dl_bf16{v != v ? (unsigned short)((dl_negative(v) ? 0x8000u : 0u) | 0x7FC0u) : dl_f32_to_bf16(v)};
}
DL_DEV float dl_cast_f32(float v) { return v != v ? dl_nan_f32(dl_negative(v)) : v; }
DL_DEV float dl_cast_f32(double v) { return v != v ? dl_nan_f32(dl_negative(v)) : (float)v; }
DL_DEV double dl_cast_f64(float v) { return v != v ? dl_nan_f64(dl_negative(v)) : (double)v; }

// The FP8 formats, from their widths, bias and special values (dlspan's minifloat `Format`):
// decoding to the exact float and encoding from a float (nearest, ties to even, through the
// significand shifted to the target precision as ml_dtypes does, the format's overflow rule).
enum { DL_IEEE = 0, DL_FINITE_ALL_ONES_NAN = 1, DL_FINITE_UNSIGNED_ZERO = 2, DL_FINITE_NO_NAN = 3, DL_UNSIGNED_NO_ZERO = 4 };
template <int E, int M, int BIAS, int SPECIALS> struct dl_minifloat {
  static constexpr bool is_signed = SPECIALS != DL_UNSIGNED_NO_ZERO;
  static constexpr unsigned int sign_bit = is_signed ? 1u << (E + M) : 0u;
  static constexpr int width = E + M + (is_signed ? 1 : 0);
  static constexpr unsigned int mask = width >= 8 ? 0xFFu : (1u << width) - 1;
  static constexpr unsigned int exponent_ones = (1u << E) - 1;
  static constexpr unsigned int all_ones = ((1u << (E + M)) - 1) & 0xFFu;
  static constexpr unsigned int max_finite =
      SPECIALS == DL_IEEE ? (exponent_ones << M) - 1
      : (SPECIALS == DL_FINITE_ALL_ONES_NAN || SPECIALS == DL_UNSIGNED_NO_ZERO) ? all_ones - 1
      : all_ones;

  static DL_MEMBER unsigned int nan(bool negative) {
    const unsigned int sign = negative ? sign_bit : 0u;
    switch (SPECIALS) {
      case DL_IEEE: return sign | (exponent_ones << M) | ((1u << M) >> 1);  // the quiet bit
      case DL_FINITE_ALL_ONES_NAN: return sign | (max_finite + 1);
      case DL_FINITE_UNSIGNED_ZERO: return sign_bit;
      case DL_FINITE_NO_NAN: return max_finite;
      default: return 0xFFu;
    }
  }

  static DL_MEMBER unsigned int overflow(bool negative) {
    const unsigned int sign = negative ? sign_bit : 0u;
    switch (SPECIALS) {
      case DL_IEEE: return sign | (exponent_ones << M);
      case DL_FINITE_NO_NAN: return sign | max_finite;
      default: return nan(negative);
    }
  }

  static DL_MEMBER unsigned int signed_zero(unsigned int sign) {
    return SPECIALS == DL_FINITE_UNSIGNED_ZERO ? 0u : sign;
  }

  static DL_MEMBER float decode(unsigned char stored) {
    const unsigned int code = stored & mask;
    const bool negative = (code & sign_bit) != 0;
    const unsigned int sign = negative ? 0x80000000u : 0u;
    const unsigned int exponent = (code >> M) & exponent_ones;
    const unsigned int mantissa = code & ((1u << M) - 1);
    const bool top = exponent == exponent_ones;
    const float quiet = __uint_as_float(sign | 0x7FC00000u);
    if (SPECIALS == DL_IEEE && top) return mantissa == 0 ? __uint_as_float(sign | 0x7F800000u) : quiet;
    if (SPECIALS == DL_FINITE_ALL_ONES_NAN && top && mantissa == (1u << M) - 1) return quiet;
    if (SPECIALS == DL_FINITE_UNSIGNED_ZERO && code == sign_bit) return __uint_as_float(0x7FC00000u);
    if (SPECIALS == DL_UNSIGNED_NO_ZERO && code == 0xFFu) return __uint_as_float(0x7FC00000u);
    const bool subnormal = exponent == 0 && SPECIALS != DL_UNSIGNED_NO_ZERO;
    if (subnormal && mantissa == 0) return __uint_as_float(sign);
    int power;
    unsigned int fraction;
    if (subnormal) {
      const int top_bit = 31 - __clz((int)mantissa);
      power = top_bit + 1 - BIAS - M;
      fraction = (mantissa ^ (1u << top_bit)) << (23 - top_bit);
    } else {
      power = (int)exponent - BIAS;
      fraction = mantissa << (23 - M);
    }
    const int biased = power + 127;
    // Below float's normal range (only e8m0fnu's 2^-127): a float subnormal, exact.
    const unsigned int bits = biased > 0 ? ((unsigned int)biased << 23) | fraction : ((1u << 23) | fraction) >> (1 - biased);
    return __uint_as_float(sign | bits);
  }

  static DL_MEMBER unsigned char encode(float x) {
    const unsigned int bits = __float_as_uint(x);
    const bool negative = (bits >> 31) != 0;
    const unsigned int magnitude = bits & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return (unsigned char)nan(negative);
    if (!is_signed && (negative || magnitude == 0)) return (unsigned char)nan(false);
    if (magnitude == 0x7F800000u) return (unsigned char)overflow(negative);
    const unsigned int sign = negative ? sign_bit : 0u;
    if (magnitude == 0) return (unsigned char)signed_zero(sign);
    // 1. Normalise: the significand's implicit one at bit 23.
    const int biased = (int)(magnitude >> 23);
    const unsigned int fraction = magnitude & 0x007FFFFFu;
    int exponent;
    unsigned int significand;
    if (biased == 0) {
      const int shift = __clz((int)fraction) - 8;
      exponent = -126 - shift;
      significand = fraction << shift;
    } else {
      exponent = biased - 127;
      significand = (1u << 23) | fraction;
    }
    // 2. The target's biased exponent minus one; below zero the result is subnormal.
    const int base = exponent + BIAS - 1;
    const int denormal = base < 0 ? -base : 0;
    int shift = 23 - M + denormal;
    if (shift > 25) shift = 25;  // rounds everything to zero already
    // 3. Round to nearest even: add half an ulp, less one unless the kept lowest bit is odd.
    const unsigned int odd = (significand >> shift) & 1u;
    const unsigned int rounded = (significand + odd + (1u << (shift - 1)) - 1u) >> shift;
    // 4. Pack: a carry out of the mantissa moves into the exponent.
    const unsigned int exponent_field = base > 0 ? (unsigned int)base : 0u;
    const unsigned int result = rounded + (exponent_field << M);
    if (result > max_finite) return (unsigned char)overflow(negative);
    if (result == 0) return (unsigned char)signed_zero(sign);
    return (unsigned char)(sign | result);
  }
};

// A cast kernel's conversion: one specialisation per (output, input) pair, generated.
template <class To, class From> DL_MEMBER To dl_cast(From x);
