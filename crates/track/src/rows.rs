//! The finalised connections `tcpwhy flows` keeps until the end of a pass, compactly: each
//! [`ConnSummary`] (776 bytes in memory) as its postcard encoding — tens of bytes for a
//! short connection, whose counters are mostly zero — plus a 32-byte key (issue 13). Rows
//! are sorted, folded and numbered on the keys, decoding only the few rows that change;
//! readers decode one row at a time ([`ConnRows::iter`]).

use crate::{ClientBy, ConnSummary, Endpoint};
use serde::Deserialize;
use std::collections::HashSet;

/// The first fields of [`ConnSummary`]'s encoding, in its order: postcard encodes the
/// fields one after the other, so these decode from the start of a row.
#[derive(Deserialize)]
struct Roles {
    endpoints: [Endpoint; 2],
    client_by: ClientBy,
}

/// What a row keeps outside its encoding: what sorting, folding and numbering need.
#[derive(Clone, Copy, Debug)]
struct Key {
    stream: u64,
    first_frame: u64,
    /// Where the encoding is: `chunks[chunk][offset..offset + len]`.
    offset: usize,
    /// A [`ConnSummary`] encodes to a few hundred bytes at most (fixed fields, varints of
    /// at most 10 bytes), so 16 bits hold its length.
    len: u16,
    /// One chunk per shard of a sharded pass: joining shards moves their bytes, never
    /// copies them.
    chunk: u16,
    continuation: bool,
}

/// Connection summaries in a compact form, in the order they were pushed until
/// [`merge_by_stream`](ConnRows::merge_by_stream) or [`merge_shards`](ConnRows::merge_shards)
/// sorts them by stream.
#[derive(Clone, Debug, Default)]
pub struct ConnRows {
    chunks: Vec<Vec<u8>>,
    keys: Vec<Key>,
}

impl ConnRows {
    pub fn new() -> Self {
        ConnRows::default()
    }

    /// Rows kept.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keeps one summary, encoded.
    pub fn push(&mut self, c: &ConnSummary) {
        if self.chunks.is_empty() {
            self.chunks.push(Vec::new());
        }
        let chunk = self.chunks.len() - 1;
        let (offset, len) = self.encode(chunk, c);
        self.keys.push(Key {
            stream: c.stream,
            first_frame: c.first_frame,
            offset,
            len,
            chunk: chunk as u16,
            continuation: c.continuation,
        });
    }

    /// The rows, decoded one at a time.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            rows: self,
            keys: self.keys.iter(),
        }
    }

    /// Keeps only the rows whose stream index `keep` accepts (without decoding any).
    pub fn retain_streams(&mut self, mut keep: impl FnMut(u64) -> bool) {
        self.keys.retain(|k| keep(k.stream));
    }

    /// Appends the encoding of `c` to chunk `chunk`: where it starts and its length.
    fn encode(&mut self, chunk: usize, c: &ConnSummary) -> (usize, u16) {
        let bytes = std::mem::take(&mut self.chunks[chunk]);
        let offset = bytes.len();
        let bytes = postcard::to_extend(c, bytes)
            .expect("a ConnSummary encodes: no field of unknown length or unsupported type");
        let len = u16::try_from(bytes.len() - offset).expect("a ConnSummary encodes to < 64 KiB");
        self.chunks[chunk] = bytes;
        (offset, len)
    }

    fn decode(&self, k: &Key) -> ConnSummary {
        let bytes = &self.chunks[usize::from(k.chunk)][k.offset..k.offset + usize::from(k.len)];
        let mut c: ConnSummary =
            postcard::from_bytes(bytes).expect("a row decodes as it was encoded");
        c.stream = k.stream;
        c.first_frame = k.first_frame;
        c.continuation = k.continuation;
        c
    }

    /// Only the endpoints and how the client was told of a row: what settling clients
    /// reads of every row, without decoding the rest (a full decode of every row was 3 %
    /// of `flows`' instructions, twice more in a sharded pass, after the pass on one
    /// thread). An unreadable row, which [`decode`](Self::decode) would refuse too, reads
    /// as a guess about no server.
    fn roles(&self, k: &Key) -> Roles {
        let bytes = &self.chunks[usize::from(k.chunk)][k.offset..k.offset + usize::from(k.len)];
        postcard::from_bytes(bytes).unwrap_or_else(|_| {
            let none = Endpoint {
                addr: std::net::Ipv4Addr::UNSPECIFIED.into(),
                port: 0,
            };
            Roles {
                endpoints: [none; 2],
                client_by: ClientBy::PortGuess,
            }
        })
    }

    /// Replaces row `i` with `c`: in place when the encoding has the same length (a
    /// role fix only swaps fields), else appended to the row's chunk (a folded
    /// continuation; the old bytes stay unused, rare enough not to matter).
    fn replace(&mut self, i: usize, c: &ConnSummary) {
        let k = self.keys[i];
        let chunk = usize::from(k.chunk);
        let old = k.offset..k.offset + usize::from(k.len);
        let mut scratch = [0u8; 1024];
        let (offset, len) = match postcard::to_slice(c, &mut scratch) {
            Ok(enc) if enc.len() == old.len() => {
                self.chunks[chunk][old].copy_from_slice(enc);
                (k.offset, k.len)
            }
            _ => self.encode(chunk, c),
        };
        self.keys[i] = Key {
            stream: c.stream,
            first_frame: c.first_frame,
            offset,
            len,
            chunk: k.chunk,
            continuation: c.continuation,
        };
    }

    /// Sorts the rows by stream index, folds continuations into their stream, and
    /// settles the client of connections without a handshake when their other endpoint
    /// is a server elsewhere in the capture.
    pub fn merge_by_stream(&mut self) {
        self.fold_continuations();
        let mut servers: HashSet<Endpoint> = HashSet::new();
        let mut guessed = Vec::new();
        for (i, k) in self.keys.iter().enumerate() {
            let c = self.roles(k);
            match c.client_by {
                ClientBy::Syn | ClientBy::SynAck => {
                    servers.insert(c.endpoints[1]);
                }
                ClientBy::PortGuess => guessed.push(i),
                ClientBy::KnownServer => {}
            }
        }
        for i in guessed {
            let mut c = self.decode(&self.keys[i]);
            if servers.contains(&c.endpoints[0]) && !servers.contains(&c.endpoints[1]) {
                c.endpoints.swap(0, 1);
                c.dirs.swap(0, 1);
                c.client_by = ClientBy::KnownServer;
            } else if servers.contains(&c.endpoints[1]) {
                c.client_by = ClientBy::KnownServer;
            } else {
                continue;
            }
            self.replace(i, &c);
        }
    }

    /// Joins the rows of trackers that each saw a disjoint share of the connections
    /// ([`Sharder`](crate::Sharder)) and numbers the streams as one tracker would have:
    /// in the order of their first frame.
    pub fn merge_shards(shards: Vec<ConnRows>) -> ConnRows {
        let mut all = ConnRows::new();
        for mut s in shards {
            s.merge_by_stream();
            let base = all.chunks.len();
            all.chunks.append(&mut s.chunks);
            all.keys.extend(s.keys.into_iter().map(|k| Key {
                chunk: (base + usize::from(k.chunk)) as u16,
                ..k
            }));
        }
        all.keys.sort_by_key(|k| k.first_frame);
        for (i, k) in all.keys.iter_mut().enumerate() {
            k.stream = i as u64;
        }
        // Roles may now be settled by a server seen in another shard.
        all.merge_by_stream();
        all
    }

    /// Sorts by stream and folds each stream's continuations into its first part, in
    /// the order of their first frames.
    fn fold_continuations(&mut self) {
        self.keys
            .sort_by_key(|k| (k.stream, k.continuation, k.first_frame));
        let mut kept = 0;
        let mut i = 0;
        while i < self.keys.len() {
            let stream = self.keys[i].stream;
            let end = self.keys[i..]
                .iter()
                .position(|k| k.stream != stream)
                .map_or(self.keys.len(), |n| i + n);
            self.keys[kept] = self.keys[i];
            if end > i + 1 {
                let mut c = self.decode(&self.keys[i]);
                for k in &self.keys[i + 1..end] {
                    c.absorb(&self.decode(k));
                }
                self.replace(kept, &c);
            }
            kept += 1;
            i = end;
        }
        self.keys.truncate(kept);
    }
}

/// The rows of a [`ConnRows`], decoded one at a time.
pub struct Iter<'a> {
    rows: &'a ConnRows,
    keys: std::slice::Iter<'a, Key>,
}

impl Iterator for Iter<'_> {
    type Item = ConnSummary;

    fn next(&mut self) -> Option<ConnSummary> {
        self.keys.next().map(|k| self.rows.decode(k))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.keys.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a ConnRows {
    type Item = ConnSummary;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DirSummary, Vantage, PROVISIONAL_STREAM};
    use tcpwhy_capture::Timestamp;

    fn ep(last: u8, port: u16) -> Endpoint {
        Endpoint {
            addr: std::net::IpAddr::from([10, 0, 0, last]),
            port,
        }
    }

    /// A connection of `packets` packets each way between `frames`, clients by `by`.
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

    #[test]
    fn a_rows_roles_decode_from_the_start_of_its_encoding() {
        let mut rows = ConnRows::new();
        rows.push(&conn(
            0,
            [ep(1, 40000), ep(2, 443)],
            ClientBy::SynAck,
            (3, 9),
        ));
        rows.push(&conn(
            1,
            [ep(5, 5353), ep(3, 80)],
            ClientBy::PortGuess,
            (4, 8),
        ));
        let roles: Vec<_> = rows
            .keys
            .iter()
            .map(|k| {
                let r = rows.roles(k);
                (r.endpoints, r.client_by)
            })
            .collect();
        assert_eq!(
            roles,
            [
                ([ep(1, 40000), ep(2, 443)], ClientBy::SynAck),
                ([ep(5, 5353), ep(3, 80)], ClientBy::PortGuess)
            ]
        );
    }

    #[test]
    fn a_row_decodes_to_the_summary_pushed() {
        let mut c = conn(7, [ep(1, 40000), ep(2, 443)], ClientBy::Syn, (3, 9));
        c.dirs[1].max_window_bytes = Some(1 << 30);
        c.dirs[0].counts.retransmissions = 4;
        let mut rows = ConnRows::new();
        rows.push(&c);
        let back: Vec<ConnSummary> = rows.iter().collect();
        assert_eq!(format!("{back:?}"), format!("{:?}", [c]));
    }

    #[test]
    fn continuations_fold_and_a_known_server_settles_a_guessed_client() {
        let (client, server, other) = (ep(1, 40000), ep(2, 443), ep(3, 50000));
        let mut rows = ConnRows::new();
        // Stream 1: no handshake; 443 looks like the client by port (the guess is wrong).
        rows.push(&conn(1, [server, other], ClientBy::PortGuess, (4, 6)));
        rows.push(&conn(0, [client, server], ClientBy::Syn, (1, 3)));
        // Packets of stream 0 after it was finalised, seen from the server first.
        let mut late = conn(0, [server, client], ClientBy::PortGuess, (10, 12));
        late.continuation = true;
        rows.push(&late);
        rows.merge_by_stream();

        let c: Vec<ConnSummary> = rows.iter().collect();
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].stream, c[0].first_frame, c[0].last_frame), (0, 1, 12));
        assert!(!c[0].continuation);
        // 2 + 1 packets client → server; 1 + 2 server → client (the late part's order is
        // the other way round).
        assert_eq!((c[0].dirs[0].packets, c[0].dirs[1].packets), (3, 3));
        assert_eq!(c[0].client_by, ClientBy::Syn);
        assert_eq!(c[1].stream, 1);
        assert_eq!(c[1].endpoints, [other, server]);
        assert_eq!(c[1].client_by, ClientBy::KnownServer);
        assert_eq!((c[1].dirs[0].packets, c[1].dirs[1].packets), (1, 2));
    }

    #[test]
    fn shards_are_numbered_by_first_frame() {
        let provisional = |c: ConnSummary| ConnSummary {
            stream: PROVISIONAL_STREAM | c.first_frame,
            ..c
        };
        let server = ep(9, 80);
        let mut a = ConnRows::new();
        a.push(&provisional(conn(
            0,
            [ep(1, 1000), server],
            ClientBy::Syn,
            (2, 5),
        )));
        a.push(&provisional(conn(
            0,
            [ep(1, 1001), server],
            ClientBy::Syn,
            (8, 9),
        )));
        let mut b = ConnRows::new();
        b.push(&provisional(conn(
            0,
            [ep(2, 1000), server],
            ClientBy::Syn,
            (1, 7),
        )));
        // Stream 3 learns its server from shard a.
        b.push(&provisional(conn(
            0,
            [server, ep(3, 1)],
            ClientBy::PortGuess,
            (11, 12),
        )));

        let all = ConnRows::merge_shards(vec![a, b]);
        let got: Vec<(u64, u64, ClientBy)> = all
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
        let mut one = all.clone();
        one.retain_streams(|s| s == 3);
        assert_eq!(
            one.iter().map(|c| c.endpoints).collect::<Vec<_>>(),
            [[ep(3, 1), server]]
        );
    }
}
