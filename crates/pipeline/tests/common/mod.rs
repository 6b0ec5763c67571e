//! What this crate's random tests share.
#![allow(dead_code)] // each test uses a part

/// xorshift64*: a fixed sequence, so a failure reproduces by its case number.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (> 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
