//! How a kernel call reaches its views: the [`Executor`] that runs it ([`Cpu`](super::Cpu), or a
//! CUDA `Stream`), the views it accepts ([`Read`], [`Write`]), and the shape the views are
//! broadcast to.
//!
//! A call hands its views to the executor as a tuple of `&view` and `&mut view` ([`ViewArgs`]):
//! `&` for the views it reads, `&mut` for those it writes, so the borrow checker refuses the same
//! mutable view twice, and a view the executor cannot reach (a host view on a stream) is a
//! compile error at the argument. Each view becomes an [`Operand`]: its first element's address,
//! extents and strides widened to the output's rank, and what the executor needs besides (the
//! device and ordering of a device view).

use super::def::{Call, ElementwiseDef};
use super::raw::{KernelError, MAX_RAW_RANK, RawInstance, RawKind};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::space::MemorySpace;
use crate::view::{Extents, Layout, Mapping, Mdspan, MdspanMut};
use core::mem::size_of;

pub(crate) mod sealed {
    /// Seals the executor and view traits: dlspan defines which views each executor reaches.
    pub trait Sealed {}
}

/// What runs an element-wise kernel: [`Cpu`](super::Cpu) (host and managed views, the kernel's Rust
/// body), `&cuda::Stream` (device and managed views, the body's CUDA translation, launched on the
/// stream) or `cuda::HostTranslation` (host and managed views, the CUDA translation built for the
/// host: the GPU's code checked without a GPU). Sealed.
pub trait Executor: Copy + sealed::Sealed {
    /// What a refused or failed run reports: [`DlpackError`] on the CPU, `cuda::CudaError` on a
    /// stream.
    type Error: From<DlpackError>;

    /// What the executor needs of each view besides its address, extents and strides.
    #[doc(hidden)]
    type Extra<'a>: Copy;

    /// Runs a kernel over `operands` (declaration order); `body` computes one element, given its
    /// references in declaration order (the CPU calls it, from several threads for a large call;
    /// a stream launches the translation).
    #[doc(hidden)]
    fn run_views<const R: usize, const N: usize, V: ViewArgs<Self, R, N>>(
        self,
        call: &Call<'_>,
        operands: [Operand<'_, Self, R>; N],
        body: impl for<'a> Element<V::Items<'a>>,
    ) -> Result<(), Self::Error>;

    /// What a refused or failed raw kernel launch reports: [`KernelError`](super::KernelError) on
    /// the CPU, `cuda::CudaError` on a stream.
    type RawError: From<super::raw::KernelError> + From<DlpackError>;

    /// Runs a raw kernel's instantiation over `views` (declaration order) and `scalars`
    /// (declaration order) with `config`.
    ///
    /// # Safety
    ///
    /// The kernel's body accesses only elements of its views within their extents, writes only the
    /// views it declares `&mut`, and its threads do not race but through atomics.
    #[doc(hidden)]
    unsafe fn run_raw(
        self,
        instance: super::raw::RawInstance,
        config: &super::raw::LaunchConfig,
        views: &mut [RawArg<'_, Self>],
        scalars: &[&[u8]],
    ) -> Result<(), Self::RawError>;
}

/// A view's memory as a kernel walks it: the address of index `[0; R]`, the extents and strides
/// (in elements) widened to the output's rank `R`, and the element size.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawOperand<const R: usize> {
    /// Address of the element at index `[0; R]` (dangling for an empty view).
    pub ptr: *mut u8,
    /// Extents, the view's own right-aligned, 1 on the axes it lacks.
    pub extents: [usize; R],
    /// Strides in elements, 0 on the axes it lacks (and, after [`broadcast`], on every axis of
    /// extent 1 that the output spans further).
    pub strides: [isize; R],
    /// Element size in bytes.
    pub size: usize,
}

/// One view of a call, for executor `E`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a, E: Executor, const R: usize> {
    /// The memory.
    pub raw: RawOperand<R>,
    /// Whether the kernel writes it.
    pub writes: bool,
    /// The view's own number of axes: `R`, or fewer for a read view, which broadcasts along the
    /// leading axes it lacks.
    pub rank: usize,
    /// What the executor needs besides.
    pub extra: E::Extra<'a>,
}

/// A view's raw operand at rank `R` from its own rank `Q` (`Q <= R`, checked at compile time).
pub(crate) fn widen<T, const Q: usize, const R: usize, E: Extents<Q>, L: Layout>(
    ptr: *const T,
    mapping: &Mapping<Q, E, L>,
) -> RawOperand<R> {
    const {
        assert!(
            Q <= R,
            "an input view has more axes than the kernel's output: element-wise kernels broadcast inputs to the output's shape"
        )
    };
    let (own_extents, own_strides) = (mapping.extents(), mapping.strides());
    let mut extents = [1usize; R];
    let mut strides = [0isize; R];
    extents[R - Q..].copy_from_slice(&own_extents);
    strides[R - Q..].copy_from_slice(&own_strides);
    let first = ptr.wrapping_add(mapping.offset()).cast::<u8>().cast_mut();
    RawOperand { ptr: first, extents, strides, size: size_of::<T>() }
}

/// Checks the operands of a call of `def` (its views, in declaration order) against the shape of
/// its first written view, and broadcasts the inputs to it: the shape. Written views must have it
/// exactly; an input's axis must have the shape's extent or 1 (then its stride becomes 0).
///
/// # Errors
///
/// [`DlpackError::KernelShapeMismatch`] naming the view and the first axis that differs, in the
/// output's numbering.
pub fn broadcast<E: Executor, const R: usize>(
    operands: &mut [Operand<'_, E, R>],
    def: &ElementwiseDef,
) -> Result<[usize; R], DlpackError> {
    let shape = operands[def.primary()].raw.extents;
    for (k, op) in operands.iter_mut().enumerate() {
        for (axis, &expected) in shape.iter().enumerate() {
            let found = op.raw.extents[axis];
            if found == expected {
                continue;
            }
            if found == 1 && !op.writes {
                op.raw.extents[axis] = expected;
                op.raw.strides[axis] = 0;
                continue;
            }
            let view = def.views().nth(k).map_or("?", |param| param.name);
            let axis = u32::try_from(axis).unwrap_or(u32::MAX);
            return Err(DlpackError::KernelShapeMismatch { view, axis, expected, found });
        }
    }
    Ok(shape)
}

/// Checks the operands of a call of `def` for [`run_exact`](ViewArgs::run_exact): no axis a view
/// has is broadcast from extent 1 (each is the first written view's extent); a read view of fewer
/// axes still broadcasts along the leading axes it lacks.
///
/// # Errors
///
/// [`DlpackError::KernelBroadcastRefused`] naming the view and the axis of extent 1;
/// [`DlpackError::KernelShapeMismatch`] for any other extent that differs.
pub(crate) fn exact<E: Executor, const R: usize>(
    operands: &[Operand<'_, E, R>],
    def: &ElementwiseDef,
) -> Result<(), DlpackError> {
    let shape = operands[def.primary()].raw.extents;
    for (k, op) in operands.iter().enumerate() {
        let own = R.saturating_sub(op.rank);
        for (axis, (&found, &expected)) in op.raw.extents.iter().zip(&shape).enumerate().skip(own) {
            if found == expected {
                continue;
            }
            let view = def.views().nth(k).map_or("?", |param| param.name);
            let axis = u32::try_from(axis).unwrap_or(u32::MAX);
            return Err(match found {
                1 => DlpackError::KernelBroadcastRefused { view, axis, expected },
                _ => DlpackError::KernelShapeMismatch { view, axis, expected, found },
            });
        }
    }
    Ok(())
}

/// A view an executor reads: shared and mutable views of the memory spaces it reaches (host and
/// managed views for [`Cpu`](super::Cpu); device and managed views for a CUDA stream), of rank up
/// to `R` (the kernel's output rank; fewer axes broadcast, NumPy's way).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a view that `{E}` runs kernels on",
    label = "not an operand of kernels run by `{E}`",
    note = "`dlspan::kernel::Cpu` runs kernels on host and managed views, a `cuda::Stream` on device and managed views",
    note = "copy host data to the device first (`Stream::copy_from_host`), or run the kernel with `dlspan::kernel::Cpu`"
)]
pub trait Read<E: Executor, const R: usize>: sealed::Sealed {
    /// The element type.
    type Elem: DlElement;

    /// The view as an operand the kernel reads.
    #[doc(hidden)]
    fn operand(&self) -> Operand<'_, E, R>;
}

/// A view an executor writes: mutable views of the spaces it reaches, of the output's rank `R`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a view that `{E}` writes in kernels",
    label = "not a mutable operand of kernels run by `{E}`",
    note = "written views are mutable views (`MdspanMut`) of the kernel's output rank (a raw kernel's: the declared rank): host or managed for `dlspan::kernel::Cpu`, device or managed for a `cuda::Stream`"
)]
pub trait Write<E: Executor, const R: usize>: Read<E, R> {
    /// The view as an operand the kernel writes.
    #[doc(hidden)]
    fn operand_mut(&mut self) -> Operand<'_, E, R>;
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed for Mdspan<'_, T, R, E, L, S> {}
impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed for MdspanMut<'_, T, R, E, L, S> {}

/// One argument of a call: `&view` (read) or `&mut view` (written).
///
/// # Safety
///
/// `item` and `run` hand out references to the elements of the view's operand: implementations
/// are dlspan's two (the executors rely on `WRITES` and on the references matching the operand).
#[doc(hidden)]
pub unsafe trait ViewRef<E: Executor, const R: usize> {
    /// The element type.
    type Elem: DlElement;
    /// What the body gets: `&Elem` or `&mut Elem`.
    type Item<'a>;
    /// A run of consecutive elements.
    type Run<'a>: Iterator<Item = Self::Item<'a>>;
    /// Whether the kernel writes the view.
    const WRITES: bool;

    /// The operand.
    fn operand(&mut self) -> Operand<'_, E, R>;

    /// The element at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is an element of the view's operand, valid (and, for written views, unaliased) for `'a`.
    unsafe fn item<'a>(ptr: *mut u8) -> Self::Item<'a>;

    /// The `len` consecutive elements from `ptr`.
    ///
    /// # Safety
    ///
    /// As for [`item`](Self::item), for each of the `len` elements.
    unsafe fn run<'a>(ptr: *mut u8, len: usize) -> Self::Run<'a>;

    /// Copies the `n` elements `src + k·step` (bytes) to the `n` places `dst + k·dst_step`: the
    /// CPU walk stages a run that is not contiguous (`dst_step` the element size), or a tile of
    /// such runs column by column, so that the body's loop is a loop over slices, which the
    /// compiler vectorises.
    ///
    /// # Safety
    ///
    /// Each `src + k·step` is an element of the view's operand, valid for reads; each
    /// `dst + k·dst_step` is valid for a write of an `Elem`, aligned for it, and overlaps none of
    /// them.
    #[inline(always)]
    unsafe fn gather(src: *mut u8, step: isize, n: usize, dst: *mut u8, dst_step: isize) {
        for k in 0..n {
            let from = src.wrapping_offset(step.wrapping_mul(k as isize)).cast::<Self::Elem>();
            let to = dst.wrapping_offset(dst_step.wrapping_mul(k as isize)).cast::<Self::Elem>();
            // SAFETY: the caller's contract: an element of the operand (`Elem: Copy`, so a bitwise
            // copy is a value of its own).
            let value = unsafe { from.read() };
            // SAFETY: the caller's contract: a place of the staging buffer.
            unsafe { to.write(value) };
        }
    }

    /// For a written view, copies the `n` staged elements `src + k·src_step` back to
    /// `dst + k·step` (bytes); a read view's staged copy is dropped (nothing to do).
    ///
    /// # Safety
    ///
    /// Each `src + k·src_step` holds an initialised element (a [`gather`](Self::gather)ed one the
    /// body may have written); each `dst + k·step` is an element of the view's operand, valid for
    /// writes and unaliased, overlapping none of them.
    #[inline(always)]
    unsafe fn scatter(src: *mut u8, src_step: isize, dst: *mut u8, step: isize, n: usize) {
        if !Self::WRITES {
            return;
        }
        for k in 0..n {
            let from = src.wrapping_offset(src_step.wrapping_mul(k as isize)).cast::<Self::Elem>();
            let to = dst.wrapping_offset(step.wrapping_mul(k as isize)).cast::<Self::Elem>();
            // SAFETY: the caller's contract: a staged element, initialised.
            let value = unsafe { from.read() };
            // SAFETY: the caller's contract: an element of the operand, unaliased.
            unsafe { to.write(value) };
        }
    }
}

/// The bytes of one operand's staging buffer on the CPU (a run that is not contiguous copied into
/// it, at most this many bytes at a time).
pub(crate) const STAGE_BYTES: usize = 2048;

/// Whether a `T` can be staged: aligned within the buffer's 64 bytes, and at least sixteen of them
/// to a buffer (larger elements are walked in place).
pub(crate) const fn stage_fits<T>() -> bool {
    core::mem::align_of::<T>() <= 64 && core::mem::size_of::<T>() <= STAGE_BYTES / 16
}

// SAFETY: references to elements of a view the caller borrows shared.
unsafe impl<Ex: Executor, const R: usize, X: Read<Ex, R>> ViewRef<Ex, R> for &X {
    type Elem = X::Elem;
    type Item<'a> = &'a X::Elem;
    type Run<'a> = core::slice::Iter<'a, X::Elem>;
    const WRITES: bool = false;

    #[inline(always)]
    fn operand(&mut self) -> Operand<'_, Ex, R> {
        (**self).operand()
    }

    #[inline(always)]
    unsafe fn item<'a>(ptr: *mut u8) -> &'a X::Elem {
        // SAFETY: the caller's contract: a live element, read shared.
        unsafe { &*ptr.cast::<X::Elem>() }
    }

    #[inline(always)]
    unsafe fn run<'a>(ptr: *mut u8, len: usize) -> core::slice::Iter<'a, X::Elem> {
        // SAFETY: the caller's contract: `len` consecutive live elements.
        unsafe { core::slice::from_raw_parts(ptr.cast::<X::Elem>(), len) }.iter()
    }
}

// SAFETY: references to elements of a view the caller borrows uniquely (mutable views' elements are
// distinct, and no other argument can reach them: the borrow checker holds the view).
unsafe impl<Ex: Executor, const R: usize, X: Write<Ex, R>> ViewRef<Ex, R> for &mut X {
    type Elem = X::Elem;
    type Item<'a> = &'a mut X::Elem;
    type Run<'a> = core::slice::IterMut<'a, X::Elem>;
    const WRITES: bool = true;

    #[inline(always)]
    fn operand(&mut self) -> Operand<'_, Ex, R> {
        (**self).operand_mut()
    }

    #[inline(always)]
    unsafe fn item<'a>(ptr: *mut u8) -> &'a mut X::Elem {
        // SAFETY: the caller's contract: a live element, unaliased for `'a`.
        unsafe { &mut *ptr.cast::<X::Elem>() }
    }

    #[inline(always)]
    unsafe fn run<'a>(ptr: *mut u8, len: usize) -> core::slice::IterMut<'a, X::Elem> {
        // SAFETY: the caller's contract: `len` consecutive live elements, unaliased for `'a`.
        unsafe { core::slice::from_raw_parts_mut(ptr.cast::<X::Elem>(), len) }.iter_mut()
    }
}

/// A kernel's body on one element, as an `elementwise!` kernel implements it for its own unit
/// struct: `P` the kernel's type parameters (a tuple), `S` its scalar arguments (a tuple, in
/// declaration order), `I` the references to the element of each view (declaration order).
///
/// A nominal type's method, not a closure: the CPU walk calls the body through
/// [`Element::call`], and every step down to the body is `#[inline(always)]`, so the body is
/// inlined into each vector build of the walk whatever its size. A closure is inlined only within
/// LLVM's cost limit; one left out (a softplus, `ln(1 + exp(x))`, was) is compiled for the
/// baseline CPU and called once per element, its fused multiply-adds calls of libm's `fmaf`.
#[doc(hidden)]
pub trait Body<P, S, I> {
    /// The body on one element.
    fn call(&self, scalars: &S, items: I);
}

/// What the CPU walk calls per element: a kernel's [`Body`] with its scalar arguments.
#[doc(hidden)]
pub trait Element<I>: Sync {
    /// The body on one element.
    fn call(&self, items: I);
}

/// A kernel with its scalar arguments `S`, for its type parameters `P`: the [`Element`] a call
/// hands its executor.
#[doc(hidden)]
pub struct Bound<'k, K, P, S> {
    kernel: &'k K,
    scalars: S,
    params: core::marker::PhantomData<fn() -> P>,
}

impl<'k, K, P, S> Bound<'k, K, P, S> {
    /// `kernel` with its scalar arguments.
    #[inline(always)]
    pub fn new(kernel: &'k K, scalars: S) -> Self {
        Self { kernel, scalars, params: core::marker::PhantomData }
    }
}

impl<K: Body<P, S, I> + Sync, P, S: Sync, I> Element<I> for Bound<'_, K, P, S> {
    #[inline(always)]
    fn call(&self, items: I) {
        self.kernel.call(&self.scalars, items)
    }
}

/// The view arguments of a call, as a tuple in declaration order: `(&x, &y, &mut out)`.
///
/// # Safety
///
/// As [`ViewRef`], for each element of the tuple: implemented by dlspan for tuples of one to
/// [`MAX_VIEWS`](super::MAX_VIEWS) view arguments.
#[doc(hidden)]
pub unsafe trait ViewArgs<E: Executor, const R: usize, const N: usize>: Sized {
    /// The references the body gets, in declaration order.
    type Items<'a>;

    /// The operands, in declaration order.
    fn operands(&mut self) -> [Operand<'_, E, R>; N];

    /// The elements at `ptrs` (one per view).
    ///
    /// # Safety
    ///
    /// Each pointer is an element of its view's operand, valid for `'a` as [`ViewRef::item`] says.
    unsafe fn items<'a>(ptrs: [*mut u8; N]) -> Self::Items<'a>;

    /// Calls `body` on `len` consecutive elements from each pointer.
    ///
    /// # Safety
    ///
    /// As [`items`](Self::items), for each of the `len` elements of each view.
    unsafe fn for_each_run(ptrs: [*mut u8; N], len: usize, body: &impl for<'a> Element<Self::Items<'a>>);

    /// Whether every view's element type can be staged ([`stage_fits`]).
    const STAGED: bool;

    /// [`ViewRef::gather`] of the view at position `k`.
    ///
    /// # Safety
    ///
    /// As [`ViewRef::gather`], for that view; `k < N`.
    unsafe fn gather(k: usize, src: *mut u8, step: isize, n: usize, dst: *mut u8, dst_step: isize);

    /// [`ViewRef::scatter`] of the view at position `k`.
    ///
    /// # Safety
    ///
    /// As [`ViewRef::scatter`], for that view; `k < N`.
    unsafe fn scatter(k: usize, src: *mut u8, src_step: isize, dst: *mut u8, step: isize, n: usize);

    /// Runs the call on `on`: the views checked, broadcast and walked or launched.
    #[inline(always)]
    fn run(mut self, on: E, call: &Call<'_>, body: impl for<'a> Element<Self::Items<'a>>) -> Result<(), E::Error> {
        let operands = self.operands();
        on.run_views::<R, N, Self>(call, operands, body)
    }

    /// As [`run`](Self::run), refusing views broadcast from extent 1 ([`exact`]).
    #[inline(always)]
    fn run_exact(
        mut self,
        on: E,
        call: &Call<'_>,
        body: impl for<'a> Element<Self::Items<'a>>,
    ) -> Result<(), E::Error> {
        let operands = self.operands();
        exact(&operands, call.instance.def())?;
        on.run_views::<R, N, Self>(call, operands, body)
    }
}

macro_rules! view_args {
    ($n:literal: $($v:ident $i:tt),+) => {
        // SAFETY: each element forwards to its `ViewRef`, whose contract the callers keep.
        unsafe impl<Ex: Executor, const R: usize, $($v: ViewRef<Ex, R>),+> ViewArgs<Ex, R, $n> for ($($v,)+) {
            type Items<'a> = ($($v::Item<'a>,)+);

            #[inline(always)]
            fn operands(&mut self) -> [Operand<'_, Ex, R>; $n] {
                [$(self.$i.operand()),+]
            }

            #[inline(always)]
            unsafe fn items<'a>(ptrs: [*mut u8; $n]) -> Self::Items<'a> {
                // SAFETY: forwarded to each view.
                unsafe { ($($v::item(ptrs[$i]),)+) }
            }

            #[inline(always)]
            #[allow(non_snake_case)]
            unsafe fn for_each_run(ptrs: [*mut u8; $n], len: usize, body: &impl for<'a> Element<Self::Items<'a>>) {
                // SAFETY: forwarded to each view.
                let ($($v,)+) = unsafe { ($($v::run(ptrs[$i], len),)+) };
                view_args!(@zip body; $($v),+);
            }

            const STAGED: bool = $(stage_fits::<$v::Elem>())&&+;

            #[inline(always)]
            unsafe fn gather(k: usize, src: *mut u8, step: isize, n: usize, dst: *mut u8, dst_step: isize) {
                $(if k == $i {
                    // SAFETY: forwarded to the view at `k`.
                    return unsafe { $v::gather(src, step, n, dst, dst_step) };
                })+
            }

            #[inline(always)]
            unsafe fn scatter(k: usize, src: *mut u8, src_step: isize, dst: *mut u8, step: isize, n: usize) {
                $(if k == $i {
                    // SAFETY: forwarded to the view at `k`.
                    return unsafe { $v::scatter(src, src_step, dst, step, n) };
                })+
            }
        }
    };
    // `for` loops, not `for_each` with a closure: the body's call is inlined however large it is
    // (`Element::call` and what it calls are `#[inline(always)]`), where a closure would be
    // inlined only within LLVM's cost limit.
    (@zip $body:ident; $a:ident) => { for a in $a { $body.call((a,)) } };
    (@zip $body:ident; $a:ident, $b:ident) => { for (a, b) in $a.zip($b) { $body.call((a, b)) } };
    (@zip $body:ident; $a:ident, $b:ident, $c:ident) => {
        for ((a, b), c) in $a.zip($b).zip($c) { $body.call((a, b, c)) }
    };
    (@zip $body:ident; $a:ident, $b:ident, $c:ident, $d:ident) => {
        for (((a, b), c), d) in $a.zip($b).zip($c).zip($d) { $body.call((a, b, c, d)) }
    };
    (@zip $body:ident; $a:ident, $b:ident, $c:ident, $d:ident, $e:ident) => {
        for ((((a, b), c), d), e) in $a.zip($b).zip($c).zip($d).zip($e) { $body.call((a, b, c, d, e)) }
    };
    (@zip $body:ident; $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident) => {
        for (((((a, b), c), d), e), f) in $a.zip($b).zip($c).zip($d).zip($e).zip($f) {
            $body.call((a, b, c, d, e, f))
        }
    };
    (@zip $body:ident; $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident) => {
        for ((((((a, b), c), d), e), f), g) in $a.zip($b).zip($c).zip($d).zip($e).zip($f).zip($g) {
            $body.call((a, b, c, d, e, f, g))
        }
    };
    (@zip $body:ident; $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident) => {
        for (((((((a, b), c), d), e), f), g), h) in $a.zip($b).zip($c).zip($d).zip($e).zip($f).zip($g).zip($h) {
            $body.call((a, b, c, d, e, f, g, h))
        }
    };
}

view_args!(1: A 0);
view_args!(2: A 0, B 1);
view_args!(3: A 0, B 1, C 2);
view_args!(4: A 0, B 1, C 2, D 3);
view_args!(5: A 0, B 1, C 2, D 3, F 4);
view_args!(6: A 0, B 1, C 2, D 3, F 4, G 5);
view_args!(7: A 0, B 1, C 2, D 3, F 4, G 5, H 6);
view_args!(8: A 0, B 1, C 2, D 3, F 4, G 5, H 6, I 7);

/// A view argument of a raw kernel: its operand at its own rank, rank-erased.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct RawArg<'a, E: Executor> {
    /// The address of the element at index `[0; rank]`.
    pub ptr: *mut u8,
    /// The rank.
    pub rank: usize,
    /// Extents (the first `rank`).
    pub extents: [usize; MAX_RAW_RANK],
    /// Strides in elements (the first `rank`).
    pub strides: [isize; MAX_RAW_RANK],
    /// Whether the kernel may write it.
    pub writes: bool,
    /// What the executor needs besides.
    pub extra: E::Extra<'a>,
}

impl<'a, E: Executor> RawArg<'a, E> {
    /// The argument of an operand of rank `R`.
    #[inline]
    pub fn of<const R: usize>(op: Operand<'a, E, R>) -> Self {
        const { assert!(R <= MAX_RAW_RANK, "raw kernels take views of at most 16 axes") };
        let mut extents = [0usize; MAX_RAW_RANK];
        let mut strides = [0isize; MAX_RAW_RANK];
        extents[..R].copy_from_slice(&op.raw.extents);
        strides[..R].copy_from_slice(&op.raw.strides);
        Self { ptr: op.raw.ptr, rank: R, extents, strides, writes: op.writes, extra: op.extra }
    }
}

/// The argument block of a launch: each view's address, extents and strides and each scalar's
/// bytes at the offsets [`RawInstance::argument_layout`] gives.
///
/// # Errors
///
/// As [`RawInstance::argument_layout`].
#[doc(hidden)]
pub fn argument_block<E: Executor>(
    instance: &RawInstance,
    views: &[RawArg<'_, E>],
    scalars: &[&[u8]],
    addresses: impl Fn(&RawArg<'_, E>) -> u64,
) -> Result<Vec<u8>, KernelError> {
    let (offsets, size) = instance.argument_layout()?;
    let mut block = vec![0u8; size];
    let (mut v, mut s) = (views.iter(), scalars.iter());
    for (p, &off) in instance.def().params.iter().zip(&offsets) {
        match p.kind {
            RawKind::Scalar => {
                let bytes = s.next().expect("one scalar per scalar parameter");
                block[off..off + bytes.len()].copy_from_slice(bytes);
            }
            RawKind::Read | RawKind::Write => {
                let view = v.next().expect("one view per view parameter");
                block[off..off + 8].copy_from_slice(&addresses(view).to_ne_bytes());
                for k in 0..view.rank {
                    let at = off + 8 + 8 * k;
                    block[at..at + 8].copy_from_slice(&(view.extents[k] as i64).to_ne_bytes());
                    let at = off + 8 + 8 * (view.rank + k);
                    block[at..at + 8].copy_from_slice(&(view.strides[k] as i64).to_ne_bytes());
                }
            }
        }
    }
    Ok(block)
}
