//! The reader's records as they are in the file: each frame with the bytes of the record
//! or block that held it, and every pcapng block that is not a packet. For a writer that
//! copies a capture through (`crate::annotate`); the analysis reads [`Capture::next_frame`].

use super::{Capture, Parser};
use crate::frame::Frame;

/// One record of the input, borrowed until the next call.
pub(crate) enum Record<'a> {
    /// A frame (numbered as [`Capture::next_frame`] numbers it) and its whole record:
    /// a pcap record header and data, or a pcapng packet block with its options.
    Packet { frame: Frame<'a>, raw: &'a [u8] },
    /// A pcapng block that holds no packet (section header, interface description,
    /// statistics, name resolution, secrets, custom, unknown), whole.
    Block(&'a [u8]),
}

/// What a legacy pcap file's header says of its one interface.
#[derive(Copy, Clone, Debug)]
pub(crate) struct PcapInterface {
    /// The network field: link type in the low 16 bits, FCS information above.
    pub network: u32,
    pub snaplen: u32,
    /// The file's byte order, for reading a record header's time as written.
    pub order: crate::format::ByteOrder,
}

impl Capture {
    /// The header's interface of a legacy pcap file; `None` for pcapng.
    pub(crate) fn pcap_interface(&self) -> Option<PcapInterface> {
        match &self.parser {
            Parser::Pcap(p) => Some(PcapInterface {
                network: p.network,
                snaplen: p.snaplen,
                order: p.order,
            }),
            Parser::PcapNg(_) => None,
        }
    }

    /// The next record, `Ok(None)` at the end; frames are numbered and errors reported
    /// exactly as by [`Capture::next_frame`], whose walk this is.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record<'_>>, super::CaptureError> {
        self.next_stepped(true)
    }
}
