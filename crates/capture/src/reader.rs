//! Capture file reader: pcap / pcapng (optionally gzip) from a memory map or a stream.

use crate::frame::Frame;
use std::fmt;
use std::path::Path;

/// Container format of the capture.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FileFormat {
    Pcap { nanosecond: bool, big_endian: bool, modified: bool },
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
            CaptureErrorKind::Io(e) => write!(f, "read error: {e}"),
            CaptureErrorKind::NotACapture => {
                write!(f, "not a pcap or pcapng file (unknown magic number)")
            }
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
pub struct Capture {
    _private: (),
}

impl Capture {
    /// Opens a file: memory-mapped when possible; gzip is detected by its magic.
    pub fn open(path: &Path) -> Result<Capture, CaptureError> {
        let _ = path;
        unimplemented!("capture work")
    }

    /// Reads from a stream such as stdin; gzip is detected by its magic.
    pub fn from_reader(reader: Box<dyn std::io::Read + Send>) -> Result<Capture, CaptureError> {
        let _ = reader;
        unimplemented!("capture work")
    }

    /// The next frame, `Ok(None)` at the end. After an `Err`, every later call returns
    /// `Ok(None)`: the frames before the error stay valid.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        unimplemented!("capture work")
    }

    pub fn format(&self) -> FileFormat {
        unimplemented!("capture work")
    }

    /// Bytes of the input consumed so far (compressed bytes for gzip), for progress.
    pub fn bytes_read(&self) -> u64 {
        0
    }

    /// Total input size when known (a file), for progress.
    pub fn total_bytes(&self) -> Option<u64> {
        None
    }
}
