//! Every TCP socket of the current network namespace through NETLINK_SOCK_DIAG: one
//! `SOCK_DIAG_BY_FAMILY` dump per address family (IPv4, IPv6) asking for
//! `INET_DIAG_INFO` (`struct tcp_info`, filled by `tcp_get_info` in net/ipv4/tcp.c via
//! `tcp_diag_get_info`), `INET_DIAG_SKMEMINFO` (`sk_get_meminfo`) and `INET_DIAG_CONG`,
//! the same request `ss -tinm` makes. The messages are built and parsed by the
//! rust-netlink crates; this module only walks the reply and turns each socket into a
//! [`SocketSample`].
//!
//! The kernel's reply is input like any other: every message length is checked before it
//! is read, a message that does not parse (a `tcp_info` shorter than the crate's struct on
//! an old kernel, say) skips that socket with the reason, and the number of messages and
//! bytes read per dump is bounded.

use crate::sample::{SockMem, SocketKey, SocketSample, TcpSample};
use netlink_packet_core::{
    NetlinkBuffer, NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
use netlink_packet_sock_diag::inet::nlas::Nla;
use netlink_packet_sock_diag::inet::{
    ExtensionFlags, InetRequest, InetResponse, SocketId, StateFlags,
};
use netlink_packet_sock_diag::SockDiagMessage;
use netlink_sys::{protocols::NETLINK_SOCK_DIAG, Socket, SocketAddr};
use std::fmt;
use std::net::SocketAddr as InetAddr;

/// Bytes per `recv`: the kernel fills dump replies up to about a page per datagram
/// (`netlink_dump`, NLMSG_GOODSIZE), so this leaves ample room.
const RECV_BUFFER: usize = 64 << 10;
/// The most sockets one dump returns before the rest are counted as skipped: a bound on
/// memory per sample even on a host with an unbounded number of connections.
pub const MAX_SOCKETS: usize = 200_000;
/// The most `recv` calls per dump, so a reply that never says "done" cannot hold the
/// sampler forever.
const MAX_RECVS: usize = 1_000_000;
/// Most reasons kept per sample for sockets that could not be read.
const MAX_SKIP_REASONS: usize = 16;

/// Why a dump failed as a whole.
#[derive(Debug)]
pub enum Error {
    /// Opening, binding or using the netlink socket failed (the OS error says why).
    Socket(&'static str, std::io::Error),
    /// The kernel answered the request itself with an error (`NLMSG_ERROR`).
    Kernel(String),
    /// The reply ended early or ran past its bounds.
    Truncated(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Socket(what, e) => write!(f, "sock_diag netlink socket: {what}: {e}"),
            Error::Kernel(e) => write!(f, "sock_diag request refused by the kernel: {e}"),
            Error::Truncated(what) => write!(f, "sock_diag reply: {what}"),
        }
    }
}

impl std::error::Error for Error {}

/// An open NETLINK_SOCK_DIAG socket, bound to the network namespace that was current
/// when it was opened.
pub struct SockDiag {
    socket: Socket,
    buf: Vec<u8>,
    seq: u32,
}

/// What one dump read.
#[derive(Debug, Default)]
pub struct Dump {
    pub sockets: Vec<SocketSample>,
    /// Replies skipped, with the reason (at most [`MAX_SKIP_REASONS`], then a count).
    pub skipped: Vec<String>,
}

impl SockDiag {
    /// Opens the socket in the current network namespace (enter another one with
    /// [`crate::netns::enter`] first).
    pub fn open() -> Result<SockDiag, Error> {
        let mut socket = Socket::new(NETLINK_SOCK_DIAG).map_err(|e| Error::Socket("socket", e))?;
        socket.bind_auto().map_err(|e| Error::Socket("bind", e))?;
        socket
            .connect(&SocketAddr::new(0, 0))
            .map_err(|e| Error::Socket("connect", e))?;
        Ok(SockDiag {
            socket,
            buf: vec![0; RECV_BUFFER],
            seq: 0,
        })
    }

    /// Every TCP socket except listeners and time-wait entries (they carry no
    /// `tcp_info` worth a rule), IPv4 then IPv6.
    pub fn dump(&mut self) -> Result<Dump, Error> {
        let mut out = Dump::default();
        let mut skipped = 0usize;
        for family in [AF_INET, AF_INET6] {
            self.dump_family(family, &mut out, &mut skipped)?;
        }
        if skipped > out.skipped.len() {
            let more = skipped - out.skipped.len();
            out.skipped.push(format!("… and {more} more"));
        }
        Ok(out)
    }

    fn dump_family(
        &mut self,
        family: u8,
        out: &mut Dump,
        skipped: &mut usize,
    ) -> Result<(), Error> {
        self.seq = self.seq.wrapping_add(1);
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        header.sequence_number = self.seq;
        let states = StateFlags::all() - StateFlags::LISTEN - StateFlags::TIME_WAIT;
        let mut socket_id = SocketId::new_v4();
        if family == AF_INET6 {
            socket_id = SocketId::new_v6();
        }
        let mut request = NetlinkMessage::new(
            header,
            SockDiagMessage::InetRequest(InetRequest {
                family,
                protocol: IPPROTO_TCP,
                extensions: ExtensionFlags::INFO | ExtensionFlags::SKMEMINFO | ExtensionFlags::CONG,
                states,
                socket_id,
            })
            .into(),
        );
        request.finalize();
        let mut bytes = vec![0; request.buffer_len()];
        request.serialize(&mut bytes);
        self.socket
            .send(&bytes, 0)
            .map_err(|e| Error::Socket("send", e))?;

        for _ in 0..MAX_RECVS {
            let n = self
                .socket
                .recv(&mut &mut self.buf[..], 0)
                .map_err(|e| Error::Socket("recv", e))?;
            if n == 0 {
                return Err(Error::Truncated("the socket closed before the dump ended"));
            }
            let data = self.buf.get(..n).ok_or(Error::Truncated("recv length"))?;
            if walk_datagram(data, self.seq, out, skipped)? {
                return Ok(());
            }
        }
        Err(Error::Truncated(
            "no end of dump after the maximum number of reads",
        ))
    }
}

/// Reads the netlink messages of one datagram into `out`; true once the dump's
/// `NLMSG_DONE` is seen.
fn walk_datagram(
    mut data: &[u8],
    seq: u32,
    out: &mut Dump,
    skipped: &mut usize,
) -> Result<bool, Error> {
    while !data.is_empty() {
        // The header's length, checked against what is there, before anything is parsed.
        let len = match NetlinkBuffer::new_checked(data) {
            Ok(b) => b.length() as usize,
            Err(_) => return Err(Error::Truncated("a message shorter than its header")),
        };
        // Messages are 4-byte aligned (NLMSG_ALIGN).
        let step = len.checked_add(3).map(|l| l & !3).unwrap_or(len);
        let (msg, rest) = data.split_at(len.min(data.len()));
        data = rest
            .get(step.saturating_sub(len).min(rest.len())..)
            .unwrap_or(&[]);
        let parsed = match NetlinkMessage::<SockDiagMessage>::deserialize(msg) {
            Ok(m) => m,
            Err(e) => {
                note_skip(out, skipped, format!("unreadable sock_diag message: {e}"));
                continue;
            }
        };
        if parsed.header.sequence_number != seq {
            continue; // a stale reply to an earlier request
        }
        match parsed.payload {
            NetlinkPayload::Done(_) => return Ok(true),
            NetlinkPayload::Error(e) => {
                return Err(Error::Kernel(format!("{:?}", e.code)));
            }
            NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(r)) => {
                if out.sockets.len() >= MAX_SOCKETS {
                    *skipped += 1;
                    continue;
                }
                out.sockets.push(socket_sample(&r));
            }
            _ => {}
        }
    }
    Ok(false)
}

fn note_skip(out: &mut Dump, skipped: &mut usize, reason: String) {
    *skipped += 1;
    if out.skipped.len() < MAX_SKIP_REASONS {
        out.skipped.push(reason);
    }
}

/// One `inet_diag_msg` and its attributes as our sample type.
pub fn socket_sample(r: &InetResponse) -> SocketSample {
    let id = &r.header.socket_id;
    let key = SocketKey {
        local: InetAddr::new(id.source_address, id.source_port),
        remote: InetAddr::new(id.destination_address, id.destination_port),
        cookie: u64::from_ne_bytes(id.cookie),
    };
    let mut s = SocketSample {
        key,
        inode: r.header.inode,
        tcp: None,
        mem: None,
        congestion: None,
    };
    for nla in &r.nlas {
        match nla {
            Nla::TcpInfo(t) => {
                s.tcp = Some(TcpSample {
                    state: t.state,
                    ca_state: t.ca_state,
                    backoff: t.backoff,
                    probes: t.probes,
                    rto_us: t.rto,
                    rtt_us: t.rtt,
                    min_rtt_us: t.min_rtt,
                    snd_mss: t.snd_mss,
                    advmss: t.advmss,
                    unacked: t.unacked,
                    last_data_sent_ms: t.last_data_sent,
                    last_data_recv_ms: t.last_data_recv,
                    rcv_ssthresh: t.rcv_ssthresh,
                    snd_ssthresh: t.snd_ssthresh,
                    snd_cwnd: t.snd_cwnd,
                    reordering: t.reordering,
                    total_retrans: t.total_retrans,
                    pacing_rate: t.pacing_rate,
                    delivery_rate: t.delivery_rate,
                    delivery_rate_app_limited: t.delivery_rate_app_limited != 0,
                    bytes_acked: t.bytes_acked,
                    bytes_received: t.bytes_received,
                    bytes_sent: t.bytes_sent,
                    bytes_retrans: t.bytes_retrans,
                    busy_us: t.busy_time,
                    rwnd_limited_us: t.rwnd_limited,
                    sndbuf_limited_us: t.sndbuf_limited,
                    dsack_dups: t.dsack_dups,
                    reord_seen: t.reord_seen,
                    snd_wnd: t.snd_wnd,
                    notsent_bytes: t.notsent_bytes,
                })
            }
            Nla::MemInfo(m) => {
                s.mem = Some(SockMem {
                    rmem_alloc: m.receive_queue,
                    rcvbuf: m.receive_queue_max,
                    wmem_queued: m.send_queue,
                    sndbuf: m.send_queue_max,
                    drops: m.drops,
                })
            }
            Nla::Congestion(c) => s.congestion = Some(c.clone()),
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncated_replies_are_errors_or_skips_never_panics() {
        let mut out = Dump::default();
        let mut skipped = 0;
        // Shorter than a netlink header.
        assert!(walk_datagram(&[1, 2, 3], 1, &mut out, &mut skipped).is_err());
        // A header claiming more bytes than the datagram has.
        let mut m = vec![0u8; 20];
        m[..4].copy_from_slice(&200u32.to_ne_bytes());
        assert!(walk_datagram(&m, 1, &mut out, &mut skipped).is_err());
        // Every byte pattern of a short message: no panic.
        for len in 0..64usize {
            for fill in [0u8, 0xff, 0x14] {
                let mut m = vec![fill; len];
                if len >= 4 {
                    m[..4].copy_from_slice(&(len as u32).to_ne_bytes());
                }
                if len >= 6 {
                    // SOCK_DIAG_BY_FAMILY (20), so the inet response parser runs.
                    m[4..6].copy_from_slice(&20u16.to_ne_bytes());
                }
                let _ = walk_datagram(&m, 0, &mut out, &mut skipped);
            }
        }
        assert!(out.sockets.is_empty());
    }
}
