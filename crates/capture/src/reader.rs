//! Capture file reader: pcap / pcapng (optionally gzip) from a memory map or a stream.

use crate::format::Step;
use crate::frame::Frame;
use crate::pcap::{self, PcapParser};
use crate::pcapng::{self, PcapNgParser};
use crate::source::{SharedMap, Source, GZIP_MAGIC, MAX_WINDOW};
use std::fmt;
use std::fs::File;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

mod records;
pub(crate) use records::Record;

/// Container format of the capture.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FileFormat {
    Pcap {
        nanosecond: bool,
        big_endian: bool,
        modified: bool,
    },
    PcapNg,
}

/// What went wrong, for a clear one-line message.
#[derive(Debug)]
pub enum CaptureErrorKind {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The first bytes are no pcap, pcapng or gzip magic.
    NotACapture,
    /// The file ends in the middle of a record or block.
    Truncated,
    /// A record or block header is inconsistent (absurd length, bad block, …).
    Damaged(String),
}

/// An error with where it happened: byte offset in the (decompressed) stream and the
/// number of the frame being read.
#[derive(Debug)]
pub struct CaptureError {
    pub kind: CaptureErrorKind,
    /// Byte offset of the record or block that could not be read.
    pub offset: u64,
    /// Number the frame would have had (frames before it were read fine).
    pub frame: u64,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            CaptureErrorKind::Io(e) => write!(f, "{e}"),
            CaptureErrorKind::NotACapture => {
                write!(f, "not a pcap or pcapng file (unknown magic number)")
            }
            // Frame 0: the input ended before the first record could start.
            CaptureErrorKind::Truncated if self.frame == 0 && self.offset == 0 => {
                write!(f, "input is empty: no pcap or pcapng file header")
            }
            CaptureErrorKind::Truncated if self.frame == 0 => write!(
                f,
                "file ends inside the capture file header (after {} bytes)",
                self.offset
            ),
            CaptureErrorKind::Truncated => write!(
                f,
                "file ends in the middle of frame {} (byte offset {})",
                self.frame, self.offset
            ),
            CaptureErrorKind::Damaged(why) => write!(
                f,
                "damaged at frame {} (byte offset {}): {why}",
                self.frame, self.offset
            ),
        }
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            CaptureErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// A capture being read, frame by frame.
///
/// Owns its input (a memory map, bytes, or a stream) and the state of the format; frames
/// borrow its buffer until the next call, so reading allocates nothing per frame.
pub struct Capture {
    source: Source,
    parser: Parser,
    format: FileFormat,
    /// Frames returned so far: the next frame's number is `frames + 1`.
    frames: u64,
    /// Set after an error: every later call returns `Ok(None)`.
    done: bool,
    total_bytes: Option<u64>,
}

/// The format-specific half of the reader.
enum Parser {
    Pcap(PcapParser),
    PcapNg(PcapNgParser),
}

/// Bytes needed to tell the formats apart: every magic number is four bytes.
const MAGIC_LEN: usize = 4;

impl Capture {
    /// Opens a file: memory-mapped when possible; gzip is detected by its magic.
    ///
    /// A gzip file is decompressed as a stream (never whole in memory). Special files
    /// that cannot be mapped (pipes, `/dev/stdin`) are read as a stream too.
    pub fn open(path: &Path) -> Result<Capture, CaptureError> {
        let file = File::open(path).map_err(io_error_at(0))?;
        let meta = file.metadata().map_err(io_error_at(0))?;
        let len = meta.len();
        if !meta.is_file() {
            return Capture::with_source(
                Source::from_reader(Box::new(file)).map_err(io_error_at(0))?,
                None,
            );
        }
        if len == 0 {
            // Nothing to map (mapping zero bytes fails on Linux).
            return Capture::with_source(Source::from_vec(Vec::new()), Some(0));
        }
        // SAFETY: the map is read-only and private to this reader. If another process
        // truncates the file while we read it, the kernel raises SIGBUS: the same risk
        // every mmap-based capture reader (libpcap's, Wireshark's) takes for speed.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_error_at(0))?;
        if map.starts_with(&GZIP_MAGIC) {
            drop(map);
            let source = Source::from_reader(Box::new(std::io::BufReader::new(file)))
                .map_err(io_error_at(0))?;
            return Capture::with_source(source, Some(len));
        }
        #[cfg(unix)]
        {
            // Read-ahead for one sequential pass; only a hint, so failure is harmless.
            let _ = map.advise(memmap2::Advice::Sequential);
        }
        Capture::with_source(Source::from_map(map), Some(len))
    }

    /// Opens a file as [`Capture::open`] does, for a reader that hands its frames to
    /// `holders` other threads by position ([`crate::FrameAt`]) instead of copying
    /// them: when the file is memory-mapped, one [`MappedBytes`] per holder over the same
    /// map. The map is paged in ahead of the reader and released behind the slowest
    /// holder, so resident memory stays bounded however long the file. Inputs that are
    /// not mapped (a pipe, gzip, an empty file) give no holders: their frames must be
    /// copied.
    pub fn open_handing_out(
        path: &Path,
        holders: usize,
    ) -> Result<(Capture, Vec<MappedBytes>), CaptureError> {
        let file = File::open(path).map_err(io_error_at(0))?;
        let meta = file.metadata().map_err(io_error_at(0))?;
        if !meta.is_file() || meta.len() == 0 {
            return Ok((Capture::open(path)?, Vec::new()));
        }
        // SAFETY: as in `open`.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_error_at(0))?;
        if map.starts_with(&GZIP_MAGIC) {
            return Ok((Capture::open(path)?, Vec::new()));
        }
        #[cfg(unix)]
        {
            let _ = map.advise(memmap2::Advice::Sequential);
        }
        // Reader 0 is the capture, which pages the map; the holders follow it.
        let shared = SharedMap::new(map, 1 + holders);
        let held = (1..=holders)
            .map(|reader| MappedBytes {
                map: shared.clone(),
                reader,
            })
            .collect();
        let cap = Capture::with_source(Source::from_shared(shared, 0), Some(meta.len()))?;
        Ok((cap, held))
    }

    /// Reads from a stream such as stdin; gzip is detected by its magic.
    pub fn from_reader(reader: Box<dyn std::io::Read + Send>) -> Result<Capture, CaptureError> {
        let source = Source::from_reader(reader).map_err(io_error_at(0))?;
        Capture::with_source(source, None)
    }

    /// Reads a capture held in memory, through the same zero-copy path as a
    /// memory-mapped file (used by the fuzzer and by tests; gzip is streamed from it).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Capture, CaptureError> {
        let len = bytes.len() as u64;
        if bytes.starts_with(&GZIP_MAGIC) {
            let source = Source::from_reader(Box::new(std::io::Cursor::new(bytes)))
                .map_err(io_error_at(0))?;
            return Capture::with_source(source, Some(len));
        }
        Capture::with_source(Source::from_vec(bytes), Some(len))
    }

    /// Reads the file header and picks the format parser.
    fn with_source(mut source: Source, total_bytes: Option<u64>) -> Result<Capture, CaptureError> {
        let header_error = |kind, offset| CaptureError {
            kind,
            offset,
            frame: 0,
        };
        if !source.fill(MAGIC_LEN).map_err(io_error_at(0))? {
            let got = source.window().len() as u64;
            return Err(header_error(
                if got == 0 {
                    CaptureErrorKind::Truncated
                } else {
                    CaptureErrorKind::NotACapture
                },
                got,
            ));
        }
        let mut magic = [0u8; MAGIC_LEN];
        magic.copy_from_slice(&source.window()[..MAGIC_LEN]);
        let (format, parser) = if let Some(format) = pcap::sniff(magic) {
            if !source
                .fill(pcap::GLOBAL_HEADER_LEN)
                .map_err(io_error_at(0))?
            {
                let got = source.window().len() as u64;
                return Err(header_error(CaptureErrorKind::Truncated, got));
            }
            let parser = PcapParser::new(format, &source.window()[..pcap::GLOBAL_HEADER_LEN]);
            source.take(pcap::GLOBAL_HEADER_LEN);
            (format, Parser::Pcap(parser))
        } else if u32::from_le_bytes(magic) == pcapng::SHB_TYPE {
            // The section header is an ordinary block to the pcapng parser.
            (FileFormat::PcapNg, Parser::PcapNg(PcapNgParser::new()))
        } else {
            return Err(header_error(CaptureErrorKind::NotACapture, 0));
        };
        Ok(Capture {
            source,
            parser,
            format,
            frames: 0,
            done: false,
            total_bytes,
        })
    }

    /// The next frame, `Ok(None)` at the end. After an `Err`, every later call returns
    /// `Ok(None)`: the frames before the error stay valid.
    ///
    /// Inline, with the common case (a classic pcap record wholly in memory, read in
    /// place) and the rest out of line in [`Self::next_frame_stepped`]: the call, the
    /// enum matches and the large `Step` and `Result` values were about half of the
    /// 195 instructions a frame took to read (callgrind, 1 M frames of the bench capture).
    /// Always: with only `#[inline]` the pipeline's loop called it (≈ 20 instructions a
    /// frame for the call and the `Result` in memory).
    #[inline(always)]
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        // Decided on a shared borrow so that the other path can still borrow mutably.
        let plain = match (&self.parser, &self.source) {
            (Parser::Pcap(p), Source::Whole(w)) if !self.done => p.plain_record(w.window()),
            _ => None,
        };
        if let Some(r) = plain {
            self.frames += 1;
            // The window holds the whole record (checked), so `take` gives all of it.
            let record = self.source.take(r.record_len);
            return Ok(Some(Frame {
                number: self.frames,
                ts: r.meta.ts,
                ts_untrusted: r.meta.ts_untrusted,
                link: r.meta.link,
                interface: r.meta.interface,
                data: record.get(pcap::PLAIN_HEADER_LEN..).unwrap_or(&[]),
                orig_len: r.meta.orig_len,
            }));
        }
        self.next_frame_stepped()
    }

    /// Reads up to `max` frames as [`Self::next_frame`] would, handing each to `each`
    /// (which may stop the reading after it: `ControlFlow::Break`), while they are
    /// classic pcap records of a capture in memory (a file, memory mapped): returns how
    /// many were read. It stops before the first frame that is anything else
    /// (pcapng, a stream, a record cut short or damaged) and at the end of the file,
    /// where `next_frame` goes on; 0 says only that the next frame is for `next_frame`.
    /// The loop of a pass over a file: `next_frame` matched the parser, the source and
    /// its backing and moved the frame through a `Result` and an `Option` for every
    /// frame, ≈ 60 instructions a frame more (callgrind, `flows -j 1`, 300 k packets of
    /// the mixed bench capture).
    #[inline(always)]
    pub fn plain_frames(
        &mut self,
        max: u64,
        mut each: impl FnMut(Frame<'_>) -> ControlFlow<()>,
    ) -> u64 {
        let (Parser::Pcap(p), Source::Whole(w), false) =
            (&self.parser, &mut self.source, self.done)
        else {
            return 0;
        };
        let frames = &mut self.frames;
        w.walk(
            max,
            |window| p.plain_record(window).map(|r| (r.record_len, r.meta)),
            |meta, record| {
                *frames += 1;
                each(Frame {
                    number: *frames,
                    ts: meta.ts,
                    ts_untrusted: meta.ts_untrusted,
                    link: meta.link,
                    interface: meta.interface,
                    data: record.get(pcap::PLAIN_HEADER_LEN..).unwrap_or(&[]),
                    orig_len: meta.orig_len,
                })
            },
        )
    }

    /// [`Self::next_frame`] through the format parser's [`Step`]s: pcapng, a stream, and
    /// a pcap record that is cut short or damaged.
    #[inline(never)]
    fn next_frame_stepped(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        // Without blocks every record is a packet.
        Ok(match self.next_stepped(false)? {
            Some(Record::Packet { frame, .. }) => Some(frame),
            Some(Record::Block(_)) | None => None,
        })
    }

    /// The next record through the format parser's [`Step`]s, the one walk behind both
    /// [`Self::next_frame`] and [`Self::next_record`] (so they agree on every frame
    /// number and error). Non-packet blocks are returned when `blocks`, else skipped.
    /// Inlined into each caller so that `blocks` is a constant there: not inlined,
    /// returning the record through the enum cost 2 % of flows' instructions from
    /// standard input (callgrind, 1 M packets).
    #[inline(always)]
    fn next_stepped(&mut self, blocks: bool) -> Result<Option<Record<'_>>, CaptureError> {
        if self.done {
            return Ok(None);
        }
        loop {
            let step = match &mut self.parser {
                Parser::Pcap(p) => p.step(self.source.window()),
                Parser::PcapNg(p) => p.step(self.source.window()),
            };
            match step {
                Step::Packet {
                    record_len,
                    data_start,
                    data_len,
                    meta,
                } => {
                    self.frames += 1;
                    let raw = self.source.take(record_len);
                    // The parsers put the data inside the record; `get` keeps that a
                    // checked fact rather than a panic if one of them were wrong.
                    let data = raw
                        .get(data_start..data_start.saturating_add(data_len))
                        .unwrap_or(&[]);
                    let frame = Frame {
                        number: self.frames,
                        ts: meta.ts,
                        ts_untrusted: meta.ts_untrusted,
                        link: meta.link,
                        interface: meta.interface,
                        data,
                        orig_len: meta.orig_len,
                    };
                    return Ok(Some(Record::Packet { frame, raw }));
                }
                Step::Skip(n) if blocks => return Ok(Some(Record::Block(self.source.take(n)))),
                Step::Skip(n) => {
                    self.source.take(n);
                }
                Step::NeedBytes(n) => {
                    let have = self.source.window().len();
                    // Guard against a parser asking for what it already has (no hang).
                    if n <= have || n > MAX_WINDOW {
                        return self.fail(CaptureErrorKind::Damaged(format!(
                            "record of {n} bytes cannot be read"
                        )));
                    }
                    match self.source.fill(n) {
                        Ok(true) => {}
                        Ok(false) if self.source.window().is_empty() => {
                            self.done = true;
                            return Ok(None);
                        }
                        Ok(false) => return self.fail(CaptureErrorKind::Truncated),
                        Err(e) => return self.fail(CaptureErrorKind::Io(e)),
                    }
                }
                Step::Damaged(why) => return self.fail(CaptureErrorKind::Damaged(why)),
            }
        }
    }

    /// Ends the iteration with an error located at the current record.
    fn fail<T>(&mut self, kind: CaptureErrorKind) -> Result<T, CaptureError> {
        self.done = true;
        Err(CaptureError {
            kind,
            offset: self.source.offset(),
            frame: self.frames + 1,
        })
    }

    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// Bytes of the input consumed so far (compressed bytes for gzip), for progress.
    pub fn bytes_read(&self) -> u64 {
        self.source.bytes_read()
    }

    /// Total input size when known (a file), for progress.
    pub fn total_bytes(&self) -> Option<u64> {
        self.total_bytes
    }
}

/// The bytes of a memory-mapped capture for a thread that decodes frames another
/// thread's [`Capture`] found ([`Capture::open_handing_out`]).
pub struct MappedBytes {
    map: Arc<SharedMap>,
    /// This holder's number among the map's readers.
    reader: usize,
}

impl MappedBytes {
    /// The whole file, in which a [`crate::FrameAt`] of it names its bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.map.bytes()
    }

    /// Where `data`, the captured bytes of a frame read from this map, starts in
    /// [`Self::bytes`]; `None` for bytes that are not in the map (an empty frame's may
    /// not be).
    #[inline]
    pub fn offset_of(&self, data: &[u8]) -> Option<usize> {
        self.span().offset_of(data)
    }

    /// Where the map lies in memory, for the reader to tell where its frames' bytes are
    /// without holding the map.
    pub fn span(&self) -> MapSpan {
        MapSpan {
            base: self.bytes().as_ptr() as usize,
            len: self.bytes().len(),
        }
    }

    /// This holder reads nothing before `offset` from now on: pages behind it (and
    /// behind every other holder and the reader) may be released. Until it says so, it
    /// holds the map from its start, up to a bound on how far the reader may lead.
    pub fn hold_from(&self, offset: usize) {
        self.map.hold_from(self.reader, offset);
    }
}

/// The addresses of a memory map ([`MappedBytes::span`]).
#[derive(Copy, Clone, Debug)]
pub struct MapSpan {
    base: usize,
    len: usize,
}

impl MapSpan {
    /// [`MappedBytes::offset_of`].
    #[inline]
    pub fn offset_of(&self, data: &[u8]) -> Option<usize> {
        // Addresses compared, never dereferenced: the slice is inside the map only if
        // all of it is.
        let at = (data.as_ptr() as usize).checked_sub(self.base)?;
        (at.checked_add(data.len())? <= self.len).then_some(at)
    }
}

impl Drop for MappedBytes {
    fn drop(&mut self) {
        self.map.leave(self.reader);
    }
}

fn io_error_at(offset: u64) -> impl Fn(std::io::Error) -> CaptureError {
    move |e| CaptureError {
        kind: CaptureErrorKind::Io(e),
        offset,
        frame: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Large captures shard across threads: a reader must move between them.
    #[test]
    fn capture_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<Capture>();
    }

    #[test]
    fn header_only_pcap_then_no_frames() {
        let mut header = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        header.extend_from_slice(&[0; 8]);
        header.extend_from_slice(&0u32.to_le_bytes()); // snaplen 0
        header.extend_from_slice(&1u32.to_le_bytes());
        let mut cap = Capture::from_bytes(header).unwrap();
        assert!(cap.next_frame().unwrap().is_none());
        assert_eq!(cap.bytes_read(), 24);
        assert_eq!(cap.total_bytes(), Some(24));
    }

    /// `plain_frames` reads what `next_frame` reads, frame for frame, stops where a
    /// record is over the length bound (for `next_frame` to report), and reads nothing
    /// from a stream.
    #[test]
    fn plain_frames_read_what_next_frame_reads() {
        let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65535u32.to_le_bytes());
        file.extend_from_slice(&1u32.to_le_bytes());
        for (i, len) in [3u32, 0, 60, 7, 1].into_iter().enumerate() {
            for v in [1_700_000_000 + i as u32, 1_000 * i as u32, len, len + 4] {
                file.extend_from_slice(&v.to_le_bytes());
            }
            file.extend((0..len).map(|b| b as u8 ^ i as u8));
        }
        let damaged = file.len();
        for v in [0u32, 0, crate::bounds::MAX_CAPTURED_LEN + 1, 60] {
            file.extend_from_slice(&v.to_le_bytes());
        }
        let describe = |f: &Frame<'_>| {
            format!(
                "{} {:?} {} {:?} {} {:?} {}",
                f.number, f.ts, f.ts_untrusted, f.link, f.interface, f.data, f.orig_len
            )
        };
        let mut expected = Vec::new();
        let mut cap = Capture::from_bytes(file.clone()).unwrap();
        let err = loop {
            match cap.next_frame() {
                Ok(Some(f)) => expected.push(describe(&f)),
                Ok(None) => panic!("the damaged record was read"),
                Err(e) => break e,
            }
        };
        assert_eq!(expected.len(), 5);

        let mut cap = Capture::from_bytes(file.clone()).unwrap();
        let mut got = Vec::new();
        assert_eq!(
            cap.plain_frames(2, |f| {
                got.push(describe(&f));
                ControlFlow::Continue(())
            }),
            2
        );
        assert_eq!(
            cap.plain_frames(u64::MAX, |f| {
                got.push(describe(&f));
                ControlFlow::Break(())
            }),
            1
        );
        assert_eq!(
            cap.plain_frames(u64::MAX, |f| {
                got.push(describe(&f));
                ControlFlow::Continue(())
            }),
            2
        );
        assert_eq!(got, expected);
        assert_eq!(cap.bytes_read(), damaged as u64);
        assert_eq!(cap.plain_frames(u64::MAX, |_| ControlFlow::Continue(())), 0);
        assert_eq!(cap.next_frame().unwrap_err().to_string(), err.to_string());
        assert_eq!(cap.plain_frames(u64::MAX, |_| ControlFlow::Continue(())), 0);

        let mut stream = Capture::from_reader(Box::new(std::io::Cursor::new(file))).unwrap();
        assert_eq!(
            stream.plain_frames(u64::MAX, |_| ControlFlow::Continue(())),
            0
        );
        assert_eq!(
            describe(&stream.next_frame().unwrap().unwrap()),
            expected[0]
        );
    }
}
