//! Alignment in the view type (`Aligned`, `mdspan!(..; align = N)`): the import checks it after
//! every import rule and names the required and the found alignment; owned buffers and view copies
//! satisfy it; sub-views keep it only when their first element is aligned; empty views are
//! vacuously aligned; managed tensors, exports and device views carry it.

mod support;

use dlspan::view::AlignedView;
use dlspan::*;
use support::Crafted;

/// A 256-byte aligned buffer of `u32` values 0, 1, 2, …
fn buffer() -> AlignedBuffer<u32, 256> {
    AlignedBuffer::from_fn(64, |i| i as u32)
}

/// Imports `t` as an aligned shared host view of rank 2 and layout `L`.
fn import<L: Layout, const ALIGN: usize>(t: &mut Crafted) -> Result<Vec<u32>, DlpackError> {
    let tensor = t.tensor();
    // SAFETY: `t` describes the test's live buffer (or fails before reading it).
    let view = unsafe { Aligned::<HostMdspan<'_, u32, 2, L>, ALIGN>::from_dltensor(&tensor) }?;
    Ok(view.to_vec())
}

#[test]
fn import_checks_the_first_element_and_names_both_alignments() {
    let data = buffer();
    let base = data.as_ptr();
    let mut t = Crafted::cpu(base, &[2, 4], Some(&[4, 1]));
    assert_eq!(import::<LayoutRight, 256>(&mut t).unwrap(), [0, 1, 2, 3, 4, 5, 6, 7]);
    // 12 bytes in: aligned to 4.
    t.byte_offset = 12;
    let err = import::<LayoutRight, 16>(&mut t).unwrap_err();
    assert_eq!(err, DlpackError::Underaligned { address: base.addr() + 12, required: 16, found: 4 });
    assert!(import::<LayoutRight, 4>(&mut t).is_ok());
    // 32 bytes in: aligned to 32, not 64.
    t.byte_offset = 32;
    assert!(matches!(
        import::<LayoutStride, 64>(&mut t),
        Err(DlpackError::Underaligned { required: 64, found: 32, .. })
    ));
    assert!(import::<LayoutStride, 32>(&mut t).is_ok());
}

#[test]
fn relaxed_views_align_their_first_element_not_their_base() {
    let data = buffer();
    // Rows reversed: the first element (index [0, 0]) is the last row's, 48 bytes after the base.
    let mut t = Crafted::cpu(data.as_ptr(), &[4, 4], Some(&[-4, 1]));
    t.byte_offset = 48;
    let err = import::<LayoutStrideRelaxed, 64>(&mut t).unwrap_err();
    assert!(matches!(err, DlpackError::Underaligned { required: 64, found: 16, .. }), "{err:?}");
    assert_eq!(import::<LayoutStrideRelaxed, 16>(&mut t).unwrap()[..4], [12, 13, 14, 15]);
}

#[test]
fn alignment_is_checked_after_every_import_rule() {
    let data = buffer();
    // Misaligned for the element itself: rule I8 reports it, not the type's alignment.
    let mut t = Crafted::cpu(data.as_ptr(), &[2, 2], Some(&[2, 1]));
    t.byte_offset = 2;
    assert!(matches!(import::<LayoutRight, 64>(&mut t), Err(DlpackError::Misaligned { alignment: 4, .. })));
    // Under-aligned and wrong strides: the stride rule comes first.
    let mut t = Crafted::cpu(data.as_ptr(), &[2, 2], Some(&[3, 1]));
    t.byte_offset = 4;
    assert!(matches!(import::<LayoutRight, 64>(&mut t), Err(DlpackError::StridesIncompatible { .. })));
    // A tensor with no elements is aligned, whatever its data pointer.
    let mut empty = Crafted::cpu(core::ptr::null::<u32>(), &[0, 4], Some(&[4, 1]));
    assert_eq!(import::<LayoutRight, 4096>(&mut empty).unwrap(), Vec::<u32>::new());
}

#[test]
fn managed_tensors_and_copies_satisfy_the_buffers_alignment() {
    let tensor = ManagedTensor::from_owner(buffer(), [8, 8]).unwrap();
    let view = tensor.view_as::<Aligned<HostMdspan<'_, u32, 2>, 256>>().unwrap();
    assert_eq!(view[[7, 7]], 63);
    // A copy of any view is exported from a 64-byte aligned buffer.
    let strided = view.subview((1..3, ..));
    let copy = strided.to_managed_tensor(CopyMode::Always).unwrap();
    let copied = copy.view_as::<mdspan!(u32; dyn, dyn; align = 64)>().unwrap();
    assert_eq!(copied.to_vec(), strided.to_vec());

    // Mutable aligned views of a managed tensor keep READ_ONLY.
    let mut writable = ManagedTensor::from_owner(AlignedBuffer::<f32>::zeroed(4), [4]).unwrap();
    writable.view_mut_as::<mdspan!(mut f32; 4; align = 64)>().unwrap()[[3]] = 1.0;
    assert_eq!(writable.view::<f32, 1, LayoutRight>().unwrap().to_vec(), [0.0, 0.0, 0.0, 1.0]);
    let mut shared = ManagedTensor::from_owner(std::sync::Arc::<[f32]>::from([0.0f32; 4]), [4]).unwrap();
    assert!(matches!(shared.view_mut_as::<mdspan!(mut f32; dyn; align = 4)>(), Err(DlpackError::ReadOnly)));
}

#[test]
fn sub_views_keep_the_alignment_only_where_it_holds() {
    let mut data = AlignedBuffer::<f32, 64>::zeroed(64);
    let matrix = data.view([4, 16]).unwrap();
    // Every row starts a multiple of 64 bytes in; columns 0..16 and 0..k keep the first element.
    for i in 0..4 {
        let row = matrix.subview_aligned((i..i + 1, ..4)).unwrap();
        assert_eq!(row.first_element_address().unwrap() % 64, 0);
    }
    for j in 1..16 {
        let shifted = matrix.subview_aligned((.., j..));
        let found = 1 << (4 * j).trailing_zeros();
        assert!(matches!(shifted, Err(DlpackError::Underaligned { required: 64, found: f, .. }) if f == found));
    }
    // Ranges are still checked first.
    assert!(matches!(matrix.subview_aligned((.., 3..20)), Err(DlpackError::SubviewOutOfBounds { axis: 1, .. })));
    // An empty sub-view is aligned.
    assert!(matrix.subview_aligned((.., 5..5)).is_ok());
    // Rows through the axis iterator, re-stated.
    assert!(matrix.outer_iter().all(|row| Aligned::<_, 64>::new(row).is_ok()));
    assert_eq!(matrix.axis_iter(1).filter(|column| Aligned::<_, 64>::new(*column).is_ok()).count(), 1);

    // The mutable form writes through `view_mut` and `IndexMut`, and keeps its alignment on reborrows.
    let mut matrix = data.view_mut([4, 16]).unwrap();
    matrix[[1, 1]] = 2.0;
    matrix.view_mut().subview_mut((2.., ..)).iter_mut().for_each(|x| *x = 1.0);
    let again: mdspan!(mut f32; dyn, dyn; align = 64) = matrix.reborrow();
    assert_eq!(again.subview_aligned((1.., ..)).unwrap().sum(), 34.0);
    let shared: Aligned<HostMdspan<'_, f32, 2>, 64> = matrix.into();
    assert_eq!(shared.sum(), 34.0);
}

#[test]
fn exports_and_device_views_carry_it() {
    let data = buffer();
    let view = data.view([4, 16]).unwrap();
    let dl = to_dlpack_tensor(&view).unwrap();
    let tensor = dl.get();
    assert_eq!((tensor.data.addr() % 256, dl.shape()), (0, &[4, 16]));
    // SAFETY: the export describes `data`, alive and unwritten here.
    let back = unsafe { Aligned::<HostMdspan<'_, u32, 2>, 256>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(back.to_vec(), view.to_vec());

    let gpu = std::ptr::without_provenance::<f32>(0x7f00_0000_0100); // a device address, never read
    let map = Mapping::compact([4, 8]).unwrap();
    // SAFETY: the address stands for 32 floats of device 1; nothing on the host reads them.
    let device: DeviceMdspan<'_, f32, 2> = unsafe { DeviceMdspan::from_raw_parts(gpu, map, 1) };
    let aligned = Aligned::<_, 256>::new(device).unwrap();
    assert_eq!(aligned.ordinal(), 1);
    assert!(matches!(Aligned::<_, 512>::new(device), Err(DlpackError::Underaligned { found: 256, .. })));
}

#[test]
fn aligned_views_are_what_the_macro_spells() {
    fn same<T>(_: &T, _: &T) {}
    let data = buffer();
    let view: Aligned<HostMdspan<'_, u32, 2>, 128> = Aligned::new(data.view([8, 8]).unwrap().into_inner()).unwrap();
    let spelled: mdspan!(u32; dyn, dyn; align = 128) = view;
    same(&view, &spelled);
    fn send_sync<T: Send + Sync>() {}
    send_sync::<mdspan!(&'static mut f64; 4, 4; align = 32)>();
    assert_eq!(format!("{view:?}").split_once('{').unwrap().0.trim(), "Aligned");
}
