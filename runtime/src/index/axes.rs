//! Per-axis values of a rank known only at run time: the extents and strides of the dynamic views
//! and of their exports, kept inline (no allocation) up to [`INLINE_AXES`] axes.

/// Axes an [`Axes`] keeps without allocating: the dynamic views and their exports allocate only
/// beyond this rank.
pub(crate) const INLINE_AXES: usize = 8;

/// Per-axis values of any rank: inline up to [`INLINE_AXES`] axes, on the heap beyond.
#[derive(Clone)]
pub(crate) enum Axes<T> {
    Inline { len: u8, values: [T; INLINE_AXES] },
    Heap(Box<[T]>),
}

impl<T: Copy + Default> Axes<T> {
    pub(crate) fn zeroed(len: usize) -> Self {
        if len <= INLINE_AXES {
            Self::Inline { len: len as u8, values: [T::default(); INLINE_AXES] }
        } else {
            Self::Heap(vec![T::default(); len].into_boxed_slice())
        }
    }

    pub(crate) fn from_slice(values: &[T]) -> Self {
        let mut axes = Self::zeroed(values.len());
        axes.as_mut_slice().copy_from_slice(values);
        axes
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            Self::Inline { len, values } => &values[..usize::from(*len)],
            Self::Heap(values) => values,
        }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Inline { len, values } => &mut values[..usize::from(*len)],
            Self::Heap(values) => values,
        }
    }
}
