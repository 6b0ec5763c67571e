//! Byte sources under the reader: a whole input in memory (memory map or owned bytes), or
//! a bounded window sliding over a stream (stdin, a pipe, a gzip decoder).
//!
//! Both present the same interface: a window of bytes starting at the current record, a
//! way to ask for at least N bytes in it, and a way to consume the record. Format parsers
//! look only at the window, so the same parsing code serves both paths.

use flate2::read::MultiGzDecoder;
use memmap2::{Advice, Mmap, UncheckedAdvice};
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The two bytes every gzip member starts with (RFC 1952 §2.3.1, ID1 ID2).
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Initial size of the stream window: large enough that a `read` call moves many records
/// at once, small enough to be irrelevant in memory.
const STREAM_INITIAL_WINDOW: usize = 256 * 1024;

/// The window may grow to hold one record, up to this size; the format parsers reject
/// any record or block larger than this before asking for it.
pub(crate) const MAX_WINDOW: usize = crate::bounds::MAX_BLOCK_LEN;
const _: () = assert!(STREAM_INITIAL_WINDOW <= MAX_WINDOW);

/// Where the bytes come from.
pub(crate) enum Source {
    /// The whole input is addressable: the fast, zero-copy path.
    Whole(Whole),
    /// Bytes arrive through `Read`: a bounded window is refilled as records are consumed.
    Stream(Stream),
}

pub(crate) enum Backing {
    /// A memory map, possibly read by several readers (threads): this is reader number
    /// `reader`. Two variants only: the bytes are looked up for every record.
    Map {
        map: Arc<SharedMap>,
        reader: usize,
    },
    Owned(Vec<u8>),
}

impl Backing {
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Map { map, .. } => &map.map,
            Backing::Owned(v) => v,
        }
    }
}

/// A memory map read by one reader, or by one reader and the threads it hands frames to
/// by position (`crate::MappedBytes`, one "reader" each that pages nothing itself): the
/// reader populates each chunk ahead of itself, and a chunk is released once the reader
/// and every holder have passed it (or the reader leads by [`SHARED_MAX_LEAD`]). Only
/// reader 0 (the [`Source`]) pages; the others only say where they are
/// ([`SharedMap::hold_from`]).
pub(crate) struct SharedMap {
    map: Mmap,
    /// Each reader's position as of its last paging call (never ahead of the reader);
    /// `usize::MAX` once it is done.
    positions: Vec<AtomicUsize>,
    /// Everything below this offset has been populated.
    populated: AtomicUsize,
    /// Everything below this offset has been released.
    released: AtomicUsize,
}

/// How far the reader of a shared map may be ahead of the slowest holder before pages the
/// holder still needs are released anyway (it faults them in again from the page
/// cache): 8 chunks, many times the spread of a sharded pass's bounded queues.
const SHARED_MAX_LEAD: usize = 8 * MAP_CHUNK;

impl SharedMap {
    pub(crate) fn new(map: Mmap, readers: usize) -> Arc<SharedMap> {
        Arc::new(SharedMap {
            map,
            positions: (0..readers).map(|_| AtomicUsize::new(0)).collect(),
            populated: AtomicUsize::new(0),
            released: AtomicUsize::new(0),
        })
    }

    /// The paging reader, `reader`, is at `pos`: populate the chunk from `start` (the
    /// chunk holding `pos` or the next, never below what was released: see
    /// [`Whole::advise`]), and release what every reader has left behind.
    fn advise(&self, reader: usize, pos: usize, start: usize) {
        let len = self.map.len();
        let start = start.min(len);
        let end = start.saturating_add(MAP_CHUNK).min(len);
        let before = self.populated.fetch_max(end, Ordering::Relaxed);
        let from = before.max(start);
        if from < end {
            let _ = self
                .map
                .advise_range(Advice::PopulateRead, from, end - from);
        }
        if let Some(p) = self.positions.get(reader) {
            p.store(pos, Ordering::Relaxed);
        }
        let slowest = self
            .positions
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .min()
            .unwrap_or(0)
            .min(len);
        // A reader more than SHARED_MAX_LEAD ahead (the other threads were descheduled)
        // does not wait: memory stays bounded, and the laggards page in again.
        let keep_from = slowest
            .saturating_sub(MAP_CHUNK)
            .max(pos.saturating_sub(SHARED_MAX_LEAD))
            / MAP_CHUNK
            * MAP_CHUNK;
        let released = self.released.fetch_max(keep_from, Ordering::Relaxed);
        if keep_from > released {
            self.release(released, keep_from);
        }
    }

    /// Drops the pages of `from..to` from this process (a hint: errors are ignored).
    fn release(&self, from: usize, to: usize) {
        // SAFETY: the map is read-only and shared with the file, so dropping its pages
        // changes no byte seen through it: a later access faults the same bytes in again
        // from the page cache. That holds even for a frame a lagging reader still borrows
        // there (see SHARED_MAX_LEAD); normally every reader is past the range.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(UncheckedAdvice::DontNeed, from, to - from)
        };
    }

    /// The mapped bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Reader `reader`, which reads frames another reader found and pages nothing itself
    /// (`crate::MappedBytes`), reads nothing before `pos` from now on.
    pub(crate) fn hold_from(&self, reader: usize, pos: usize) {
        if let Some(p) = self.positions.get(reader) {
            p.store(pos, Ordering::Relaxed);
        }
    }

    /// Reader `reader` is done: it no longer holds pages back.
    pub(crate) fn leave(&self, reader: usize) {
        if let Some(p) = self.positions.get(reader) {
            p.store(usize::MAX, Ordering::Relaxed);
        }
    }
}

impl Drop for Whole {
    fn drop(&mut self) {
        if let Backing::Map { map, reader } = &self.backing {
            map.leave(*reader);
        }
    }
}

pub(crate) struct Whole {
    backing: Backing,
    pos: usize,
    /// Position at which the next chunk of a memory map is populated ahead.
    next_advice: usize,
}

/// A memory-mapped capture is paged in ahead of the reader in chunks of this size
/// (MADV_POPULATE_READ: one system call instead of a page fault per 4 KiB) and released
/// two chunks behind it (MADV_DONTNEED), so resident memory stays at a few chunks however
/// long the file. Measured on a 700 MB capture: the page faults cost ~10 % of the pass.
const MAP_CHUNK: usize = 4 << 20;

impl Whole {
    /// Bytes from the current position on: the whole rest of the input.
    #[inline]
    pub(crate) fn window(&self) -> &[u8] {
        self.backing.bytes().get(self.pos..).unwrap_or(&[])
    }

    /// Pages the next chunk in and releases the part already read. Errors are ignored:
    /// both are hints (MADV_POPULATE_READ needs Linux 5.14).
    ///
    /// The chunk is the one holding the position when a record longer than a chunk (a
    /// pcapng block may take 16 MiB) left the next one behind: what lies behind the
    /// reader was released, or will be, and paging it in again would be wasted. So the
    /// chunk paged is never below the release point (at most the chunk before the
    /// reader's last position), and the only paging reader never falls behind it.
    #[cold]
    fn advise(&mut self) {
        Self::advise_at(&self.backing, self.pos, &mut self.next_advice);
    }

    /// [`Self::advise`] on the fields, for a caller that holds the bytes borrowed.
    #[cold]
    fn advise_at(backing: &Backing, pos: usize, next_advice: &mut usize) {
        let start = (*next_advice).max(pos / MAP_CHUNK * MAP_CHUNK);
        if let Backing::Map { map, reader } = backing {
            map.advise(*reader, pos, start);
        }
        *next_advice = start.saturating_add(MAP_CHUNK);
    }

    /// Consumes up to `max` records from the current position, one after the other: for
    /// each, `parse` looks at the rest of the input and gives the record's length (at
    /// most what is left) and what it read of it, or `None` to stop there; then `each`
    /// gets that and the record's bytes, and may stop the walk after it
    /// (`ControlFlow::Break`). Returns how many were consumed. The same as
    /// [`Source::window`] and [`Source::take`] record by record, with the backing looked
    /// up once for all of them rather than twice a record.
    #[inline(always)]
    pub(crate) fn walk<R>(
        &mut self,
        max: u64,
        mut parse: impl FnMut(&[u8]) -> Option<(usize, R)>,
        mut each: impl FnMut(R, &[u8]) -> ControlFlow<()>,
    ) -> u64 {
        let Whole {
            backing,
            pos,
            next_advice,
        } = self;
        let bytes = backing.bytes();
        let mut n = 0;
        while n < max {
            let window = bytes.get(*pos..).unwrap_or(&[]);
            let Some((len, r)) = parse(window) else {
                break;
            };
            if *pos >= *next_advice {
                Self::advise_at(backing, *pos, next_advice);
            }
            let record = window.get(..len).unwrap_or(window);
            *pos += record.len();
            n += 1;
            if each(r, record).is_break() {
                break;
            }
        }
        n
    }
}

/// A reader that counts the bytes it hands out, so progress can be reported in input
/// (compressed) bytes.
pub(crate) struct Counting {
    inner: Box<dyn Read + Send>,
    count: u64,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count = self.count.saturating_add(n as u64);
        Ok(n)
    }
}

enum Input {
    Plain(Counting),
    // Multi-member, like `gzip -d`: concatenated .gz files decompress as one stream.
    Gzip(Box<MultiGzDecoder<Counting>>),
}

impl Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Plain(r) => r.read(buf),
            Input::Gzip(r) => r.read(buf),
        }
    }
    fn raw_count(&self) -> u64 {
        match self {
            Input::Plain(r) => r.count,
            Input::Gzip(r) => r.get_ref().count,
        }
    }
}

pub(crate) struct Stream {
    input: Input,
    buf: Vec<u8>,
    /// Window = `buf[start..end]`.
    start: usize,
    end: usize,
    /// Stream offset of `buf[0]` (decompressed bytes).
    buf_offset: u64,
    eof: bool,
}

impl Source {
    pub(crate) fn from_map(map: Mmap) -> Source {
        Source::Whole(Whole {
            backing: Backing::Map {
                map: SharedMap::new(map, 1),
                reader: 0,
            },
            pos: 0,
            next_advice: 0,
        })
    }

    /// Reader number `reader` of a map shared by several.
    pub(crate) fn from_shared(map: Arc<SharedMap>, reader: usize) -> Source {
        Source::Whole(Whole {
            backing: Backing::Map { map, reader },
            pos: 0,
            next_advice: 0,
        })
    }

    pub(crate) fn from_vec(bytes: Vec<u8>) -> Source {
        Source::Whole(Whole {
            backing: Backing::Owned(bytes),
            pos: 0,
            // Owned bytes need no paging advice.
            next_advice: usize::MAX,
        })
    }

    /// Wraps a reader; looks at its first two bytes to decide whether to decompress.
    pub(crate) fn from_reader(mut reader: Box<dyn Read + Send>) -> io::Result<Source> {
        let mut prefix = [0u8; GZIP_MAGIC.len()];
        let got = read_up_to(&mut reader, &mut prefix)?;
        let is_gzip = prefix[..got] == GZIP_MAGIC;
        // Put the peeked bytes back in front of the rest.
        let chained: Box<dyn Read + Send> =
            Box::new(io::Cursor::new(prefix[..got].to_vec()).chain(reader));
        let counting = Counting {
            inner: chained,
            count: 0,
        };
        let input = if is_gzip {
            Input::Gzip(Box::new(MultiGzDecoder::new(counting)))
        } else {
            Input::Plain(counting)
        };
        Ok(Source::Stream(Stream {
            input,
            buf: Vec::new(),
            start: 0,
            end: 0,
            buf_offset: 0,
            eof: false,
        }))
    }

    /// Bytes from the current position on (possibly fewer than the rest of the input for
    /// a stream: call [`Source::fill`] first).
    #[inline]
    pub(crate) fn window(&self) -> &[u8] {
        match self {
            Source::Whole(w) => w.window(),
            Source::Stream(s) => &s.buf[s.start..s.end],
        }
    }

    /// Makes the window at least `want` bytes long; `Ok(false)` if the input ends first.
    /// `want` must not exceed [`MAX_WINDOW`].
    pub(crate) fn fill(&mut self, want: usize) -> io::Result<bool> {
        match self {
            Source::Whole(_) => Ok(self.window().len() >= want),
            Source::Stream(s) => s.fill(want),
        }
    }

    /// Consumes `n` bytes (at most the window) and returns them; they stay valid until the
    /// next call on the source.
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> &[u8] {
        match self {
            Source::Whole(w) => {
                if w.pos >= w.next_advice {
                    w.advise();
                }
                let bytes = w.backing.bytes();
                let end = w.pos.saturating_add(n).min(bytes.len());
                let out = &bytes[w.pos..end];
                w.pos = end;
                out
            }
            Source::Stream(s) => {
                let end = s.start.saturating_add(n).min(s.end);
                let out = &s.buf[s.start..end];
                s.start = end;
                out
            }
        }
    }

    /// Stream offset (decompressed) of the start of the window.
    pub(crate) fn offset(&self) -> u64 {
        match self {
            Source::Whole(w) => w.pos as u64,
            Source::Stream(s) => s.buf_offset.saturating_add(s.start as u64),
        }
    }

    /// Input bytes consumed so far (compressed bytes for gzip), for progress.
    pub(crate) fn bytes_read(&self) -> u64 {
        match self {
            Source::Whole(w) => w.pos as u64,
            Source::Stream(s) => match s.input {
                // What was handed to the parser, not what sits read-ahead in the window.
                Input::Plain(_) => s.buf_offset.saturating_add(s.start as u64),
                Input::Gzip(_) => s.input.raw_count(),
            },
        }
    }
}

impl Stream {
    fn fill(&mut self, want: usize) -> io::Result<bool> {
        let want = want.min(MAX_WINDOW);
        if self.end - self.start >= want {
            return Ok(true);
        }
        if self.eof {
            return Ok(false);
        }
        // Slide the unconsumed tail to the front; the previous frame's bytes, which the
        // caller may still hold, are gone only after this call, as documented.
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.buf_offset = self.buf_offset.saturating_add(self.start as u64);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end < want {
            if self.end == self.buf.len() {
                // Grow by doubling as bytes actually arrive, up to what this record needs:
                // a header claiming a huge record costs memory only if the bytes follow.
                // (clamp cannot panic: the bounds are ordered, checked at compile time.)
                let new_len = self
                    .buf
                    .len()
                    .saturating_mul(2)
                    .clamp(STREAM_INITIAL_WINDOW, MAX_WINDOW);
                self.buf.resize(new_len, 0);
            }
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
fn read_up_to(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
