// dlspan element-wise kernels: what the bodies `elementwise!` translates call. Every operation here
// mirrors one of dlspan::kernel's Rust operations (runtime/src/kernel/scalar.rs) bit for bit: the
// CPU runs the Rust, the GPU this, and the host-logic tier builds this with g++ and compares.
// Guarded: the host tests put several modules in one file.
#ifndef DL_ELEMENTWISE
#define DL_ELEMENTWISE 1

#ifdef DLSPAN_HOST
#include <math.h>
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
// dlspan's CPU `exp` and `tanh` of f32 (runtime/src/kernel/math.rs), operation for operation
// (built with -ffp-contract=off): the host build computes the bits the Rust body does.
static inline float dl_host_pow2(int n) {
  unsigned int bits = (unsigned int)(n + 127) << 23;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}
// exp(x) = e * 2^n, returned as e with n through `n_out` (dl_host_exp_core's parts).
static inline float dl_host_exp_parts(float x, int* n_out) {
  const float round = 12582912.0f;
  float biased = fmaf(x, 1.4426950408889634f, round);
  float k = biased - round;
  float r = fmaf(k, 2.12194440e-4f, fmaf(k, -0.693359375f, x));
  float p = 1.9875692e-4f;
  p = fmaf(p, r, 1.3981999e-3f);
  p = fmaf(p, r, 8.3334520e-3f);
  p = fmaf(p, r, 4.1665796e-2f);
  p = fmaf(p, r, 1.6666665e-1f);
  p = fmaf(p, r, 0.5f);
  float e = p * (r * r) + r + 1.0f;
  unsigned int bits;
  __builtin_memcpy(&bits, &biased, 4);
  *n_out = (int)(bits & 0x007fffffu) - (1 << 22);
  return e;
}
static inline float dl_host_exp_core(float x) {
  int n;
  float e = dl_host_exp_parts(x, &n);
  int half = n >> 1;
  return e * dl_host_pow2(half) * dl_host_pow2(n - half);
}
static inline float dl_host_expf(float x) {
  x = x > 89.0f ? 89.0f : x;
  x = x < -104.0f ? -104.0f : x;
  return dl_host_exp_core(x);
}
static inline float dl_host_tanhf(float x) {
  float a = fabsf(x);
  float z = a * a;
  float p = -5.7049887e-3f;
  p = fmaf(p, z, 2.063909e-2f);
  p = fmaf(p, z, -5.3739716e-2f);
  p = fmaf(p, z, 1.3331442e-1f);
  p = fmaf(p, z, -3.333328e-1f);
  float small = fmaf(p * z, a, a);
  float clamped = a > 10.0f ? 10.0f : a;
  int n;
  float e = dl_host_exp_parts(2.0f * clamped, &n);
  float large = 1.0f - 2.0f / (e * dl_host_pow2(n) + 1.0f);
  return copysignf(a < 0.625f ? small : large, x);
}
// dlspan's CPU logarithms of f32 (math.rs's log_parts, log_special, log_split).
static inline float dl_host_log_parts(float x, float* f_out, float* hfsq_out, float* dk_out) {
  int small = x < 1.17549435e-38f;
  float scaled = small ? x * 33554432.0f : x;
  unsigned int ix;
  __builtin_memcpy(&ix, &scaled, 4);
  ix += 0x3f800000u - 0x3f3504f3u;
  int k = (int)(ix >> 23) - 0x7f - (small ? 25 : 0);
  unsigned int mbits = (ix & 0x007fffffu) + 0x3f3504f3u;
  float m;
  __builtin_memcpy(&m, &mbits, 4);
  float f = m - 1.0f;
  float s = f / (2.0f + f);
  float z = s * s;
  float w = z * z;
  float t1 = w * fmaf(w, 2.4279079e-1f, 4.0000972e-1f);
  float t2 = z * fmaf(w, 2.8498787e-1f, 0.6666666f);
  float hfsq = 0.5f * f * f;
  *f_out = f;
  *hfsq_out = hfsq;
  *dk_out = (float)k;
  return s * (hfsq + (t2 + t1));
}
static inline float dl_host_log_special(float x, float y) {
  y = x == __builtin_inff() ? x : y;
  y = x == 0.0f ? -__builtin_inff() : y;
  return (x < 0.0f || x != x) ? __builtin_nanf("") : y;
}
static inline float dl_host_log_hi(float f, float hfsq) {
  float d = f - hfsq;
  unsigned int bits;
  __builtin_memcpy(&bits, &d, 4);
  bits &= 0xfffff000u;
  float hi;
  __builtin_memcpy(&hi, &bits, 4);
  return hi;
}
static inline float dl_host_logf(float x) {
  float f, hfsq, dk;
  float r = dl_host_log_parts(x, &f, &hfsq, &dk);
  return dl_host_log_special(x, r + dk * 9.058001e-6f - hfsq + f + dk * 6.9313812e-1f);
}
static inline float dl_host_log2f(float x) {
  float f, hfsq, dk;
  float r = dl_host_log_parts(x, &f, &hfsq, &dk);
  float hi = dl_host_log_hi(f, hfsq);
  float lo = (f - hi) - hfsq + r;
  return dl_host_log_special(x, (lo + hi) * -1.7605285e-4f + lo * 1.4428711f + hi * 1.4428711f + dk);
}
static inline float dl_host_log10f(float x) {
  float f, hfsq, dk;
  float r = dl_host_log_parts(x, &f, &hfsq, &dk);
  float hi = dl_host_log_hi(f, hfsq);
  float lo = (f - hi) - hfsq + r;
  float y = dk * 7.903415e-7f + (lo + hi) * -3.168997e-5f + lo * 4.3432617e-1f + hi * 4.3432617e-1f +
            dk * 3.010292e-1f;
  return dl_host_log_special(x, y);
}
#define DL_EXPF dl_host_expf
#define DL_TANHF dl_host_tanhf
#define DL_LOGF dl_host_logf
#define DL_LOG2F dl_host_log2f
#define DL_LOG10F dl_host_log10f
#else
#define DL_EXPF expf
#define DL_TANHF tanhf
#define DL_LOGF logf
#define DL_LOG2F log2f
#define DL_LOG10F log10f
#endif

// Values. A view's element is its storage type; a body computes with values: `bool` for `dl_bool`
// (stored as the byte 0 or 1, read as nonzero), every other type as stored.
template <class T> struct dl_value { typedef T type; };
template <> struct dl_value<dl_bool> { typedef bool type; };
template <class T> using dl_value_t = typename dl_value<T>::type;
template <class V> struct dl_storage { typedef V type; };
template <> struct dl_storage<bool> { typedef dl_bool type; };

DL_DEV bool dl_load(const dl_bool& b) { return b.bits != 0; }
template <class T> DL_DEV T dl_load(const T& x) { return x; }

// Unsuffixed literals: the value as Rust parses it for each type the literal may take (a float
// literal becomes f32 or f64, an integer literal any integer type), taking the type of the
// operand it meets, as Rust's inference gives it.
struct dl_flit { double d; float f; };
struct dl_ilit { dl_u64 magnitude; bool negative; };

template <class To, class From> struct dl_conv;
template <class T> struct dl_conv<T, T> { static DL_MEMBER T run(T x) { return x; } };
template <> struct dl_conv<float, dl_flit> { static DL_MEMBER float run(dl_flit x) { return x.f; } };
template <> struct dl_conv<double, dl_flit> { static DL_MEMBER double run(dl_flit x) { return x.d; } };
// A literal meeting f16 or bf16 is its f32 value rounded once (as the Rust side, `Float::k_flit`).
template <> struct dl_conv<dl_f16, dl_flit> { static DL_MEMBER dl_f16 run(dl_flit x) { return dl_f16{dl_f32_to_f16(x.f)}; } };
template <> struct dl_conv<dl_bf16, dl_flit> {
  static DL_MEMBER dl_bf16 run(dl_flit x) { return dl_bf16{dl_f32_to_bf16(x.f)}; }
};
template <class I> struct dl_conv<I, dl_ilit> {
  static DL_MEMBER I run(dl_ilit x) { return (I)(x.negative ? 0ull - x.magnitude : x.magnitude); }
};
#ifdef DL_HAS_INT128
template <> struct dl_conv<dl_i128, dl_ilit> {
  static DL_MEMBER dl_i128 run(dl_ilit x) {
    return (dl_i128)(x.negative ? (dl_u128)0 - (dl_u128)x.magnitude : (dl_u128)x.magnitude);
  }
};
template <> struct dl_conv<dl_u128, dl_ilit> {
  static DL_MEMBER dl_u128 run(dl_ilit x) { return (dl_u128)x.magnitude; }
};
#endif
template <> struct dl_conv<dl_bool, bool> {
  static DL_MEMBER dl_bool run(bool b) { return dl_bool{(unsigned char)(b ? 1 : 0)}; }
};
template <> struct dl_conv<bool, dl_bool> { static DL_MEMBER bool run(dl_bool b) { return b.bits != 0; } };
template <class To, class From> DL_DEV To dl_to(From x) { return dl_conv<To, From>::run(x); }

// The type two operands share: their own, or the typed one's when the other is a literal.
template <class A, class B> struct dl_common;
template <class T> struct dl_common<T, T> { typedef T type; };
template <class T> struct dl_common<T, dl_flit> { typedef T type; };
template <class T> struct dl_common<dl_flit, T> { typedef T type; };
template <class T> struct dl_common<T, dl_ilit> { typedef T type; };
template <class T> struct dl_common<dl_ilit, T> { typedef T type; };
#define DL_COMMON(A, B) typename dl_common<A, B>::type

// Writes a value into a place (a view's element, a field, a variable) of storage type T.
template <class T, class V> DL_DEV void dl_assign(T& place, V v) { place = dl_to<T>(v); }

// Integers: wrapping, as Rust's wrapping_* (through the unsigned type: signed overflow is undefined
// in C++); x / 0 is 0 and x % 0 is x; MIN / -1 wraps to MIN, MIN % -1 is 0.
#define DL_INTEGER(T, U, SIGNED)                                                                  \
  DL_DEV T dl_sub(T a, T b) { return (T)(U)((U)a - (U)b); }                                     \
  DL_DEV T dl_neg(T a) { return (T)(U)((U)0 - (U)a); }                                           \
  DL_DEV T dl_div(T a, T b) {                                                                    \
    if (b == (T)0) return (T)0;                                                                  \
    if (SIGNED && b == (T)-1) return dl_neg(a);                                                  \
    return (T)(a / b);                                                                           \
  }                                                                                              \
  DL_DEV T dl_rem(T a, T b) {                                                                    \
    if (b == (T)0) return a;                                                                     \
    if (SIGNED && b == (T)-1) return (T)0;                                                       \
    return (T)(a % b);                                                                           \
  }                                                                                              \
  DL_DEV T dl_abs(T a) { return SIGNED && a < (T)0 ? dl_neg(a) : a; }                          \
  DL_DEV bool dl_isnan(T) { return false; }
DL_INTEGER(signed char, unsigned int, true)
DL_INTEGER(unsigned char, unsigned int, false)
DL_INTEGER(short, unsigned int, true)
DL_INTEGER(unsigned short, unsigned int, false)
DL_INTEGER(int, unsigned int, true)
DL_INTEGER(unsigned int, unsigned int, false)
DL_INTEGER(long long, unsigned long long, true)
DL_INTEGER(unsigned long long, unsigned long long, false)
#ifdef DL_HAS_INT128
DL_INTEGER(dl_i128, dl_u128, true)
DL_INTEGER(dl_u128, dl_u128, false)
#endif

// f32 and f64: each operation rounded once (the _rn intrinsics; NVRTC runs with --fmad=false),
// negation and abs on the sign bit alone (as Rust's `-x` and `abs`).
DL_DEV float dl_sub(float a, float b) { return __fsub_rn(a, b); }
DL_DEV float dl_div(float a, float b) { return __fdiv_rn(a, b); }
DL_DEV float dl_rem(float a, float b) { return fmodf(a, b); }
DL_DEV float dl_neg(float a) { return __uint_as_float(__float_as_uint(a) ^ 0x80000000u); }
DL_DEV float dl_abs(float a) { return __uint_as_float(__float_as_uint(a) & 0x7FFFFFFFu); }
DL_DEV bool dl_isnan(float a) { return a != a; }
DL_DEV double dl_sub(double a, double b) { return __dsub_rn(a, b); }
DL_DEV double dl_div(double a, double b) { return __ddiv_rn(a, b); }
DL_DEV double dl_rem(double a, double b) { return fmod(a, b); }
DL_DEV double dl_neg(double a) {
  return __longlong_as_double((long long)((dl_u64)__double_as_longlong(a) ^ 0x8000000000000000ull));
}
DL_DEV double dl_abs(double a) {
  return __longlong_as_double((long long)((dl_u64)__double_as_longlong(a) & 0x7FFFFFFFFFFFFFFFull));
}
DL_DEV bool dl_isnan(double a) { return a != a; }

// f16 and bf16: in f32, rounded back once per operation (as the `half` crate computes them);
// negation and abs on the sign bit.
#define DL_HALF(H, TO_F32, FROM_F32)                                                             \
  DL_DEV H dl_sub(H a, H b) { return H{FROM_F32(__fsub_rn(TO_F32(a.bits), TO_F32(b.bits)))}; }   \
  DL_DEV H dl_div(H a, H b) { return H{FROM_F32(__fdiv_rn(TO_F32(a.bits), TO_F32(b.bits)))}; }   \
  DL_DEV H dl_rem(H a, H b) { return H{FROM_F32(fmodf(TO_F32(a.bits), TO_F32(b.bits)))}; }      \
  DL_DEV H dl_neg(H a) { return H{(unsigned short)(a.bits ^ 0x8000u)}; }                         \
  DL_DEV H dl_abs(H a) { return H{(unsigned short)(a.bits & 0x7FFFu)}; }                         \
  DL_DEV bool dl_isnan(H a) { return TO_F32(a.bits) != TO_F32(a.bits); }                          \
  DL_DEV bool dl_lt_t(H a, H b) { return TO_F32(a.bits) < TO_F32(b.bits); }                      \
  DL_DEV bool dl_le_t(H a, H b) { return TO_F32(a.bits) <= TO_F32(b.bits); }                     \
  DL_DEV bool dl_eq_t(H a, H b) { return TO_F32(a.bits) == TO_F32(b.bits); }
DL_HALF(dl_f16, dl_f16_to_f32, dl_f32_to_f16)
DL_HALF(dl_bf16, dl_bf16_to_f32, dl_f32_to_bf16)

// Comparisons (integers, f32, f64 and bool natively; f16 and bf16 as f32 above).
template <class T> DL_DEV bool dl_lt_t(T a, T b) { return a < b; }
template <class T> DL_DEV bool dl_le_t(T a, T b) { return a <= b; }
template <class T> DL_DEV bool dl_eq_t(T a, T b) { return a == b; }

// min and max: `b` when it is below (above) `a` or `a` is NaN, else `a` (an operand, bits kept).
template <class T> DL_DEV T dl_min_t(T a, T b) { return (dl_lt_t(b, a) || dl_isnan(a)) ? b : a; }
template <class T> DL_DEV T dl_max_t(T a, T b) { return (dl_lt_t(a, b) || dl_isnan(a)) ? b : a; }

// The math functions: f32 and f64 by CUDA's (the host's libm in the host build), f16 and bf16
// through f32, rounded back.
#define DL_MATH(NAME, F32, F64)                                                                   \
  DL_DEV float dl_##NAME(float x) { return F32(x); }                                             \
  DL_DEV double dl_##NAME(double x) { return F64(x); }                                           \
  DL_DEV dl_f16 dl_##NAME(dl_f16 x) { return dl_f16{dl_f32_to_f16(F32(dl_f16_to_f32(x.bits)))}; } \
  DL_DEV dl_bf16 dl_##NAME(dl_bf16 x) { return dl_bf16{dl_f32_to_bf16(F32(dl_bf16_to_f32(x.bits)))}; }
DL_MATH(sqrt, __fsqrt_rn, __dsqrt_rn)
DL_MATH(exp, DL_EXPF, exp)
DL_MATH(exp2, exp2f, exp2)
DL_MATH(ln, DL_LOGF, log)
DL_MATH(log2, DL_LOG2F, log2)
DL_MATH(log10, DL_LOG10F, log10)
DL_MATH(sin, sinf, sin)
DL_MATH(cos, cosf, cos)
DL_MATH(tan, tanf, tan)
DL_MATH(tanh, DL_TANHF, tanh)
DL_MATH(floor, floorf, floor)
DL_MATH(ceil, ceilf, ceil)
DL_MATH(round, roundf, round)
DL_MATH(trunc, truncf, trunc)
DL_DEV float dl_powf_t(float a, float b) { return powf(a, b); }
DL_DEV double dl_powf_t(double a, double b) { return pow(a, b); }
DL_DEV dl_f16 dl_powf_t(dl_f16 a, dl_f16 b) {
  return dl_f16{dl_f32_to_f16(powf(dl_f16_to_f32(a.bits), dl_f16_to_f32(b.bits)))};
}
DL_DEV dl_bf16 dl_powf_t(dl_bf16 a, dl_bf16 b) {
  return dl_bf16{dl_f32_to_bf16(powf(dl_bf16_to_f32(a.bits), dl_bf16_to_f32(b.bits)))};
}
DL_DEV float dl_mul_add_t(float a, float b, float c) { return __fmaf_rn(a, b, c); }
DL_DEV double dl_mul_add_t(double a, double b, double c) { return __fma_rn(a, b, c); }
DL_DEV dl_f16 dl_mul_add_t(dl_f16 a, dl_f16 b, dl_f16 c) {
  return dl_f16{dl_f32_to_f16(__fmaf_rn(dl_f16_to_f32(a.bits), dl_f16_to_f32(b.bits), dl_f16_to_f32(c.bits)))};
}
DL_DEV dl_bf16 dl_mul_add_t(dl_bf16 a, dl_bf16 b, dl_bf16 c) {
  return dl_bf16{dl_f32_to_bf16(__fmaf_rn(dl_bf16_to_f32(a.bits), dl_bf16_to_f32(b.bits), dl_bf16_to_f32(c.bits)))};
}

// Operands of two types (a literal and a typed value): the literal takes the value's type.
#define DL_BINARY(NAME, TYPED)                                                                    \
  template <class A, class B> DL_DEV DL_COMMON(A, B) NAME(A a, B b) {                             \
    typedef DL_COMMON(A, B) T;                                                                    \
    return TYPED(dl_to<T>(a), dl_to<T>(b));                                                       \
  }
#define DL_PREDICATE(NAME, EXPR)                                                                  \
  template <class A, class B> DL_DEV bool NAME(A a, B b) {                                        \
    typedef DL_COMMON(A, B) T;                                                                    \
    const T x = dl_to<T>(a), y = dl_to<T>(b);                                                     \
    return EXPR;                                                                                  \
  }
DL_BINARY(dl_add, dl_add)
DL_BINARY(dl_sub, dl_sub)
DL_BINARY(dl_mul, dl_mul)
DL_BINARY(dl_div, dl_div)
DL_BINARY(dl_rem, dl_rem)
DL_BINARY(dl_min, dl_min_t)
DL_BINARY(dl_max, dl_max_t)
DL_BINARY(dl_powf, dl_powf_t)
DL_PREDICATE(dl_lt, dl_lt_t(x, y))
DL_PREDICATE(dl_le, dl_le_t(x, y))
DL_PREDICATE(dl_gt, dl_lt_t(y, x))
DL_PREDICATE(dl_ge, dl_le_t(y, x))
DL_PREDICATE(dl_eq, dl_eq_t(x, y))
DL_PREDICATE(dl_ne, !dl_eq_t(x, y))
template <class A, class B, class C> DL_DEV DL_COMMON(DL_COMMON(A, B), C) dl_mul_add(A a, B b, C c) {
  typedef DL_COMMON(DL_COMMON(A, B), C) T;
  return dl_mul_add_t(dl_to<T>(a), dl_to<T>(b), dl_to<T>(c));
}
template <class A, class B> DL_DEV DL_COMMON(A, B) dl_select(bool c, A a, B b) {
  typedef DL_COMMON(A, B) T;
  return c ? dl_to<T>(a) : dl_to<T>(b);
}
DL_DEV bool dl_not(bool b) { return !b; }
// `x.detach()`: the value itself (its derivative is taken as zero by `#[differentiable]`).
template <class T> DL_DEV T dl_detach(T x) { return x; }
// `x.zero_like()`: the value of x's type with all bytes zero (value-initialised: 0, 0.0, false, every
// field of a derived type zero).
template <class T> DL_DEV T dl_zero_like(T) { return T{}; }

// `x as To`: dlspan::dtype::cast through the generated `dl_cast<To, From>` of the storage types
// (a module holds the conversions into each of its cast targets); a literal is an f64 or an i32
// first, as Rust types a literal that meets a cast of another kind.
template <class To, class From> DL_DEV To dl_kcast(From x) {
  typedef typename dl_storage<To>::type ST;
  typedef typename dl_storage<From>::type SF;
  return dl_load(dl_cast<ST, SF>(dl_to<SF>(x)));
}
template <class To> DL_DEV To dl_kcast(dl_flit x) { return dl_kcast<To>(x.d); }
template <class To> DL_DEV To dl_kcast(dl_ilit x) { return dl_kcast<To>(dl_to<int>(x)); }

#endif  // DL_ELEMENTWISE
