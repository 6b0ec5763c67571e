//! The detector interface: one module per mechanism, each owning its state, seeing the
//! capture through read-only views, and emitting only findings (style.md, habit 7).

use crate::detectors::bufferbloat::Bottleneck;
use crate::exchange::{Exchange, Span};
use crate::finding::Finding;
use std::collections::VecDeque;
use tcpwhy_capture::{Packet, Timestamp};
use tcpwhy_track::{ConnSummary, Endpoint, SegmentEvent, Side, Vantage};

/// State keyed by `tcp.stream` (the Analyzer's own per-connection state; detectors use
/// [`Slots`], which avoids the lookup). Stream numbers are the
/// tracker's own sequential indexes, not bytes from the capture, so the fast
/// non-cryptographic FxHash is safe here; SipHash lookups on every segment, once per
/// detector, were 18 % of `analyze` on the 5 M-packet bench capture (perf).
pub type StreamMap<V> = rustc_hash::FxHashMap<u64, V>;

/// Per-connection state of a detector, indexed by the dense slot the [`Analyzer`]
/// gives every open connection ([`Segment::slot`], [`Connection::slot`]): a Vec index
/// instead of a hash lookup per segment and detector (that took `analyze` on the
/// 200,000-packet bench capture from 737.7 M to 698.6 M instructions with the early
/// returns of that change, callgrind; bench/README.md). A slot is
/// reused once its connection was finalised; each entry keeps its stream id, so state
/// left behind is never read as another connection's. At most one entry per connection
/// open at once in the Analyzer, like the map it replaces.
///
/// [`Analyzer`]: crate::Analyzer
pub struct Slots<V> {
    /// The stream each slot's state belongs to and the state, the default when free.
    slots: Vec<(Owner, V)>,
}

/// The stream a slot's state belongs to, or none (a free slot), as one word compared
/// whole: the stream id's complement, 0 when free (no stream id is `u64::MAX`: the
/// tracker counts streams up from 0, or numbers them `PROVISIONAL_STREAM | first
/// frame`). Every detector's lookup on every segment is then one compare, where an
/// `Option<u64>` took a tag test and a compare (callgrind, bench/README.md session 12).
#[derive(Copy, Clone, PartialEq, Eq)]
struct Owner(u64);

impl Owner {
    const FREE: Owner = Owner(0);

    #[inline]
    fn of(stream: u64) -> Owner {
        Owner(!stream)
    }
}

impl<V> Default for Slots<V> {
    fn default() -> Self {
        Slots { slots: Vec::new() }
    }
}

impl<V: Default> Slots<V> {
    /// The state of `seg`'s connection, made with `f` when it has none.
    #[inline]
    pub fn get_or_insert_with(&mut self, seg: &Segment<'_>, f: impl FnOnce() -> V) -> &mut V {
        let key = Owner::of(seg.ev.stream);
        if seg.slot >= self.slots.len() {
            self.grow(seg.slot);
        }
        let e = &mut self.slots[seg.slot];
        if e.0 != key {
            *e = (key, f());
        }
        &mut e.1
    }

    /// The state of `seg`'s connection, the default when it has none. A free slot holds
    /// the default already (or, given back by [`Taken`], the default with the buffers of
    /// the slot's previous connection): only state left by a connection that was never
    /// finalised here is replaced.
    #[inline]
    pub fn get_or_default(&mut self, seg: &Segment<'_>) -> &mut V {
        self.default_at(seg.slot, seg.ev.stream)
    }

    /// Every segment of every detector comes here: the connection's own slot is one
    /// test, a new connection in the slot a call.
    #[inline]
    fn default_at(&mut self, slot: usize, stream: u64) -> &mut V {
        let hit = matches!(self.slots.get(slot), Some((s, _)) if *s == Owner::of(stream));
        if !hit {
            return self.open_at(slot, stream);
        }
        &mut self.slots[slot].1
    }

    /// [`Self::default_at`] for a connection new to `slot`.
    #[cold]
    fn open_at(&mut self, slot: usize, stream: u64) -> &mut V {
        if slot >= self.slots.len() {
            self.grow(slot);
        }
        let e = &mut self.slots[slot];
        if e.0 != Owner::FREE {
            e.1 = V::default();
        }
        e.0 = Owner::of(stream);
        &mut e.1
    }

    /// The state of a finalised connection, left in place (to measure before judging).
    pub fn get_mut(&mut self, conn: &Connection<'_>) -> Option<&mut V> {
        let key = Owner::of(conn.summary.stream);
        self.slots
            .get_mut(conn.slot)
            .and_then(|e| (e.0 == key).then_some(&mut e.1))
    }

    /// Removes and returns the state of a finalised connection.
    pub fn take(&mut self, conn: &Connection<'_>) -> Option<V> {
        self.take_at(conn.slot, conn.summary.stream)
    }

    fn take_at(&mut self, slot: usize, stream: u64) -> Option<V> {
        let e = self.slots.get_mut(slot)?;
        if e.0 == Owner::of(stream) {
            e.0 = Owner::FREE;
            Some(std::mem::take(&mut e.1))
        } else {
            None
        }
    }

    #[cold]
    fn grow(&mut self, slot: usize) {
        self.slots
            .resize_with(slot + 1, || (Owner::FREE, V::default()));
    }
}

impl<V: Reusable> Slots<V> {
    /// [`Self::take`], giving the state's buffers back to the slot when the guard is
    /// dropped, emptied ([`Reusable::empty`]), for the slot's next connection: judging
    /// a connection freed every buffer its state had grown, and the next one grew them
    /// again from nothing (glibc's malloc and free were ≈ 20 % of `analyze`'s cycles on
    /// the mixed bench capture, perf).
    pub fn take_reusing(&mut self, conn: &Connection<'_>) -> Option<Taken<'_, V>> {
        self.take_reusing_at(conn.slot, conn.summary.stream)
    }

    /// The state stays in its slot, marked free, while it is judged, and is emptied there
    /// ([`Reusable::empty`]): moved out of the slot, emptied and moved back, a state of
    /// hundreds or thousands of bytes (sndbuf's 2,320, reordering's 1,424, windows'
    /// 1,072) was copied several times a connection (`Slots::take`'s copies were 1.4 %
    /// of `analyze`'s time on the mixed bench capture, perf). With sndbuf, reordering and
    /// windows reusing their slots too, `analyze -j 1` of its 1 M-packet prefix went from
    /// 3,624.5 M to 3,514.9 M instructions (callgrind).
    fn take_reusing_at(&mut self, slot: usize, stream: u64) -> Option<Taken<'_, V>> {
        let e = self.slots.get_mut(slot)?;
        if e.0 != Owner::of(stream) {
            return None;
        }
        e.0 = Owner::FREE;
        Some(Taken { v: &mut e.1 })
    }
}

/// Per-connection state whose buffers the next connection of its slot can reuse.
pub trait Reusable: Default {
    /// Makes this the default state in place, holding its buffers emptied (those that
    /// grew past [`MAX_REUSED_BYTES`] dropped): equal to `Self::default()` in all but
    /// capacities. In place, as `*self = Self { buf: emptied_vec(&mut self.buf),
    /// ..Self::default() }` (`Slots::take_reusing_at` says why).
    fn empty(&mut self);
}

/// The most bytes of one buffer kept for a slot's next connection: a short
/// connection's few samples, not a bulk transfer's thousands, so that the memory kept in
/// free slots stays that of short connections.
pub const MAX_REUSED_BYTES: usize = 4096;

/// `v` taken and emptied, for the next connection of its slot ([`Reusable`]); a new one
/// when it grew past [`MAX_REUSED_BYTES`].
pub fn emptied_vec<T>(v: &mut Vec<T>) -> Vec<T> {
    let mut v = std::mem::take(v);
    if v.capacity().saturating_mul(std::mem::size_of::<T>()) > MAX_REUSED_BYTES {
        return Vec::new();
    }
    v.clear();
    v
}

/// [`emptied_vec`] for a `VecDeque`.
pub fn emptied_deque<T>(v: &mut VecDeque<T>) -> VecDeque<T> {
    let mut v = std::mem::take(v);
    if v.capacity().saturating_mul(std::mem::size_of::<T>()) > MAX_REUSED_BYTES {
        return VecDeque::new();
    }
    v.clear();
    v
}

/// A finalised connection's state, taken from its slot ([`Slots::take_reusing`]): the
/// slot is free, and holds the state until this is dropped, then the state emptied for
/// the slot's next connection. No other connection can take the slot meanwhile: this
/// borrows the [`Slots`].
pub struct Taken<'s, V: Reusable> {
    v: &'s mut V,
}

impl<V: Reusable> std::ops::Deref for Taken<'_, V> {
    type Target = V;
    fn deref(&self) -> &V {
        self.v
    }
}

impl<V: Reusable> std::ops::DerefMut for Taken<'_, V> {
    fn deref_mut(&mut self) -> &mut V {
        self.v
    }
}

impl<V: Reusable> Drop for Taken<'_, V> {
    fn drop(&mut self) {
        self.v.empty();
    }
}

/// One TCP segment with what the tracker learned from it.
#[derive(Copy, Clone)]
pub struct Segment<'a> {
    pub frame: u64,
    pub ts: Timestamp,
    pub pkt: &'a Packet<'a>,
    pub ev: &'a SegmentEvent,
    /// The connection's slot for [`Slots`] (dense, reused after the connection ended).
    pub slot: usize,
}

impl Segment<'_> {
    /// A SACK block's edge (RFC 2018) relative to the acknowledged direction's ISN, as
    /// `ev.rel_ack` is: the raw ACK's relative value moved by the edge's signed distance
    /// from the raw ACK (edges lie within 2^31 of it). `None` without an ACK, or for an
    /// edge that would fall below the ISN (a stale or bogus block).
    #[inline]
    pub fn rel_sack_edge(&self, edge: u32) -> Option<u64> {
        let ack = self.ev.rel_ack?;
        ack.checked_add_signed(i64::from(edge.wrapping_sub(self.pkt.ack) as i32))
    }
}

/// A finished connection as the detectors see it.
/// A client host and a server endpoint: what the detectors that compare connections
/// (short_lived, idle_close, new_connection's warm windows) group them by.
pub type HostPair = (std::net::IpAddr, Endpoint);

/// The [`HostPair`] of a connection's `[client, server]` endpoints.
pub fn host_pair(endpoints: &[Endpoint; 2]) -> HostPair {
    (endpoints[0].addr, endpoints[1])
}

pub struct Connection<'a> {
    /// Its summary. `summary.stream` is the stream id its segments carried
    /// (`SegmentEvent::stream`): in a sharded pass a provisional id, renumbered in the
    /// findings once every shard finished (write it into text with `StreamRef`).
    pub summary: &'a ConnSummary,
    /// The slot its segments carried ([`Segment::slot`]); `usize::MAX` when the
    /// analyzer saw none of its segments.
    pub slot: usize,
    /// Its request/response exchanges, in order.
    pub exchanges: &'a [Exchange],
    /// The rounds of the server's data sent before any request (a server that speaks
    /// first), split as a response's (exchange.rs).
    pub server_first_rounds: &'a [Span],
    /// The vantage point to assume: the user's choice, else the tracker's inference.
    pub vantage: Vantage,
    /// The full path RTT of the handshake as seen at the capture point (the summary's
    /// SYN → SYN/ACK → ACK time, `ConnModel::handshake_rtt_ns`, when not 0); `None`
    /// when the SYN or the SYN/ACK was not captured. Later RTT samples are not used here:
    /// a detector that needs the RTT of a later moment measures it itself.
    pub rtt_ns: Option<u64>,
    /// Per direction (`[client → server, server → client]`), the bottleneck a standing
    /// queue proved at this vantage (a queue that grew with the flight and stood for a
    /// round trip, measured by `bufferbloat`): the path's capacity, which bounds what any
    /// other limit can have cost.
    pub bottleneck: [Option<Bottleneck>; 2],
}

/// A detector of one mechanism. Its module documents the mechanism, its signature from
/// each vantage point, the cost model, the fix and known false positives.
///
/// Large captures are analysed on several threads, each with its own instance of every
/// detector over a shard of the connections (each connection whole in one shard): the
/// instances see `on_segment` and `on_connection` for their shard only, are then merged
/// with [`Detector::absorb`], and `finish` runs once on the merged one. The findings must
/// not depend on how connections were sharded.
pub trait Detector: Send + Sized {
    /// Whether a connection that carried neither data nor a FIN (SYNs, SYN/ACKs, RSTs,
    /// pure ACKs: a scan, a SYN flood, a health check's connect and reset) can give this
    /// detector a finding, or change what it keeps across connections. The
    /// [`Analyzer`](crate::Analyzer) holds a connection's first segments until its first
    /// data or FIN and then gives them to every detector, in order, before that one; a
    /// connection that ends without either never reaches the detectors that say `false`
    /// here, neither its segments nor its `on_connection` (on a capture of a SYN flood,
    /// most of `analyze`'s work was every detector making, emptying and judging the state
    /// of connections that never carried a byte). Saying `false` claims that this
    /// detector's `on_connection` for such a connection, after seeing its segments, adds
    /// no finding and keeps nothing: crates/pipeline/tests/dataless.rs and the `analyze`
    /// fuzz target check it against [`Config::unfiltered`](crate::Config::unfiltered).
    const JUDGES_DATALESS: bool = true;
    /// Sees every TCP segment, in capture order (a connection's first segments later,
    /// [`Self::JUDGES_DATALESS`]; always before the connection's `on_connection`).
    fn on_segment(&mut self, _seg: &Segment<'_>) {}
    /// A connection was finalised: emit its findings and drop its state.
    fn on_connection(&mut self, _conn: &Connection<'_>, _out: &mut Vec<Finding>) {}
    /// The capture ended (after every connection was finalised): emit findings about
    /// patterns across connections.
    fn finish(&mut self, _out: &mut Vec<Finding>) {}
    /// Takes in what another shard's instance of this detector kept after its
    /// `on_connection` calls, so that `finish` sees every connection. Required, so that no detector with state across
    /// connections forgets it; a detector whose state is per connection has nothing left
    /// by then and does nothing.
    fn absorb(&mut self, other: Self);
}

impl Connection<'_> {
    /// A finding of `id` on this connection, to be filled in by the detector.
    pub fn finding(&self, id: crate::finding::FindingId) -> Finding {
        Finding::new(
            id,
            self.summary.stream,
            self.summary.endpoints,
            self.vantage,
        )
    }

    /// Capture time from the first to the last packet of the connection.
    pub fn active_ns(&self) -> u64 {
        self.summary.duration_ns()
    }

    /// Where the capture sits for the data `sender` sends, by the vantage assumed.
    pub fn seat(&self, sender: Side) -> Seat {
        match (self.vantage, sender) {
            (Vantage::Client, Side::Client) | (Vantage::Server, Side::Server) => Seat::Sender,
            (Vantage::Client, Side::Server) | (Vantage::Server, Side::Client) => Seat::Receiver,
            (Vantage::Middle | Vantage::Unknown, _) => Seat::Elsewhere,
        }
    }
}

/// The capture point's place on one direction's path ([`Connection::seat`]): at the
/// data's sender (data → ACK spans the path), at its receiver (the sender's echo of the
/// receiver's timestamps spans it), or in the middle or unknown (neither does).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Seat {
    Sender,
    Receiver,
    Elsewhere,
}

/// The word for a count in explanations: `one` when `n` is 1, else `many` ("1 segment",
/// "2 segments"; "1 of them was", "2 of them were").
pub fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Milliseconds for explanations: "25.4 ms", "1032 ms".
pub fn ms(ns: u64) -> String {
    Ms(ns).to_string()
}

/// [`ms`] written straight into the text being formatted, without a String of its own.
#[derive(Copy, Clone)]
pub struct Ms(pub u64);

impl std::fmt::Display for Ms {
    /// The nanoseconds as milliseconds (an `f64`) with 2, 1 or 0 decimals below 10, 100
    /// and beyond, rounded as `{:.N}` rounds that `f64`: worked out in integers, which
    /// took a tenth of the instructions (`{:.N}` on an `f64` was ≈ 830 instructions, the
    /// texts of slow_start.new_connection a quarter of their cost; callgrind).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0 as f64 / 1e6;
        let decimals = if v < 10.0 {
            2
        } else if v < 100.0 {
            1
        } else {
            0
        };
        match round_fixed(self.0, 1_000_000, decimals) {
            Some(n) if decimals == 0 => write!(f, "{n} ms"),
            Some(n) => {
                let unit = 10u64.pow(decimals);
                let (whole, frac) = (n / unit, n % unit);
                write!(f, "{whole}.{frac:0width$} ms", width = decimals as usize)
            }
            None => write!(f, "{v:.prec$} ms", prec = decimals as usize),
        }
    }
}

/// `n` / `unit` × 10^`decimals`, rounded as Rust's `{:.N}` rounds the `f64`
/// `n as f64 / unit as f64` (its exact value, half to even), worked out in integers:
/// `None` from 2^52 on, where the `f64` may lie farther from the quotient than its
/// rounding can afford. `unit` / 10^`decimals` must be an even integer (it is for every
/// caller: 10^3 and more), `unit` at most 2^53.
///
/// `n` / (`unit` / 10^N) is q + r / d. Unless r / d is ½, the `f64` rounds as the
/// quotient does: `n` and `unit` are exact as `f64`s, the division is correctly
/// rounded, so the `f64` lies within a relative 2^-53 of the quotient, less than
/// 2^52 / `unit` × 2^-53 = ½ / `unit` away; and a quotient not at ½ lies at least
/// 1 / `unit` from one (d even: 2r − d is even and not 0). At ½ exactly, whether the
/// `f64` lies above or below is the sign of v × `unit` − `n`, which a fused
/// multiply-add gives exactly (one rounding of a nonzero value keeps its sign); on it,
/// half to even.
pub fn round_fixed(n: u64, unit: u64, decimals: u32) -> Option<u64> {
    if n >= 1 << 52 {
        return None;
    }
    let d = unit / 10u64.pow(decimals).min(unit);
    let (q, r) = (n / d, n % d);
    let up = match (2 * r).cmp(&d) {
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => {
            let v = n as f64 / unit as f64;
            let above = v.mul_add(unit as f64, -(n as f64));
            above > 0.0 || (above == 0.0 && q % 2 == 1)
        }
    };
    Some(q + u64::from(up))
}

/// `items` through `f` in contiguous parts of equal size (the last may be smaller), at
/// most one for each of `outs`: part `i` into `outs[i]`, on a thread of its own (the
/// first part on this one). In order within a part and the parts in order over `outs`:
/// what `items.iter().for_each(|x| f(x, &mut outs[0]))` would give, spread over them.
/// With no `outs`, nothing is run. A part whose thread cannot be started is done on this
/// one, in its turn; a panic in `f` is resumed here.
///
/// The parts only read the items, which are freed by the caller, where they were made:
/// moved into parts and dropped by the threads that judged them (slow_start.
/// new_connection's held exchanges, allocated by the pass's threads), they made two
/// threads slower than one, the frees of each fighting over the other's malloc arena
/// (`analyze -j 2` of the mixed bench capture, 6 runs each: 0.16–0.21 s on two threads,
/// 0.13–0.15 s on one). What `f` gives `outs` is best made on its thread.
pub fn in_parts<T: Sync, O: Send>(items: &[T], outs: &mut [O], f: impl Fn(&T, &mut O) + Sync) {
    let parts = outs.len().min(items.len()).max(1);
    let size = items.len().div_ceil(parts).max(1);
    let f = &f;
    // Each part is run once: by its thread, or here when that thread did not start.
    let parts: Vec<std::sync::Mutex<(&[T], &mut O)>> = items
        .chunks(size)
        .zip(outs.iter_mut())
        .map(std::sync::Mutex::new)
        .collect();
    let run = move |part: &std::sync::Mutex<(&[T], &mut O)>| {
        // Poisoned: `f` panicked on it, and that panic is resumed below.
        if let Ok(mut p) = part.lock() {
            let (items, out) = &mut *p;
            items.iter().for_each(|x| f(x, out));
        }
    };
    let run = &run;
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = rest
            .iter()
            .map(|part| {
                let thread = std::thread::Builder::new().spawn_scoped(scope, move || run(part));
                (part, thread.ok())
            })
            .collect();
        run(first);
        for (part, h) in handles {
            match h.map(|h| h.join()) {
                Some(Ok(())) => {}
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                None => run(part),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Ms` wrote before it worked in integers.
    fn ms_as_f64(ns: u64) -> String {
        let v = ns as f64 / 1e6;
        if v < 10.0 {
            format!("{v:.2} ms")
        } else if v < 100.0 {
            format!("{v:.1} ms")
        } else {
            format!("{v:.0} ms")
        }
    }

    #[test]
    fn milliseconds_in_integers_read_as_the_f64_did() {
        let check = |ns: u64| assert_eq!(Ms(ns).to_string(), ms_as_f64(ns), "{ns} ns");
        // Every value to 2 ms; every half-way value (ties) and its neighbours to 10⁸ ns,
        // where the decimals change; the thresholds; a spread to the integer path's
        // end and past it.
        (0..2_000_000).for_each(check);
        for (d, to) in [
            (10_000, 10_000_000),
            (100_000, 100_000_000),
            (1_000_000, 2_000_000_000),
        ] {
            let mut tie = d / 2;
            while tie < to {
                (tie - 1..=tie + 1).for_each(check);
                tie += d;
            }
        }
        for edge in [
            9_995_000,
            9_999_999,
            10_000_000,
            99_950_000,
            99_999_999,
            100_000_000,
        ] {
            (edge - 2..=edge + 2).for_each(check);
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let ns = (x >> 4) % 2_000_000_000_000_000;
            check(ns);
            check(ns % 1_000_000_000);
        }
        check(u64::MAX);
    }

    #[test]
    fn parts_on_threads_give_what_one_thread_gives() {
        for n in [0u32, 1, 2, 7, 1000] {
            let items: Vec<u32> = (0..n).collect();
            for threads in [1, 2, 3, 8, 2000] {
                let mut outs = vec![Vec::new(); threads];
                in_parts(&items, &mut outs, |x, out| out.push(*x));
                // Contiguous parts, in order, one for each out up to the items there are.
                let sizes: Vec<usize> = outs.iter().map(Vec::len).collect();
                let used = threads.min(n as usize);
                assert!(sizes[..used].iter().all(|&s| s > 0), "{n} on {threads}");
                assert!(sizes[used..].iter().all(|&s| s == 0), "{n} on {threads}");
                let got: Vec<u32> = outs.into_iter().flatten().collect();
                assert_eq!(got, items, "{n} items on {threads} threads");
            }
            // Nowhere to put what it makes: nothing is run.
            in_parts(&items, &mut [] as &mut [Vec<u32>], |_, _| panic!("run"));
        }
    }

    /// A detector's state: a buffer and a counter.
    #[derive(Default, Debug, PartialEq)]
    struct State {
        frames: Vec<u64>,
        acks: u32,
    }

    impl Reusable for State {
        fn empty(&mut self) {
            *self = State {
                frames: emptied_vec(&mut self.frames),
                ..State::default()
            };
        }
    }

    #[test]
    fn a_slots_next_connection_starts_from_the_default_with_the_last_ones_buffer() {
        let mut slots = Slots::<State>::default();
        // Stream 4 in slot 0: three segments, an ACK.
        let s = slots.default_at(0, 4);
        s.frames.extend([10, 11, 12]);
        s.acks = 1;
        let taken = slots.take_reusing_at(0, 4).unwrap();
        assert_eq!(taken.frames, [10, 11, 12]);
        assert_eq!(taken.acks, 1);
        drop(taken);
        // Stream 9 gets slot 0: nothing of stream 4 but the allocation.
        let s = slots.default_at(0, 9);
        assert_eq!(*s, State::default());
        assert!(s.frames.capacity() >= 3);
        // Finalised once only: stream 4's state is gone.
        assert!(slots.take_reusing_at(0, 4).is_none());
    }

    #[test]
    fn state_left_by_a_connection_never_finalised_is_not_read_as_the_next_ones() {
        let mut slots = Slots::<State>::default();
        let s = slots.default_at(2, 7);
        s.frames.push(30);
        s.acks = 5;
        // Stream 7 was a continuation: the analyzer freed its slot without judging it.
        assert_eq!(*slots.default_at(2, 8), State::default());
    }

    #[test]
    fn a_bulk_transfers_buffer_is_not_kept_for_the_next_connection() {
        let mut slots = Slots::<State>::default();
        // 4096 bytes of frame numbers are kept, more are not.
        slots.default_at(0, 1).frames.extend(0..512);
        drop(slots.take_reusing_at(0, 1));
        assert_eq!(slots.default_at(0, 2).frames.capacity(), 512);
        slots.default_at(0, 2).frames.extend(0..513);
        drop(slots.take_reusing_at(0, 2));
        assert_eq!(slots.default_at(0, 3).frames.capacity(), 0);
    }
}
