//! xorshift64*: a small, fixed, reproducible stream of random numbers for the tests (shared by
//! `support` and `cuda_support`).
#![allow(dead_code, unreachable_pub)]

/// The generator; `Rng(seed)` starts the stream at `seed` (non-zero), [`Rng::new`] scrambles a seed.
pub struct Rng(pub u64);

impl Rng {
    /// A generator from any seed (scrambled, never zero).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with the given chance in percent.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}
