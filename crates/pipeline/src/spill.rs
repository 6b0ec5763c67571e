//! A sorted store whose memory is bounded: what a pass must hold until the end of a file
//! to print it in order (analyze's findings by cost, flows' rows by stream) is kept
//! encoded in memory up to a budget, then sorted and written as a run to a temporary
//! file; reading merges the runs with a heap, each read sequentially through a buffer
//! (the external merge sort of databases and of GNU sort). Memory then depends on the
//! budget, not on the length of the capture.
//!
//! The order is the [`Record`]'s, ties in the order records were pushed: runs hold
//! consecutive records, each sorted stably, and the merge breaks ties by run, so the
//! result is what a stable sort of everything would give. [`Sorted::join`] continues
//! that order across stores (one per shard of a pass).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::marker::PhantomData;

/// What a [`SpillSort`] holds: a value with an encoding and an order on encodings (so
/// that records are sorted and merged without being decoded).
pub trait Record: Sized {
    /// Appends the encoding of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// The value encoded in `bytes`; `None` if they are not an encoding.
    fn decode(bytes: &[u8]) -> Option<Self>;
    /// The order of two encodings.
    fn cmp_encoded(a: &[u8], b: &[u8]) -> Ordering;
    /// The order's leading bytes: how many of an encoding's first bytes
    /// [`Self::cmp_encoded`] compares before anything else, as plain bytes (at most 16).
    /// Sorting compares these first, read once per record into a number, and calls
    /// `cmp_encoded` only on a tie; 0 (the default) sorts by `cmp_encoded` alone.
    const ORDER_PREFIX: usize = 0;
}

/// The first `n` (≤ 16) bytes of `encoded` as a big-endian number, zeros where it is
/// shorter: numbers in that order agree with the byte strings' order wherever they
/// differ (a shorter string padded with zeros is never above one it is a prefix of), and
/// equal numbers leave the order to the comparison.
fn prefix_key(encoded: &[u8], n: usize) -> u128 {
    let mut b = [0u8; 16];
    let n = n.min(16).min(encoded.len());
    b[..n].copy_from_slice(&encoded[..n]);
    u128::from_be_bytes(b)
}

/// Bytes of encoded records a pass holds in memory before it writes a run (split between
/// the threads of a sharded pass). Small next to the rest of a pass (analyze peaks at
/// ≈ 218 MB on the bench's 10 M-packet mixed capture, mostly detectors' state bounded
/// by their own caps), so that a 4 × longer capture stays within issue 13's 1.2 × of it
/// (measured 1.12 ×); large enough that a capture of a few million packets never
/// touches the disk and a long one writes runs of thousands of records, read back
/// sequentially.
pub const SPILL_BUDGET: usize = 16 << 20;

/// Runs a store keeps before merging them into one: each is an open file and, while
/// being read, a [`READ_BUFFER`]; well under the usual limit of 1024 open files.
pub const MAX_RUNS: usize = 32;

/// Sources [`Sorted::join`] leaves to be read at once (a [`READ_BUFFER`] each while
/// read: 8 MB for 128). The stores' own runs are open files already (at most
/// [`MAX_RUNS`] a store), so this bounds the buffers, not the files. At [`MAX_RUNS`],
/// `analyze -j 2` on the bench's 10 M-packet mixed capture (≈ 47 runs of rendered
/// findings in four stores) rewrote ≈ 60 MB into a merged run on the one thread left
/// after the pass (strace: 587 → 528 MB written; wall 3.38 → 3.20 s, medians of 5).
pub const MAX_JOINED: usize = 128;

/// Bytes read ahead from each run during a merge: large enough for sequential reads.
const READ_BUFFER: usize = 64 << 10;

/// Bytes written at once to a run.
const WRITE_BUFFER: usize = 256 << 10;

/// The longest record a store takes (far above a finding or a connection row, a few
/// KB at most): a length read back from a run above it means the file is damaged, and
/// no buffer of that size is allocated.
pub const MAX_RECORD: usize = 1 << 20;

/// Where a record is in memory.
#[derive(Clone, Copy)]
struct Span {
    offset: usize,
    len: u32,
}

impl Span {
    fn of<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        &bytes[self.offset..self.offset + self.len as usize]
    }
}

/// A sorted run in a temporary file (deleted when closed): each record as its length
/// (4 bytes, little-endian) and its encoding.
struct Run {
    file: File,
    bytes: u64,
}

/// Sorted records: in memory, or a run on disk.
enum Source {
    Memory { bytes: Vec<u8>, spans: Vec<Span> },
    File(Run),
}

/// Records pushed in any order, read back sorted ([`SpillSort::seal`]).
pub struct SpillSort<R> {
    budget: usize,
    bytes: Vec<u8>,
    /// Records in memory, in the order pushed.
    spans: Vec<Span>,
    runs: Vec<Run>,
    records: u64,
    /// Where runs are written: the system's temporary directory ($TMPDIR) unless set.
    dir: Option<std::path::PathBuf>,
    _record: PhantomData<fn() -> R>,
}

/// A new temporary file in `dir` (default: the system's), deleted when closed.
fn temp_file(dir: Option<&std::path::Path>) -> io::Result<File> {
    let dir = dir.map_or_else(std::env::temp_dir, |d| d.to_path_buf());
    tempfile::tempfile_in(&dir).map_err(|e| context(e, "creating", &dir))
}

/// An I/O error with what was being done (the temporary directory, so that "no space
/// left on device" says where).
fn context(e: io::Error, doing: &str, dir: &std::path::Path) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("{doing} a temporary file in {}: {e}", dir.display()),
    )
}

/// The directory runs go to, for messages.
fn dir_of(dir: Option<&std::path::Path>) -> std::path::PathBuf {
    dir.map_or_else(std::env::temp_dir, |d| d.to_path_buf())
}

impl<R: Record> SpillSort<R> {
    /// A store that writes a run whenever it holds more than `budget` bytes.
    pub fn new(budget: usize) -> Self {
        SpillSort {
            budget,
            bytes: Vec::new(),
            spans: Vec::new(),
            runs: Vec::new(),
            records: 0,
            dir: None,
            _record: PhantomData,
        }
    }

    /// Writes runs in `dir` instead of the system's temporary directory.
    pub fn in_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Records pushed.
    pub fn len(&self) -> u64 {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Runs written so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Keeps `r`, writing the records held so far as a run first if `r` would take the
    /// memory held over the budget.
    pub fn push(&mut self, r: &R) -> io::Result<()> {
        let start = self.bytes.len();
        r.encode(&mut self.bytes);
        let len = self.bytes.len() - start;
        if len > MAX_RECORD {
            self.bytes.truncate(start);
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a record of {len} bytes is over the bound of {MAX_RECORD}"),
            ));
        }
        let held = self.bytes.len() + (self.spans.len() + 1) * std::mem::size_of::<Span>();
        if held > self.budget && !self.spans.is_empty() {
            // Write what was there before `r`, then move `r` to the front.
            let mut tail = self.bytes.split_off(start);
            self.spill()?;
            self.bytes.append(&mut tail);
        }
        let offset = self.bytes.len() - len;
        self.spans.push(Span {
            offset,
            len: len as u32,
        });
        self.records += 1;
        Ok(())
    }

    /// Sorts the records in memory (stably: ties stay in the order pushed). With an
    /// order prefix, each record's is read once and the sort compares numbers, not
    /// slices: `flows -j 1` on the mixed bench capture's 1 M-packet prefix (14,323 rows)
    /// 1,550.8 → 1,544.8 M instructions (callgrind).
    fn sort_memory(&mut self) {
        let bytes = &self.bytes;
        if R::ORDER_PREFIX == 0 {
            self.spans
                .sort_by(|a, b| R::cmp_encoded(a.of(bytes), b.of(bytes)));
            return;
        }
        let mut keyed: Vec<(u128, Span)> = self
            .spans
            .iter()
            .map(|s| (prefix_key(s.of(bytes), R::ORDER_PREFIX), *s))
            .collect();
        keyed.sort_by(|(ka, a), (kb, b)| {
            ka.cmp(kb)
                .then_with(|| R::cmp_encoded(a.of(bytes), b.of(bytes)))
        });
        for (to, (_, s)) in self.spans.iter_mut().zip(keyed) {
            *to = s;
        }
    }

    /// Writes the records in memory as a sorted run and frees their memory for more;
    /// merges the runs into one when there are [`MAX_RUNS`].
    fn spill(&mut self) -> io::Result<()> {
        self.sort_memory();
        let dir = self.dir.as_deref();
        let file = temp_file(dir)?;
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, &file);
        let mut written = 0u64;
        for s in &self.spans {
            w.write_all(&s.len.to_le_bytes())
                .and_then(|_| w.write_all(s.of(&self.bytes)))
                .map_err(|e| context(e, "writing", &dir_of(dir)))?;
            written += 4 + u64::from(s.len);
        }
        w.flush().map_err(|e| context(e, "writing", &dir_of(dir)))?;
        drop(w);
        self.runs.push(Run {
            file,
            bytes: written,
        });
        self.bytes.clear();
        self.spans.clear();
        if self.runs.len() >= MAX_RUNS {
            let runs = std::mem::take(&mut self.runs);
            let sources: Vec<Source> = runs.into_iter().map(Source::File).collect();
            self.runs
                .push(merge_to_run::<R>(&sources, self.dir.as_deref())?);
        }
        Ok(())
    }

    /// Ends the pushing: the records, readable in order.
    pub fn seal(mut self) -> Sorted<R> {
        self.sort_memory();
        let mut sources: Vec<Source> = self.runs.drain(..).map(Source::File).collect();
        if !self.spans.is_empty() {
            sources.push(Source::Memory {
                bytes: std::mem::take(&mut self.bytes),
                spans: std::mem::take(&mut self.spans),
            });
        }
        Sorted {
            sources,
            records: self.records,
            dir: self.dir.take(),
            _record: PhantomData,
        }
    }
}

/// Where the `take` neighbouring sources with the fewest bytes start (the first such).
fn lightest_window(sources: &[Source], take: usize) -> usize {
    let weight = |s: &Source| match s {
        Source::Memory { bytes, .. } => bytes.len() as u64,
        Source::File(r) => r.bytes,
    };
    let take = take.clamp(1, sources.len().max(1));
    (0..=sources.len().saturating_sub(take))
        .min_by_key(|&from| sources[from..from + take].iter().map(weight).sum::<u64>())
        .unwrap_or(0)
}

/// Merges `sources` into one run.
fn merge_to_run<R: Record>(sources: &[Source], dir: Option<&std::path::Path>) -> io::Result<Run> {
    let file = temp_file(dir)?;
    let failed = |e| context(e, "writing", &dir_of(dir));
    let mut w = BufWriter::with_capacity(WRITE_BUFFER, &file);
    let mut merge = Merge::<R>::new(sources);
    let mut record = Vec::new();
    let mut written = 0u64;
    while merge.next_raw(&mut record)? {
        w.write_all(&(record.len() as u32).to_le_bytes())
            .and_then(|_| w.write_all(&record))
            .map_err(failed)?;
        written += 4 + record.len() as u64;
    }
    w.flush().map_err(failed)?;
    drop(w);
    Ok(Run {
        file,
        bytes: written,
    })
}

/// The records of one or more [`SpillSort`]s, read in order as often as needed.
pub struct Sorted<R> {
    sources: Vec<Source>,
    records: u64,
    dir: Option<std::path::PathBuf>,
    _record: PhantomData<fn() -> R>,
}

impl<R: Record> Default for Sorted<R> {
    fn default() -> Self {
        Sorted {
            sources: Vec::new(),
            records: 0,
            dir: None,
            _record: PhantomData,
        }
    }
}

impl<R: Record> Sorted<R> {
    /// Records held.
    pub fn len(&self) -> u64 {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The encoded records in order, each lent to `each` in turn (nothing decoded,
    /// nothing copied); the first error, reading or from `each`, ends the reading.
    pub fn for_each_encoded(
        &self,
        mut each: impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut raw = self.raw();
        let mut record = Vec::new();
        while raw.next_into(&mut record)? {
            each(&record)?;
        }
        Ok(())
    }

    /// The encoded records in order, read one at a time into the caller's buffer.
    pub fn raw(&self) -> Raw<'_, R> {
        Raw {
            merge: Merge::new(&self.sources),
        }
    }

    /// Runs held in temporary files (the rest is in memory).
    pub fn runs_on_disk(&self) -> usize {
        self.sources
            .iter()
            .filter(|s| matches!(s, Source::File(_)))
            .count()
    }

    /// The records of `parts` as one store; ties are ordered by part, then as in each.
    /// Beyond [`MAX_JOINED`] sources (read buffers stay bounded), the fewest bytes that bring
    /// them down to it are merged first: the neighbouring sources, as many as it takes,
    /// whose bytes add up least (neighbours, so that ties keep their order). Merging the
    /// first 32 of the 36 sources a `-j 2` pass left on the bench's mixed capture
    /// rewrote ≈ 200 MB of rendered findings on one thread after the pass.
    pub fn join(parts: Vec<Sorted<R>>) -> io::Result<Sorted<R>> {
        let mut sources = Vec::new();
        let mut records = 0;
        let mut dir = None;
        for p in parts {
            records += p.records;
            sources.extend(p.sources);
            dir = dir.or(p.dir);
        }
        if sources.len() > MAX_JOINED {
            let take = sources.len() - MAX_JOINED + 1;
            let from = lightest_window(&sources, take);
            let merged = merge_to_run::<R>(&sources[from..from + take], dir.as_deref())?;
            sources.splice(from..from + take, [Source::File(merged)]);
        }
        Ok(Sorted {
            sources,
            records,
            dir,
            _record: PhantomData,
        })
    }

    /// The records in order, decoded one at a time.
    pub fn iter(&self) -> Iter<'_, R> {
        Iter {
            raw: self.raw(),
            record: Vec::new(),
            failed: false,
        }
    }
}

/// Reads a file from a position of its own (several readers share one open file).
struct At<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf
            .len()
            .min(usize::try_from(self.end - self.pos).unwrap_or(usize::MAX));
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, &mut buf[..want], self.pos)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, &mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// A position in one source.
enum Cursor<'a> {
    Memory {
        bytes: &'a [u8],
        spans: std::slice::Iter<'a, Span>,
    },
    File(BufReader<At<'a>>),
}

impl Cursor<'_> {
    /// The next record into `out`; false at the end.
    fn next(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        out.clear();
        match self {
            Cursor::Memory { bytes, spans } => Ok(spans.next().is_some_and(|s| {
                out.extend_from_slice(s.of(bytes));
                true
            })),
            Cursor::File(r) => {
                let mut len = [0u8; 4];
                match r.read_exact(&mut len) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
                    Err(e) => return Err(context(e, "reading", &dir_of(None))),
                }
                let len = u32::from_le_bytes(len) as usize;
                if len > MAX_RECORD {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a temporary file was damaged (a record longer than any written)",
                    ));
                }
                out.resize(len, 0);
                r.read_exact(out)
                    .map_err(|e| context(e, "reading", &dir_of(None)))?;
                Ok(true)
            }
        }
    }
}

/// The smallest record of one source, in the heap.
struct Head<R> {
    bytes: Vec<u8>,
    source: usize,
    _record: PhantomData<fn() -> R>,
}

impl<R: Record> Ord for Head<R> {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap pops the largest: reversed, so that the smallest record, and among
        // equal ones the earliest source, comes first.
        R::cmp_encoded(&o.bytes, &self.bytes).then(o.source.cmp(&self.source))
    }
}

impl<R: Record> PartialOrd for Head<R> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl<R: Record> PartialEq for Head<R> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl<R: Record> Eq for Head<R> {}

/// A k-way merge of sorted sources.
struct Merge<'a, R> {
    cursors: Vec<Cursor<'a>>,
    heap: BinaryHeap<Head<R>>,
    started: bool,
}

impl<'a, R: Record> Merge<'a, R> {
    fn new(sources: &'a [Source]) -> Self {
        let cursors = sources
            .iter()
            .map(|s| match s {
                Source::Memory { bytes, spans } => Cursor::Memory {
                    bytes,
                    spans: spans.iter(),
                },
                Source::File(run) => Cursor::File(BufReader::with_capacity(
                    READ_BUFFER,
                    At {
                        file: &run.file,
                        pos: 0,
                        end: run.bytes,
                    },
                )),
            })
            .collect::<Vec<_>>();
        Merge {
            heap: BinaryHeap::with_capacity(cursors.len()),
            cursors,
            started: false,
        }
    }

    /// The next record in order into `out`; false at the end.
    fn next_raw(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        if !self.started {
            self.started = true;
            for (source, c) in self.cursors.iter_mut().enumerate() {
                let mut bytes = Vec::new();
                if c.next(&mut bytes)? {
                    self.heap.push(Head {
                        bytes,
                        source,
                        _record: PhantomData,
                    });
                }
            }
        }
        let Some(mut head) = self.heap.pop() else {
            return Ok(false);
        };
        // The record leaves in `out`; `out`'s old buffer takes the source's next one.
        std::mem::swap(out, &mut head.bytes);
        if self.cursors[head.source].next(&mut head.bytes)? {
            self.heap.push(head);
        }
        Ok(true)
    }
}

/// The encoded records of a [`Sorted`] in order ([`Sorted::raw`]).
pub struct Raw<'a, R> {
    merge: Merge<'a, R>,
}

impl<R: Record> Raw<'_, R> {
    /// The next record's encoding into `out` (its old contents replaced); false at the
    /// end.
    pub fn next_into(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        self.merge.next_raw(out)
    }
}

/// The records of a [`Sorted`] in order. An I/O error (or a damaged temporary file) is
/// returned once, and then the iteration ends.
pub struct Iter<'a, R> {
    raw: Raw<'a, R>,
    record: Vec<u8>,
    failed: bool,
}

impl<R: Record> Iterator for Iter<'_, R> {
    type Item = io::Result<R>;

    fn next(&mut self) -> Option<io::Result<R>> {
        if self.failed {
            return None;
        }
        let r = match self.raw.next_into(&mut self.record) {
            Ok(false) => return None,
            Ok(true) => R::decode(&self.record).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a record read back from memory or a temporary file did not decode",
                )
            }),
            Err(e) => Err(e),
        };
        self.failed = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test record: ordered by `key` only, so that ties show the order kept.
    #[derive(Debug, PartialEq, Eq, Clone, Copy)]
    struct Item {
        key: u32,
        pushed: u32,
    }

    impl Record for Item {
        fn encode(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.key.to_be_bytes());
            out.extend_from_slice(&self.pushed.to_le_bytes());
        }
        fn decode(b: &[u8]) -> Option<Self> {
            Some(Item {
                key: u32::from_be_bytes(b.get(0..4)?.try_into().ok()?),
                pushed: u32::from_le_bytes(b.get(4..8)?.try_into().ok()?),
            })
        }
        fn cmp_encoded(a: &[u8], b: &[u8]) -> Ordering {
            a[..4].cmp(&b[..4])
        }
    }

    fn items(keys: &[u32]) -> Vec<Item> {
        keys.iter()
            .enumerate()
            .map(|(i, &key)| Item {
                key,
                pushed: i as u32,
            })
            .collect()
    }

    fn store(budget: usize, xs: &[Item]) -> SpillSort<Item> {
        let mut s = SpillSort::new(budget);
        for x in xs {
            s.push(x).unwrap();
        }
        s
    }

    fn read(s: &Sorted<Item>) -> Vec<Item> {
        s.iter().map(|r| r.unwrap()).collect()
    }

    /// The order a stable sort of everything gives.
    fn stable(xs: &[Item]) -> Vec<Item> {
        let mut v = xs.to_vec();
        v.sort_by_key(|x| x.key);
        v
    }

    /// One record takes 8 bytes and a 16-byte span.
    const ONE: usize = 8 + 16;

    #[test]
    fn an_empty_store_reads_nothing() {
        let s = store(1 << 20, &[]).seal();
        assert_eq!(s.len(), 0);
        assert!(read(&s).is_empty());
        let joined = Sorted::join(vec![s, Sorted::default()]).unwrap();
        assert!(read(&joined).is_empty());
    }

    /// A record as the pass's are: a fixed-length key (20 bytes, four past the order
    /// prefix) then the rest (its push index), ordered by the key.
    #[derive(Debug, PartialEq, Eq, Clone)]
    struct Keyed([u8; 20], u32);

    impl Record for Keyed {
        fn encode(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.0);
            out.extend_from_slice(&self.1.to_le_bytes());
        }
        fn decode(b: &[u8]) -> Option<Self> {
            Some(Keyed(
                b.get(..20)?.try_into().ok()?,
                u32::from_le_bytes(b.get(20..24)?.try_into().ok()?),
            ))
        }
        fn cmp_encoded(a: &[u8], b: &[u8]) -> Ordering {
            a[..20].cmp(&b[..20])
        }
        const ORDER_PREFIX: usize = 16;
    }

    #[test]
    fn an_order_prefix_sorts_as_the_comparison_does() {
        // Key bytes from {0, 1, 0xff} picked by a fixed LCG, many keys equal in their
        // first 16 bytes (the tie-break) and many equal whole (the stable order).
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) as usize
        };
        let xs: Vec<Keyed> = (0..3_000u32)
            .map(|i| {
                let mut key = [0u8; 20];
                for (at, b) in key.iter_mut().enumerate() {
                    // Few values in front, so that prefixes tie.
                    let spread = if at < 16 { 2 } else { 3 };
                    *b = [0u8, 0xff, 1][next() % spread];
                }
                if i % 3 == 0 {
                    key[..14].fill(0);
                }
                Keyed(key, i)
            })
            .collect();
        let mut want = xs.clone();
        want.sort_by_key(|k| k.0);
        // In memory, and through runs of a few records each.
        for budget in [1 << 20, 256] {
            let mut s = SpillSort::new(budget);
            for k in &xs {
                s.push(k).unwrap();
            }
            let got: Vec<Keyed> = s.seal().iter().map(|r| r.unwrap()).collect();
            assert!(got == want, "budget {budget}: not the stable order");
        }
        assert!(prefix_key(&[1], 16) < prefix_key(&[1, 0, 1], 16));
        assert_eq!(prefix_key(&[1], 16), prefix_key(&[1, 0], 16));
        assert_eq!(prefix_key(&[7; 20], 16), prefix_key(&[7; 17], 16));
    }

    #[test]
    fn records_within_the_budget_stay_in_memory_and_sort_stably() {
        let xs = items(&[5, 1, 5, 0, 1]);
        let s = store(1 << 20, &xs);
        assert_eq!(s.runs(), 0);
        let got = read(&s.seal());
        // Keys 0, 1, 1, 5, 5; the two 1s and the two 5s in the order pushed.
        let pushed: Vec<u32> = got.iter().map(|x| x.pushed).collect();
        assert_eq!(pushed, [3, 1, 4, 0, 2]);
    }

    #[test]
    fn a_full_budget_spills_runs_that_merge_back_in_order_ties_by_push_order() {
        // 3 records per run: 10 records make 3 runs on disk and 1 record in memory.
        let xs = items(&[7, 3, 7, 1, 3, 9, 7, 0, 3, 7]);
        let s = store(3 * ONE, &xs);
        assert_eq!(s.runs(), 3);
        let sealed = s.seal();
        assert_eq!(sealed.len(), 10);
        let got = read(&sealed);
        assert_eq!(got, stable(&xs));
        // Read twice: the runs are read from their own positions each time.
        assert_eq!(read(&sealed), got);
    }

    #[test]
    fn more_runs_than_the_fan_in_are_merged_on_the_way() {
        // One record per run: 100 records would be 100 runs; merging at MAX_RUNS keeps
        // fewer open at any time.
        let keys: Vec<u32> = (0..100u32).map(|i| (i * 37) % 11).collect();
        let xs = items(&keys);
        let s = store(ONE, &xs);
        assert!(s.runs() < MAX_RUNS, "{} runs", s.runs());
        assert_eq!(read(&s.seal()), stable(&xs));
    }

    #[test]
    fn joined_stores_order_ties_by_store_then_push_order() {
        let a = items(&[2, 1, 2, 2]);
        let b: Vec<Item> = items(&[2, 0, 1])
            .into_iter()
            .map(|x| Item {
                pushed: x.pushed + 100,
                ..x
            })
            .collect();
        // a spills (2 records a run), b stays in memory.
        let sa = store(2 * ONE, &a);
        assert_eq!(sa.runs(), 1);
        let sb = store(1 << 20, &b);
        let joined = Sorted::join(vec![sa.seal(), sb.seal()]).unwrap();
        let all: Vec<Item> = a.iter().chain(&b).copied().collect();
        assert_eq!(read(&joined), stable(&all));
        let pushed: Vec<u32> = read(&joined).iter().map(|x| x.pushed).collect();
        assert_eq!(pushed, [101, 1, 102, 0, 2, 3, 100]);
    }

    #[test]
    fn joining_more_stores_than_the_fan_in_merges_the_lightest_neighbours() {
        // MAX_JOINED + 5 stores of 3 records, but stores 10–15 of one: merging those 6
        // brings the sources down to MAX_JOINED with the fewest bytes written.
        let parts: Vec<Vec<Item>> = (0..(MAX_JOINED as u32 + 5))
            .map(|p| {
                let keys: &[u32] = if (10..16).contains(&p) {
                    &[2]
                } else {
                    &[3, 1, 2]
                };
                items(keys)
                    .into_iter()
                    .map(|x| Item {
                        pushed: p * 10 + x.pushed,
                        ..x
                    })
                    .collect()
            })
            .collect();
        let stores = parts.iter().map(|p| store(1 << 20, p).seal()).collect();
        let joined = Sorted::join(stores).unwrap();
        assert_eq!(joined.sources.len(), MAX_JOINED);
        let merged: Vec<usize> = (0..MAX_JOINED)
            .filter(|&i| matches!(joined.sources[i], Source::File(_)))
            .collect();
        assert_eq!(merged, [10]);
        let all: Vec<Item> = parts.concat();
        assert_eq!(read(&joined), stable(&all));
    }

    #[test]
    fn a_record_over_the_bound_is_refused_and_nothing_else_changes() {
        struct Big;
        impl Record for Big {
            fn encode(&self, out: &mut Vec<u8>) {
                out.resize(out.len() + MAX_RECORD + 1, 0);
            }
            fn decode(_: &[u8]) -> Option<Self> {
                Some(Big)
            }
            fn cmp_encoded(_: &[u8], _: &[u8]) -> Ordering {
                Ordering::Equal
            }
        }
        let mut s = SpillSort::new(1 << 20);
        assert!(s.push(&Big).is_err());
        assert_eq!(s.len(), 0);
        assert_eq!(s.seal().iter().count(), 0);
    }

    #[test]
    fn a_run_that_cannot_be_written_is_an_error_that_names_the_directory() {
        let dir = "/nonexistent/tcpwhy-spill";
        let mut s = SpillSort::new(ONE).in_dir(dir);
        s.push(&items(&[1])[0]).unwrap();
        // The second record takes the store over its budget: the first is written.
        let e = s.push(&items(&[2])[0]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(
            e.to_string()
                .starts_with("creating a temporary file in /nonexistent/tcpwhy-spill: "),
            "{e}"
        );
    }

    #[test]
    fn a_damaged_run_is_an_error_not_a_panic() {
        let s = store(ONE, &items(&[1, 2])).seal();
        // Overwrite the first run's length with one above the bound.
        let Source::File(run) = &s.sources[0] else {
            panic!("the first source is a run")
        };
        #[cfg(unix)]
        std::os::unix::fs::FileExt::write_at(&run.file, &u32::MAX.to_le_bytes(), 0).unwrap();
        let got: Vec<io::Result<Item>> = s.iter().collect();
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].as_ref().unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
