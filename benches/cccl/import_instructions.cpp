// Instruction counts of CCCL's checked import, `cuda::to_host_mdspan`, ranks 1-4 x the four layouts:
// the peer of dlspan's `benches/src/bin/import_instructions.rs`, written to be its mirror (same
// tensors, same loop, same sums). Built and run by `scripts/bench.sh`:
//
//     g++ -std=c++17 -O3 -I<cccl> -I<cuda runtime> -I<dlpack.h> import_instructions.cpp
//     valgrind --tool=callgrind ./a.out
//
// g++ -O3 is the optimisation level of Rust's release profile. CCCL reports a failed check by
// throwing std::invalid_argument; no tensor here fails, so the loop runs the throwing path never and
// pays nothing for it (table-based unwinding).
//
// The output must equal the Rust harness's line for line: the same inputs gave the same views.

#include <cuda/mdspan>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cccl_import_instructions {

constexpr std::size_t ITERATIONS = 100000;
constexpr std::size_t ELEMENTS   = std::size_t{1} << 18;

// Rust's `std::hint::black_box(&T)`: the reference is written to memory, passed to an empty asm
// statement that may read and write any memory, and read back, so the compiler knows nothing of the
// tensor on each iteration (the same as the Rust harness's loop, instruction for instruction).
template <class T>
[[gnu::always_inline]] inline const T* black_box(const T* pointer)
{
  asm volatile("" : : "r"(&pointer) : "memory");
  return pointer;
}

template <std::size_t R>
struct Tensor
{
  std::array<std::int64_t, R> shape;
  std::array<std::int64_t, R> strides;

  static Tensor row_major(std::array<std::int64_t, R> shape)
  {
    Tensor t{shape, {}};
    std::int64_t acc = 1;
    for (std::size_t axis = R; axis-- > 0;)
    {
      t.strides[axis] = acc;
      acc *= shape[axis];
    }
    return t;
  }

  static Tensor column_major(std::array<std::int64_t, R> shape)
  {
    Tensor t{shape, {}};
    std::int64_t acc = 1;
    for (std::size_t axis = 0; axis < R; ++axis)
    {
      t.strides[axis] = acc;
      acc *= shape[axis];
    }
    return t;
  }

  // Row-major with the outermost stride doubled: padded ("pitched") rows, not compact.
  static Tensor pitched(std::array<std::int64_t, R> shape)
  {
    Tensor t = row_major(shape);
    t.strides[0] *= 2;
    return t;
  }

  DLTensor dl(float* data)
  {
    DLTensor t{};
    t.data        = data;
    t.device      = DLDevice{kDLCPU, 0};
    t.ndim        = static_cast<std::int32_t>(R);
    t.dtype       = DLDataType{kDLFloat, 32, 1};
    t.shape       = shape.data();
    t.strides     = strides.data();
    t.byte_offset = 0;
    return t;
  }
};

template <class Layout>
constexpr bool stores_strides = !std::is_same_v<Layout, cuda::std::layout_right>
                             && !std::is_same_v<Layout, cuda::std::layout_left>;

// The sum of a view's parts: data pointer, extents, and the strides and offset a strided layout
// stores (a compact layout's strides follow from its extents).
template <class Layout, class View>
[[gnu::always_inline]] inline std::size_t consume(const View& view)
{
  auto sum = reinterpret_cast<std::size_t>(view.data_handle());
  for (std::size_t r = 0; r < View::rank(); ++r)
  {
    sum += static_cast<std::size_t>(view.extent(r));
  }
  if constexpr (stores_strides<Layout>)
  {
    for (std::size_t r = 0; r < View::rank(); ++r)
    {
      sum += static_cast<std::size_t>(view.stride(r));
    }
  }
  if constexpr (std::is_same_v<Layout, cuda::layout_stride_relaxed>)
  {
    sum += static_cast<std::size_t>(view.mapping().offset());
  }
  return sum;
}

template <std::size_t R, class Layout>
[[gnu::always_inline]] inline std::size_t import_loop(const DLTensor* tensor)
{
  std::size_t sum = 0;
  for (std::size_t i = 0; i < ITERATIONS; ++i)
  {
    try
    {
      auto view = cuda::to_host_mdspan<float, R, Layout>(*black_box(tensor));
      sum += consume<Layout>(view);
    }
    catch (const std::invalid_argument&)
    {}
  }
  return sum;
}

// The unchecked floor: pointer and shape (what a compact view holds) and, when Strided, strides and
// byte offset too (what a strided view holds), summed as `consume` sums a view's parts.
template <std::size_t R, bool Strided>
[[gnu::always_inline]] inline std::size_t floor_loop(const DLTensor* tensor)
{
  std::size_t sum = 0;
  for (std::size_t i = 0; i < ITERATIONS; ++i)
  {
    const DLTensor* t = black_box(tensor);
    auto parts        = reinterpret_cast<std::size_t>(t->data);
    for (std::size_t r = 0; r < R; ++r)
    {
      parts += static_cast<std::size_t>(t->shape[r]);
    }
    if constexpr (Strided)
    {
      parts += static_cast<std::size_t>(t->byte_offset);
      for (std::size_t r = 0; r < R; ++r)
      {
        parts += static_cast<std::size_t>(t->strides[r]);
      }
    }
    sum += parts;
  }
  return sum;
}

// One named function per variant, as in the Rust harness (callgrind counts each by name).
#define CCCL_VARIANTS(R)                                                                            \
  [[gnu::noinline]] std::size_t rank##R##_floor(const DLTensor* t)                                  \
  {                                                                                                 \
    return floor_loop<R, false>(t);                                                                 \
  }                                                                                                 \
  [[gnu::noinline]] std::size_t rank##R##_floor_strided(const DLTensor* t)                          \
  {                                                                                                 \
    return floor_loop<R, true>(t);                                                                  \
  }                                                                                                 \
  [[gnu::noinline]] std::size_t rank##R##_right(const DLTensor* t)                                  \
  {                                                                                                 \
    return import_loop<R, cuda::std::layout_right>(t);                                              \
  }                                                                                                 \
  [[gnu::noinline]] std::size_t rank##R##_left(const DLTensor* t)                                   \
  {                                                                                                 \
    return import_loop<R, cuda::std::layout_left>(t);                                               \
  }                                                                                                 \
  [[gnu::noinline]] std::size_t rank##R##_stride(const DLTensor* t)                                 \
  {                                                                                                 \
    return import_loop<R, cuda::std::layout_stride>(t);                                             \
  }                                                                                                 \
  [[gnu::noinline]] std::size_t rank##R##_relaxed(const DLTensor* t)                                \
  {                                                                                                 \
    return import_loop<R, cuda::layout_stride_relaxed>(t);                                          \
  }

CCCL_VARIANTS(1)
CCCL_VARIANTS(2)
CCCL_VARIANTS(3)
CCCL_VARIANTS(4)

enum class Input
{
  RowMajor,
  ColumnMajor,
  Pitched,
};

struct Variant
{
  const char* name;
  std::size_t (*run)(const DLTensor*);
  Input input;
};

template <std::size_t R>
void print_array(const std::array<std::int64_t, R>& values)
{
  std::printf("[");
  for (std::size_t i = 0; i < R; ++i)
  {
    std::printf(i == 0 ? "%lld" : ", %lld", static_cast<long long>(values[i]));
  }
  std::printf("]");
}

// Runs every variant of rank R and prints its tensors and sums (relative to the buffer).
template <std::size_t R>
void run(std::array<std::int64_t, R> shape, std::vector<float>& data, const std::array<Variant, 6>& variants)
{
  const auto base = reinterpret_cast<std::size_t>(data.data());
  std::array<Tensor<R>, 3> tensors{Tensor<R>::row_major(shape), Tensor<R>::column_major(shape), Tensor<R>::pitched(shape)};
  const char* names[3] = {"row-major", "column-major", "pitched"};
  for (std::size_t i = 0; i < 3; ++i)
  {
    std::printf("rank %zu %s: shape ", R, names[i]);
    print_array(tensors[i].shape);
    std::printf(" strides ");
    print_array(tensors[i].strides);
    std::printf("\n");
  }
  const DLTensor dl[3] = {tensors[0].dl(data.data()), tensors[1].dl(data.data()), tensors[2].dl(data.data())};
  for (const auto& variant : variants)
  {
    const auto sum = variant.run(&dl[static_cast<int>(variant.input)]);
    if (sum == 0)
    {
      std::fprintf(stderr, "%s did not convert its tensor\n", variant.name);
      std::exit(1);
    }
    // Every iteration added the buffer's address once; what remains is the views' own parts.
    std::printf("%s: %zu\n", variant.name, (sum - base * ITERATIONS) / ITERATIONS);
  }
}

} // namespace cccl_import_instructions

int main()
{
  using namespace cccl_import_instructions;
  using I = Input;
  std::vector<float> data(2 * ELEMENTS, 1.0f);
#define CCCL_RANK(R, ...)                                                                           \
  run<R>({__VA_ARGS__},                                                                             \
         data,                                                                                      \
         {{{"rank" #R "_floor", rank##R##_floor, I::RowMajor},                                      \
           {"rank" #R "_floor_strided", rank##R##_floor_strided, I::Pitched},                       \
           {"rank" #R "_right", rank##R##_right, I::RowMajor},                                      \
           {"rank" #R "_left", rank##R##_left, I::ColumnMajor},                                     \
           {"rank" #R "_stride", rank##R##_stride, I::Pitched},                                     \
           {"rank" #R "_relaxed", rank##R##_relaxed, I::Pitched}}})
  CCCL_RANK(1, static_cast<std::int64_t>(ELEMENTS));
  CCCL_RANK(2, 512, 512);
  CCCL_RANK(3, 64, 64, 64);
  CCCL_RANK(4, 16, 16, 32, 32);
  return 0;
}
