//! One random launch of a kernel and its expected result: random extents and layouts (transposes,
//! reversed and broadcast axes, gaps), a poisoned output buffer, and the CPU reference computed
//! through dlspan's host views. The host-logic and GPU tiers run the same cases.

use super::{Layout, Rng, TestElement, random_extents, random_layout};
use dlspan::cuda::KernelKind;
use dlspan::dtype::Numeric;
use dlspan::{HostMdspan, HostMdspanMut, LayoutStrideRelaxed};

/// A launch of `Out` from `In` at rank `R`.
pub struct Case<Out, In, const R: usize> {
    pub extents: [usize; R],
    /// The output view's layout in `poisoned`.
    pub out_layout: Layout<R>,
    /// The output buffer before the launch: random values, which elements outside the view keep.
    pub poisoned: Vec<Out>,
    /// The input views' layouts in their buffers (zero strides broadcast).
    pub in_layouts: Vec<Layout<R>>,
    pub in_buffers: Vec<Vec<In>>,
    /// The scalar argument (fill value, `alpha`).
    pub scalar: Out,
}

/// The CPU reference of one output element: `(a, b, scalar, old output)` to the new output, with
/// `None` for the inputs an operation does not have.
pub type Reference<'a, Out, In> = &'a dyn Fn(Option<In>, Option<In>, Out, Out) -> Out;

impl<Out: TestElement, In: TestElement, const R: usize> Case<Out, In, R> {
    /// A random case of `kind`: extents up to `max_extent` per axis, input values from `value`.
    /// `axpy` and `scale` update their output in place: `axpy` reads one input besides, `scale`
    /// none.
    pub fn random(rng: &mut Rng, kind: KernelKind, max_extent: usize, value: fn(&mut Rng) -> In) -> Self {
        let inputs = match kind {
            KernelKind::Axpy => 1,
            KernelKind::Scale => 0,
            other => other.inputs(),
        };
        Self::with_inputs(rng, inputs, max_extent, value)
    }

    /// A random case with `inputs` input views.
    pub fn with_inputs(rng: &mut Rng, inputs: usize, max_extent: usize, value: fn(&mut Rng) -> In) -> Self {
        let extents = random_extents::<R>(rng, max_extent);
        let out_layout = random_layout(rng, extents, false);
        let in_layouts: Vec<Layout<R>> = (0..inputs).map(|_| random_layout(rng, extents, true)).collect();
        let in_buffers = in_layouts.iter().map(|l| (0..l.len).map(|_| value(rng)).collect()).collect();
        let poisoned = (0..out_layout.len).map(|_| Out::random(rng)).collect();
        let scalar = Out::random(rng);
        Self { extents, out_layout, poisoned, in_layouts, in_buffers, scalar }
    }

    /// The output buffer after the launch, by the CPU reference: every element of the output view
    /// computed by `reference` in logical order, the rest still poisoned.
    pub fn expected(&self, reference: Reference<'_, Out, In>) -> Vec<Out> {
        let mut expected = self.poisoned.clone();
        let mut out = HostMdspanMut::<Out, R, LayoutStrideRelaxed>::from_slice_relaxed(
            &mut expected,
            self.extents,
            self.out_layout.strides,
            self.out_layout.offset,
        )
        .expect("valid output layout");
        let views: Vec<HostMdspan<'_, In, R, LayoutStrideRelaxed>> = self
            .in_layouts
            .iter()
            .zip(&self.in_buffers)
            .map(|(l, buf)| {
                HostMdspan::from_slice_relaxed(buf, self.extents, l.strides, l.offset).expect("valid input layout")
            })
            .collect();
        let mut a = views.first().map(|v| v.iter());
        let mut b = views.get(1).map(|v| v.iter());
        for slot in out.iter_mut() {
            let x = a.as_mut().map(|it| *it.next().expect("same extents"));
            let y = b.as_mut().map(|it| *it.next().expect("same extents"));
            *slot = reference(x, y, self.scalar, *slot);
        }
        expected
    }
}

/// The reference of `copy` and `fill`, for any element type.
pub fn movement<T: Copy>(kind: KernelKind) -> impl Fn(Option<T>, Option<T>, T, T) -> T {
    move |a, _, scalar, _| match kind {
        KernelKind::Copy => a.expect("copy has an input"),
        KernelKind::Fill => scalar,
        other => panic!("{other} is not copy or fill"),
    }
}

/// The reference of `add`, `mul`, `scale` and `axpy` (wrapping integers, one rounding per operation;
/// `scale` and `axpy` update the output in place).
pub fn arithmetic<T: super::Arith>(kind: KernelKind) -> impl Fn(Option<T>, Option<T>, T, T) -> T {
    move |a, b, scalar, old| match kind {
        KernelKind::Add => a.expect("first input").add(b.expect("second input")),
        KernelKind::Mul => a.expect("first input").mul(b.expect("second input")),
        KernelKind::Scale => scalar.mul(old),
        KernelKind::Axpy => scalar.mul(a.expect("input")).add(old),
        other => panic!("{other} is not arithmetic"),
    }
}

/// The reference of `cast`: dlspan's CPU element cast.
pub fn cast<Out: Numeric, In: Numeric>(a: Option<In>, _: Option<In>, _: Out, _: Out) -> Out {
    dlspan::dtype::cast(a.expect("cast has an input"))
}
