//! TCP connection tracking: Wireshark-compatible stream indexes, per-direction sequence
//! state, classification of every segment, RTT samples and the capture's vantage point.
//!
//! No I/O and no clock: the tracker is fed decoded segments with their capture time and
//! frame number, returns a [`SegmentEvent`] for each, and hands out a [`ConnSummary`] per
//! connection when it is finalised (closed and quiet, long idle, or at the end).

pub mod ipid;
pub mod limits;
pub mod model;
mod reuse;
pub mod rtt;
pub mod seq;
pub mod summary;
pub mod summary_bytes;
pub mod tracker;

pub use ipid::IdStep;
pub use limits::{Limit, LimitTimes, MAX_APP_GAP_NS};
pub use model::{effective_mss, ConnModel, DirModel, SynSeen};
pub use rtt::{RttSamples, RttStats};
pub use summary::*;
pub use tracker::{
    Cuts, Sharder, Tracker, LIVE_CUT_START, MAX_CLOSED_TOMBSTONES, MAX_KEPT_TOMBSTONES,
    MAX_LIVE_CONNECTIONS, MAX_OPEN_HANDSHAKES, PROVISIONAL_STREAM,
};
