// The body of the test kernel `count_nonzero` (tests/raw_kernels_support/mod.rs), included with
// include_str!: one block; out(0) is the number of its threads whose element is nonzero.
const dl::index_t i = threadIdx.x;
const int nonzero = i < x.extent(0) && x(i) != 0.0f;
const int count = __syncthreads_count(nonzero);
if (threadIdx.x == 0) out(0) = count;
