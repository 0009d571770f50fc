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
#else
#define DL_KERNEL extern "C" __global__ void __launch_bounds__(256)
#define DL_DEV __device__ __forceinline__
#endif

typedef unsigned long long dl_u64;
typedef long long dl_i64;

// Storage types, layout-identical to the Rust element types.
template <int N, int A> struct alignas(A) dl_bytes { unsigned char b[N]; };
template <class S, int N, int A> struct alignas(A) dl_lanes { S v[N]; };
template <class S> struct dl_complex { S re, im; };
struct alignas(2) dl_f16 { unsigned short bits; };
struct alignas(2) dl_bf16 { unsigned short bits; };
struct dl_f8e4m3fn { unsigned char bits; };
struct dl_f8e5m2 { unsigned char bits; };

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
  dl_operand op[3];                  // output, first input, second input
  alignas(16) unsigned char scalar[2][64];
};
static_assert(sizeof(dl_params) == 816, "dl_params mirrors the Rust Params struct");

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
