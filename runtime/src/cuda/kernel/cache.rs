//! The in-memory cache of compiled modules, keyed by [`ModuleKey`] (operation or element-wise
//! instantiation, element types), and each module's kernels by shape and index width. Each device
//! keeps one (`Gpu`); it knows nothing of the driver, so the launch benchmark times the very
//! lookups a launch makes.
//!
//! A module compiles under its own slot's lock only: threads asking for different modules compile
//! in parallel, one module compiles once, and a hit takes the map's lock for a lookup with a cheap
//! hash, then reads the slot without a lock and without a reference count (slots live as long as
//! the cache).

use super::module::ModuleKey;
use crate::cuda::abi::{IndexWidth, KernelShape};
use crate::cuda::error::CudaError;
use core::hash::{BuildHasherDefault, Hasher};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Compiled modules of type `M`, by key.
///
/// ```
/// use dlspan::cuda::KernelKind;
/// use dlspan::cuda::kernel::{ModuleCache, ModuleKey};
/// let cache = ModuleCache::<u32>::default();
/// let key = ModuleKey::new::<f32, f32>(KernelKind::Add)?;
/// assert_eq!(*cache.get_or_compile(&key, || Ok(7))?, 7);
/// assert_eq!(*cache.get_or_compile(&key, || unreachable!("compiled once"))?, 7);
/// assert_eq!(cache.compiled(), 1);
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub struct ModuleCache<M> {
    slots: Mutex<HashMap<ModuleKey, Box<Slot<M>>, BuildHasherDefault<KeyHasher>>>,
    compiled: AtomicUsize,
}

/// One module's place: filled once, by the first thread that compiles it.
struct Slot<M> {
    module: OnceLock<M>,
    compiling: Mutex<()>,
}

impl<M> Default for ModuleCache<M> {
    fn default() -> Self {
        Self { slots: Mutex::new(HashMap::default()), compiled: AtomicUsize::new(0) }
    }
}

impl<M> core::fmt::Debug for ModuleCache<M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ModuleCache").field("compiled", &self.compiled()).finish_non_exhaustive()
    }
}

impl<M> ModuleCache<M> {
    /// The module of `key`, compiled by `compile` on first use; a failure leaves the slot empty
    /// (the next use compiles again).
    ///
    /// # Errors
    ///
    /// What `compile` returns.
    #[inline]
    pub fn get_or_compile(
        &self,
        key: &ModuleKey,
        compile: impl FnOnce() -> Result<M, CudaError>,
    ) -> Result<&M, CudaError> {
        let slot: *const Slot<M> = {
            let mut slots = self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            match slots.get(key) {
                Some(slot) => &**slot,
                None => &**slots
                    .entry(*key)
                    .or_insert_with(|| Box::new(Slot { module: OnceLock::new(), compiling: Mutex::new(()) })),
            }
        };
        // SAFETY: slots are never removed from the map, nor replaced, while the cache lives: the
        // `Box` in the map keeps the slot at this address for the borrow of `self` (a rehash moves
        // the box, not the slot).
        let slot = unsafe { &*slot };
        if let Some(module) = slot.module.get() {
            return Ok(module);
        }
        // Compiled under the slot's lock: two threads asking for one module compile it once.
        let _compiling = slot.compiling.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(module) = slot.module.get() {
            return Ok(module);
        }
        let module = compile()?;
        self.compiled.fetch_add(1, Ordering::Relaxed);
        Ok(slot.module.get_or_init(|| module))
    }

    /// How many modules have been compiled.
    pub fn compiled(&self) -> usize {
        self.compiled.load(Ordering::Relaxed)
    }
}

/// The kernel shapes a module may hold, in table order.
const SHAPES: usize = 11;

/// A module's kernels of type `F`, by shape and index width, each loaded once.
///
/// ```
/// use dlspan::cuda::kernel::{FunctionTable, IndexWidth, KernelShape};
/// let table = FunctionTable::<&str>::default();
/// let shape = KernelShape::Strided { rank: 2 };
/// assert_eq!(*table.get_or_load(shape, IndexWidth::I32, || Ok("rank2_i32"))?, "rank2_i32");
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub struct FunctionTable<F> {
    entries: [OnceLock<F>; 2 * SHAPES],
}

impl<F> Default for FunctionTable<F> {
    fn default() -> Self {
        Self { entries: core::array::from_fn(|_| OnceLock::new()) }
    }
}

impl<F> FunctionTable<F> {
    /// The kernel of `shape` and `index`, loaded by `load` on first use.
    ///
    /// # Errors
    ///
    /// What `load` returns.
    #[inline]
    pub fn get_or_load(
        &self,
        shape: KernelShape,
        index: IndexWidth,
        load: impl FnOnce() -> Result<F, CudaError>,
    ) -> Result<&F, CudaError> {
        let shape = match shape {
            KernelShape::Flat { vector } => (vector.max(1).trailing_zeros() as usize).min(4),
            KernelShape::Strided { rank } => 4 + usize::from(rank.clamp(1, 4)),
            KernelShape::General => 9,
            KernelShape::Tiled => 10,
        };
        let entry = &self.entries[2 * shape + usize::from(index == IndexWidth::I64)];
        if let Some(function) = entry.get() {
            return Ok(function);
        }
        let function = load()?;
        Ok(entry.get_or_init(|| function))
    }
}

/// A multiply-rotate hasher (FxHash's): module keys are a few words, and a lookup happens at every
/// launch.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u32(&mut self, word: u32) {
        self.write_u64(u64::from(word));
    }

    #[inline]
    fn write_u16(&mut self, word: u16) {
        self.write_u64(u64::from(word));
    }

    #[inline]
    fn write_u8(&mut self, word: u8) {
        self.write_u64(u64::from(word));
    }

    #[inline]
    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}
