//! One sample of the kernel's TCP state: each socket's `struct tcp_info` and socket
//! memory as read through sock_diag, and the host's TCP memory, at one instant. These are
//! our own types, so the rules never see the netlink crate's API and tests can build
//! samples by hand.

use std::net::SocketAddr;

/// What identifies one socket across samples: its 4-tuple and the kernel's socket cookie
/// (`sock_gen_cookie`, `inet_diag_sockid.idiag_cookie`), which differs when a 4-tuple is
/// reused by a new connection between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SocketKey {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub cookie: u64,
}

/// The fields of `struct tcp_info` (include/uapi/linux/tcp.h, filled by `tcp_get_info`
/// in net/ipv4/tcp.c) that the rules read, in the kernel's units (named in each field).
/// Counters (`total_retrans`, `*_us` chrono times, `bytes_*`, `dsack_dups`, `reord_seen`)
/// only grow during a connection's life; the rest are instantaneous.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpSample {
    /// `tcpi_state` (TCP_ESTABLISHED = 1 …).
    pub state: u8,
    /// `tcpi_ca_state`: 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss.
    pub ca_state: u8,
    /// `tcpi_backoff`: exponential backoff of the retransmission timer (RTOs in a row).
    pub backoff: u8,
    /// `tcpi_probes`: unanswered zero-window or keep-alive probes.
    pub probes: u8,
    pub rto_us: u32,
    pub rtt_us: u32,
    pub min_rtt_us: u32,
    pub snd_mss: u32,
    pub advmss: u32,
    /// `tcpi_unacked`: packets in flight (`tp->packets_out`).
    pub unacked: u32,
    /// `tcpi_last_data_sent`: ms since the last data segment was sent (`tp->lsndtime`).
    pub last_data_sent_ms: u32,
    /// `tcpi_last_data_recv`: ms since the last data segment was received.
    pub last_data_recv_ms: u32,
    /// `tcpi_rcv_ssthresh`: the ceiling of the receive window this socket advertises
    /// (`tp->rcv_ssthresh`, grown by `tcp_grow_window`, clamped under memory pressure).
    pub rcv_ssthresh: u32,
    /// `tcpi_snd_ssthresh` in packets; 0x7fffffff (`TCP_INFINITE_SSTHRESH`) = none yet.
    pub snd_ssthresh: u32,
    /// `tcpi_snd_cwnd` in packets.
    pub snd_cwnd: u32,
    pub reordering: u32,
    /// `tcpi_total_retrans`: segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// `tcpi_pacing_rate`, bytes per second.
    pub pacing_rate: u64,
    /// `tcpi_delivery_rate`, bytes per second, of the most recent delivery sample.
    pub delivery_rate: u64,
    /// `tcpi_delivery_rate_app_limited`: that sample was taken while app-limited.
    pub delivery_rate_app_limited: bool,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    /// `tcpi_busy_time`: µs with data in flight or queued (all chrono states together:
    /// busy, receive-window limited and send-buffer limited; `tcp_get_info_chrono_stats`).
    pub busy_us: u64,
    /// `tcpi_rwnd_limited`: µs in `TCP_CHRONO_RWND_LIMITED`.
    pub rwnd_limited_us: u64,
    /// `tcpi_sndbuf_limited`: µs in `TCP_CHRONO_SNDBUF_LIMITED`.
    pub sndbuf_limited_us: u64,
    /// `tcpi_dsack_dups`: segments the peer reported as received twice (D-SACK).
    pub dsack_dups: u32,
    /// `tcpi_reord_seen`: reordering events detected (`tcp_check_sack_reordering`,
    /// RACK).
    pub reord_seen: u32,
    /// `tcpi_snd_wnd`: the peer's advertised receive window, bytes, after scaling.
    pub snd_wnd: u32,
    /// `tcpi_notsent_bytes`: written by the application, not yet sent.
    pub notsent_bytes: u32,
}

/// `TCP_INFINITE_SSTHRESH` (include/net/tcp.h): ssthresh before any reduction.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// `TCP_CA_Loss` (include/net/tcp.h): the sender is in RTO recovery.
pub const CA_LOSS: u8 = 4;
/// `TCP_CA_Recovery`: fast recovery after duplicate ACKs or SACKs.
pub const CA_RECOVERY: u8 = 3;

/// `INET_DIAG_SKMEMINFO` (`sk_get_meminfo`): the socket's buffers, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SockMem {
    /// `SK_MEMINFO_RMEM_ALLOC`: received data queued.
    pub rmem_alloc: u32,
    /// `SK_MEMINFO_RCVBUF`: `sk_rcvbuf`.
    pub rcvbuf: u32,
    /// `SK_MEMINFO_WMEM_QUEUED`: send queue.
    pub wmem_queued: u32,
    /// `SK_MEMINFO_SNDBUF`: `sk_sndbuf`.
    pub sndbuf: u32,
    /// `SK_MEMINFO_DROPS`.
    pub drops: u32,
}

/// One socket at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketSample {
    pub key: SocketKey,
    pub inode: u32,
    /// `tcp_info`, absent when the kernel sent none (e.g. a time-wait entry).
    pub tcp: Option<TcpSample>,
    pub mem: Option<SockMem>,
    /// `INET_DIAG_CONG`: the congestion control module ("cubic", "bbr" …).
    pub congestion: Option<String>,
}

/// The host's TCP memory and the namespace's settings at the sample: what tells a
/// receive window clamped by memory pressure from one clamped by a small buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostMemory {
    /// `net.ipv4.tcp_mem` (global: the init namespace's).
    pub tcp_mem: Option<tcpwhy_hoststate::TcpMem>,
    /// /proc/net/sockstat "TCP: … mem N": pages (`tcp_memory_allocated`, global).
    pub mem_pages: Option<u64>,
    /// `net.ipv4.tcp_slow_start_after_idle` of the watched namespace.
    pub slow_start_after_idle: Option<bool>,
}

impl HostMemory {
    /// Whether the TCP memory counter is above `tcp_mem`'s pressure threshold
    /// (`tcp_under_memory_pressure` / `sk_under_memory_pressure` then hold).
    pub fn under_pressure(&self) -> Option<bool> {
        Some(self.mem_pages? > self.tcp_mem?.pressure_pages)
    }
}

/// Every socket at one instant, with the time the caller read them.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Microseconds on the caller's monotonic clock.
    pub time_us: u64,
    pub sockets: Vec<SocketSample>,
    pub host: HostMemory,
    /// Replies the kernel sent that could not be read (a short `tcp_info` from an old
    /// kernel, an unknown family), with the reason; the sockets are skipped, not guessed.
    pub skipped: Vec<String>,
}
