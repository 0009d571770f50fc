//! Every view made from a device view keeps its origin: the ordinal, and the ordering event of the
//! cudarc allocation it borrows (rule C6). A path that dropped the event would hand out a view of
//! cudarc memory that kernels use unordered with the allocation's other uses and its free. Imports
//! carry no event. The event here is a stand-in address, never read.

use crate::dtype::Float4E2m1fn;
use crate::ffi::DLDeviceType;
use crate::space::{Device, DeviceOrigin, MemorySpace, OrderEvent};
use crate::view::{
    Dims, DynMdspan, DynMdspanMut, LayoutRight, LayoutStride, LayoutStrideRelaxed, Mapping, Mdspan, MdspanMut,
    PackedMdspan,
};
use core::ptr::NonNull;

static EVENT: u64 = 0;

fn tracked() -> DeviceOrigin {
    DeviceOrigin { ordinal: 3, order: Some(OrderEvent(NonNull::from(&EVENT).cast())) }
}

#[derive(Clone, Copy, crate::DlRecord)]
#[repr(C)]
struct Pair {
    a: f32,
    b: f32,
}

#[test]
fn shared_views_made_from_a_device_view_keep_its_origin() {
    let data = [0f32; 24];
    // SAFETY: 24 elements behind the pointer for the test; device views never read them on the host.
    let view: Mdspan<'_, f32, 3, Dims<3>, LayoutRight, Device> = unsafe {
        Mdspan::from_parts_unchecked(NonNull::from(&data).cast(), Mapping::compact([2, 3, 4]).unwrap(), tracked())
    };
    assert_eq!((view.ordinal(), view.device().device_type), (3, DLDeviceType::kDLCUDA));
    let mut origins = vec![
        view.origin(),
        view.subview((.., 1.., ..2)).origin(),
        view.index_axis::<2>(1, 2).origin(),
        view.into_dyn().origin(),
        view.into_layout::<LayoutStride>().unwrap().origin(),
        view.into_layout::<LayoutStrideRelaxed>().unwrap().subview((1.., .., ..)).origin(),
    ];
    origins.extend(view.outer_iter::<2>().map(|row| row.origin()));
    origins.extend(view.axis_iter::<2>(2).map(|column| column.origin()));
    let dynamic = DynMdspan::from(view);
    assert_eq!(dynamic.ordinal(), 3);
    origins.push(dynamic.typed::<f32, 3, LayoutStride>().unwrap().origin());
    origins.push(dynamic.typed::<f32, 3, LayoutRight>().unwrap().subview((.., 2.., ..)).origin());
    assert_eq!(origins.len(), 6 + 2 + 4 + 2);
    assert!(origins.iter().all(|&origin| origin == tracked()), "{origins:?}");
}

#[test]
fn mutable_record_and_packed_views_keep_the_origin() {
    let mut data = [0f32; 12];
    // SAFETY: as above, and the array is reached through this view only.
    let mut view: MdspanMut<'_, f32, 2, Dims<2>, LayoutRight, Device> = unsafe {
        MdspanMut::from_parts_unchecked(NonNull::from(&mut data).cast(), Mapping::compact([3, 4]).unwrap(), tracked())
    };
    let mut origins = vec![
        view.as_view().origin(),
        view.reborrow().origin(),
        view.subview_mut((1.., ..)).origin(),
        view.index_axis_mut::<1>(0, 2).origin(),
    ];
    origins.extend(view.outer_iter_mut::<1>().map(|row| row.origin()));
    origins.extend(view.axis_iter_mut::<1>(1).map(|column| column.origin()));
    let mut dynamic = DynMdspanMut::from(view.reborrow());
    origins.push(dynamic.typed_mut::<f32, 2, LayoutRight>().unwrap().origin());
    origins.push(dynamic.into_typed::<f32, 2, LayoutRight>().unwrap().into_view().origin());
    assert_eq!(origins.len(), 4 + 3 + 4 + 2);
    assert!(origins.iter().all(|&origin| origin == tracked()), "{origins:?}");

    let mut pairs = [Pair { a: 0.0, b: 0.0 }; 4];
    // SAFETY: as above.
    let mut records: MdspanMut<'_, Pair, 1, Dims<1>, LayoutRight, Device> = unsafe {
        MdspanMut::from_parts_unchecked(NonNull::from(&mut pairs).cast(), Mapping::compact([4]).unwrap(), tracked())
    };
    assert_eq!(records.as_view().member(Pair::B).origin(), tracked());
    assert_eq!(records.member_mut(Pair::A).origin(), tracked());
    assert_eq!(records.into_member(Pair::B).origin(), tracked());

    let bytes = [0u8; 4];
    // SAFETY: eight FP4 values in the four bytes, as above.
    let packed: PackedMdspan<'_, Float4E2m1fn, 1, Dims<1>, LayoutRight, Device> = unsafe {
        PackedMdspan::from_validated(NonNull::from(&bytes).cast(), 0, Mapping::compact([8]).unwrap(), tracked())
    };
    assert_eq!(packed.origin(), tracked());
    let dynamic = DynMdspan::from(packed);
    assert_eq!(dynamic.typed_packed::<Float4E2m1fn, 1, LayoutRight>().unwrap().origin(), tracked());
}

#[test]
fn imported_device_memory_carries_no_event() {
    assert_eq!(Device::origin(2), DeviceOrigin { ordinal: 2, order: None });
    assert_eq!(Device::ordinal_of(tracked()), 3);
    let data = [0f32; 4];
    let (mut shape, mut strides) = ([4i64], [1i64]);
    let tensor = crate::ffi::DLTensor {
        data: data.as_ptr().cast_mut().cast(),
        device: crate::ffi::DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 2 },
        ndim: 1,
        dtype: <f32 as crate::DlElement>::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    // SAFETY: the tensor describes `data`, never read on the host through a device view.
    let view = unsafe { crate::to_device_mdspan::<f32, 1, LayoutRight>(&tensor) }.unwrap();
    assert_eq!(view.origin(), Device::origin(2));
    // SAFETY: as above.
    let dynamic = unsafe { DynMdspan::<Device>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(dynamic.typed::<f32, 1, LayoutRight>().unwrap().origin(), Device::origin(2));
}

/// A managed tensor orders the device views it lends by an event of its own (rule C6): every view
/// type `view_as` can give takes the event through `FromDlTensor::with_order`; host views ignore it.
#[test]
fn every_view_type_takes_a_lending_event() {
    use crate::FromDlTensor;
    let order = tracked().order.unwrap();
    let data = [0f32; 4];
    let bytes = [0u8; 2];
    let (mut shape, mut strides) = ([4i64], [1i64]);
    let device = crate::ffi::DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 3 };
    let mut tensor = |data: *const u8, dtype| crate::ffi::DLTensor {
        data: data.cast_mut().cast(),
        device,
        ndim: 1,
        dtype,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    let floats = tensor(data.as_ptr().cast(), <f32 as crate::DlElement>::DTYPE);
    let packed = tensor(bytes.as_ptr(), <Float4E2m1fn as crate::DlElement>::DTYPE);
    let options = crate::ImportOptions::CURRENT;
    // SAFETY: the tensors describe `data` and `bytes`, never read on the host through device views.
    let shared = unsafe { Mdspan::<f32, 1, Dims<1>, LayoutRight, Device>::from_dltensor_with(&floats, options) };
    assert_eq!(shared.unwrap().with_order(order).origin(), tracked());
    // SAFETY: as above.
    let mutable = unsafe { MdspanMut::<f32, 1, Dims<1>, LayoutRight, Device>::from_dltensor_with(&floats, options) };
    assert_eq!(mutable.unwrap().with_order(order).origin(), tracked());
    // SAFETY: as above.
    let dynamic = unsafe { DynMdspan::<Device>::from_dltensor_with(&floats, options) }.unwrap().with_order(order);
    assert_eq!(dynamic.typed::<f32, 1, LayoutRight>().unwrap().origin(), tracked());
    // SAFETY: as above.
    let mut dynamic =
        unsafe { DynMdspanMut::<Device>::from_dltensor_with(&floats, options) }.unwrap().with_order(order);
    assert_eq!(dynamic.typed_mut::<f32, 1, LayoutRight>().unwrap().origin(), tracked());
    // SAFETY: as above.
    let packed_view =
        unsafe { PackedMdspan::<Float4E2m1fn, 1, Dims<1>, LayoutRight, Device>::from_dltensor_with(&packed, options) };
    assert_eq!(packed_view.unwrap().with_order(order).origin(), tracked());
    // SAFETY: as above.
    let aligned = unsafe {
        crate::Aligned::<Mdspan<f32, 1, Dims<1>, LayoutRight, Device>, 4>::from_dltensor_with(&floats, options)
    };
    assert_eq!(aligned.unwrap().with_order(order).into_inner().origin(), tracked());
    // Host views carry no event: the order is not theirs to keep.
    let host = crate::HostMdspan::<f32, 1>::from_slice(&data, [4]).unwrap();
    assert_eq!(FromDlTensor::with_order(host, order).origin(), ());
}
