//! The raw kernels of the tests (`dlspan::kernel!`), shared by the CPU tier (`raw_kernels.rs`) and
//! the NVRTC tier (`cuda_nvrtc.rs`), with the view types each is launched with.
#![allow(dead_code, unreachable_pub)]

use dlspan::kernel::{RawInstance, ViewType};
use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft, LayoutStrideRelaxed};

dlspan::kernel! {
    /// `out = a·x + y` over 2-D views of any layout: one thread per element, rows along y.
    pub fn axpy2<T>(a: T, x: &[T; 2], y: &[T; 2], out: &mut [T; 2]) {
        r#"
        dl::index_t i = (dl::index_t)blockIdx.y * blockDim.y + threadIdx.y;
        dl::index_t j = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < out.extent(0) && j < out.extent(1)) out(i, j) = a * x(i, j) + y(i, j);
        "#
    }
}

dlspan::kernel! {
    /// `out = x + 1` on 3-D views, a grid-stride loop over the flat index.
    pub fn inc3(x: &[i32; 3], out: &mut [i32; 3]) {
        r#"
        const dl::index_t n = out.size();
        for (dl::index_t k = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
             k += (dl::index_t)gridDim.x * blockDim.x) {
          dl::index_t c = k % out.extent(2), b = k / out.extent(2) % out.extent(1), a = k / (out.extent(2) * out.extent(1));
          out(a, b, c) = x(a, b, c) + 1;
        }
        "#
    }
}

dlspan::kernel! {
    /// 0-d views: `out() = 2·x()`.
    pub fn twice0(x: &[f64; 0], out: &mut [f64; 0]) {
        r#"if (threadIdx.x == 0 && blockIdx.x == 0) out() = 2.0 * x();"#
    }
}

dlspan::kernel! {
    /// Each block sums its 256 elements through a shared-memory tree: correct only with the
    /// barriers (a thread reads what others wrote).
    pub fn block_sum(x: &[i64; 1], out: &mut [i64; 1]) {
        r#"
        __shared__ long long tile[256];
        const dl::index_t i = (dl::index_t)blockIdx.x * 256 + threadIdx.x;
        tile[threadIdx.x] = i < x.extent(0) ? x(i) : 0;
        __syncthreads();
        for (unsigned int s = 128; s > 0; s >>= 1) {
          if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
          __syncthreads();
        }
        if (threadIdx.x == 0) out(blockIdx.x) = tile[0];
        "#
    }
}

dlspan::kernel! {
    /// `block_sum` without its barriers: wrong wherever threads do not run in lock step.
    pub fn block_sum_unsynchronised(x: &[i64; 1], out: &mut [i64; 1]) {
        r#"
        __shared__ long long tile[256];
        const dl::index_t i = (dl::index_t)blockIdx.x * 256 + threadIdx.x;
        tile[threadIdx.x] = i < x.extent(0) ? x(i) : 0;
        for (unsigned int s = 128; s > 0; s >>= 1) {
          if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
        }
        if (threadIdx.x == 0) out(blockIdx.x) = tile[0];
        "#
    }
}

dlspan::kernel! {
    /// Row sums with atomics: every thread adds its element to its row's total.
    pub fn row_sum_atomic(x: &[u32; 2], out: &mut [u32; 1]) {
        r#"
        dl::index_t i = (dl::index_t)blockIdx.y * blockDim.y + threadIdx.y;
        dl::index_t j = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < x.extent(0) && j < x.extent(1)) atomicAdd(&out(i), x(i, j));
        "#
    }
}

dlspan::kernel! {
    /// Reverses each block's elements through dynamic shared memory.
    pub fn reverse_blocks<T>(x: &[T; 1], out: &mut [T; 1]) {
        r#"
        T* tile = dl::shared_memory<T>();
        const dl::index_t base = (dl::index_t)blockIdx.x * blockDim.x;
        const dl::index_t i = base + threadIdx.x;
        if (i < x.extent(0)) tile[threadIdx.x] = x(i);
        __syncthreads();
        const dl::index_t last = (base + blockDim.x <= x.extent(0) ? blockDim.x : x.extent(0) - base) - 1;
        if (i < x.extent(0)) out(i) = tile[last - threadIdx.x];
        "#
    }
}

dlspan::kernel! {
    /// The view's own metadata, written out: rank, extents, strides, size and static extents.
    pub fn metadata(x: &[u8; 2], out: &mut [i64; 1]) {
        r#"
        if (threadIdx.x != 0) return;
        out(0) = x.rank();
        out(1) = x.extent(0);
        out(2) = x.extent(1);
        out(3) = x.stride(0);
        out(4) = x.stride(1);
        out(5) = x.size();
        out(6) = decltype(x)::static_extent(0);
        out(7) = decltype(x)::static_extent(1);
        "#
    }
}

dlspan::kernel! {
    /// A body from a `.cu` file: counts the threads of the block that see a nonzero element,
    /// through `__syncthreads_count`.
    pub fn count_nonzero(x: &[f32; 1], out: &mut [i32; 1]) {
        include_str!("count_nonzero.cu")
    }
}

dlspan::kernel! {
    /// `out = a·x` in `float` for `f16`, `bf16` and `f32` elements, through the header's
    /// conversions (one rounding back to `T`).
    pub fn scale_any<T>(a: f32, x: &[T; 1], out: &mut [T; 1]) {
        r#"
        const dl::index_t i = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < out.extent(0)) out(i) = dl::from_float<T>(a * dl::to_float(x(i)));
        "#
    }
}

dlspan::kernel! {
    /// CUDA's bit intrinsics and `atomicInc`: `bits(i) = (__popc(x(i)), __ffs(x(i)), __brev(x(i)))`,
    /// and every thread counts into `ticket(0)`, wrapping at 99.
    pub fn intrinsics(x: &[u32; 1], bits: &mut [u32; 2], ticket: &mut [u32; 1]) {
        r#"
        const dl::index_t i = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < x.extent(0)) {
          bits(i, 0) = __popc(x(i));
          bits(i, 1) = __ffs((int)x(i));
          bits(i, 2) = __brev(x(i));
          atomicInc(&ticket(0), 99u);
        }
        "#
    }
}

dlspan::kernel! {
    /// CUDA's fast-math intrinsics (on the CPU: the exact operations, or the host's libm).
    pub fn fast_math(x: &[f32; 1], out: &mut [f32; 2]) {
        r#"
        const dl::index_t i = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < x.extent(0)) {
          out(i, 0) = rsqrtf(x(i));
          out(i, 1) = __saturatef(x(i));
          out(i, 2) = __expf(x(i));
        }
        "#
    }
}

/// Every instantiation the CPU and GPU tiers launch (element types, and view types: random strided
/// layouts are relaxed; `metadata` also column-major and with a static extent), for the NVRTC
/// tier.
pub fn instances() -> Vec<RawInstance> {
    type S<'a, T, const R: usize> = HostMdspan<'a, T, R, LayoutStrideRelaxed>;
    type M<'a, T, const R: usize> = HostMdspanMut<'a, T, R, LayoutStrideRelaxed>;
    const AXPY: &[ViewType] =
        &[ViewType::of::<S<f32, 2>, 2>(), ViewType::of::<S<f32, 2>, 2>(), ViewType::of::<M<f32, 2>, 2>()];
    const INC3: &[ViewType] = &[ViewType::of::<S<i32, 3>, 3>(), ViewType::of::<M<i32, 3>, 3>()];
    const TWICE0: &[ViewType] = &[ViewType::of::<S<f64, 0>, 0>(), ViewType::of::<M<f64, 0>, 0>()];
    const SUM: &[ViewType] = &[ViewType::of::<HostMdspan<i64, 1>, 1>(), ViewType::of::<HostMdspanMut<i64, 1>, 1>()];
    const ROWS: &[ViewType] = &[ViewType::of::<S<u32, 2>, 2>(), ViewType::of::<HostMdspanMut<u32, 1>, 1>()];
    const REV_F32: &[ViewType] = &[ViewType::of::<S<f32, 1>, 1>(), ViewType::of::<M<f32, 1>, 1>()];
    const REV_MANAGED: &[ViewType] = &[ViewType::of::<S<f32, 1>, 1>(), ViewType::of::<HostMdspanMut<f32, 1>, 1>()];
    const REV_U8: &[ViewType] = &[ViewType::of::<S<u8, 1>, 1>(), ViewType::of::<M<u8, 1>, 1>()];
    const META_LEFT: &[ViewType] =
        &[ViewType::of::<HostMdspan<u8, 2, LayoutLeft>, 2>(), ViewType::of::<HostMdspanMut<i64, 1>, 1>()];
    const META_STATIC: &[ViewType] = &[
        ViewType::of::<dlspan::Mdspan<u8, 2, (dlspan::Static<3>, dlspan::Dyn), dlspan::LayoutRight, dlspan::Host>, 2>(),
        ViewType::of::<HostMdspanMut<i64, 1>, 1>(),
    ];
    const SCALE_F16: &[ViewType] = &[
        ViewType::of::<HostMdspan<dlspan::half::f16, 1>, 1>(),
        ViewType::of::<HostMdspanMut<dlspan::half::f16, 1>, 1>(),
    ];
    const SCALE_BF16: &[ViewType] = &[
        ViewType::of::<HostMdspan<dlspan::half::bf16, 1>, 1>(),
        ViewType::of::<HostMdspanMut<dlspan::half::bf16, 1>, 1>(),
    ];
    const SCALE_F32: &[ViewType] =
        &[ViewType::of::<HostMdspan<f32, 1>, 1>(), ViewType::of::<HostMdspanMut<f32, 1>, 1>()];
    const INTRINSICS: &[ViewType] = &[
        ViewType::of::<HostMdspan<u32, 1>, 1>(),
        ViewType::of::<HostMdspanMut<u32, 2>, 2>(),
        ViewType::of::<HostMdspanMut<u32, 1>, 1>(),
    ];
    const FAST: &[ViewType] = &[ViewType::of::<HostMdspan<f32, 1>, 1>(), ViewType::of::<HostMdspanMut<f32, 2>, 2>()];
    const COUNT: &[ViewType] = &[ViewType::of::<HostMdspan<f32, 1>, 1>(), ViewType::of::<HostMdspanMut<i32, 1>, 1>()];
    vec![
        axpy2::instance::<f32>(AXPY),
        inc3::instance(INC3),
        twice0::instance(TWICE0),
        block_sum::instance(SUM),
        block_sum_unsynchronised::instance(SUM),
        row_sum_atomic::instance(ROWS),
        reverse_blocks::instance::<f32>(REV_F32),
        reverse_blocks::instance::<f32>(REV_MANAGED),
        reverse_blocks::instance::<u8>(REV_U8),
        metadata::instance(META_LEFT),
        metadata::instance(META_STATIC),
        count_nonzero::instance(COUNT),
        scale_any::instance::<dlspan::half::f16>(SCALE_F16),
        scale_any::instance::<dlspan::half::bf16>(SCALE_BF16),
        scale_any::instance::<f32>(SCALE_F32),
        intrinsics::instance(INTRINSICS),
        fast_math::instance(FAST),
    ]
}
