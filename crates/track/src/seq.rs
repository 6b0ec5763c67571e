//! 32-bit TCP sequence arithmetic (RFC 9293 §3.4, modular comparison) and unwrapping to
//! 64-bit offsets from the initial sequence number.

/// Modular "a < b" on 32-bit sequence numbers.
#[inline]
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// Modular "a > b".
#[inline]
pub fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Modular "a <= b".
#[inline]
pub fn seq_le(a: u32, b: u32) -> bool {
    !seq_gt(a, b)
}

/// Unwraps 32-bit sequence numbers of one direction into 64-bit offsets relative to a
/// base (the ISN, or one before the first sequence number seen), so that a transfer of
/// more than 4 GiB and wrap-around through 0 stay monotonic.
#[derive(Clone, Copy, Debug)]
pub struct SeqUnwrapper {
    base: u32,
    /// Highest unwrapped offset seen so far, the reference point for the next value.
    high: u64,
}

/// Offsets below the base (a segment from before the first one seen) clamp to 0.
impl SeqUnwrapper {
    pub fn new(base: u32) -> Self {
        SeqUnwrapper { base, high: 0 }
    }

    pub fn base(&self) -> u32 {
        self.base
    }

    /// The 64-bit offset of `seq` from the base, choosing the value nearest to the
    /// highest offset seen; advances the reference when `seq` is newer.
    pub fn unwrap(&mut self, seq: u32) -> u64 {
        let v = self.peek(seq);
        if v > self.high {
            self.high = v;
        }
        v
    }

    /// Like [`unwrap`](Self::unwrap) without moving the reference point.
    pub fn peek(&self, seq: u32) -> u64 {
        let high32 = (self.high as u32).wrapping_add(self.base);
        let delta = seq.wrapping_sub(high32) as i32 as i64;
        (self.high as i64).saturating_add(delta).max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modular_comparison_across_wrap() {
        assert!(seq_lt(0xffff_fff0, 0x10));
        assert!(seq_gt(0x10, 0xffff_fff0));
        assert!(seq_le(5, 5));
        assert!(!seq_lt(5, 5));
    }

    #[test]
    fn unwrap_through_zero_keeps_growing() {
        let mut u = SeqUnwrapper::new(0xffff_ff00);
        assert_eq!(u.unwrap(0xffff_ff01), 1);
        assert_eq!(u.unwrap(0x0000_0100), 0x200);
        // an old segment from before the wrap still maps below
        assert_eq!(u.unwrap(0xffff_ff80), 0x80);
        // 5 GiB later, after wrapping a second time
        let mut off = 0x200u64;
        let mut seq = 0x0000_0100u32;
        for _ in 0..5 * 4 {
            seq = seq.wrapping_add(1 << 28);
            off += 1 << 28;
            assert_eq!(u.unwrap(seq), off);
        }
    }

    #[test]
    fn below_base_clamps_to_zero() {
        let u = SeqUnwrapper::new(1000);
        assert_eq!(u.peek(900), 0);
    }
}
