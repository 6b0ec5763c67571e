//! The connections `tcpwhy flows` prints, one row each in `tcp.stream` order, kept as the
//! tracker finalises them so that memory does not grow with the number of connections
//! in the capture (issue 13): as the tracker's summaries while they fit in a budget (most
//! captures), beyond it in a [`SpillSort`] (each summary as `tcpwhy_track::summary_bytes`
//! encodes it, tens of bytes for a short connection). Reading them back merges the stores into batches of
//! whole connections ([`RowBatch`]); decoding a batch, on any thread, folds continuations
//! into their connection, settles the client of connections seen without a handshake,
//! and numbers a sharded pass's streams.

use crate::report::ConnStats;
use crate::spill::{Record, Sorted, SpillSort};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;
use tcpwhy_track::{ClientBy, ConnSummary, Endpoint};

/// Bytes before a row's summary: stream and first frame big-endian with the
/// continuation flag between them (so that comparing them as bytes sorts by stream,
/// a connection's first part before its continuations, then by first frame), then the
/// shard that tracked it.
const KEY_LEN: usize = 8 + 1 + 8;
const HEAD_LEN: usize = KEY_LEN + 2;

/// A finalised connection (or continuation) and the shard of the pass that saw it.
#[derive(Clone)]
pub(crate) struct Row(pub ConnSummary, pub u16);

impl Row {
    /// The order of rows: what [`Record::cmp_encoded`] compares, decoded.
    fn key(&self) -> RowKey {
        (self.0.stream, self.0.continuation, self.0.first_frame)
    }
}

impl Record for Row {
    fn encode(&self, out: &mut Vec<u8>) {
        let c = &self.0;
        out.extend_from_slice(&c.stream.to_be_bytes());
        out.push(u8::from(c.continuation));
        out.extend_from_slice(&c.first_frame.to_be_bytes());
        out.extend_from_slice(&self.1.to_le_bytes());
        tcpwhy_track::summary_bytes::encode(c, out);
    }

    fn decode(b: &[u8]) -> Option<Self> {
        let u64_at = |at: usize| Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?));
        let shard = u16::from_le_bytes(b.get(KEY_LEN..HEAD_LEN)?.try_into().ok()?);
        let mut c = tcpwhy_track::summary_bytes::decode(b.get(HEAD_LEN..)?)?;
        // The summary's encoding leaves out what the key holds.
        c.stream = u64_at(0)?;
        c.continuation = *b.get(8)? != 0;
        c.first_frame = u64_at(9)?;
        Some(Row(c, shard))
    }

    fn cmp_encoded(a: &[u8], b: &[u8]) -> Ordering {
        a[..KEY_LEN.min(a.len())].cmp(&b[..KEY_LEN.min(b.len())])
    }

    /// The stream, the continuation flag and 7 of the first frame's 8 bytes.
    const ORDER_PREFIX: usize = 16;
}

/// glibc's `DEFAULT_MMAP_THRESHOLD_MAX` on 64-bit systems: a freed mapped block larger
/// than this leaves its mmap threshold where it was (see [`RowStore::new`]).
const GLIBC_MMAP_THRESHOLD_MAX: usize = 32 << 20;

/// The rows the shards of a pass hold as summaries, against one bound (three quarters of
/// the pass's budget): the sharder balances packets, not connections (on
/// /tmp/speed-1m.pcap at -j 2 one shard had over 60 % of the 13,163), and a bound per
/// shard made one encode all its rows, and the reader decode them alone, while the
/// other had room. Once a shard finds no room, every shard encodes its rows from then
/// on.
pub(crate) struct HeldRows {
    count: AtomicUsize,
    max: usize,
    full: AtomicBool,
}

impl HeldRows {
    pub fn new(budget: usize) -> Arc<Self> {
        Arc::new(HeldRows {
            count: AtomicUsize::new(0),
            max: (budget - budget / 4) / (std::mem::size_of::<Row>() + 4),
            full: AtomicBool::new(false),
        })
    }

    /// Room for one more row, counted; false from the first time there was none.
    fn take(&self) -> bool {
        if self.full.load(AtomicOrdering::Relaxed) {
            return false;
        }
        if self.count.fetch_add(1, AtomicOrdering::Relaxed) < self.max {
            return true;
        }
        self.full.store(true, AtomicOrdering::Relaxed);
        false
    }
}

/// What a pass keeps of its connections while it runs: the rows, the endpoints seen as
/// servers (a SYN or SYN/ACK named them), which settle guessed clients at the end, and
/// what the report says of the connections as a whole.
///
/// Rows stay as the tracker's summaries until the pass's shards hold three quarters of
/// its budget ([`HeldRows`]); the rows after them are encoded into a [`SpillSort`] (of
/// the shard's part of the budget, beyond which it writes runs to temporary files), and
/// the held ones stay where they are: reading merges both. Encoding and decoding cost
/// ≈ 4,400 and 6,100 instructions a row with postcard (callgrind on the bench's mixed
/// capture, whose 1 M-packet prefix has 13,163 connections: ≈ 140 M of flows' 1,697 M;
/// ≈ 1,700 and 2,000 with `summary_bytes`), for nothing when the rows fit in memory. Memory stays within 1.75 × the budget (the
/// held rows and a full spill). Moving the held rows into the spill once it started, as
/// it was, kept that bound only at a shard that held its rows while others spilled, and
/// encoded and decoded all of them: on the 1 M-packet prefix (14,323 rows, 587 past the
/// bound) 9 % of `flows`' instructions.
pub(crate) struct RowStore {
    held: Vec<Row>,
    /// Where the shards count the rows they hold.
    hold: Arc<HeldRows>,
    /// `held` has its block: it never grows.
    can_hold: bool,
    rows: SpillSort<Row>,
    /// The rows moved to `rows`: they go there from now on.
    spilled: bool,
    pub servers: HashSet<Endpoint>,
    pub shard: u16,
    /// The first error writing the rows (a full disk): the pass fails with it.
    pub error: Option<io::Error>,
    /// The statistics of the rows pushed, gathered as they come so that the rows need
    /// not be read once more for them (≈ 80 M instructions on the mixed capture's
    /// prefix).
    stats: ConnStats,
    /// A continuation with ACKs of unseen data came: whether its connection was already
    /// counted among those with capture loss is known only once the parts are folded, so
    /// the statistics are read back then ([`Connections::stats`]). Rare.
    stats_need_folding: bool,
}

impl RowStore {
    /// A shard's store: `budget` its part of the pass's budget for encoded rows, `hold`
    /// the count of rows held by every shard.
    pub fn new(budget: usize, shard: u16, hold: Arc<HeldRows>) -> Self {
        let max_held = hold.max;
        let mut held = Vec::new();
        // Reserved whole, once, and more than glibc's largest dynamic mmap threshold:
        // untouched pages take no memory, and the block is a mapping of its own. Freed
        // when the rows move to the spill, a block below that size raised glibc's mmap
        // threshold to its own size, and the blocks the pass grew afterwards (the
        // tracker's tables) came from the heap and left their old copies resident there:
        // +11 MB peak RSS on /tmp/mc100k.pcap (100,000 connections) at -j 1.
        let reserve = max_held.max(GLIBC_MMAP_THRESHOLD_MAX / std::mem::size_of::<Row>() + 1);
        // Without that memory, every row of this shard is encoded.
        let can_hold = max_held > 0
            && (held.try_reserve_exact(reserve).is_ok()
                || held.try_reserve_exact(max_held).is_ok());
        RowStore {
            held,
            hold,
            can_hold,
            rows: SpillSort::new(budget),
            spilled: false,
            servers: HashSet::new(),
            shard,
            error: None,
            stats: ConnStats::default(),
            stats_need_folding: false,
        }
    }

    pub fn push(&mut self, c: ConnSummary) {
        if !c.continuation && matches!(c.client_by, ClientBy::Syn | ClientBy::SynAck) {
            self.servers.insert(c.endpoints[1]);
        }
        self.stats.add(&c);
        if c.continuation && (c.dirs[0].counts.acked_unseen | c.dirs[1].counts.acked_unseen) != 0 {
            self.stats_need_folding = true;
        }
        let row = Row(c, self.shard);
        if !self.spilled
            && self.can_hold
            && self.held.len() < self.held.capacity()
            && self.hold.take()
        {
            self.held.push(row);
        } else {
            self.keep(row);
        }
    }

    /// Keeps `row` encoded, and every row after it.
    #[inline(never)]
    fn keep(&mut self, row: Row) {
        self.spilled = true;
        self.encode(&row);
    }

    fn encode(&mut self, row: &Row) {
        if self.error.is_none() {
            self.error = self.rows.push(row).err();
        }
    }

    /// Ends the pushing: the rows, readable in order. Out of line: once a pass, and
    /// inlined it made `flows` large enough that the per-frame stage was no longer
    /// inlined there (+14 M instructions on the mixed capture's prefix).
    #[inline(never)]
    pub fn seal(self) -> Sealed {
        let spilled = self.spilled.then(|| self.rows.seal());
        let held = (!self.held.is_empty()).then(|| {
            // The rows stay where they are (moving 784-byte values cost ≈ 5,000
            // instructions a row); their keys are sorted, ties in the order pushed as in
            // the spill's stable sort.
            let order = if self.held.iter().any(|r| r.0.continuation) {
                let mut keys: Vec<_> = (0u32..)
                    .zip(&self.held)
                    .map(|(i, r)| (r.key(), i))
                    .collect();
                keys.sort_unstable();
                keys.into_iter().map(|(_, i)| i).collect()
            } else {
                // Without continuations every row has a stream of its own: its key
                // (a third of the time of sorting the whole key, callgrind).
                let mut keys: Vec<_> = (0u32..)
                    .zip(&self.held)
                    .map(|(i, r)| (r.0.stream, i))
                    .collect();
                keys.sort_unstable_by_key(|&(stream, _)| stream);
                keys.into_iter().map(|(_, i)| i).collect()
            };
            Held {
                rows: self.held,
                order,
            }
        });
        Sealed {
            held,
            spilled,
            servers: self.servers,
            stats: (!self.stats_need_folding).then_some(self.stats),
        }
    }
}

/// One shard's rows sorted, as [`RowStore::seal`] leaves them.
pub(crate) struct Sealed {
    /// The rows held as summaries, if any.
    held: Option<Held>,
    /// The rows encoded once there was no room to hold them, if any.
    spilled: Option<Sorted<Row>>,
    servers: HashSet<Endpoint>,
    /// The rows' statistics, unless they must be read back folded.
    stats: Option<ConnStats>,
}

/// One shard's rows held in memory, and the order to read them in.
struct Held {
    /// In the order pushed.
    rows: Vec<Row>,
    /// Their indexes in the order of their keys.
    order: Vec<u32>,
}

/// Every connection of a pass, read back sorted by stream, continuations folded.
#[derive(Default)]
pub struct Connections {
    /// The rows of the shards that spilled, as one store.
    spilled: Sorted<Row>,
    /// The rows of the others, each shard's.
    held: Vec<Held>,
    /// Each shard's servers, then (`servers`) every shard's.
    shard_servers: Vec<HashSet<Endpoint>>,
    servers: HashSet<Endpoint>,
    /// Whether the streams are a sharded pass's provisional ids, numbered on reading.
    provisional: bool,
    /// Only these streams are read (`flows --stream`).
    only: Option<u64>,
    /// The statistics of every row, when they were gathered as the rows came.
    stats: Option<ConnStats>,
}

impl Connections {
    pub(crate) fn new(shards: Vec<Sealed>) -> io::Result<Self> {
        let provisional = shards.len() > 1;
        let mut spilled = Vec::new();
        let mut held = Vec::new();
        let mut shard_servers = Vec::with_capacity(shards.len());
        let mut stats = Some(ConnStats::default());
        for s in shards {
            held.extend(s.held);
            spilled.extend(s.spilled);
            shard_servers.push(s.servers);
            stats = stats.zip(s.stats).map(|(mut all, one)| {
                all.merge(&one);
                all
            });
        }
        let servers = if provisional {
            shard_servers.iter().flatten().copied().collect()
        } else {
            HashSet::new()
        };
        Ok(Connections {
            spilled: Sorted::join(spilled)?,
            held,
            shard_servers,
            servers,
            provisional,
            only: None,
            stats,
        })
    }

    /// Connections from summaries already made (tests and library callers), one shard:
    /// read back in stream order like a pass's.
    pub fn from_summaries(rows: impl IntoIterator<Item = ConnSummary>) -> io::Result<Self> {
        let budget = crate::spill::SPILL_BUDGET;
        let mut store = RowStore::new(budget, 0, HeldRows::new(budget));
        for c in rows {
            store.push(c);
        }
        if let Some(e) = store.error.take() {
            return Err(e);
        }
        Connections::new(vec![store.seal()])
    }

    /// Rows stored, continuations included: an upper bound of the connections read.
    pub fn stored_rows(&self) -> u64 {
        self.spilled.len() + self.held.iter().map(|h| h.rows.len() as u64).sum::<u64>()
    }

    /// Keeps only stream `stream` (its final number).
    pub fn retain_stream(&mut self, stream: u64) {
        self.only = Some(stream);
        self.stats = None;
    }

    /// What the report says of the connections read: gathered as they were kept, or
    /// (a continuation with capture loss, or one stream kept) read once.
    pub fn stats(&self) -> io::Result<ConnStats> {
        match self.stats {
            Some(s) => Ok(s),
            None => ConnStats::of_connections(self),
        }
    }

    /// The connections in stream order, decoded a few at a time; an error reading a
    /// temporary file back ends them.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            batches: self.batches(),
            ready: Vec::new().into_iter(),
            failed: false,
        }
    }

    /// The rows in stream order, in batches of whole connections to decode on any
    /// thread ([`RowBatch::connections`]).
    pub fn batches(&self) -> Batches<'_> {
        Batches {
            conns: self,
            spilled: self.spilled.raw(),
            spilled_next: None,
            spilled_done: false,
            spare: Vec::new(),
            held: self.held.iter().map(|h| h.order.iter()).collect(),
            number: 0,
        }
    }

    /// Settles the client of a connection seen without a handshake when an endpoint is
    /// a server elsewhere in the capture: first in its own shard, then in any (what
    /// joining the shards one by one gave).
    fn settle(&self, c: &mut ConnSummary, shard: u16) {
        if c.client_by != ClientBy::PortGuess {
            return;
        }
        let own = self.shard_servers.get(usize::from(shard));
        for servers in own
            .into_iter()
            .chain(self.provisional.then_some(&self.servers))
        {
            if servers.contains(&c.endpoints[0]) && !servers.contains(&c.endpoints[1]) {
                c.endpoints.swap(0, 1);
                c.dirs.swap(0, 1);
                c.client_by = ClientBy::KnownServer;
                return;
            } else if servers.contains(&c.endpoints[1]) {
                c.client_by = ClientBy::KnownServer;
                return;
            }
        }
    }
}

/// The order of rows: stream, continuation, first frame ([`Row::key`]).
type RowKey = (u64, bool, u64);

/// The order of an encoded row ([`Row::key`]), read from its key bytes.
fn encoded_key(b: &[u8]) -> Option<RowKey> {
    let u64_at = |at: usize| Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?));
    Some((u64_at(0)?, *b.get(8)? != 0, u64_at(9)?))
}

fn undecodable() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "a connection read back from memory or a temporary file did not decode",
    )
}

/// Where a row of a [`RowBatch`] is.
#[derive(Clone, Copy)]
enum RowAt {
    /// Encoded, at `at..at + len` of the batch's bytes.
    Spilled { at: usize, len: usize },
    /// Row `index` of held shard `source`.
    Held { source: usize, index: usize },
}

/// Whole connections next in stream order, as the merge of the stores found their rows,
/// not yet decoded: [`RowBatch::connections`] decodes, folds, settles and numbers them,
/// on whichever thread. `flows -j N` has its helpers do that while the thread that
/// merges goes on: decoding every row on that one thread was most of its work after
/// the pass (`flows -j 2`, callgrind on the mixed bench capture's 1 M-packet prefix: 100
/// M of its 118 M instructions there), and the other threads waited for it.
pub struct RowBatch {
    bytes: Vec<u8>,
    rows: Vec<RowAt>,
    /// The number of the batch's first connection (a sharded pass numbers its streams
    /// as they are read).
    first_number: u64,
}

impl RowBatch {
    /// The batch's connections, folded, settled and numbered, those not kept
    /// ([`Connections::retain_stream`]) left out.
    pub fn connections(&self, conns: &Connections) -> io::Result<Vec<ConnSummary>> {
        let row = |at: RowAt| -> io::Result<Row> {
            match at {
                RowAt::Spilled { at, len } => self
                    .bytes
                    .get(at..at + len)
                    .and_then(Row::decode)
                    .ok_or_else(undecodable),
                RowAt::Held { source, index } => conns
                    .held
                    .get(source)
                    .and_then(|h| h.rows.get(index))
                    .cloned()
                    .ok_or_else(undecodable),
            }
        };
        let mut out = Vec::with_capacity(self.rows.len());
        let mut number = self.first_number;
        let mut done = |Row(mut c, shard): Row, out: &mut Vec<ConnSummary>| {
            conns.settle(&mut c, shard);
            if conns.provisional {
                c.stream = number;
            }
            number += 1;
            if conns.only.is_none_or(|s| s == c.stream) {
                out.push(c);
            }
        };
        let mut current: Option<Row> = None;
        for &at in &self.rows {
            let r = row(at)?;
            match &mut current {
                Some(c) if c.0.stream == r.0.stream => c.0.absorb(&r.0),
                _ => {
                    if let Some(last) = current.replace(r) {
                        done(last, &mut out);
                    }
                }
            }
        }
        if let Some(last) = current {
            done(last, &mut out);
        }
        Ok(out)
    }
}

/// Where the next row comes from.
#[derive(Clone, Copy)]
enum Next {
    Spilled,
    Held(usize),
}

/// The rows of [`Connections`] in order, in batches of whole connections
/// ([`Connections::batches`]).
pub struct Batches<'a> {
    conns: &'a Connections,
    spilled: crate::spill::Raw<'a, Row>,
    /// The next record of `spilled`, read ahead to be compared with the held ones.
    spilled_next: Option<Vec<u8>>,
    spilled_done: bool,
    /// A buffer for the next record read.
    spare: Vec<u8>,
    /// Each held shard's indexes of the rows not read yet, in order.
    held: Vec<std::slice::Iter<'a, u32>>,
    /// Connections so far: the next one's number.
    number: u64,
}

impl Batches<'_> {
    /// The next row's order and where it is: the smallest of the sources' next ones (on
    /// a tie the spilled rows', then the earlier shard's, as when one store joined them).
    fn peek(&mut self) -> io::Result<Option<(RowKey, Next)>> {
        if self.spilled_next.is_none() && !self.spilled_done {
            let mut rec = std::mem::take(&mut self.spare);
            if self.spilled.next_into(&mut rec)? {
                self.spilled_next = Some(rec);
            } else {
                self.spilled_done = true;
            }
        }
        let mut best = match &self.spilled_next {
            Some(rec) => Some((encoded_key(rec).ok_or_else(undecodable)?, Next::Spilled)),
            None => None,
        };
        for (i, order) in self.held.iter().enumerate() {
            let rows = &self.conns.held[i].rows;
            if let Some(r) = order
                .as_slice()
                .first()
                .and_then(|&at| rows.get(at as usize))
            {
                let k = r.key();
                if best.is_none_or(|(b, _)| k < b) {
                    best = Some((k, Next::Held(i)));
                }
            }
        }
        Ok(best)
    }

    /// The rows of the next connections, at least `rows` of them unless the rows end
    /// first (a connection's rows are never split between batches); `None` at the end.
    pub fn next_batch(&mut self, rows: usize) -> io::Result<Option<RowBatch>> {
        let mut b = RowBatch {
            bytes: Vec::new(),
            rows: Vec::with_capacity(rows),
            first_number: self.number,
        };
        let mut stream = None;
        while let Some(((s, _, _), next)) = self.peek()? {
            if stream != Some(s) {
                if b.rows.len() >= rows {
                    break;
                }
                stream = Some(s);
                self.number += 1;
            }
            match next {
                Next::Spilled => {
                    let rec = self.spilled_next.take().unwrap_or_default();
                    b.rows.push(RowAt::Spilled {
                        at: b.bytes.len(),
                        len: rec.len(),
                    });
                    b.bytes.extend_from_slice(&rec);
                    self.spare = rec;
                }
                Next::Held(i) => {
                    if let Some(&index) = self.held[i].next() {
                        b.rows.push(RowAt::Held {
                            source: i,
                            index: index as usize,
                        });
                    }
                }
            }
        }
        Ok((!b.rows.is_empty()).then_some(b))
    }
}

/// Connections decoded a batch at a time: a few dozen summaries held at once.
const ITER_BATCH: usize = 64;

/// The rows of [`Connections`], one folded connection at a time.
pub struct Iter<'a> {
    batches: Batches<'a>,
    ready: std::vec::IntoIter<ConnSummary>,
    failed: bool,
}

impl Iterator for Iter<'_> {
    type Item = io::Result<ConnSummary>;

    fn next(&mut self) -> Option<io::Result<ConnSummary>> {
        loop {
            if let Some(c) = self.ready.next() {
                return Some(Ok(c));
            }
            if self.failed {
                return None;
            }
            let read = self
                .batches
                .next_batch(ITER_BATCH)
                .and_then(|b| b.map(|b| b.connections(self.batches.conns)).transpose());
            match read {
                Ok(Some(v)) => self.ready = v.into_iter(),
                Ok(None) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcpwhy_capture::Timestamp;
    use tcpwhy_track::{DirSummary, Vantage, PROVISIONAL_STREAM};

    fn ep(last: u8, port: u16) -> Endpoint {
        Endpoint {
            addr: std::net::IpAddr::from([10, 0, 0, last]),
            port,
        }
    }

    /// A connection of `frames.1 - frames.0` packets client → server and 1 back.
    fn conn(stream: u64, ends: [Endpoint; 2], by: ClientBy, frames: (u64, u64)) -> ConnSummary {
        let dir = |packets| DirSummary {
            packets,
            ..DirSummary::default()
        };
        ConnSummary {
            stream,
            endpoints: ends,
            client_by: by,
            first_frame: frames.0,
            last_frame: frames.1,
            start: Timestamp::from_nanos(frames.0 as i64 * 1_000_000),
            end: Timestamp::from_nanos(frames.1 as i64 * 1_000_000),
            dirs: [dir(frames.1 - frames.0), dir(1)],
            syn_to_synack_ns: Some(250_000),
            synack_to_ack_ns: None,
            vantage: Vantage::Client,
            reused_port: false,
            continuation: false,
            icmp_errors: None,
        }
    }

    /// `shards`' rows through stores of `budget` bytes each.
    fn connections(shards: Vec<Vec<ConnSummary>>, budget: usize) -> Connections {
        let stores = shards
            .into_iter()
            .enumerate()
            .map(|(i, rows)| {
                let mut s = RowStore::new(budget, i as u16, HeldRows::new(budget));
                rows.into_iter().for_each(|c| s.push(c));
                assert!(s.error.is_none());
                s.seal()
            })
            .collect();
        Connections::new(stores).unwrap()
    }

    fn read(c: &Connections) -> Vec<ConnSummary> {
        c.iter().map(|r| r.unwrap()).collect()
    }

    #[test]
    fn a_row_decodes_to_the_summary_pushed() {
        let mut c = conn(7, [ep(1, 40000), ep(2, 443)], ClientBy::Syn, (3, 9));
        c.dirs[1].max_window_bytes = Some(1 << 30);
        c.dirs[0].counts.retransmissions = 4;
        let back = read(&connections(vec![vec![c.clone()]], 1 << 20));
        assert_eq!(format!("{back:?}"), format!("{:?}", [c]));
    }

    #[test]
    fn continuations_fold_and_a_known_server_settles_a_guessed_client() {
        let (client, server, other) = (ep(1, 40000), ep(2, 443), ep(3, 50000));
        // Stream 1: no handshake; 443 looks like the client by port (the guess is wrong).
        let mut rows = vec![
            conn(1, [server, other], ClientBy::PortGuess, (4, 6)),
            conn(0, [client, server], ClientBy::Syn, (1, 3)),
        ];
        // Packets of stream 0 after it was finalised, seen from the server first.
        let mut late = conn(0, [server, client], ClientBy::PortGuess, (10, 12));
        late.continuation = true;
        rows.push(late);
        // In memory, and spilled one row a run.
        for budget in [1 << 20, 1] {
            let c = read(&connections(vec![rows.clone()], budget));
            assert_eq!(c.len(), 2);
            assert_eq!((c[0].stream, c[0].first_frame, c[0].last_frame), (0, 1, 12));
            assert!(!c[0].continuation);
            // 2 + 1 packets client → server; 1 + 2 server → client (the late part's
            // order is the other way round).
            assert_eq!((c[0].dirs[0].packets, c[0].dirs[1].packets), (3, 3));
            assert_eq!(c[0].client_by, ClientBy::Syn);
            assert_eq!(c[1].stream, 1);
            assert_eq!(c[1].endpoints, [other, server]);
            assert_eq!(c[1].client_by, ClientBy::KnownServer);
            assert_eq!((c[1].dirs[0].packets, c[1].dirs[1].packets), (1, 2));
        }
    }

    #[test]
    fn shards_are_numbered_by_first_frame_and_settled_across_shards() {
        let provisional = |c: ConnSummary| ConnSummary {
            stream: PROVISIONAL_STREAM | c.first_frame,
            ..c
        };
        let server = ep(9, 80);
        let a = vec![
            provisional(conn(0, [ep(1, 1000), server], ClientBy::Syn, (2, 5))),
            provisional(conn(0, [ep(1, 1001), server], ClientBy::Syn, (8, 9))),
        ];
        let b = vec![
            provisional(conn(0, [ep(2, 1000), server], ClientBy::Syn, (1, 7))),
            // Stream 3 learns its server from shard a.
            provisional(conn(0, [server, ep(3, 1)], ClientBy::PortGuess, (11, 12))),
        ];
        for budget in [1 << 20, 1] {
            let mut all = connections(vec![a.clone(), b.clone()], budget);
            let got: Vec<(u64, u64, ClientBy)> = read(&all)
                .iter()
                .map(|c| (c.stream, c.first_frame, c.client_by))
                .collect();
            assert_eq!(
                got,
                [
                    (0, 1, ClientBy::Syn),
                    (1, 2, ClientBy::Syn),
                    (2, 8, ClientBy::Syn),
                    (3, 11, ClientBy::KnownServer)
                ]
            );
            // Numbered the same when each batch holds one connection.
            let one_by_one: Vec<(u64, u64, ClientBy)> = by_batches(&all, 1)
                .0
                .iter()
                .map(|c| (c.stream, c.first_frame, c.client_by))
                .collect();
            assert_eq!(one_by_one, got);
            all.retain_stream(3);
            assert_eq!(
                read(&all).iter().map(|c| c.endpoints).collect::<Vec<_>>(),
                [[ep(3, 1), server]]
            );
        }
    }

    /// The connections of every batch of `size` rows, in order, and each batch's
    /// streams as its rows name them.
    fn by_batches(c: &Connections, size: usize) -> (Vec<ConnSummary>, Vec<Vec<u64>>) {
        let (mut all, mut streams) = (Vec::new(), Vec::new());
        let mut batches = c.batches();
        while let Some(b) = batches.next_batch(size).unwrap() {
            let rows: Vec<u64> = b
                .rows
                .iter()
                .map(|&at| match at {
                    RowAt::Spilled { at, len } => encoded_key(&b.bytes[at..at + len]).unwrap().0,
                    RowAt::Held { source, index } => c.held[source].rows[index].0.stream,
                })
                .collect();
            streams.push(rows);
            all.extend(b.connections(c).unwrap());
        }
        (all, streams)
    }

    #[test]
    fn batches_hold_whole_connections_and_read_as_the_iterator() {
        let (client, server) = (ep(1, 40000), ep(2, 443));
        // Streams 0–5 of one packet each, stream 2 with two late parts, in two shards.
        let mut a = Vec::new();
        let mut b = Vec::new();
        for s in 0..6u64 {
            let c = conn(s, [client, server], ClientBy::Syn, (10 * s + 1, 10 * s + 2));
            if s % 2 == 0 {
                a.push(c)
            } else {
                b.push(c)
            }
        }
        for at in [5, 7] {
            let mut late = conn(2, [client, server], ClientBy::Syn, (10 * at, 10 * at + 1));
            late.continuation = true;
            b.push(late);
        }
        for budget in [1 << 20, 1] {
            let c = connections(vec![a.clone(), b.clone()], budget);
            let whole = read(&c);
            assert_eq!(whole.len(), 6);
            assert_eq!(whole[2].last_frame, 71);
            for size in [1, 2, 3, 100] {
                let (got, streams) = by_batches(&c, size);
                let key = |v: &[ConnSummary]| -> Vec<(u64, u64, u64)> {
                    v.iter()
                        .map(|c| (c.stream, c.first_frame, c.last_frame))
                        .collect()
                };
                assert_eq!(key(&got), key(&whole), "batches of {size}, budget {budget}");
                // Stream 2's three rows in one batch; no batch with fewer than `size`
                // rows but the last.
                let with_2: Vec<&Vec<u64>> = streams.iter().filter(|r| r.contains(&2)).collect();
                assert_eq!(with_2.len(), 1);
                assert_eq!(with_2[0].iter().filter(|&&s| s == 2).count(), 3);
                for r in &streams[..streams.len() - 1] {
                    assert!(r.len() >= size, "{r:?} for {size}");
                }
            }
        }
    }

    /// A budget that holds `rows` rows as summaries (three quarters of it).
    fn holding(rows: usize) -> usize {
        rows * (std::mem::size_of::<Row>() + 4) * 4 / 3 + 1
    }

    #[test]
    fn rows_held_and_rows_spilled_after_them_read_back_in_order() {
        let (a, b) = (ep(1, 40000), ep(2, 443));
        let rows: Vec<ConnSummary> = [4, 0, 3, 1, 2]
            .into_iter()
            .map(|s| conn(s, [a, b], ClientBy::Syn, (10 * s + 1, 10 * s + 5)))
            .collect();
        let mut store = RowStore::new(1 << 20, 0, HeldRows::new(holding(3)));
        for (i, c) in rows.iter().enumerate() {
            store.push(c.clone());
            // The fourth row does not fit: every row is encoded from then on, and the
            // three held stay held.
            assert_eq!(store.spilled, i >= 3, "after row {i}");
            assert_eq!(store.held.len(), (i + 1).min(3), "after row {i}");
        }
        assert_eq!(store.rows.len(), 2);
        let c = Connections::new(vec![store.seal()]).unwrap();
        let got: Vec<(u64, u64)> = read(&c).iter().map(|c| (c.stream, c.first_frame)).collect();
        assert_eq!(got, [(0, 1), (1, 11), (2, 21), (3, 31), (4, 41)]);
        // One shard held, one spilled: merged by stream.
        let provisional = |c: &ConnSummary| ConnSummary {
            stream: PROVISIONAL_STREAM | c.first_frame,
            ..c.clone()
        };
        let (mut held, mut spilled) = (
            RowStore::new(1 << 20, 0, HeldRows::new(1 << 20)),
            RowStore::new(1, 1, HeldRows::new(1)),
        );
        for (i, c) in rows.iter().enumerate() {
            let to = if i % 2 == 0 { &mut held } else { &mut spilled };
            to.push(provisional(c));
        }
        assert!(!held.spilled && spilled.spilled);
        let c = Connections::new(vec![held.seal(), spilled.seal()]).unwrap();
        let got: Vec<(u64, u64)> = read(&c).iter().map(|c| (c.stream, c.first_frame)).collect();
        assert_eq!(got, [(0, 1), (1, 11), (2, 21), (3, 31), (4, 41)]);
    }

    #[test]
    fn shards_share_one_bound_and_all_spill_once_it_is_reached() {
        let (a, b) = (ep(1, 40000), ep(2, 443));
        let row = |frame: u64| ConnSummary {
            stream: PROVISIONAL_STREAM | frame,
            ..conn(0, [a, b], ClientBy::Syn, (frame, frame + 1))
        };
        let hold = HeldRows::new(holding(3));
        let mut s0 = RowStore::new(1 << 20, 0, hold.clone());
        let mut s1 = RowStore::new(1 << 20, 1, hold);
        // Shard 0 holds three rows: the whole bound, beyond its half of it.
        for f in [10, 30, 50] {
            s0.push(row(f));
        }
        assert!(!s0.spilled);
        // Shard 1 finds no room; shard 0 then spills too at its next row.
        s1.push(row(20));
        assert!(s1.spilled && !s0.spilled);
        s0.push(row(60));
        s1.push(row(40));
        assert!(s0.spilled);
        let c = Connections::new(vec![s0.seal(), s1.seal()]).unwrap();
        let got: Vec<(u64, u64)> = read(&c).iter().map(|c| (c.stream, c.first_frame)).collect();
        assert_eq!(got, [(0, 10), (1, 20), (2, 30), (3, 40), (4, 50), (5, 60)]);
    }

    #[test]
    fn statistics_gathered_as_rows_come_are_those_of_the_folded_connections() {
        let (client, server) = (ep(1, 40000), ep(2, 443));
        let mut first = conn(0, [client, server], ClientBy::Syn, (1, 3));
        first.dirs[1].counts.acked_unseen = 2;
        let mut other = conn(1, [ep(3, 40001), server], ClientBy::Syn, (2, 9));
        other.start = Timestamp::from_nanos(1_000);
        let c = connections(vec![vec![first.clone(), other.clone()]], 1 << 20);
        let stats = c.stats().unwrap();
        assert_eq!(stats, ConnStats::of_connections(&c).unwrap());
        assert_eq!(
            (
                stats.count,
                stats.start,
                stats.acked_unseen,
                stats.acked_unseen_connections
            ),
            (2, Some(Timestamp::from_nanos(1_000)), 2, 1)
        );
        // Stream 1's late part ACKs unseen data, its first part did not: the connection
        // has capture loss once folded, which only reading the rows back can tell.
        let mut late = conn(1, [ep(3, 40001), server], ClientBy::PortGuess, (20, 22));
        late.continuation = true;
        late.dirs[0].counts.acked_unseen = 5;
        for budget in [1 << 20, 1] {
            let c = connections(
                vec![vec![first.clone(), other.clone(), late.clone()]],
                budget,
            );
            let stats = c.stats().unwrap();
            assert_eq!(
                (
                    stats.count,
                    stats.acked_unseen,
                    stats.acked_unseen_connections
                ),
                (2, 7, 2)
            );
        }
    }

    #[test]
    fn no_connections_read_nothing() {
        assert!(read(&connections(vec![vec![]], 1)).is_empty());
        assert!(read(&Connections::default()).is_empty());
    }
}
