// Rule: generated code uses absolute paths only: it compiles without the prelude.
#![no_implicit_prelude]

extern crate dlspan;
extern crate std;

#[derive(::std::clone::Clone, ::std::marker::Copy, ::dlspan::DlElement)]
#[repr(transparent)]
struct Meters(f32);

#[derive(::std::clone::Clone, ::std::marker::Copy, ::dlspan::DlElement)]
#[repr(C, align(8))]
struct Float2 {
    x: f32,
    y: f32,
}

#[derive(::std::clone::Clone, ::std::marker::Copy, ::dlspan::DlElement)]
#[dl(code = kDLFloat8_e4m3fn, bits = 8)]
#[repr(transparent)]
struct E4m3(u8);

fn main() {
    let _ = <Meters as ::dlspan::DlElement>::DTYPE;
    let _ = <Float2 as ::dlspan::DlElement>::DTYPE;
    let _ = <E4m3 as ::dlspan::DlElement>::DTYPE;
}
