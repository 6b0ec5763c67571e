//! The connections `tcpwhy flows` prints, one row each in `tcp.stream` order, held in a
//! [`SpillSort`] as the tracker finalises them (each summary as its postcard encoding,
//! tens of bytes for a short connection) so that memory does not grow with the number
//! of connections in the capture (issue 13). Reading them back folds continuations into
//! their connection, settles the client of connections seen without a handshake, and
//! numbers a sharded pass's streams, one row at a time.

use crate::spill::{Record, Sorted, SpillSort};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::io;
use tcpwhy_track::{ClientBy, ConnSummary, Endpoint};

/// Bytes before a row's summary: stream and first frame big-endian with the
/// continuation flag between them (so that comparing them as bytes sorts by stream,
/// a connection's first part before its continuations, then by first frame), then the
/// shard that tracked it.
const KEY_LEN: usize = 8 + 1 + 8;
const HEAD_LEN: usize = KEY_LEN + 2;

/// A finalised connection (or continuation) and the shard of the pass that saw it.
pub(crate) struct Row(pub ConnSummary, pub u16);

impl Record for Row {
    fn encode(&self, out: &mut Vec<u8>) {
        let c = &self.0;
        out.extend_from_slice(&c.stream.to_be_bytes());
        out.push(u8::from(c.continuation));
        out.extend_from_slice(&c.first_frame.to_be_bytes());
        out.extend_from_slice(&self.1.to_le_bytes());
        let bytes = std::mem::take(out);
        // Every field of a summary has a known encoding and a Vec cannot be full.
        *out = postcard::to_extend(c, bytes).expect("a ConnSummary encodes");
    }

    fn decode(b: &[u8]) -> Option<Self> {
        let u64_at = |at: usize| Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?));
        let shard = u16::from_le_bytes(b.get(KEY_LEN..HEAD_LEN)?.try_into().ok()?);
        let mut c: ConnSummary = postcard::from_bytes(b.get(HEAD_LEN..)?).ok()?;
        // The summary's encoding leaves out what the key holds.
        c.stream = u64_at(0)?;
        c.continuation = *b.get(8)? != 0;
        c.first_frame = u64_at(9)?;
        Some(Row(c, shard))
    }

    fn cmp_encoded(a: &[u8], b: &[u8]) -> Ordering {
        a[..KEY_LEN.min(a.len())].cmp(&b[..KEY_LEN.min(b.len())])
    }
}

/// What a pass keeps of its connections while it runs: the rows, and the endpoints seen
/// as servers (a SYN or SYN/ACK named them), which settle guessed clients at the end.
pub(crate) struct RowStore {
    pub rows: SpillSort<Row>,
    pub servers: HashSet<Endpoint>,
    pub shard: u16,
    /// The first error writing the rows (a full disk): the pass fails with it.
    pub error: Option<io::Error>,
}

impl RowStore {
    pub fn new(budget: usize, shard: u16) -> Self {
        RowStore {
            rows: SpillSort::new(budget),
            servers: HashSet::new(),
            shard,
            error: None,
        }
    }

    pub fn push(&mut self, c: ConnSummary) {
        if !c.continuation && matches!(c.client_by, ClientBy::Syn | ClientBy::SynAck) {
            self.servers.insert(c.endpoints[1]);
        }
        if self.error.is_none() {
            self.error = self.rows.push(&Row(c, self.shard)).err();
        }
    }
}

/// Every connection of a pass, read back sorted by stream, continuations folded.
#[derive(Default)]
pub struct Connections {
    rows: Sorted<Row>,
    /// Each shard's servers, then (`servers`) every shard's.
    shard_servers: Vec<HashSet<Endpoint>>,
    servers: HashSet<Endpoint>,
    /// Whether the streams are a sharded pass's provisional ids, numbered on reading.
    provisional: bool,
    /// Only these streams are read (`flows --stream`).
    only: Option<u64>,
}

impl Connections {
    pub(crate) fn new(stores: Vec<(Sorted<Row>, HashSet<Endpoint>)>) -> io::Result<Self> {
        let provisional = stores.len() > 1;
        let (rows, shard_servers): (Vec<_>, Vec<_>) = stores.into_iter().unzip();
        let servers = if provisional {
            shard_servers.iter().flatten().copied().collect()
        } else {
            HashSet::new()
        };
        Ok(Connections {
            rows: Sorted::join(rows)?,
            shard_servers,
            servers,
            provisional,
            only: None,
        })
    }

    /// Connections from summaries already made (tests and library callers), one shard:
    /// read back in stream order like a pass's.
    pub fn from_summaries(rows: impl IntoIterator<Item = ConnSummary>) -> io::Result<Self> {
        let mut store = RowStore::new(crate::spill::SPILL_BUDGET, 0);
        for c in rows {
            store.push(c);
        }
        if let Some(e) = store.error.take() {
            return Err(e);
        }
        Connections::new(vec![(store.rows.seal(), store.servers)])
    }

    /// Rows stored, continuations included: an upper bound of the connections read.
    pub fn stored_rows(&self) -> u64 {
        self.rows.len()
    }

    /// Keeps only stream `stream` (its final number).
    pub fn retain_stream(&mut self, stream: u64) {
        self.only = Some(stream);
    }

    /// The rows in stream order, decoded one at a time; an error reading a temporary
    /// file back ends them.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            conns: self,
            rows: self.rows.iter(),
            next: None,
            number: 0,
            failed: false,
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

/// The rows of [`Connections`], one folded connection at a time.
pub struct Iter<'a> {
    conns: &'a Connections,
    rows: crate::spill::Iter<'a, Row>,
    /// A row read ahead (the one after a connection's last continuation).
    next: Option<Row>,
    /// Connections read so far: a sharded pass's next stream number.
    number: u64,
    failed: bool,
}

impl Iter<'_> {
    fn read(&mut self) -> io::Result<Option<Row>> {
        match self.next.take() {
            Some(r) => Ok(Some(r)),
            None => self.rows.next().transpose(),
        }
    }

    /// The next connection, its continuations folded in, settled and numbered.
    fn connection(&mut self) -> io::Result<Option<ConnSummary>> {
        let Some(Row(mut c, shard)) = self.read()? else {
            return Ok(None);
        };
        while let Some(r) = self.read()? {
            if r.0.stream == c.stream {
                c.absorb(&r.0);
            } else {
                self.next = Some(r);
                break;
            }
        }
        self.conns.settle(&mut c, shard);
        if self.conns.provisional {
            c.stream = self.number;
        }
        self.number += 1;
        Ok(Some(c))
    }
}

impl Iterator for Iter<'_> {
    type Item = io::Result<ConnSummary>;

    fn next(&mut self) -> Option<io::Result<ConnSummary>> {
        while !self.failed {
            match self.connection() {
                Ok(Some(c)) if self.conns.only.is_some_and(|s| s != c.stream) => continue,
                Ok(c) => return c.map(Ok),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        None
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
        }
    }

    /// `shards`' rows through stores of `budget` bytes each.
    fn connections(shards: Vec<Vec<ConnSummary>>, budget: usize) -> Connections {
        let stores = shards
            .into_iter()
            .enumerate()
            .map(|(i, rows)| {
                let mut s = RowStore::new(budget, i as u16);
                rows.into_iter().for_each(|c| s.push(c));
                assert!(s.error.is_none());
                (s.rows.seal(), s.servers)
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
            all.retain_stream(3);
            assert_eq!(
                read(&all).iter().map(|c| c.endpoints).collect::<Vec<_>>(),
                [[ep(3, 1), server]]
            );
        }
    }

    #[test]
    fn no_connections_read_nothing() {
        assert!(read(&connections(vec![vec![]], 1)).is_empty());
        assert!(read(&Connections::default()).is_empty());
    }
}
