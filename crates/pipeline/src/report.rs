//! What a pass says about one capture file besides its findings: frame counts, skips,
//! where reading stopped, and its connections.

use crate::Connections;
use tcpwhy_capture::{SkipCounts, Timestamp};
use tcpwhy_track::ConnSummary;

/// Where a capture stopped early, for the report.
#[derive(Clone, Debug)]
pub struct ReadError {
    pub message: String,
    /// Frame number that could not be read.
    pub frame: u64,
    pub offset: u64,
}

/// What the reports say about a file's connections as a whole, gathered as they end so
/// that `analyze` need not keep them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnStats {
    /// Connections (`tcp.stream` values); a continuation is not another one.
    pub count: u64,
    /// The first packet of the earliest connection.
    pub start: Option<Timestamp>,
    /// ACKs for data the file does not hold (capture loss), and on how many connections.
    pub acked_unseen: u64,
    pub acked_unseen_connections: u64,
    /// ICMP errors quoting TCP headers (`ConnSummary::icmp_errors`), the first one's
    /// frame and the first "fragmentation needed" / "packet too big".
    pub icmp_errors: u64,
    pub icmp_first_frame: Option<u64>,
    pub icmp_too_big_frame: Option<u64>,
}

/// The earlier of two frames, either possibly unknown.
fn first(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl ConnStats {
    /// Takes in one finalised connection (or continuation).
    pub fn add(&mut self, c: &ConnSummary) {
        if !c.continuation {
            self.count += 1;
        }
        self.start = Some(self.start.map_or(c.start, |s| s.min(c.start)));
        let unseen = c.dirs[0].counts.acked_unseen + c.dirs[1].counts.acked_unseen;
        if unseen > 0 {
            self.acked_unseen += unseen;
            // A continuation's capture loss is its connection's: count that once at most.
            self.acked_unseen_connections += u64::from(!c.continuation);
        }
        if let Some(e) = &c.icmp_errors {
            self.icmp_errors += e.count;
            self.icmp_first_frame = first(self.icmp_first_frame, Some(e.first_frame));
            self.icmp_too_big_frame = first(self.icmp_too_big_frame, e.too_big_frame);
        }
    }

    /// The statistics of `conns` (continuations already merged).
    pub fn of(conns: impl IntoIterator<Item = ConnSummary>) -> Self {
        let mut s = ConnStats::default();
        conns.into_iter().for_each(|c| s.add(&c));
        s
    }

    /// The statistics of every connection of `conns`, read once.
    pub fn of_connections(conns: &Connections) -> std::io::Result<Self> {
        let mut s = ConnStats::default();
        for c in conns.iter() {
            s.add(&c?);
        }
        Ok(s)
    }

    /// Takes in another shard's statistics.
    pub fn merge(&mut self, o: &ConnStats) {
        self.count += o.count;
        self.start = match (self.start, o.start) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.acked_unseen += o.acked_unseen;
        self.acked_unseen_connections += o.acked_unseen_connections;
        self.icmp_errors += o.icmp_errors;
        self.icmp_first_frame = first(self.icmp_first_frame, o.icmp_first_frame);
        self.icmp_too_big_frame = first(self.icmp_too_big_frame, o.icmp_too_big_frame);
    }
}

/// Everything known about one capture file after the pass.
pub struct FileReport {
    pub path: String,
    pub format: String,
    pub frames: u64,
    pub tcp_frames: u64,
    pub skipped: SkipCounts,
    pub error: Option<ReadError>,
    /// What the reports say of the connections as a whole.
    pub stats: ConnStats,
    /// Connections sorted by stream index (continuations merged), compactly and beyond
    /// a memory budget in temporary files; `iter()` decodes a few at a time. Filled by
    /// `flows`, empty after `analyze`, which judges each as it ends and keeps none.
    pub connections: Connections,
    /// What the trackers' bounds on memory did, summed over the pass's threads (each
    /// keeps its share of the bounds):
    /// - `handshakes`: connections finalised in their handshake because more than
    ///   `tcpwhy_track::MAX_OPEN_HANDSHAKES` were open at once (a SYN flood, a scan);
    /// - `connections`: live connections finalised before their time because more than
    ///   `tcpwhy_track::LIVE_CUT_START` were live at once (then closed and one-sided
    ///   ones) or more than `tcpwhy_track::MAX_LIVE_CONNECTIONS` (then any);
    /// - `streams_forgotten`: ended connections whose 4-tuple's stream was forgotten
    ///   before 5 min because more than `tcpwhy_track::MAX_CLOSED_TOMBSTONES` were
    ///   remembered: a later segment without SYN on one starts a new stream where
    ///   Wireshark continues the old one, and a new SYN on one is not marked as reusing
    ///   its ports.
    ///
    /// A later segment of a connection finalised so continues its stream without being
    /// judged again.
    pub cuts: tcpwhy_track::Cuts,
}

impl FileReport {
    /// Keeps only the connection of stream `stream` (`flows --stream`), and what is said
    /// of it as a whole with it.
    pub fn retain_stream(&mut self, stream: u64) -> std::io::Result<()> {
        self.connections.retain_stream(stream);
        self.stats = ConnStats::of_connections(&self.connections)?;
        Ok(())
    }

    pub(crate) fn new(
        path: &str,
        format: String,
        frames: u64,
        tcp_frames: u64,
        skipped: SkipCounts,
        error: Option<ReadError>,
    ) -> Self {
        FileReport {
            path: path.to_string(),
            format,
            frames,
            tcp_frames,
            skipped,
            error,
            stats: ConnStats::default(),
            connections: Connections::default(),
            cuts: Default::default(),
        }
    }
}
