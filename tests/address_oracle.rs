//! An address oracle for every conversion. Random `DLTensor`s (empty, broadcast, reversed, unit axes
//! with huge strides, offsets that put the last element on the last byte of the buffer) are
//! imported with every layout, and every pointer a view hands out is compared with the address
//! the oracle computes from the tensor's fields alone (`data + byte_offset + Σ i_k·s_k·size`):
//! element references from indexing, `get`, iterators and memory-order traversals, slices,
//! sub-views, `index_axis`, the axis iterators, ndarray views, exported `DLTensor`s and their
//! re-imports, mutable views, and managed copies and strided exports with raw round trips.
//!
//! Views whose elements lie in the test's buffer are read and written; the others (which a
//! caller's `unsafe` contract would not allow to exist) are only checked arithmetically. Run it
//! under AddressSanitizer to have every access checked against the buffer's bounds as well.

mod support;

use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
use dlspan::view::{LowerRank, Rank};
use dlspan::*;
use proptest::prelude::*;
use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The buffer's size in 8-byte words.
const WORDS: usize = 512;

/// Views checked against the oracle, and how many of them were in the buffer (read and written).
static CHECKED: AtomicUsize = AtomicUsize::new(0);
static IN_BUFFER: AtomicUsize = AtomicUsize::new(0);

/// Element types the test imports: values are read through the oracle's addresses and compared.
trait Elem: DlElement + PartialEq + Debug + Default {}
impl Elem for u8 {}
impl Elem for i32 {}
impl Elem for f64 {}

/// The address of every index of a tensor, from its fields alone (in `i128`: the oracle computes
/// what the tensor says even where that overflows an address).
#[derive(Clone, Debug)]
struct Oracle {
    /// The tensor's `data`: a relaxed view's base pointer, the start of what its import validated.
    data: usize,
    /// The address of index `[0; R]`: `data + byte_offset` for every layout.
    origin: i128,
    size: i128,
    extents: Vec<usize>,
    strides: Vec<i128>,
}

impl Oracle {
    fn is_empty(&self) -> bool {
        self.extents.contains(&0)
    }

    fn address(&self, index: &[usize]) -> usize {
        let offset: i128 = index.iter().zip(&self.strides).map(|(&i, &s)| i as i128 * s).sum();
        (self.origin + offset * self.size) as usize
    }

    /// The bytes the tensor's elements occupy, `[lo, hi)` (equal bounds for an empty tensor).
    fn span_wide(&self) -> (i128, i128) {
        if self.is_empty() {
            return (self.origin, self.origin);
        }
        let (mut low, mut high) = (0i128, 0i128);
        for (&e, &s) in self.extents.iter().zip(&self.strides) {
            let reach = (e as i128 - 1) * s;
            if reach < 0 { low += reach } else { high += reach }
        }
        (self.origin + low * self.size, self.origin + (high + 1) * self.size)
    }

    /// The span of a tensor a view was accepted for (it fits the address space).
    fn span(&self) -> (usize, usize) {
        let (lo, hi) = self.span_wide();
        (lo as usize, hi as usize)
    }
}

/// Every index of `extents` in row-major order (none when there are more than this many).
fn indices<const Q: usize>(extents: [usize; Q]) -> Vec<[usize; Q]> {
    support::indices(extents, 4096)
}

/// What a derived view's index is in the root tensor.
type ToRoot<'f> = &'f dyn Fn(&[usize]) -> Vec<usize>;

/// Checks of one view against the oracle of the root tensor it came from.
struct Check<'o> {
    oracle: &'o Oracle,
    /// Whether the root's elements lie in the buffer (then they are read and written).
    readable: bool,
}

impl Check<'_> {
    fn element<T>(&self, got: *const T, root: &[usize], what: &str) {
        let expected = self.oracle.address(root);
        assert_eq!(got as usize, expected, "{what}: index {root:?} of {:?}", self.oracle);
    }

    /// A pointer that is not dereferenced (a base, a slice end): it lies in `[lo, hi]`, or for a
    /// relaxed view's base between the tensor's `data` and `lo`.
    fn position<T>(&self, got: *const T, what: &str) {
        let (lo, hi) = self.oracle.span();
        let lo = lo.min(self.oracle.data);
        let got = got as usize;
        assert!(self.oracle.is_empty() || (lo..=hi).contains(&got), "{what}: {got:#x} outside [{lo:#x}, {hi:#x}]");
    }

    fn value<T: Elem>(&self, root: &[usize]) -> T {
        // SAFETY: only called for readable roots: the address is an element of the tensor, inside
        // the live buffer, aligned (the import checked the first element, the strides are whole
        // elements).
        unsafe { (self.oracle.address(root) as *const T).read() }
    }

    /// The address of every element of a view in any memory space, from its mapping (pointer
    /// arithmetic only: device views are never read on the host).
    fn arithmetic<T, const Q: usize, L: Layout, S: MemorySpace>(
        &self,
        view: &Mdspan<'_, T, Q, Dims<Q>, L, S>,
        to_root: ToRoot<'_>,
    ) {
        CHECKED.fetch_add(1, Ordering::Relaxed);
        for index in indices(view.extents()) {
            let offset = view.mapping().index_offset(index).expect("in bounds");
            let address = view.data_handle() as i128 + offset as i128 * size_of::<T>() as i128;
            self.element(address as *const T, &to_root(&index[..]), "mapping");
        }
    }

    /// Every pointer of a shared host view.
    fn shared<T: Elem, const Q: usize, L: Layout>(&self, view: &HostMdspan<'_, T, Q, L>, to_root: ToRoot<'_>)
    where
        Rank<Q>: PerRank<Q>,
    {
        CHECKED.fetch_add(1, Ordering::Relaxed);
        let all = indices(view.extents());
        if !view.is_empty() {
            self.position(view.data_handle(), "data_handle");
        }
        for index in &all {
            let root = to_root(index);
            self.element(view.get(*index).expect("in bounds"), &root, "get");
            self.element(&view[*index], &root, "index");
        }
        if all.len() != view.size() {
            return; // too large to enumerate
        }
        let roots: Vec<Vec<usize>> = all.iter().map(|i| to_root(i)).collect();
        // Logical order, element by element and folded.
        let mut it = view.iter();
        for root in &roots {
            self.element(it.next().expect("one element per index"), root, "iter");
        }
        assert!(it.next().is_none());
        let folded: Vec<usize> = view.iter().fold(Vec::new(), |mut v, x| {
            v.push(x as *const T as usize);
            v
        });
        let expected: Vec<usize> = roots.iter().map(|r| self.oracle.address(r)).collect();
        assert_eq!(folded, expected, "iter().fold");
        // Memory order: the same multiset of addresses.
        let mut unordered = view.fold_unordered(Vec::new(), |mut v, x| {
            v.push(x as *const T as usize);
            v
        });
        let mut sorted = expected.clone();
        unordered.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(unordered, sorted, "fold_unordered");
        if let Some(slice) = view.as_slice() {
            let mut sliced: Vec<usize> = slice.iter().map(|x| x as *const T as usize).collect();
            sliced.sort_unstable();
            assert_eq!(sliced, sorted, "as_slice");
        }
        if self.readable {
            let values: Vec<T> = roots.iter().map(|r| self.value(r)).collect();
            assert_eq!(view.to_vec(), values, "to_vec");
            assert_eq!(&*view.to_aligned_buffer::<64>(), &values[..], "to_aligned_buffer");
            self.managed(view, &values);
        }
        self.exported(view, to_root);
        <Rank<Q>>::ndarray(self, view, to_root);
    }

    /// The export describes the same addresses, and re-imports to the same view.
    fn exported<T: Elem, const Q: usize, L: Layout>(&self, view: &HostMdspan<'_, T, Q, L>, to_root: ToRoot<'_>) {
        let dl = to_dlpack_tensor(view).expect("a host view of a non-padded type exports");
        let tensor = dl.get();
        if view.is_empty() {
            assert!(tensor.data.is_null());
        }
        for index in indices(view.extents()) {
            let offset: i64 = index.iter().zip(dl.strides()).map(|(&i, &s)| i as i64 * s).sum();
            let address = tensor.data as i64 + tensor.byte_offset as i64 + offset * size_of::<T>() as i64;
            self.element(address as *const T, &to_root(&index[..]), "exported DLTensor");
        }
        // SAFETY: the export describes the view's elements, alive and unwritten during this call.
        let back = unsafe { to_host_mdspan::<T, Q, L>(&tensor) }.expect("an export re-imports with its layout");
        assert_eq!((back.extents(), back.strides(), back.offset()), (view.extents(), view.strides(), view.offset()));
        for index in indices(view.extents()) {
            self.element(&back[index], &to_root(&index[..]), "re-imported export");
        }
    }

    /// ndarray's pointers: every element, and every pointer ndarray may form by moving along its
    /// axes (its own safety rule, which holds for empty arrays too).
    #[cfg(feature = "ndarray")]
    fn ndarray_of_shared<T: Elem, const Q: usize, L: Layout>(&self, view: &HostMdspan<'_, T, Q, L>, to_root: ToRoot<'_>)
    where
        [usize; Q]: ndarray::IntoDimension<Dim = ndarray::Dim<[usize; Q]>>,
        ndarray::Dim<[usize; Q]>: ndarray::Dimension,
    {
        let array = view.to_ndarray();
        assert_eq!(array.shape(), &view.extents()[..]);
        let origin = array.as_ptr() as isize;
        let (mut low, mut high) = (origin, origin);
        for (&len, &stride) in array.shape().iter().zip(array.strides()) {
            let reach = len.saturating_sub(1) as isize * stride * size_of::<T>() as isize;
            if reach < 0 { low += reach } else { high += reach }
        }
        if view.is_empty() {
            assert_eq!((low, high), (origin, origin), "an empty ndarray view moves nowhere");
        } else {
            let (lo, hi) = self.oracle.span();
            assert!(lo as isize <= low && high < hi as isize, "ndarray reaches [{low:#x}, {high:#x}]");
        }
        for index in indices(view.extents()) {
            let element = &array[ndarray::Dim(index)];
            self.element(element, &to_root(&index[..]), "ndarray");
        }
    }

    /// Managed tensors: a copy, and a strided zero-copy export of a buffer holding the same
    /// elements at the same relative places, both through raw round trips.
    fn managed<T: Elem, const Q: usize, L: Layout>(&self, view: &HostMdspan<'_, T, Q, L>, values: &[T]) {
        let copy = view.to_managed_tensor(CopyMode::Always).expect("a host view copies");
        let raw = copy.into_raw_versioned();
        // SAFETY: a live export whose ownership passes here.
        let copy = unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap();
        assert_eq!(copy.view::<T, Q, LayoutRight>().unwrap().to_vec(), values, "managed copy");
        if view.is_empty() {
            return;
        }
        // The root's bytes [lo, hi) copied into an owner: the same mapping, offset from `lo`.
        let (lo, hi) = self.oracle.span();
        let size = size_of::<T>();
        let owner: Vec<T> = (lo..hi)
            .step_by(size)
            // SAFETY: [lo, hi) lies in the live buffer (a readable root); addresses are element aligned.
            .map(|address| unsafe { (address as *const T).read() })
            .collect();
        let first = view.data_handle() as usize + view.offset() * size;
        let offset = (first - lo) / size;
        let exported = ManagedTensor::from_owner_strided(owner, view.extents(), view.strides(), offset)
            .expect("a validated mapping over the elements it reaches exports");
        let legacy = exported.into_raw_legacy().map_err(|e| e.error()).unwrap();
        // SAFETY: a live export whose ownership passes here.
        let back = unsafe { ManagedTensor::from_raw_legacy(legacy) }.unwrap();
        let strided = back.view::<T, Q, LayoutStrideRelaxed>().unwrap();
        assert_eq!(strided.to_vec(), values, "strided managed export");
        let (data, length) = (back.dl_tensor().data as usize, (hi - lo) / size);
        for element in strided.iter() {
            let address = element as *const T as usize;
            assert!((data..data + length * size).contains(&address), "strided export reaches outside its owner");
        }
    }

    /// Every pointer of a mutable host view: each element is written once, where the oracle says.
    fn mutable<T: Elem, const Q: usize, L: Layout>(&self, mut view: HostMdspanMut<'_, T, Q, L>, to_root: ToRoot<'_>)
    where
        Rank<Q>: PerRank<Q>,
    {
        CHECKED.fetch_add(1, Ordering::Relaxed);
        let all = indices(view.extents());
        if all.len() != view.size() {
            return;
        }
        let roots: Vec<Vec<usize>> = all.iter().map(|i| to_root(i)).collect();
        let expected: Vec<usize> = roots.iter().map(|r| self.oracle.address(r)).collect();
        for (index, root) in all.iter().zip(&roots) {
            let element: *const T = view.get_mut(*index).expect("in bounds");
            self.element(element, root, "get_mut");
        }
        let mut seen = Vec::new();
        for element in view.iter_mut() {
            *element = T::default();
            seen.push(element as *const T as usize);
        }
        assert_eq!(seen, expected, "iter_mut");
        let mut unordered = Vec::new();
        view.for_each_unordered(|x| unordered.push(x as *const T as usize));
        let mut sorted = expected.clone();
        unordered.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(unordered, sorted, "for_each_unordered");
        let other = vec![T::default(); view.size()];
        let other = HostMdspan::<T, Q>::from_slice(&other, view.extents()).unwrap();
        let mut zipped = Vec::new();
        view.zip_with(&other, |y, _| zipped.push(y as *const T as usize)).unwrap();
        zipped.sort_unstable();
        assert_eq!(zipped, sorted, "zip_with");
        if let Some(slice) = view.as_mut_slice() {
            let mut sliced: Vec<usize> = slice.iter_mut().map(|x| x as *const T as usize).collect();
            sliced.sort_unstable();
            assert_eq!(sliced, sorted, "as_mut_slice");
        }
        <Rank<Q>>::ndarray_mut(self, view, &all, &roots);
    }

    #[cfg(feature = "ndarray")]
    fn ndarray_of_mutable<T: Elem, const Q: usize, L: Layout>(
        &self,
        view: HostMdspanMut<'_, T, Q, L>,
        all: &[[usize; Q]],
        roots: &[Vec<usize>],
    ) where
        [usize; Q]: ndarray::IntoDimension<Dim = ndarray::Dim<[usize; Q]>>,
        ndarray::Dim<[usize; Q]>: ndarray::Dimension,
    {
        let array = view.into_ndarray();
        for (index, root) in all.iter().zip(roots) {
            self.element(&array[ndarray::Dim(*index)], root, "into_ndarray");
        }
    }
}

/// What differs by rank: sub-views of one rank less, and ndarray's fixed dimensions.
trait PerRank<const Q: usize> {
    fn ndarray<T: Elem, L: Layout>(check: &Check<'_>, view: &HostMdspan<'_, T, Q, L>, to_root: ToRoot<'_>);
    fn ndarray_mut<T: Elem, L: Layout>(
        check: &Check<'_>,
        view: HostMdspanMut<'_, T, Q, L>,
        all: &[[usize; Q]],
        roots: &[Vec<usize>],
    );
    fn sub_views<T: Elem, L: Layout>(check: &Check<'_>, view: &HostMdspan<'_, T, Q, L>, seed: u64);
    fn sub_views_mut<T: Elem, L: Layout>(check: &Check<'_>, view: &mut HostMdspanMut<'_, T, Q, L>, seed: u64);
    fn device_sub_views<T, L: Layout>(check: &Check<'_>, view: &DeviceMdspan<'_, T, Q, L>, seed: u64);
}

macro_rules! per_rank {
    ($q:literal => $($p:literal)?) => {
        impl PerRank<$q> for Rank<$q> {
            #[allow(unused_variables)]
            fn ndarray<T: Elem, L: Layout>(check: &Check<'_>, view: &HostMdspan<'_, T, $q, L>, to_root: ToRoot<'_>) {
                #[cfg(feature = "ndarray")]
                check.ndarray_of_shared(view, to_root);
            }

            #[allow(unused_variables)]
            fn ndarray_mut<T: Elem, L: Layout>(
                check: &Check<'_>,
                view: HostMdspanMut<'_, T, $q, L>,
                all: &[[usize; $q]],
                roots: &[Vec<usize>],
            ) {
                #[cfg(feature = "ndarray")]
                check.ndarray_of_mutable(view, all, roots);
            }

            #[allow(unused_variables)]
            fn sub_views<T: Elem, L: Layout>(check: &Check<'_>, view: &HostMdspan<'_, T, $q, L>, seed: u64) {
                $(sub_views::<T, $q, $p, L>(check, view, seed);)?
            }

            #[allow(unused_variables)]
            fn sub_views_mut<T: Elem, L: Layout>(check: &Check<'_>, view: &mut HostMdspanMut<'_, T, $q, L>, seed: u64) {
                $(sub_views_mut::<T, $q, $p, L>(check, view, seed);)?
            }

            #[allow(unused_variables)]
            fn device_sub_views<T, L: Layout>(check: &Check<'_>, view: &DeviceMdspan<'_, T, $q, L>, seed: u64) {
                $(device_sub_views::<T, $q, $p, L>(check, view, seed);)?
            }
        }
    };
}

per_rank!(0 =>);
per_rank!(1 => 0);
per_rank!(2 => 1);
per_rank!(3 => 2);

/// Sub-views of a shared view: random ranges, and every `index_axis` / axis iterator of the
/// first axis and a random one (the results are checked as views of rank `P = Q - 1`).
fn sub_views<T: Elem, const Q: usize, const P: usize, L: Layout>(
    check: &Check<'_>,
    view: &HostMdspan<'_, T, Q, L>,
    seed: u64,
) where
    Rank<Q>: LowerRank<P> + PerRank<Q>,
    Rank<P>: PerRank<P>,
{
    let extents = view.extents();
    let mut rng = seed;
    let mut next = |bound: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % (bound as u64 + 1)) as usize
    };
    // A range per axis, within the axis (empty ones included).
    let ranges: [core::ops::Range<usize>; Q] = core::array::from_fn(|axis| {
        let start = next(extents[axis]);
        start..start + next(extents[axis] - start)
    });
    let sub = view.subview(ranges.clone());
    check.shared(&sub, &|i: &[usize]| i.iter().zip(&ranges).map(|(&k, r)| r.start + k).collect());
    // Out-of-bounds ranges are refused, never a view.
    let beyond: [core::ops::Range<usize>; Q] = core::array::from_fn(|axis| extents[axis]..extents[axis] + 1);
    assert!(matches!(view.try_subview(beyond), Err(DlpackError::SubviewOutOfBounds { .. })));
    for axis in [0, next(Q - 1)] {
        let insert = move |i: &[usize], at: usize| {
            let mut root = i.to_vec();
            root.insert(axis, at);
            root
        };
        if extents[axis] > 0 {
            let at = next(extents[axis] - 1);
            let fixed = view.index_axis::<P>(axis, at);
            check.shared(&fixed, &|i: &[usize]| insert(i, at));
        }
        for (at, part) in view.axis_iter::<P>(axis).enumerate() {
            check.shared(&part, &|i: &[usize]| insert(i, at));
        }
        for (at, part) in view.axis_iter::<P>(axis).enumerate().rev() {
            check.shared(&part, &|i: &[usize]| insert(i, at));
        }
    }
    for (at, row) in view.outer_iter::<P>().enumerate() {
        check.shared(&row, &|i: &[usize]| [&[at][..], i].concat());
    }
}

/// Sub-views of a device view: their pointers and mappings, arithmetic only.
fn device_sub_views<T, const Q: usize, const P: usize, L: Layout>(
    check: &Check<'_>,
    view: &DeviceMdspan<'_, T, Q, L>,
    seed: u64,
) where
    Rank<Q>: LowerRank<P>,
{
    let extents = view.extents();
    let ranges: [core::ops::Range<usize>; Q] =
        core::array::from_fn(|axis| (seed as usize % (extents[axis] + 1))..extents[axis]);
    let sub = view.subview(ranges.clone());
    check.arithmetic(&sub, &|i: &[usize]| i.iter().zip(&ranges).map(|(&k, r)| r.start + k).collect());
    let axis = seed as usize % Q;
    for (at, part) in view.axis_iter::<P>(axis).enumerate() {
        let fixed = view.index_axis::<P>(axis, at);
        assert_eq!((part.data_handle(), part.mapping()), (fixed.data_handle(), fixed.mapping()));
        check.arithmetic(&part, &|i: &[usize]| {
            let mut root = i.to_vec();
            root.insert(axis, at);
            root
        });
    }
}

/// Mutable sub-views: the same shapes as `sub_views`, through the mutable API.
fn sub_views_mut<T: Elem, const Q: usize, const P: usize, L: Layout>(
    check: &Check<'_>,
    view: &mut HostMdspanMut<'_, T, Q, L>,
    seed: u64,
) where
    Rank<Q>: LowerRank<P> + PerRank<Q>,
    Rank<P>: PerRank<P>,
{
    let extents = view.extents();
    let ranges: [core::ops::Range<usize>; Q] =
        core::array::from_fn(|axis| (seed as usize % (extents[axis] + 1))..extents[axis]);
    let sub = view.subview_mut(ranges.clone());
    check.mutable(sub, &|i: &[usize]| i.iter().zip(&ranges).map(|(&k, r)| r.start + k).collect());
    let axis = seed as usize % Q;
    let insert = move |i: &[usize], at: usize| {
        let mut root = i.to_vec();
        root.insert(axis, at);
        root
    };
    if extents[axis] > 0 {
        let at = seed as usize % extents[axis];
        let fixed = view.index_axis_mut::<P>(axis, at);
        check.mutable(fixed, &|i: &[usize]| insert(i, at));
    }
    for (at, part) in view.axis_iter_mut::<P>(axis).enumerate() {
        check.mutable(part, &|i: &[usize]| insert(i, at));
    }
    for (at, row) in view.outer_iter_mut::<P>().enumerate() {
        check.mutable(row, &|i: &[usize]| [&[at][..], i].concat());
    }
}

// ---------------------------------------------------------------------------------------------
// Random tensors.

/// Where the tensor's elements lie.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// The lowest element on the buffer's first byte.
    Start,
    /// The highest element on the buffer's last bytes.
    End,
    /// Somewhere inside, this many bytes from the start (possibly misaligned).
    Inside(usize),
    /// Far from the buffer (never dereferenced).
    Away,
    Null,
}

#[derive(Clone, Debug)]
struct Case {
    element: u8,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    /// Extra elements of offset beyond what the reversed axes need (negative: too few).
    slack: i64,
    misaligned_offset: bool,
    place: Place,
    device: DLDevice,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    let rank = 0usize..=3;
    let extent = prop_oneof![10 => 1i64..5, 2 => Just(0i64), 1 => Just(64i64)];
    let stride = prop_oneof![
        6 => -5i64..=5,
        1 => prop_oneof![
            Just(1i64 << 40),
            Just(-(1i64 << 40)),
            Just(i64::MAX / 2),
            Just(i64::MIN / 2),
            Just(i64::MAX),
            Just(i64::MIN),
        ],
    ];
    let place = prop_oneof![
        3 => Just(Place::Start),
        3 => Just(Place::End),
        3 => (0usize..4096).prop_map(Place::Inside),
        1 => Just(Place::Away),
        1 => Just(Place::Null),
    ];
    let device = prop_oneof![
        8 => Just(DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 }),
        1 => Just(DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 2 }),
        1 => Just(DLDevice { device_type: DLDeviceType::kDLCUDAHost, device_id: 0 }),
    ];
    (
        0u8..3,
        rank.prop_flat_map(move |r| {
            (proptest::collection::vec(extent.clone(), r), proptest::collection::vec(stride.clone(), r), 0u8..6)
        }),
        prop_oneof![6 => 0i64..3, 1 => Just(-1i64)],
        proptest::bool::weighted(0.05),
        place,
        device,
        any::<u64>(),
    )
        .prop_map(|(element, (shape, random, kind), slack, misaligned_offset, place, device, seed)| {
            let rank = shape.len();
            let mut strides = random;
            let huge_on_unit = kind == 5;
            if kind <= 2 {
                // Row-major (0), column-major (1), rows padded by one element (2).
                let mut acc = 1i64;
                for k in 0..rank {
                    let axis = if kind == 1 { k } else { rank - 1 - k };
                    strides[axis] = acc;
                    acc *= shape[axis].max(1) + i64::from(kind == 2 && k == 0);
                }
            }
            let mut shape = shape;
            if huge_on_unit && rank > 0 {
                // A unit (or empty) axis with a huge stride: it reaches nothing.
                shape[0] = if seed % 2 == 0 { 1 } else { 0 };
                strides[0] = [1 << 40, -(1 << 40), i64::MAX, i64::MIN][(seed / 2 % 4) as usize];
            }
            Case {
                element,
                shape,
                strides: if kind == 3 && rank > 0 { None } else { Some(strides) },
                slack,
                misaligned_offset,
                place,
                device,
                seed,
            }
        })
}

struct Buffer {
    words: Vec<u64>,
}

impl Buffer {
    fn new() -> Self {
        Self { words: (0..WORDS as u64).map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 8).collect() }
    }

    fn range(&self) -> std::ops::Range<usize> {
        let start = self.words.as_ptr() as usize;
        start..start + WORDS * 8
    }
}

/// The tensor of a case over `buffer`, its oracle, and whether its elements lie in the buffer.
fn tensor_of(case: &Case, buffer: &mut Buffer, size: usize) -> (support::Crafted, Oracle, bool) {
    let shape = case.shape.clone();
    let strides = case.strides.clone().unwrap_or_else(|| {
        let mut row_major = vec![0i64; shape.len()];
        let mut acc = 1;
        for axis in (0..shape.len()).rev() {
            row_major[axis] = acc;
            acc *= shape[axis].max(1);
        }
        row_major
    });
    let empty = shape.contains(&0);
    // The offset of index 0 from the lowest element, in elements: what the reversed axes reach back.
    let reach_back: i64 = if empty {
        0
    } else {
        shape
            .iter()
            .zip(&strides)
            .map(|(&e, &s)| if s < 0 { (e - 1).saturating_mul(s.saturating_neg()) } else { 0 })
            .fold(0, i64::saturating_add)
    };
    let reach_up: i64 = if empty {
        0
    } else {
        shape
            .iter()
            .zip(&strides)
            .map(|(&e, &s)| if s > 0 { (e - 1).saturating_mul(s) } else { 0 })
            .fold(0, i64::saturating_add)
    };
    let offset_elements = reach_back.saturating_add(case.slack).max(0);
    let byte_offset =
        (offset_elements as u64).saturating_mul(size as u64).saturating_add(u64::from(case.misaligned_offset));
    let span_bytes = (reach_back.saturating_add(reach_up).saturating_add(1) as u128) * size as u128;
    let range = buffer.range();
    // The lowest element's address, then data = lowest + (reach_back - offset) elements - extra.
    let lowest = match case.place {
        Place::Start => Some(range.start),
        Place::End => (range.end as u128).checked_sub(span_bytes).map(|a| a as usize),
        Place::Inside(at) => Some(range.start + at),
        Place::Away => Some(0x1000_0000_0000 + (case.seed as usize % 64) * 8),
        Place::Null => None,
    };
    let data = lowest.map_or(0, |lowest| {
        (lowest as i128 + (reach_back as i128 - offset_elements as i128) * size as i128
            - i128::from(case.misaligned_offset)) as usize
    });
    let mut crafted = support::Crafted {
        data: data as *mut std::ffi::c_void,
        device: case.device,
        ndim: shape.len() as i32,
        dtype: match case.element {
            0 => u8::DTYPE,
            1 => i32::DTYPE,
            _ => f64::DTYPE,
        },
        shape: Some(shape.clone()),
        strides: case.strides.clone(),
        byte_offset,
    };
    let tensor = crafted.tensor();
    let oracle = Oracle {
        data: tensor.data as usize,
        origin: tensor.data as i128 + i128::from(tensor.byte_offset),
        size: size as i128,
        extents: shape.iter().map(|&e| e.max(0) as usize).collect(),
        strides: strides.iter().map(|&s| i128::from(s)).collect(),
    };
    let (lo, hi) = oracle.span_wide();
    let readable = !empty && data != 0 && lo >= range.start as i128 && hi <= range.end as i128;
    (crafted, oracle, readable)
}

/// Imports the case with every layout, shared and mutable, and checks everything derived.
fn run<T: Elem, const Q: usize>(case: &Case, buffer: &mut Buffer)
where
    Rank<Q>: PerRank<Q>,
{
    let (mut crafted, oracle, readable) = tensor_of(case, buffer, size_of::<T>());
    let tensor: DLTensor = crafted.tensor();
    let on_device = DLTensor { device: DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 }, ..tensor };
    let options = if case.strides.is_none() { ImportOptions::legacy() } else { ImportOptions::CURRENT };
    if readable {
        IN_BUFFER.fetch_add(1, Ordering::Relaxed);
    }
    macro_rules! layout {
        ($l:ty) => {{
            // SAFETY: the tensor's elements lie in the live buffer when `readable`; otherwise the
            // views are only checked arithmetically (their pointers are compared, never read).
            let shared = unsafe { Mdspan::<T, Q, Dims<Q>, $l, Host>::from_dltensor_with(&tensor, options) };
            if let Ok(view) = shared {
                let check = Check { oracle: &oracle, readable };
                check.arithmetic(&view, &|i: &[usize]| i.to_vec());
                // The same tensor as CUDA memory: a device view of the same addresses.
                // SAFETY: a device view is never read on the host.
                let device = unsafe { Mdspan::<T, Q, Dims<Q>, $l, Device>::from_dltensor_with(&on_device, options) };
                let device = device.expect("a tensor a host view takes, a device view takes on CUDA");
                check.arithmetic(&device, &|i: &[usize]| i.to_vec());
                <Rank<Q>>::device_sub_views(&check, &device, case.seed);
                if readable || view.is_empty() {
                    check.shared(&view, &|i: &[usize]| i.to_vec());
                    <Rank<Q>>::sub_views(&check, &view, case.seed);
                }
            }
            // SAFETY: as above; mutable views are only used when readable, and nothing else reads
            // the buffer meanwhile.
            let unique = unsafe { MdspanMut::<T, Q, Dims<Q>, $l, Host>::from_dltensor_with(&tensor, options) };
            if let Ok(mut view) = unique {
                assert!(view.mapping().is_unique());
                if readable || view.is_empty() {
                    let check = Check { oracle: &oracle, readable };
                    <Rank<Q>>::sub_views_mut(&check, &mut view, case.seed);
                    check.mutable(view, &|i: &[usize]| i.to_vec());
                }
            }
        }};
    }
    layout!(LayoutRight);
    layout!(LayoutLeft);
    layout!(LayoutStride);
    layout!(LayoutStrideRelaxed);
}

fn run_case(case: &Case) {
    let mut buffer = Buffer::new();
    macro_rules! ranks {
        ($t:ty) => {
            match case.shape.len() {
                0 => run::<$t, 0>(case, &mut buffer),
                1 => run::<$t, 1>(case, &mut buffer),
                2 => run::<$t, 2>(case, &mut buffer),
                _ => run::<$t, 3>(case, &mut buffer),
            }
        };
    }
    match case.element {
        0 => ranks!(u8),
        1 => ranks!(i32),
        _ => ranks!(f64),
    }
}

/// Random tensors per run: `DLSPAN_ORACLE_CASES`, or `PROPTEST_CASES` (the memcheck tier lowers
/// it), 1500 by default.
fn cases() -> u32 {
    ["DLSPAN_ORACLE_CASES", "PROPTEST_CASES"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
        .unwrap_or(1500)
}

#[test]
fn every_pointer_a_view_hands_out_is_where_the_tensor_says() {
    let cases = cases();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases, ..ProptestConfig::default() });
    runner
        .run(&case(), |case| {
            run_case(&case);
            Ok(())
        })
        .unwrap();
    let (checked, in_buffer) = (CHECKED.load(Ordering::Relaxed), IN_BUFFER.load(Ordering::Relaxed));
    println!("{checked} views checked against the oracle, from {cases} tensors ({in_buffer} in the buffer)");
    assert!(in_buffer > cases as usize / 2, "too few tensors in the buffer ({in_buffer})");
    assert!(checked > 10 * cases as usize, "too few views checked ({checked})");
}
