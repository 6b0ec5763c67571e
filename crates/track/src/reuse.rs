//! Buffers of a finalised connection kept for the next one.
//!
//! Finalising a connection freed every buffer its directions had grown (unacknowledged
//! segments, sent TSvals, retransmissions, RTT samples, the limits' ACK ring) and the
//! next connection grew them again from nothing: on the first 1 M packets of the mixed
//! bench capture, 118 k frees from dropping the tracker's per-direction state and 156 k
//! growths, with glibc's malloc, realloc and free ≈ 20 % of `analyze`'s cycles (perf).
//! The tracker keeps a finalised connection's state in a spare for the next one, its
//! buffers emptied; each spare stands for a free slot of the connection table, so there
//! are never more spares than the most connections live at once, and a buffer that grew
//! past [`MAX_REUSED_BYTES`] is freed rather than kept.

use std::collections::VecDeque;

/// The most bytes of one buffer kept for the next connection: a short connection's
/// buffers are a few hundred bytes, a bulk transfer's can be megabytes.
pub(crate) const MAX_REUSED_BYTES: usize = 4096;

/// `v` emptied, or a new one when it grew past [`MAX_REUSED_BYTES`].
pub(crate) fn emptied_vec<T>(mut v: Vec<T>) -> Vec<T> {
    if v.capacity().saturating_mul(std::mem::size_of::<T>()) > MAX_REUSED_BYTES {
        return Vec::new();
    }
    v.clear();
    v
}

/// `v` emptied, or a new one when it grew past [`MAX_REUSED_BYTES`].
pub(crate) fn emptied_deque<T>(mut v: VecDeque<T>) -> VecDeque<T> {
    if v.capacity().saturating_mul(std::mem::size_of::<T>()) > MAX_REUSED_BYTES {
        return VecDeque::new();
    }
    v.clear();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_are_kept_empty_and_large_ones_freed() {
        let mut v: Vec<u64> = Vec::with_capacity(16);
        v.extend([1, 2, 3]);
        let v = emptied_vec(v);
        assert!(v.is_empty());
        assert_eq!(v.capacity(), 16);
        // 513 × 8 bytes is past 4,096.
        let big: Vec<u64> = Vec::with_capacity(513);
        assert_eq!(emptied_vec(big).capacity(), 0);
        let mut d: VecDeque<u32> = VecDeque::with_capacity(8);
        d.push_back(7);
        let d = emptied_deque(d);
        assert!(d.is_empty());
        assert!(d.capacity() >= 8);
        let big: VecDeque<u32> = VecDeque::with_capacity(1025);
        assert_eq!(emptied_deque(big).capacity(), 0);
    }
}
