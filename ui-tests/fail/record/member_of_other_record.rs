// Rule: a member constant only views records of its own type.
use dlspan::{DlRecord, HostMdspan};

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct A {
    x: f32,
}

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct B {
    x: f32,
}

fn main() {
    let data = [A { x: 1.0 }];
    let view = HostMdspan::<A, 1>::from_slice(&data, [1]).unwrap();
    let _ = view.member(B::X);
}
