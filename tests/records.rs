//! Member views of `#[repr(C)]` records: strided views of one field of every record, zero-copy,
//! mutable, nested, and exported to DLPack with the member's position in `byte_offset`.

use dlspan::dtype::F32x4;
use dlspan::*;

#[derive(Clone, Copy, Debug, PartialEq, DlRecord)]
#[repr(C)]
struct Particle {
    position: [f32; 3],
    mass: f32,
    id: u32,
    charge: f32,
}

fn particles(n: u32) -> Vec<Particle> {
    (0..n)
        .map(|i| Particle { position: [i as f32, 0.0, -(i as f32)], mass: 1.5 * i as f32, id: 100 + i, charge: -1.0 })
        .collect()
}

#[test]
fn member_constants() {
    assert_eq!((Particle::POSITION.offset(), Particle::POSITION.stride()), (0, 2));
    assert_eq!((Particle::MASS.offset(), Particle::MASS.stride()), (3, 6));
    assert_eq!((Particle::ID.offset(), Particle::CHARGE.offset()), (4, 5));
}

#[test]
fn member_views_read_every_record() {
    let data = particles(6);
    let records = HostMdspan::<Particle, 2>::from_slice(&data, [2, 3]).unwrap();
    let ids = records.member(Particle::ID);
    assert_eq!((ids.extents(), ids.strides(), ids.offset()), ([2, 3], [18, 6], 4));
    assert_eq!(ids.to_vec(), [100, 101, 102, 103, 104, 105]);
    assert_eq!(ids[[1, 2]], 105);
    let positions = records.member(Particle::POSITION);
    assert_eq!(positions[[0, 1]], [1.0, 0.0, -1.0]);
    // A member of a sub-view, and of a reversed relaxed view of records.
    assert_eq!(records.subview((1..2, 1..)).member(Particle::MASS).to_vec(), [6.0, 7.5]);
    let reversed = HostMdspan::<Particle, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [6], [-1], 5).unwrap();
    assert_eq!(reversed.member(Particle::ID).to_vec(), [105, 104, 103, 102, 101, 100]);
}

#[test]
fn member_views_write_in_place() {
    let mut data = particles(4);
    let mut records = HostMdspanMut::<Particle, 1>::from_slice(&mut data, [4]).unwrap();
    records.member_mut(Particle::CHARGE).iter_mut().for_each(|q| *q = 2.0);
    let mut masses = records.into_member(Particle::MASS);
    masses[[3]] = 99.0;
    assert_eq!(data.iter().map(|p| p.charge).collect::<Vec<_>>(), [2.0; 4]);
    assert_eq!(data[3].mass, 99.0);
    assert_eq!(data[3].id, 103, "neighbouring fields untouched");
}

#[test]
fn member_views_export_with_byte_offset() {
    let data = particles(5);
    let records = HostMdspan::<Particle, 1>::from_slice(&data, [5]).unwrap();
    let masses = records.member(Particle::MASS);
    let dl = to_dlpack_tensor(&masses).unwrap();
    let tensor = dl.get();
    assert_eq!(tensor.data, data.as_ptr().cast_mut().cast(), "data is the record buffer");
    assert_eq!((tensor.byte_offset, dl.strides()), (12, &[6]));
    // A relaxed consumer and a strict one read the same values.
    // SAFETY: the export describes `data`, alive and unwritten here.
    let relaxed = unsafe { to_host_mdspan::<f32, 1, LayoutStrideRelaxed>(&tensor) }.unwrap();
    // SAFETY: as above.
    let strict = unsafe { to_host_mdspan::<f32, 1, LayoutStride>(&tensor) }.unwrap();
    assert_eq!(relaxed.to_vec(), [0.0, 1.5, 3.0, 4.5, 6.0]);
    assert_eq!(strict.to_vec(), relaxed.to_vec());
    // An owned copy of a member view.
    let owned = masses.to_managed_tensor(CopyMode::Always).unwrap();
    assert_eq!(owned.view::<f32, 1, LayoutRight>().unwrap().to_vec(), relaxed.to_vec());
}

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct Vertex {
    position: F32x4,
    normal: F32x4,
}

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct Edge {
    from: Vertex,
    to: Vertex,
}

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct Tagged {
    value: f32,
    #[dl(skip)]
    _tag: [u8; 3],
    weight: u8,
}

#[test]
fn nested_records_and_vector_members() {
    let vertices: Vec<Vertex> = (0..3)
        .map(|i| Vertex { position: F32x4::from([i as f32; 4]), normal: F32x4::from([0.0, 0.0, 1.0, 0.0]) })
        .collect();
    let view = HostMdspan::<Vertex, 1>::from_slice(&vertices, [3]).unwrap();
    let normals = view.member(Vertex::NORMAL);
    assert_eq!((normals.strides(), normals.offset()), ([2], 1));
    assert!(normals.iter().all(|n| n.z == 1.0));
    let dl = to_dlpack_tensor(&normals).unwrap();
    assert_eq!(dl.get().dtype, F32x4::DTYPE);

    let edges: Vec<Edge> = (0..2).map(|i| Edge { from: vertices[i], to: vertices[i + 1] }).collect();
    let edges = HostMdspan::<Edge, 1>::from_slice(&edges, [2]).unwrap();
    let ends = edges.member(Edge::TO).member(Vertex::POSITION);
    assert_eq!((ends.strides(), ends.offset()), ([4], 2));
    assert_eq!(ends.to_vec().iter().map(|p| p.x).collect::<Vec<_>>(), [1.0, 2.0]);

    let tagged: Vec<Tagged> = (0..2).map(|i| Tagged { value: 0.5, _tag: [0; 3], weight: i as u8 + 7 }).collect();
    let tagged = HostMdspan::<Tagged, 1>::from_slice(&tagged, [2]).unwrap();
    assert_eq!(tagged.member(Tagged::WEIGHT).to_vec(), [7, 8]);
    assert_eq!(tagged.member(Tagged::WEIGHT).strides(), [8]);
}

#[test]
fn members_of_views_with_extreme_unit_strides() {
    // Found while auditing stride arithmetic: a stride of an axis of extent 1 reaches nothing and may be
    // isize::MAX, and scaling it to the member overflowed (a debug build panicked).
    #[derive(Clone, Copy, DlRecord)]
    #[repr(C)]
    struct Pair {
        a: u32,
        b: u32,
    }
    let pairs = [Pair { a: 1, b: 10 }, Pair { a: 2, b: 20 }, Pair { a: 3, b: 30 }];
    let view =
        HostMdspan::<Pair, 2, LayoutStrideRelaxed>::from_slice_relaxed(&pairs, [1, 3], [isize::MAX, 1], 0).unwrap();
    let b = view.member(Pair::B);
    assert_eq!(b.to_vec(), [10, 20, 30]);
    assert_eq!(b.stride(1), 2);
}
