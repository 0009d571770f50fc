//! Lanes regrouped (rule V9): the last axis of a view as the lanes of one element (an H×W×3 image
//! as H×W pixels), and back, with every rule of the result's type, layout and extents.

use dlspan::dtype::{Bool, F32x4, I32x2};
use dlspan::*;

#[derive(Clone, Copy, Debug, PartialEq, DlElement)]
#[repr(C)]
struct Rgb {
    r: f32,
    g: f32,
    b: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, DlElement)]
#[repr(C)]
struct Flags {
    a: bool,
    b: bool,
}

fn image(h: usize, w: usize) -> Vec<f32> {
    (0..h * w * 3).map(|v| v as f32).collect()
}

#[test]
fn an_image_is_a_view_of_pixels_in_every_layout_that_keeps_channels_adjacent() {
    let data = image(3, 4);
    let img = HostMdspan::<f32, 3>::from_slice(&data, [3, 4, 3]).unwrap();
    let pixels: HostMdspan<Rgb, 2> = img.group_lanes().unwrap();
    assert_eq!(pixels.extents(), [3, 4]);
    for i in 0..3 {
        for j in 0..4 {
            let p = pixels[[i, j]];
            assert_eq!([p.r, p.g, p.b], [img[[i, j, 0]], img[[i, j, 1]], img[[i, j, 2]]]);
        }
    }
    // Sub-views: a block of pixels (strided), static extents, rows reversed (relaxed).
    let block: HostMdspan<Rgb, 2, LayoutStride> = img.subview((1..3, 1..3, ..)).group_lanes().unwrap();
    assert_eq!(block[[1, 1]], pixels[[2, 2]]);
    let fixed: mdspan!(Rgb; 3, 4) = img.group_lanes().unwrap();
    assert_eq!(fixed[[2, 3]], pixels[[2, 3]]);
    assert!(matches!(
        img.group_lanes::<Rgb, 2, (Static<3>, Static<5>), LayoutRight>(),
        Err(DlpackError::ExtentMismatch { axis: 1, expected: 5, found: 4 })
    ));
    let flipped =
        HostMdspan::<f32, 3, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3, 4, 3], [-12, 3, 1], 24).unwrap();
    let flipped: HostMdspan<Rgb, 2, LayoutStrideRelaxed> = flipped.group_lanes().unwrap();
    assert_eq!(flipped[[0, 1]], pixels[[2, 1]]);
    // A strided block is no compact image: LayoutRight refuses it, as an import would.
    let not_compact = img.subview((.., 1..3, ..)).group_lanes::<Rgb, 2, Dims<2>, LayoutRight>();
    assert!(matches!(not_compact, Err(DlpackError::StridesIncompatible { .. })), "{not_compact:?}");
    // An empty image has no pixels.
    let empty: HostMdspan<Rgb, 2> = HostMdspan::<f32, 3>::from_slice(&[], [0, 4, 3]).unwrap().group_lanes().unwrap();
    assert_eq!(empty.extents(), [0, 4]);
}

#[test]
fn what_cannot_be_one_element_is_refused_by_name() {
    let data = image(2, 2);
    let img = HostMdspan::<f32, 3>::from_slice(&data, [2, 2, 3]).unwrap();
    // Channels first (planar): the last axis's values are not adjacent.
    let planar = HostMdspan::<f32, 3, LayoutStride>::from_slice_strided(&data, [2, 2, 3], [2, 1, 4]).unwrap();
    assert_eq!(
        planar.group_lanes::<Rgb, 2, Dims<2>, LayoutStride>().map(|_| ()),
        Err(DlpackError::LanesNotGroupable { axis: 2, stride: 4, lanes: 3 })
    );
    // Two channels of three: the pixel steps are not whole pairs.
    assert_eq!(
        img.subview((.., .., 1..3)).group_lanes::<I32x2, 2, Dims<2>, LayoutStride>().map(|_| ()),
        Err(DlpackError::LanesNotGroupable { axis: 1, stride: 3, lanes: 2 })
    );
    // Three f32 values are no pair of i32, nor four f32.
    let wrong = img.group_lanes::<I32x2, 2, Dims<2>, LayoutStride>().map(|_| ());
    assert!(matches!(wrong, Err(DlpackError::DtypeMismatch { .. })), "{wrong:?}");
    let wrong = img.group_lanes::<F32x4, 2, Dims<2>, LayoutStride>().map(|_| ());
    assert!(matches!(wrong, Err(DlpackError::DtypeMismatch { .. })), "{wrong:?}");
    // float4 is 16-byte aligned: a group starting 4 bytes into an aligned buffer is refused.
    let aligned = dlspan::AlignedBuffer::<f32, 64>::zeroed(9);
    let shifted = HostMdspan::<f32, 2>::from_slice(&aligned[1..9], [2, 4]).unwrap();
    let misaligned = shifted.group_lanes::<F32x4, 1, Dims<1>, LayoutRight>().map(|_| ());
    assert!(matches!(misaligned, Err(DlpackError::Misaligned { .. })), "{misaligned:?}");
    let fine: HostMdspan<F32x4, 1> =
        HostMdspan::<f32, 2>::from_slice(&aligned[..8], [2, 4]).unwrap().group_lanes().unwrap();
    assert_eq!(fine.extents(), [2]);
}

#[test]
fn bool_lanes_are_checked_as_an_import_checks_them() {
    // `Bool` takes any byte; a struct of `bool`s does not (rule I18).
    let bytes = [Bool::from_bits(1), Bool::from_bits(0), Bool::from_bits(2), Bool::from_bits(1)];
    let any = HostMdspan::<Bool, 2>::from_slice(&bytes, [2, 2]).unwrap();
    let err = any.group_lanes::<Flags, 1, Dims<1>, LayoutRight>().map(|_| ());
    assert_eq!(err, Err(DlpackError::InvalidBool { found: 2 }));
    let good = [Bool::from_bits(1), Bool::from_bits(0)];
    let flags: HostMdspan<Flags, 1> = HostMdspan::<Bool, 2>::from_slice(&good, [1, 2]).unwrap().group_lanes().unwrap();
    assert_eq!(flags[[0]], Flags { a: true, b: false });
}

#[test]
fn pixels_are_written_in_place_and_split_back() {
    let mut data = vec![0.0f32; 2 * 3 * 3];
    {
        let img = HostMdspanMut::<f32, 3>::from_slice(&mut data, [2, 3, 3]).unwrap();
        let mut pixels: HostMdspanMut<Rgb, 2> = img.into_grouped_lanes().unwrap();
        pixels[[1, 2]] = Rgb { r: 1.0, g: 2.0, b: 3.0 };
        let channels: HostMdspanMut<f32, 3> = pixels.into_split_lanes().unwrap();
        assert_eq!(channels.extents(), [2, 3, 3]);
    }
    assert_eq!(data[15..18], [1.0, 2.0, 3.0]);
    // Splitting and grouping again give the same view, strides and offset included.
    let data = image(3, 4);
    let img = HostMdspan::<f32, 3, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3, 2, 3], [-12, 6, 1], 24).unwrap();
    let pixels: HostMdspan<Rgb, 2, LayoutStrideRelaxed> = img.group_lanes().unwrap();
    let back: HostMdspan<f32, 3, LayoutStrideRelaxed> = pixels.split_lanes().unwrap();
    assert_eq!((back.extents(), back.strides()), (img.extents(), img.strides()));
    assert_eq!(back.to_vec(), img.to_vec());
    // A vector type's lanes: float4 as four float32, or two pairs of float32.
    let vectors = [F32x4::from([1.0, 2.0, 3.0, 4.0])];
    let v = HostMdspan::<F32x4, 1>::from_slice(&vectors, [1]).unwrap();
    let pairs: HostMdspan<dtype::F32x2, 2> = v.split_lanes().unwrap();
    assert_eq!(pairs[[0, 1]].x, 3.0);
    let wrong = v.split_lanes::<i32, 2, Dims<2>, LayoutRight>().map(|_| ());
    assert!(matches!(wrong, Err(DlpackError::DtypeMismatch { .. })), "{wrong:?}");
}

#[test]
fn a_row_broadcast_over_one_index_groups_for_writing() {
    // An axis of one index may have any stride, a zero one included: nothing repeats.
    let mut data = [0.0f32; 3];
    let broadcast =
        HostMdspanMut::<f32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut data, [1, 3], [0, 1], 0).unwrap();
    let pixels: HostMdspanMut<Rgb, 1, LayoutStrideRelaxed> = broadcast.into_grouped_lanes().unwrap();
    assert_eq!(pixels.extents(), [1]);
}

#[test]
fn grouped_views_export_what_they_view() {
    let data = image(2, 2);
    let img = HostMdspan::<f32, 3>::from_slice(&data, [2, 2, 3]).unwrap();
    let pixels: HostMdspan<Rgb, 2, LayoutStride> = img.subview((.., 1..2, ..)).group_lanes().unwrap();
    let dl = to_dlpack_tensor(&pixels).unwrap();
    let t = dl.get();
    assert_eq!((t.dtype.code, t.dtype.bits, t.dtype.lanes), (2, 32, 3));
    assert_eq!((dl.shape(), dl.strides()), (&[2i64, 1], &[2i64, 1]));
    assert_eq!(t.data.cast::<f32>().cast_const(), data[3..].as_ptr());
}

/// Two lanes of `dtype::Bool`, which take any byte.
#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct AnyFlags {
    a: Bool,
    b: Bool,
}

#[test]
fn writes_that_could_break_rust_bools_are_refused() {
    // A mutable view of any-byte lanes over Rust `bool`s could write 2 into them.
    let mut data = [false; 2];
    let flags = HostMdspanMut::<bool, 1>::from_slice(&mut data, [2]).unwrap();
    let grouped = flags.into_grouped_lanes::<AnyFlags, 0, Dims<0>, LayoutRight>().map(|_| ());
    assert_eq!(grouped, Err(DlpackError::UncheckedWrites));
    let mut pairs = [Flags { a: false, b: true }; 2];
    let pairs_view = HostMdspanMut::<Flags, 1>::from_slice(&mut pairs, [2]).unwrap();
    let split = pairs_view.into_split_lanes::<Bool, 2, Dims<2>, LayoutRight>().map(|_| ());
    assert_eq!(split, Err(DlpackError::UncheckedWrites));
    // The same through a dynamic view made from a `bool` view.
    let dynamic: DynMdspanMut<'_> = HostMdspanMut::<bool, 1>::from_slice(&mut data, [2]).unwrap().into();
    assert_eq!(dynamic.into_typed::<Bool, 1, LayoutRight>().map(|_| ()), Err(DlpackError::UncheckedWrites));
    // Another type is its own mismatch, not a matter of validity.
    let mut dynamic: DynMdspanMut<'_> = HostMdspanMut::<bool, 1>::from_slice(&mut data, [2]).unwrap().into();
    let other = dynamic.typed_mut::<u8, 1, LayoutRight>().map(|_| ());
    assert!(matches!(other, Err(DlpackError::DtypeMismatch { .. })), "{other:?}");
    let flags = HostMdspanMut::<bool, 2>::from_slice(&mut data, [1, 2]).unwrap();
    let other = flags.into_grouped_lanes::<dtype::U8x2, 1, Dims<1>, LayoutRight>().map(|_| ());
    assert!(matches!(other, Err(DlpackError::DtypeMismatch { .. })), "{other:?}");
    // Reading is fine, and so are writes of `bool` lanes over `Bool` memory (checked bytes).
    let read: HostMdspan<AnyFlags, 0> = HostMdspan::<bool, 1>::from_slice(&data, [2]).unwrap().group_lanes().unwrap();
    assert!(!read[[]].a.get());
    let mut any = [Bool::from_bits(1), Bool::from_bits(0)];
    let view = HostMdspanMut::<Bool, 1>::from_slice(&mut any, [2]).unwrap();
    let mut checked: HostMdspanMut<Flags, 0> = view.into_grouped_lanes().unwrap();
    checked[[]].b = true;
    assert_eq!(any.map(Bool::to_bits), [1, 1]);
}

#[test]
fn counts_and_strides_beyond_what_dlpack_states_are_errors() {
    // No element has zero lanes.
    let empty = HostMdspan::<f32, 2>::from_slice(&[], [2, 0]).unwrap();
    let zero = empty.group_lanes::<Rgb, 1, Dims<1>, LayoutStride>().map(|_| ());
    assert!(matches!(zero, Err(DlpackError::DtypeMismatch { found, .. }) if found.lanes == 0), "{zero:?}");
    // An axis of one index may have any stride: beyond i64 once counted in lanes, it is refused.
    let data = [dtype::F32x2::default(); 2];
    let odd = HostMdspan::<dtype::F32x2, 2, LayoutStride>::from_slice_strided(&data, [1, 2], [isize::MAX / 2 + 7, 1]);
    let split = odd.unwrap().split_lanes::<f32, 3, Dims<3>, LayoutStride>().map(|_| ());
    assert_eq!(split, Err(DlpackError::SpanOverflow));
}
