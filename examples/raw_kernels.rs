//! Raw kernels: CUDA C++ bodies over typed views (`dlspan::kernel!`). A 2-D five-point stencil over
//! a strided view through shared-memory tiles, a row sum with atomics, and a generic kernel (a
//! horizontal flip) over `f16`, `bf16`, `f32` and a derived RGBA type. Each runs on the CPU
//! (`dlspan::kernel::Cpu`: the host C++ compiler, blocks in parallel, a block's threads as fibers)
//! and, with feature `cuda` on a machine with a GPU, on a CUDA stream (NVRTC), compared with the
//! CPU's results.
//!
//! ```sh
//! cargo run --example raw_kernels                  # on the CPU
//! cargo run --example raw_kernels --features cuda  # and on the GPU, when there is one
//! ```

use dlspan::half::{bf16, f16};
use dlspan::kernel::{Cpu, LaunchConfig};
use dlspan::{HostMdspan, HostMdspanMut, LayoutStride};

/// An 8-bit RGBA pixel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, dlspan::DlElement)]
#[repr(C)]
pub struct Rgba {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Alpha.
    pub a: u8,
}

/// The stencil's tile: `TILE`×`TILE` threads per block.
pub const TILE: u32 = 16;

dlspan::kernel! {
    /// `out(i, j) = 4·x(i, j) − x(i−1, j) − x(i+1, j) − x(i, j−1) − x(i, j+1)`, with `x` read as 0
    /// outside its extents. Each block loads its tile and a one-element halo into shared memory
    /// once, waits for the whole tile, then reads neighbours from the tile.
    pub fn stencil(x: &[f32; 2], out: &mut [f32; 2]) {
        r#"
        constexpr int T = 16;
        __shared__ float tile[T + 2][T + 2];
        const dl::index_t i0 = (dl::index_t)blockIdx.y * T, j0 = (dl::index_t)blockIdx.x * T;
        const dl::index_t rows = x.extent(0), cols = x.extent(1);
        // The tile and its halo: (T + 2)² elements, loaded by the block's T² threads in turn.
        for (int k = threadIdx.y * T + threadIdx.x; k < (T + 2) * (T + 2); k += T * T) {
          const dl::index_t i = i0 + k / (T + 2) - 1, j = j0 + k % (T + 2) - 1;
          tile[k / (T + 2)][k % (T + 2)] = (i >= 0 && i < rows && j >= 0 && j < cols) ? x(i, j) : 0.0f;
        }
        __syncthreads();
        const int ti = threadIdx.y + 1, tj = threadIdx.x + 1;
        const dl::index_t i = i0 + threadIdx.y, j = j0 + threadIdx.x;
        if (i < rows && j < cols) {
          out(i, j) = 4.0f * tile[ti][tj] - tile[ti - 1][tj] - tile[ti + 1][tj] - tile[ti][tj - 1] - tile[ti][tj + 1];
        }
        "#
    }
}

dlspan::kernel! {
    /// `sums(i) += Σⱼ x(i, j)`: every thread adds its element with `atomicAdd`.
    pub fn row_sum(x: &[f32; 2], sums: &mut [f32; 1]) {
        r#"
        const dl::index_t i = (dl::index_t)blockIdx.y * blockDim.y + threadIdx.y;
        const dl::index_t j = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < x.extent(0) && j < x.extent(1)) atomicAdd(&sums(i), x(i, j));
        "#
    }
}

dlspan::kernel! {
    /// `out(i, j) = x(i, extent(1) − 1 − j)`, for any element type (a C++ template parameter).
    pub fn flip<T>(x: &[T; 2], out: &mut [T; 2]) {
        r#"
        const dl::index_t i = (dl::index_t)blockIdx.y * blockDim.y + threadIdx.y;
        const dl::index_t j = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < out.extent(0) && j < out.extent(1)) out(i, j) = x(i, x.extent(1) - 1 - j);
        "#
    }
}

/// The image's rows and columns.
pub const ROWS: usize = 45;
/// The image's columns.
pub const COLUMNS: usize = 70;

/// The stencil's input: every other column of a wider buffer (a strided view).
pub fn input() -> Vec<f32> {
    (0..ROWS * 2 * COLUMNS).map(|k| ((k * 37) % 101) as f32 - 50.0).collect()
}

/// The strided view of `input` the stencil reads.
pub fn strided(data: &[f32]) -> Result<HostMdspan<'_, f32, 2, LayoutStride>, dlspan::DlpackError> {
    HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(data, [ROWS, COLUMNS], [2 * COLUMNS as isize, 2])
}

/// The stencil computed in Rust.
pub fn stencil_reference(x: &HostMdspan<'_, f32, 2, LayoutStride>) -> Vec<f32> {
    let at = |i: isize, j: isize| {
        if i < 0 || j < 0 || i >= ROWS as isize || j >= COLUMNS as isize { 0.0 } else { x[[i as usize, j as usize]] }
    };
    let mut out = vec![0.0f32; ROWS * COLUMNS];
    for i in 0..ROWS as isize {
        for j in 0..COLUMNS as isize {
            out[i as usize * COLUMNS + j as usize] =
                4.0 * at(i, j) - at(i - 1, j) - at(i + 1, j) - at(i, j - 1) - at(i, j + 1);
        }
    }
    out
}

/// Runs `flip` on the CPU over a `ROWS`×`COLUMNS` image of `T`.
fn flip_on_cpu<T: dlspan::DlElement + Default>(image: &[T]) -> Result<Vec<T>, Box<dyn std::error::Error>> {
    let mut out = vec![T::default(); image.len()];
    let config = LaunchConfig::for_extent_2d([ROWS, COLUMNS], [8, 32])?;
    // SAFETY: every access is guarded by the views' extents (both ROWS×COLUMNS).
    unsafe {
        flip.launch(
            Cpu,
            config,
            &HostMdspan::<T, 2>::from_slice(image, [ROWS, COLUMNS])?,
            &mut HostMdspanMut::<T, 2>::from_slice(&mut out, [ROWS, COLUMNS])?,
        )?;
    }
    Ok(out)
}

/// `image` flipped in Rust.
fn flipped<T: Copy>(image: &[T]) -> Vec<T> {
    image.chunks(COLUMNS).flat_map(|row| row.iter().rev().copied()).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = input();
    let x = strided(&data)?;
    let mut out = vec![0.0f32; ROWS * COLUMNS];
    let tiles = LaunchConfig::for_extent_2d([ROWS, COLUMNS], [TILE, TILE])?;
    // SAFETY: the body reads `x` and writes `out` within their extents (equal), each element of
    // `out` by one thread; the tile is indexed within its bounds.
    unsafe { stencil.launch(Cpu, tiles, &x, &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [ROWS, COLUMNS])?)? };
    assert_eq!(out, stencil_reference(&x), "the stencil agrees with Rust");
    println!("stencil on the CPU: {} blocks of {TILE}x{TILE}, out(1, 1) = {}", tiles.blocks(), out[COLUMNS + 1]);

    let mut sums = vec![0.0f32; ROWS];
    let rows = LaunchConfig::for_extent_2d([ROWS, COLUMNS], [4, 32])?;
    // SAFETY: guarded by the extents; `sums` is written with atomics only.
    unsafe { row_sum.launch(Cpu, rows, &x, &mut HostMdspanMut::<f32, 1>::from_slice(&mut sums, [ROWS])?)? };
    // Integer values: every order of the additions gives the same sum.
    let expected: Vec<f32> = (0..ROWS).map(|i| (0..COLUMNS).map(|j| x[[i, j]]).sum()).collect();
    assert_eq!(sums, expected);
    println!("row sums on the CPU: {:?}..", &sums[..4]);

    let f: Vec<f32> = (0..ROWS * COLUMNS).map(|k| k as f32 * 0.5).collect();
    let h: Vec<f16> = f.iter().map(|&v| f16::from_f32(v)).collect();
    let b: Vec<bf16> = f.iter().map(|&v| bf16::from_f32(v)).collect();
    let px: Vec<Rgba> = (0..ROWS * COLUMNS).map(|k| Rgba { r: k as u8, g: (k >> 8) as u8, b: 7, a: 255 }).collect();
    assert_eq!(flip_on_cpu(&f)?, flipped(&f));
    assert_eq!(flip_on_cpu(&h)?, flipped(&h));
    assert_eq!(flip_on_cpu(&b)?, flipped(&b));
    assert_eq!(flip_on_cpu(&px)?, flipped(&px));
    println!("flip on the CPU: f32, f16, bf16 and Rgba images agree with Rust");

    #[cfg(feature = "cuda")]
    gpu::run(&data, &out, &sums, &px)?;
    #[cfg(not(feature = "cuda"))]
    println!("GPU: built without feature `cuda` (cargo run --example raw_kernels --features cuda)");
    Ok(())
}

#[cfg(feature = "cuda")]
mod gpu {
    //! The same kernels on a CUDA stream, compared with the CPU's results.
    use super::{COLUMNS, ROWS, Rgba, TILE, flip, row_sum, stencil};
    use dlspan::cuda::{Gpu, device_count};
    use dlspan::kernel::LaunchConfig;
    use dlspan::{DeviceMdspan, DeviceMdspanMut, HostMdspan, HostMdspanMut, LayoutStride, Mapping};

    pub(super) fn run(
        data: &[f32],
        stenciled: &[f32],
        sums: &[f32],
        px: &[Rgba],
    ) -> Result<(), Box<dyn std::error::Error>> {
        if device_count() == 0 {
            println!("GPU: no CUDA device, the GPU part is skipped");
            return Ok(());
        }
        let stream = Gpu::new(0)?.new_stream()?;
        let mut ddata = stream.alloc_zeros::<f32>(data.len())?;
        stream.copy_from_host(
            &HostMdspan::<f32, 1>::from_slice(data, [data.len()])?,
            &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut ddata, [data.len()])?,
        )?;
        let mapping =
            Mapping::<2, dlspan::Dims<2>, LayoutStride>::from_strides([ROWS, COLUMNS], [2 * COLUMNS as isize, 2])?;
        let x = DeviceMdspan::<f32, 2, LayoutStride>::from_cuda_mapping(&ddata, mapping)?;
        let mut dout = stream.alloc_zeros::<f32>(ROWS * COLUMNS)?;
        let tiles = LaunchConfig::for_extent_2d([ROWS, COLUMNS], [TILE, TILE])?;
        // SAFETY: as on the CPU.
        unsafe {
            stencil.launch(
                &stream,
                tiles,
                &x,
                &mut DeviceMdspanMut::<f32, 2>::from_cuda(&mut dout, [ROWS, COLUMNS])?,
            )?
        };
        let mut back = vec![0.0f32; ROWS * COLUMNS];
        stream.copy_to_host(
            &DeviceMdspan::<f32, 2>::from_cuda(&dout, [ROWS, COLUMNS])?,
            &mut HostMdspanMut::<f32, 2>::from_slice(&mut back, [ROWS, COLUMNS])?,
        )?;
        assert_eq!(back, stenciled, "the stencil on the GPU agrees with the CPU");
        println!("stencil on the GPU: the same {} elements as the CPU", back.len());

        let mut dsums = stream.alloc_zeros::<f32>(ROWS)?;
        let rows = LaunchConfig::for_extent_2d([ROWS, COLUMNS], [4, 32])?;
        // SAFETY: as on the CPU.
        unsafe { row_sum.launch(&stream, rows, &x, &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut dsums, [ROWS])?)? };
        let mut back = vec![0.0f32; ROWS];
        stream.copy_to_host(
            &DeviceMdspan::<f32, 1>::from_cuda(&dsums, [ROWS])?,
            &mut HostMdspanMut::<f32, 1>::from_slice(&mut back, [ROWS])?,
        )?;
        assert_eq!(back, sums, "the row sums on the GPU agree with the CPU");
        println!("row sums on the GPU: the same {} sums as the CPU", back.len());

        let mut dpx = stream.alloc_zeros::<Rgba>(px.len())?;
        stream.copy_from_host(
            &HostMdspan::<Rgba, 1>::from_slice(px, [px.len()])?,
            &mut DeviceMdspanMut::<Rgba, 1>::from_cuda(&mut dpx, [px.len()])?,
        )?;
        let mut dflipped = stream.alloc_zeros::<Rgba>(px.len())?;
        let config = LaunchConfig::for_extent_2d([ROWS, COLUMNS], [8, 32])?;
        // SAFETY: as on the CPU.
        unsafe {
            flip.launch(
                &stream,
                config,
                &DeviceMdspan::<Rgba, 2>::from_cuda(&dpx, [ROWS, COLUMNS])?,
                &mut DeviceMdspanMut::<Rgba, 2>::from_cuda(&mut dflipped, [ROWS, COLUMNS])?,
            )?;
        }
        let mut back = vec![Rgba::default(); px.len()];
        stream.copy_to_host(
            &DeviceMdspan::<Rgba, 2>::from_cuda(&dflipped, [ROWS, COLUMNS])?,
            &mut HostMdspanMut::<Rgba, 2>::from_slice(&mut back, [ROWS, COLUMNS])?,
        )?;
        assert_eq!(back, super::flipped(px), "the flip on the GPU agrees with the CPU");
        println!("flip on the GPU: the same {} pixels as the CPU", back.len());
        Ok(())
    }
}
