//! Capture files to frames, and frames to decoded TCP segments.
//!
//! Two layers, both free of I/O policy above them, and a writer:
//! - [`reader`]: pcap (µs/ns, both byte orders, Kuznetzov's modified format), pcapng
//!   (several sections and interfaces, per-interface link type and timestamp resolution),
//!   optionally gzip-compressed; from a memory-mapped file or any `Read` (stdin). Yields
//!   [`Frame`]s numbered from 1 as Wireshark numbers them. A damaged file ends the
//!   iteration with a [`CaptureError`] that says where and why; what was read before stays
//!   valid.
//! - [`mod@decode`]: link layer → IP → TCP header and options, as an allocation-free
//!   [`Packet`]; anything else is a [`SkipReason`], counted in [`SkipCounts`].
//! - [`annotate`]: the same records written back as pcapng with packet comments added.
//!
//! Third-party parsers (pcap-parser) stay behind these types; the decoder is hand-written
//! (crates/capture/PERF.md says why).

pub mod annotate;
pub mod bounds;
pub mod decode;
mod format;
pub mod frame;
mod pcap;
mod pcapng;
pub mod reader;
mod source;

pub use decode::{
    decode, flow_addrs, icmp_error, plain_ipv4_ends, FlowAddrs, IcmpError, IcmpErrorKind, Ipv4Ends,
    Packet, SkipCounts, SkipReason, TcpFlags, TcpOptions, MAX_SACK_BLOCKS,
};
pub use frame::{Frame, FrameAt, LinkType, Timestamp};
pub use reader::{Capture, CaptureError, CaptureErrorKind, FileFormat, MapSpan, MappedBytes};
