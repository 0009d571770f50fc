// Rule: every mdspan! form names the view type it should, and all-dyn extents equal the conversions' type.
use dlspan::*;

fn same<T>(_: T, _: T) {}

type Tile<'a> = mdspan!(&'a f32; 4, 4);
type RowsMut<'a> = mdspan!(&'a mut u8; dyn, 4; layout = left);
type OnGpu<'a> = mdspan!(&'a f32; dyn, dyn; space = device, layout = stride);
type Managed3<'a> = mdspan!(&'a i64; dyn, dyn, dyn; space = managed, layout = stride_relaxed);
type Scalar<'a> = mdspan!(&'a f64;);
const N: usize = 3;
type Computed<'a> = mdspan!(&'a u8; { N * 2 }, dyn);

fn elided(view: mdspan!(f32; dyn, dyn)) -> HostMdspan<'_, f32, 2> {
    view
}

fn elided_mut(view: mdspan!(mut f32; 2, dyn)) -> MdspanMut<'_, f32, 2, (Static<2>, Dyn)> {
    view
}

fn main() {
    let data = [0.0f32; 16];
    let tile: Tile<'_> = Tile::from_array(&data);
    let plain: Mdspan<'_, f32, 2, (Static<4>, Static<4>), LayoutRight, Host> = tile;
    same(plain, tile);
    let dynamic: HostMdspan<'_, f32, 2> = HostMdspan::from_slice(&data, [4, 4]).unwrap();
    let _ = elided(dynamic);
    let mut bytes = [0u8; 8];
    let rows: RowsMut<'_> = RowsMut::from_slice(&mut bytes, [2, 4]).unwrap();
    let _: MdspanMut<'_, u8, 2, (Dyn, Static<4>), LayoutLeft, Host> = rows;
    let _: Option<OnGpu<'_>> = None::<DeviceMdspan<'_, f32, 2, LayoutStride>>;
    let _: Option<Managed3<'_>> = None::<ManagedMdspan<'_, i64, 3, LayoutStrideRelaxed>>;
    let one = [1.0f64];
    let s: Scalar<'_> = Scalar::from_slice(&one, []).unwrap();
    assert_eq!(s[[]], 1.0);
    let _: Option<Computed<'_>> = None::<Mdspan<'_, u8, 2, (Static<6>, Dyn)>>;
    let mut two = [0.0f32; 4];
    let m = MdspanMut::<f32, 2, (Static<2>, Dyn)>::from_slice(&mut two, [2, 2]).unwrap();
    let _ = elided_mut(m);
}
