//! Workloads: the two application ends (client and server) that generate the traffic of
//! each case in ../shared/seeds, with the socket options of the case, and record their own
//! timings next to the capture.
//!
//! # Contract with the orchestrator
//! `tcpwhy-lab workload --config CFG.json --role server|client --out TIMINGS.json`, where
//! `CFG.json` is a [`WorkloadConfig`] (both ends read the same file).
//!
//! 1. Start the server in the server namespace with stdout piped. Once its socket listens
//!    it prints one line, `listening ADDR\n` (ADDR is the bound address, so port 0
//!    works), and flushes. Wait for that line; EOF or anything else means the server
//!    failed (its reason is on stderr, exit status 2). Then it prints `accepted PEER\n`
//!    as it accepts each connection (what the orchestrator times root sysctls from).
//! 2. Start the client in the client namespace and wait for it. Exit 0: all done, timings
//!    written ([`ClientTimings`]). Non-zero (2): an error or the overall deadline
//!    ([`WorkloadConfig::deadline_ms`]) was exceeded; the reason is on stderr and no
//!    timings file is written.
//! 3. Send SIGTERM (or SIGINT) to the server: it writes its timings ([`ServerTimings`])
//!    and exits 0. A server never stopped gives up by itself
//!    [`SERVER_DEADLINE_GRACE_MS`] after the client's deadline: it writes its timings with
//!    `stopped_by: "deadline"` and exits 3.
//!
//! All times in the timings are nanoseconds since the end's own anchor: `epoch_ns`
//! (CLOCK_REALTIME, the clock tcpdump stamps packets with) and `monotonic_ns`
//! (CLOCK_MONOTONIC), read back to back at start. A capture timestamp t lines up with
//! offset `t - epoch_ns`.

mod client;
mod framing;
mod server;
mod sock;
pub use sock::TCP_INFINITE_SSTHRESH;

use crate::cli::{Role, WorkloadArgs};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Largest message either end allocates at once (http request and response, echo message,
/// bulk write, slow reader read): far above any case, far below what would exhaust memory.
pub const MAX_MESSAGE_BYTES: u64 = 256 << 20;
/// Default overall deadline of a workload: a scenario must never hang.
pub const DEFAULT_DEADLINE_MS: u64 = 60_000;
/// The server outlives the client's deadline by this much before giving up by itself, so
/// that a client failing at its deadline still finds the server there to be stopped.
pub const SERVER_DEADLINE_GRACE_MS: u64 = 10_000;

/// Everything both ends need to know. Built by the orchestrator, written as JSON, read by
/// `workload --config`. Missing fields take their [`Default`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Address the server binds and the client connects to (e.g. `10.81.2.2:8080`). Port 0
    /// makes the server pick one (it reports it on its `listening` line); the client needs
    /// a real port.
    pub server: SocketAddr,
    /// Socket options of the client's sockets (set before connect).
    pub client_sock: SockOpts,
    /// Socket options of the server's listening socket (set before listen; accepted sockets
    /// inherit the buffers, and nodelay / congestion are set again on each of them).
    pub server_sock: SockOpts,
    /// Overall deadline of the client, in ms from its start: past it, it stops with an
    /// error (exit 2). The server's own limit is this plus [`SERVER_DEADLINE_GRACE_MS`].
    pub deadline_ms: u64,
    /// What the two ends do.
    pub kind: Kind,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            server: SocketAddr::from(([127, 0, 0, 1], 8080)),
            client_sock: SockOpts::default(),
            server_sock: SockOpts::default(),
            deadline_ms: DEFAULT_DEADLINE_MS,
            kind: Kind::Http(HttpConfig::default()),
        }
    }
}

/// Socket options of one end. The default is the kernel's default for everything.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct SockOpts {
    /// TCP_NODELAY: disable Nagle (RFC 896), so small writes leave at once.
    pub nodelay: bool,
    /// TCP_QUICKACK, set after connect/accept and re-armed after every recv, because Linux
    /// clears it (the kernel falls back to delayed ACKs in interactive "pingpong" mode).
    pub quickack: bool,
    /// SO_SNDBUF in bytes (Linux doubles it and turns send-buffer autotuning off).
    pub sndbuf: Option<u32>,
    /// SO_RCVBUF in bytes (Linux doubles it and turns receive autotuning off). Set before
    /// connect / listen, so the window scale in the handshake reflects it.
    pub rcvbuf: Option<u32>,
    /// TCP_CONGESTION for this socket, e.g. `"cubic"`. A namespace's default can only be
    /// one of `tcp_allowed_congestion_control`, but root may pick any loaded module per
    /// socket.
    pub congestion: Option<String>,
}

/// The traffic pattern. JSON: `{"type": "http", "requests": 3, …}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Kind {
    /// HTTP/1.1-looking request/response (seed 01).
    Http(HttpConfig),
    /// N small writes then N reads, every round (seed 05).
    Echo(EchoConfig),
    /// One bulk transfer in one direction.
    Bulk(BulkConfig),
    /// The server sends; the client reads slowly, so the receive window closes.
    SlowReader(SlowReaderConfig),
}

impl Kind {
    /// The name used in JSON and in the timings.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Http(_) => "http",
            Kind::Echo(_) => "echo",
            Kind::Bulk(_) => "bulk",
            Kind::SlowReader(_) => "slow_reader",
        }
    }
}

/// HTTP-like exchanges. The request is `GET /object/I?bytes=R HTTP/1.1` with a few headers
/// padded (an `X-Pad` header, or a POST body above 8 KiB) to exactly `request_bytes`; the
/// response is `HTTP/1.1 200 OK` with a `Content-Length`, exactly `response_bytes` long
/// including its head, written by the server in one `write_all`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// Number of requests.
    pub requests: u32,
    /// Time between request *starts* (request i starts at i × interval after the first;
    /// a request still running when the next is due delays it, and the next starts as soon
    /// as it finishes).
    pub interval_ms: u64,
    /// A new connection for every request (`Connection: close`, the server closes after
    /// the response). Otherwise keep-alive on one connection, reconnecting when the server
    /// has closed it (checked just before sending, as real clients do, plus one retry if
    /// the connection dies before any response byte).
    pub new_connection_per_request: bool,
    /// Size of each request on the wire, head included (at least ~110 bytes: the head).
    pub request_bytes: u64,
    /// Size of each response on the wire, head included (seed 01: 741,342).
    pub response_bytes: u64,
    /// Server delay between reading the whole request and writing the response.
    pub think_ms: u64,
    /// The server closes a keep-alive connection that has been idle (no request started)
    /// this long, counted from the end of its last response write (or from the accept).
    /// Seed 01's 60 s timeouts, scaled down. None: never.
    pub server_idle_close_ms: Option<u64>,
    /// The client closes its kept-alive connection once it has been idle this long after
    /// the last response was read (a connection pool's idle timeout, Go's
    /// `IdleConnTimeout`), and the next request opens a new one. None: never.
    pub client_idle_close_ms: Option<u64>,
    /// The server writes each response in writes of this many bytes. None: one write_all
    /// (a write of 8 KB or more overshoots a small send buffer, see small-sndbuf).
    pub response_write_size: Option<u32>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            requests: 1,
            interval_ms: 0,
            new_connection_per_request: false,
            request_bytes: 400,
            response_bytes: 741_342,
            think_ms: 0,
            server_idle_close_ms: None,
            client_idle_close_ms: None,
            response_write_size: None,
        }
    }
}

/// Seed 05's echo client: each round the client writes `writes` messages of `write_bytes`
/// in separate write calls, then reads the `writes` echoes (one message-sized read each,
/// as the seed's `recv(fd, buf, 132)`). The server reads one message at a time and writes
/// each back with its own write call as soon as it has it.
///
/// What stalls (checked in a loopback capture, kernel defaults on both ends): message 1
/// leaves at once; the client's Nagle holds messages 2 and 3 until echo 1 ACKs message 1,
/// then sends them as one segment; the server echoes 2 at once but its own Nagle holds echo
/// 3 until the client ACKs echo 2, and the client delays that ACK (it has nothing to send):
/// the 3rd recv blocks ≈ 40 ms. So the fixes are `server_sock.nodelay` (the echo writer)
/// or `client_sock.quickack` (the seed's fix); `client_sock.nodelay` alone still stalls on
/// some rounds. Round 0 does not stall (Linux ACKs at once early in a connection).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct EchoConfig {
    /// Number of rounds.
    pub rounds: u32,
    /// Messages per round (N; the seed sees the stall from N = 3).
    pub writes: u32,
    /// Bytes per message (132 in the seed).
    pub write_bytes: u32,
    /// Time between round starts, like the seed's `sleep(1)` (a late round delays the
    /// next, which then starts at once).
    pub round_interval_ms: u64,
}

impl Default for EchoConfig {
    fn default() -> Self {
        EchoConfig {
            rounds: 5,
            writes: 3,
            write_bytes: 132,
            round_interval_ms: 1000,
        }
    }
}

/// Which way the bulk data flows.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Client → server.
    Upload,
    /// Server → client.
    Download,
}

/// One connection, one transfer of `bytes`, no request: the sender starts writing as soon
/// as the connection is up, then shuts its write side; the receiver reads to EOF and closes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct BulkConfig {
    /// Bytes to transfer.
    pub bytes: u64,
    /// Who sends.
    pub direction: Direction,
    /// Size of each write call of the sender (seed 02's sndbuf case depends on it).
    pub write_size: u32,
    /// Time between the starts of the sender's writes (ticks at fixed times from the
    /// first write; a write still blocked when the next is due delays it). Then the
    /// application sets the rate, write_size / write_interval_ms, and below the path's
    /// capacity the sender has an open window and nothing to send between writes
    /// (app.limited). 0: write as fast as the socket takes it.
    pub write_interval_ms: u64,
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            bytes: 10 << 20,
            direction: Direction::Download,
            write_size: 64 << 10,
            write_interval_ms: 0,
        }
    }
}

/// The server sends `bytes` (in 64 KiB writes) as soon as the connection is up; the
/// client reads `read_size` bytes at each tick of `read_interval_ms` (ticks at fixed times
/// from the connect), so it drains at most read_size / interval and a faster sender fills
/// the receive buffer until the window is zero. Use a small `client_sock.rcvbuf` to get
/// there quickly, but not below a few MSS: on loopback (MSS 64 KiB) a 16 KiB buffer makes
/// the receiver drop segments instead of advertising a zero window; 64 KiB shows zero
/// windows.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct SlowReaderConfig {
    /// Bytes the server sends.
    pub bytes: u64,
    /// Bytes the client reads per tick.
    pub read_size: u32,
    /// Time between ticks.
    pub read_interval_ms: u64,
}

impl Default for SlowReaderConfig {
    fn default() -> Self {
        SlowReaderConfig {
            bytes: 1 << 20,
            read_size: 16 << 10,
            read_interval_ms: 10,
        }
    }
}

/// What the client saw (`--role client --out`). Times are ns since the anchor.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ClientTimings {
    /// Workload kind (`http`, `echo`, `bulk`, `slow_reader`).
    pub kind: String,
    /// CLOCK_REALTIME at the anchor, ns since the Unix epoch.
    pub epoch_ns: u64,
    /// CLOCK_MONOTONIC at the anchor, ns.
    pub monotonic_ns: u64,
    /// The address connected to.
    pub server: Option<SocketAddr>,
    /// Every connection the client opened, in order.
    pub connections: Vec<ClientConnection>,
    /// http: one entry per request.
    pub requests: Vec<RequestTiming>,
    /// echo: one entry per round.
    pub rounds: Vec<EchoRound>,
    /// bulk and slow_reader: the transfer.
    pub transfer: Option<TransferTiming>,
    /// http: keep-alive connections the client closed idle (`client_idle_close_ms`).
    #[serde(default)]
    pub idle_closes: Vec<ClientIdleClose>,
    /// Anchor → end of the workload.
    pub total_ns: u64,
}

/// One client connection and the socket options the kernel reports for it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientConnection {
    /// Local (ephemeral) port: with the server address it names the stream in a capture.
    pub local_port: u16,
    /// connect() called.
    pub connect_start_ns: u64,
    /// connect() returned (handshake done from the client's view).
    pub connected_ns: u64,
    /// TCP_CONGESTION as read back after connect.
    pub congestion: Option<String>,
    /// SO_SNDBUF as read back (the kernel's doubled value).
    pub sndbuf: Option<u32>,
    /// SO_RCVBUF as read back (the kernel's doubled value).
    pub rcvbuf: Option<u32>,
}

/// A keep-alive connection the client closed because it was idle.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientIdleClose {
    /// Local port of the connection closed.
    pub local_port: u16,
    /// Last response byte read → close.
    pub idle_ns: u64,
    /// When it was closed.
    pub closed_ns: u64,
}

/// One http request as the client saw it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestTiming {
    /// 0-based.
    pub index: u32,
    /// Local port of the connection used.
    pub local_port: u16,
    /// The request was due (scheduled start; equals `start_ns` unless the previous
    /// request ran late).
    pub due_ns: u64,
    /// The client started on it (before connecting, if it had to).
    pub start_ns: u64,
    /// A connection was opened for this request: when connect() returned.
    pub connected_ns: Option<u64>,
    /// The kept-alive connection had been closed by the server, so a new one was opened.
    pub reconnected: bool,
    /// The request's write_all returned.
    pub request_sent_ns: u64,
    /// First response byte read.
    pub first_byte_ns: u64,
    /// Last response byte read.
    pub last_byte_ns: u64,
    /// last_byte − start: what a user of the client waits.
    pub latency_ns: u64,
    /// Request size on the wire.
    pub request_bytes: u64,
    /// Response size on the wire (head + body).
    pub response_bytes: u64,
}

/// One echo round.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct EchoRound {
    /// 0-based.
    pub index: u32,
    /// Local port of the connection (one connection for all rounds).
    pub local_port: u16,
    /// Round started (first write).
    pub start_ns: u64,
    /// All writes returned.
    pub writes_done_ns: u64,
    /// Per message read: how long the client was blocked for it (from the previous read's
    /// return, or from `writes_done_ns` for the first). Seed 05: the third ≈ 40 ms.
    pub recv_wait_ns: Vec<u64>,
    /// Per message read: recv() calls it took (more than 1: the echo came in pieces).
    pub recv_calls: Vec<u32>,
    /// Last echo read.
    pub end_ns: u64,
    /// The longest of `recv_wait_ns`.
    pub max_recv_wait_ns: u64,
}

/// A bulk or slow_reader transfer as the client saw it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TransferTiming {
    /// Local port of the connection.
    pub local_port: u16,
    /// `upload` or `download` (slow_reader: download).
    pub direction: String,
    /// Bytes transferred.
    pub bytes: u64,
    /// connect() returned.
    pub connected_ns: u64,
    /// First byte read (download) or first write returned (upload).
    pub first_byte_ns: u64,
    /// Last byte read (download) or the server's EOF after the upload (so the data was
    /// delivered to the server's application).
    pub last_byte_ns: u64,
    /// connected → last byte.
    pub duration_ns: u64,
    /// bytes / duration, in bytes per second.
    pub throughput_bytes_per_s: f64,
    /// Read or write calls made.
    pub calls: u64,
}

/// What the server saw (`--role server --out`, written when stopped). Times are ns since
/// the anchor.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ServerTimings {
    /// Workload kind.
    pub kind: String,
    /// CLOCK_REALTIME at the anchor, ns since the Unix epoch.
    pub epoch_ns: u64,
    /// CLOCK_MONOTONIC at the anchor, ns.
    pub monotonic_ns: u64,
    /// The address listened on.
    pub listen: Option<SocketAddr>,
    /// Every accepted connection, in accept order.
    pub connections: Vec<ServerConnection>,
    /// `"signal"` (SIGTERM/SIGINT, the normal end) or `"deadline"`.
    pub stopped_by: String,
    /// Anchor → stop.
    pub total_ns: u64,
}

/// One accepted connection.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerConnection {
    /// The client's address; its port is the client's `local_port`.
    pub peer: Option<SocketAddr>,
    /// accept() returned.
    pub accepted_ns: u64,
    /// TCP_CONGESTION in effect on the accepted socket.
    pub congestion: Option<String>,
    /// tcp_info's snd_ssthresh at accept, before any data was sent, as the kernel reports
    /// it: 2147483647 (TCP_INFINITE_SSTHRESH) when tcp_metrics had none cached for this
    /// peer. `None`: not read (tcp_info failed, or a record from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssthresh_at_accept: Option<u32>,
    /// http: requests served.
    pub requests: Vec<ServedRequest>,
    /// echo: messages echoed.
    pub messages_echoed: u64,
    /// Application bytes read.
    pub bytes_received: u64,
    /// Application bytes written.
    pub bytes_sent: u64,
    /// The server closed its side or saw it end (None: still open when stopped).
    pub closed_ns: Option<u64>,
    /// Why it ended (None: still open when stopped).
    pub close: Option<CloseReason>,
}

/// Why a server connection ended.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum CloseReason {
    /// The client closed first (EOF between requests/messages).
    ClientClosed,
    /// The request said `Connection: close`; the server closed after the response.
    ConnectionClose,
    /// Idle keep-alive connection closed by the server after `idle_ns` without a request
    /// (`server_idle_close_ms`).
    IdleTimeout {
        /// Idle time from the last response write (or accept) to the close.
        idle_ns: u64,
    },
    /// bulk / slow_reader: the transfer ended (sent and the client closed, or read to EOF).
    TransferDone,
    /// A socket error or a malformed request.
    Error {
        /// What went wrong.
        message: String,
    },
}

/// One http request served.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ServedRequest {
    /// First byte of the request read.
    pub request_first_byte_ns: u64,
    /// Whole request read.
    pub request_done_ns: u64,
    /// When the request's last segment reached the server's stack (SO_TIMESTAMPNS), if
    /// the kernel said: before `request_done_ns` by the time it waited unread.
    #[serde(default)]
    pub request_arrived_ns: Option<u64>,
    /// The response's first write began.
    #[serde(default)]
    pub response_started_ns: Option<u64>,
    /// Think time applied (slept) before the response.
    pub think_ns: u64,
    /// The response's write_all returned (the data is in the send buffer, not delivered).
    pub response_written_ns: u64,
    /// Request size on the wire.
    pub request_bytes: u64,
    /// Response size on the wire.
    pub response_bytes: u64,
}

/// The end's clock anchor: wall clock and monotonic clock read back to back, and the
/// Instant offsets are measured from.
#[derive(Clone, Copy)]
struct Anchor {
    start: Instant,
    epoch_ns: u64,
    monotonic_ns: u64,
}

impl Anchor {
    fn now() -> Anchor {
        // Instant is CLOCK_MONOTONIC on Linux, so monotonic_ns + offset is the absolute
        // monotonic time of an event.
        let start = Instant::now();
        let monotonic_ns = sock::monotonic_ns();
        let epoch_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Anchor {
            start,
            epoch_ns,
            monotonic_ns,
        }
    }

    /// ns since the anchor.
    fn ns(&self) -> u64 {
        self.at(Instant::now())
    }

    /// A wall-clock time (ns since the Unix epoch, e.g. a kernel receive timestamp) as ns
    /// since the anchor, by its distance from the wall clock now (immune to the wall
    /// clock having been stepped since the anchor was taken).
    fn of_wall(&self, wall_ns: u64) -> u64 {
        let now = self.ns();
        let wall_now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        now.saturating_sub(wall_now.saturating_sub(wall_ns))
    }

    fn at(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.start).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// `t + d`, or a year after `t` when `d` is beyond what an Instant can hold (a deadline
/// that far never matters, and adding must not panic).
fn later(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .unwrap_or_else(|| t + Duration::from_secs(FAR_FUTURE_S))
}

const FAR_FUTURE_S: u64 = 365 * 24 * 3600;

/// `start + i × interval_ms`: the i-th tick of a schedule.
fn tick(start: Instant, interval_ms: u64, i: u32) -> Instant {
    later(
        start,
        Duration::from_millis(interval_ms.saturating_mul(u64::from(i))),
    )
}

/// The point past which the end gives up.
#[derive(Clone, Copy)]
struct Deadline {
    at: Instant,
    ms: u64,
}

impl Deadline {
    fn after_ms(start: Instant, ms: u64) -> Deadline {
        Deadline {
            at: later(start, Duration::from_millis(ms)),
            ms,
        }
    }

    /// Time left, or the error to exit with.
    fn remaining(&self, doing: &str) -> Result<Duration, String> {
        let left = self.at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(self.exceeded(doing))
        } else {
            Ok(left)
        }
    }

    fn exceeded(&self, doing: &str) -> String {
        format!("deadline of {} ms exceeded while {doing}", self.ms)
    }
}

/// `tcpwhy-lab workload`.
pub fn run(a: WorkloadArgs) -> Result<(), String> {
    let cfg = read_config(&a.config)?;
    match a.role {
        Role::Client => {
            let t = client::run(&cfg)?;
            write_json(&a.out, &t)
        }
        Role::Server => server::run(&cfg, &a.out),
    }
}

fn read_config(path: &Path) -> Result<WorkloadConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("reading workload config {}: {e}", path.display()))?;
    let cfg: WorkloadConfig = serde_json::from_str(&text)
        .map_err(|e| format!("workload config {}: {e}", path.display()))?;
    validate(&cfg).map_err(|e| format!("workload config {}: {e}", path.display()))?;
    Ok(cfg)
}

/// Checks what would otherwise fail late or loop forever.
fn validate(cfg: &WorkloadConfig) -> Result<(), String> {
    if cfg.deadline_ms == 0 {
        return Err("deadline_ms must be > 0".into());
    }
    match &cfg.kind {
        Kind::Http(h) => {
            check_message("http request_bytes", h.request_bytes)?;
            check_message("http response_bytes", h.response_bytes)?;
            framing::check_sizes(
                h.requests.saturating_sub(1),
                h.request_bytes,
                h.response_bytes,
                &cfg.server.to_string(),
            )?
        }
        Kind::Echo(e) => check_message("echo write_bytes", e.write_bytes.into())?,
        Kind::Bulk(b) => check_message("bulk write_size", b.write_size.into())?,
        Kind::SlowReader(s) => check_message("slow_reader read_size", s.read_size.into())?,
    }
    Ok(())
}

fn check_message(what: &str, bytes: u64) -> Result<(), String> {
    if bytes == 0 || bytes > MAX_MESSAGE_BYTES {
        return Err(format!(
            "{what} must be between 1 and {MAX_MESSAGE_BYTES}, not {bytes}"
        ));
    }
    Ok(())
}

/// Writes JSON through a temporary file and a rename, so a reader never sees half a file.
fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| format!("timings: {e}"))?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text + "\n")
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("writing timings {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_json_round_trip_and_defaults() {
        let json = r#"{
            "server": "10.81.2.2:8080",
            "client_sock": {"nodelay": true, "rcvbuf": 65536, "congestion": "cubic"},
            "kind": {"type": "http", "requests": 3, "new_connection_per_request": true,
                     "server_idle_close_ms": 500}
        }"#;
        let cfg: WorkloadConfig = serde_json::from_str(json).unwrap();
        assert_eq!(cfg.server, "10.81.2.2:8080".parse().unwrap());
        assert!(cfg.client_sock.nodelay);
        assert_eq!(cfg.client_sock.rcvbuf, Some(65536));
        assert_eq!(cfg.client_sock.congestion.as_deref(), Some("cubic"));
        assert_eq!(cfg.server_sock, SockOpts::default());
        assert_eq!(cfg.deadline_ms, DEFAULT_DEADLINE_MS);
        let Kind::Http(h) = &cfg.kind else {
            panic!("not http: {:?}", cfg.kind)
        };
        assert_eq!(h.requests, 3);
        assert_eq!(h.response_bytes, 741_342);
        assert_eq!(h.server_idle_close_ms, Some(500));
        let back: WorkloadConfig =
            serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
        validate(&cfg).unwrap();
    }

    #[test]
    fn every_kind_parses_by_tag() {
        for (json, name) in [
            (r#"{"type":"echo","writes":4}"#, "echo"),
            (r#"{"type":"bulk","direction":"upload"}"#, "bulk"),
            (r#"{"type":"slow_reader","read_size":1024}"#, "slow_reader"),
        ] {
            let k: Kind = serde_json::from_str(json).unwrap();
            assert_eq!(k.name(), name);
        }
    }

    #[test]
    fn typos_are_rejected() {
        let e = serde_json::from_str::<WorkloadConfig>(r#"{"deadline": 5}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        let e = serde_json::from_str::<WorkloadConfig>(r#"{"client_sock":{"no_delay":true}}"#)
            .unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
    }

    #[test]
    fn too_small_http_sizes_are_rejected() {
        let mut cfg = WorkloadConfig {
            kind: Kind::Http(HttpConfig {
                request_bytes: 10,
                ..HttpConfig::default()
            }),
            ..WorkloadConfig::default()
        };
        assert!(validate(&cfg).unwrap_err().contains("request_bytes 10"));
        cfg.kind = Kind::Http(HttpConfig {
            response_bytes: 10,
            ..HttpConfig::default()
        });
        assert!(validate(&cfg).unwrap_err().contains("response_bytes 10"));
    }
}
