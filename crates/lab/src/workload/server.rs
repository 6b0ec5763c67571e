//! The server end: listens with the case's socket options, says `listening ADDR` on
//! stdout (then `accepted PEER` for each connection), serves each connection on its own thread, and writes its timings when SIGTERM
//! (or SIGINT) comes, or by itself past its deadline.

use super::sock::{self, Conn, StopSignals};
use super::{
    framing, tick, write_json, Anchor, CloseReason, Deadline, Direction, HttpConfig, Kind,
    ServedRequest, ServerConnection, ServerTimings, WorkloadConfig, MAX_MESSAGE_BYTES,
    SERVER_DEADLINE_GRACE_MS,
};
use std::io::{self, Write};
use std::net::Shutdown;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Size of the server's reads.
const READ_CHUNK: usize = 64 * 1024;
/// Size of the server's writes for bulk download and slow_reader.
const SLOW_READER_WRITE: usize = 64 * 1024;
/// Pause after a failed accept() (e.g. out of descriptors) so it does not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(10);
/// After the stop signal, how long handlers may take to record their connection's end.
const STOP_GRACE: Duration = Duration::from_millis(500);
const STOP_POLL: Duration = Duration::from_millis(5);
/// Exit status when the server stopped at its deadline instead of by a signal.
const EXIT_DEADLINE: i32 = 3;

type Shared = Arc<Mutex<ServerTimings>>;

fn lock(t: &Shared) -> MutexGuard<'_, ServerTimings> {
    // A poisoned lock only means a handler panicked mid-update; the record is still worth
    // writing.
    t.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn run(cfg: &WorkloadConfig, out: &Path) -> Result<(), String> {
    // Before any thread exists, so that every thread inherits the mask.
    let signals = StopSignals::block().map_err(|e| format!("blocking signals: {e}"))?;
    let anchor = Anchor::now();
    let listener = sock::listen(cfg.server, &cfg.server_sock)
        .map_err(|e| format!("listening on {}: {e}", cfg.server))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("listening socket: {e}"))?;
    let shared: Shared = Arc::new(Mutex::new(ServerTimings {
        kind: cfg.kind.name().to_string(),
        epoch_ns: anchor.epoch_ns,
        monotonic_ns: anchor.monotonic_ns,
        listen: Some(local),
        ..ServerTimings::default()
    }));
    let deadline = Deadline::after_ms(
        anchor.start,
        cfg.deadline_ms.saturating_add(SERVER_DEADLINE_GRACE_MS),
    );
    {
        let shared = shared.clone();
        let out = out.to_path_buf();
        std::thread::spawn(move || stop_on_signal(signals, deadline, anchor, shared, out));
    }
    // The readiness line of the contract (module doc of workload).
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "listening {local}")
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("writing the listening line: {e}"))?;
    drop(stdout);

    loop {
        let (stream, peer) = match listener.accept() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("tcpwhy-lab workload server: accept: {e}");
                std::thread::sleep(ACCEPT_RETRY);
                continue;
            }
        };
        let accepted_ns = anchor.ns();
        let accepted = Instant::now();
        // The second line of the contract: the lab times root sysctls from it. A caller
        // that read only the first line may have closed the pipe: not an error here
        // (println! would panic on it and take the server down).
        let _ = writeln!(io::stdout().lock(), "accepted {peer}");
        let setup = sock::setup_accepted(&stream, &cfg.server_sock);
        let idx = {
            let mut t = lock(&shared);
            t.connections.push(ServerConnection {
                peer: Some(peer),
                accepted_ns,
                congestion: sock::effective(&stream).0,
                ssthresh_at_accept: sock::ssthresh(&stream).ok(),
                ..ServerConnection::default()
            });
            t.connections.len() - 1
        };
        let h = Handler {
            cfg: cfg.clone(),
            anchor,
            shared: shared.clone(),
            idx,
        };
        if let Err(e) = setup {
            h.close(CloseReason::Error {
                message: format!("socket options: {e}"),
            });
            continue;
        }
        let conn = Conn::new(stream, cfg.server_sock.quickack);
        std::thread::spawn(move || h.serve(conn, accepted));
    }
}

/// Waits for SIGTERM/SIGINT or the deadline, then writes the timings and ends the process.
fn stop_on_signal(
    signals: StopSignals,
    deadline: Deadline,
    anchor: Anchor,
    shared: Shared,
    out: PathBuf,
) {
    let by_signal = loop {
        let left = deadline.at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break false;
        }
        if signals.wait(left) {
            break true;
        }
    };
    // The client has exited, but a handler may not have seen its close (or recorded its
    // own) yet: give them a moment so the record ends with every connection's reason.
    let grace = Instant::now() + STOP_GRACE;
    while Instant::now() < grace && lock(&shared).connections.iter().any(|c| c.close.is_none()) {
        std::thread::sleep(STOP_POLL);
    }
    let result = {
        let mut t = lock(&shared);
        t.stopped_by = if by_signal { "signal" } else { "deadline" }.into();
        t.total_ns = anchor.ns();
        write_json(&out, &*t)
    };
    let mut code = 0;
    if let Err(e) = result {
        eprintln!("tcpwhy-lab: {e}");
        code = 2;
    }
    if !by_signal {
        eprintln!(
            "tcpwhy-lab: workload server: {}",
            deadline.exceeded("waiting to be stopped")
        );
        code = EXIT_DEADLINE;
    }
    std::process::exit(code);
}

/// One accepted connection.
struct Handler {
    cfg: WorkloadConfig,
    anchor: Anchor,
    shared: Shared,
    idx: usize,
}

impl Handler {
    fn update(&self, f: impl FnOnce(&mut ServerConnection)) {
        let mut t = lock(&self.shared);
        if let Some(c) = t.connections.get_mut(self.idx) {
            f(c);
        }
    }

    fn close(&self, reason: CloseReason) {
        let now = self.anchor.ns();
        self.update(|c| {
            c.closed_ns = Some(now);
            c.close = Some(reason);
        });
    }

    fn serve(self, mut conn: Conn, accepted: Instant) {
        let r = match &self.cfg.kind {
            Kind::Http(h) => self.http(&mut conn, accepted, h),
            Kind::Echo(e) => self.echo(&mut conn, e.write_bytes as usize),
            Kind::Bulk(b) => match b.direction {
                Direction::Download => self.send(
                    &mut conn,
                    b.bytes,
                    b.write_size as usize,
                    b.write_interval_ms,
                ),
                Direction::Upload => self.sink(&mut conn),
            },
            Kind::SlowReader(s) => self.send(&mut conn, s.bytes, SLOW_READER_WRITE, 0),
        };
        let (received, sent) = (conn.bytes_read, conn.bytes_written);
        self.update(|c| {
            c.bytes_received = received;
            c.bytes_sent = sent;
        });
        // Dropping the socket closes it (FIN) before the record says so.
        drop(conn);
        self.close(r.unwrap_or_else(|e| CloseReason::Error { message: e }));
    }

    /// Serves requests until the client closes, asks to close, or stays idle too long.
    fn http(
        &self,
        conn: &mut Conn,
        accepted: Instant,
        h: &HttpConfig,
    ) -> Result<CloseReason, String> {
        let think_ms = h.think_ms;
        let idle_limit = h.server_idle_close_ms.map(Duration::from_millis);
        let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
        let mut chunk = vec![0u8; READ_CHUNK];
        // Idle since: the accept, then the end of each response write.
        let mut idle_since = accepted;
        loop {
            let mut first_byte_ns = None;
            // When the request's latest bytes reached the stack (the kernel's stamp).
            let mut arrived_ns = None;
            // Read the head. The idle timer runs only while no request has begun.
            let req = loop {
                if let Some(p) = framing::parse_request(&buf)? {
                    break p;
                }
                let timeout = match (idle_limit, buf.is_empty()) {
                    (Some(limit), true) => {
                        let left = limit.saturating_sub(idle_since.elapsed());
                        if left.is_zero() {
                            return Ok(self.idle_close(conn, idle_since));
                        }
                        Some(left)
                    }
                    _ => None,
                };
                conn.stream
                    .set_read_timeout(timeout)
                    .map_err(|e| format!("setting the idle timeout: {e}"))?;
                let n = match conn.recv_arrival(&mut chunk) {
                    Ok((n, at)) => {
                        arrived_ns = at.map(|w| self.anchor.of_wall(w)).or(arrived_ns);
                        n
                    }
                    Err(e) if sock::is_timeout(&e) => continue,
                    Err(e) => return Err(format!("reading a request: {e}")),
                };
                if n == 0 {
                    return if buf.is_empty() {
                        Ok(CloseReason::ClientClosed)
                    } else {
                        Err("the client closed inside a request".into())
                    };
                }
                first_byte_ns.get_or_insert_with(|| self.anchor.ns());
                buf.extend_from_slice(&chunk[..n]);
            };
            conn.stream
                .set_read_timeout(None)
                .map_err(|e| format!("clearing the idle timeout: {e}"))?;
            // Then the body, if any; bytes beyond it belong to the next request.
            if req.body_len > MAX_MESSAGE_BYTES {
                return Err(format!("request body of {} bytes", req.body_len));
            }
            let total = req.head_len as u64 + req.body_len;
            while (buf.len() as u64) < total {
                let (n, at) = conn
                    .recv_arrival(&mut chunk)
                    .map_err(|e| format!("reading a request body: {e}"))?;
                arrived_ns = at.map(|w| self.anchor.of_wall(w)).or(arrived_ns);
                if n == 0 {
                    return Err("the client closed inside a request body".into());
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            buf.drain(..total as usize);
            let request_done_ns = self.anchor.ns();
            std::thread::sleep(Duration::from_millis(think_ms));
            let think_ns = self.anchor.ns() - request_done_ns;
            if req.response_bytes > MAX_MESSAGE_BYTES {
                return Err(format!(
                    "request for {} response bytes, above {MAX_MESSAGE_BYTES}",
                    req.response_bytes
                ));
            }
            let response = framing::response(req.response_bytes, req.close);
            let response_started_ns = self.anchor.ns();
            // One write_all, as a server handing a ready buffer to the kernel, or writes
            // of `response_write_size` (a small send buffer limits only small writes).
            let piece = h
                .response_write_size
                .map_or(response.len(), |w| w.max(1) as usize);
            for part in response.chunks(piece.max(1)) {
                conn.send_all(part)
                    .map_err(|e| format!("writing a response: {e}"))?;
            }
            idle_since = Instant::now();
            let served = ServedRequest {
                request_first_byte_ns: first_byte_ns.unwrap_or(request_done_ns),
                request_done_ns,
                request_arrived_ns: arrived_ns.map(|a| a.min(request_done_ns)),
                response_started_ns: Some(response_started_ns),
                think_ns,
                response_written_ns: self.anchor.ns(),
                request_bytes: total,
                response_bytes: response.len() as u64,
            };
            self.update(|c| c.requests.push(served));
            if req.close {
                return Ok(CloseReason::ConnectionClose);
            }
        }
    }

    fn idle_close(&self, conn: &Conn, idle_since: Instant) -> CloseReason {
        let idle_ns = u64::try_from(idle_since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        // A FIN, as servers' keep-alive timeouts send; the drop in serve() releases it.
        let _ = conn.stream.shutdown(Shutdown::Both);
        CloseReason::IdleTimeout { idle_ns }
    }

    /// Echoes each message of `size` bytes with its own write as soon as it is complete.
    fn echo(&self, conn: &mut Conn, size: usize) -> Result<CloseReason, String> {
        let mut msg = vec![0u8; size];
        loop {
            match conn.recv_exact(&mut msg) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Ok(CloseReason::ClientClosed)
                }
                Err(e) => return Err(format!("reading a message: {e}")),
            }
            conn.send_all(&msg)
                .map_err(|e| format!("echoing a message: {e}"))?;
            self.update(|c| c.messages_echoed += 1);
        }
    }

    /// Sends `bytes` in writes of `write_size`, one every `interval_ms` (0: back to
    /// back), shuts the write side, then waits for the client to close.
    fn send(
        &self,
        conn: &mut Conn,
        bytes: u64,
        write_size: usize,
        interval_ms: u64,
    ) -> Result<CloseReason, String> {
        let chunk: Vec<u8> = framing::filler(write_size).collect();
        let start = Instant::now();
        let mut left = bytes;
        let mut writes: u32 = 0;
        while left > 0 {
            if interval_ms > 0 {
                let due = tick(start, interval_ms, writes);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            writes = writes.saturating_add(1);
            let n = left.min(chunk.len() as u64) as usize;
            conn.send_all(&chunk[..n])
                .map_err(|e| format!("sending after {} bytes: {e}", bytes - left))?;
            left -= n as u64;
        }
        conn.stream
            .shutdown(Shutdown::Write)
            .map_err(|e| format!("shutdown: {e}"))?;
        self.drain(conn)
    }

    /// Reads to EOF (an upload), then closes.
    fn sink(&self, conn: &mut Conn) -> Result<CloseReason, String> {
        self.drain(conn)
    }

    fn drain(&self, conn: &mut Conn) -> Result<CloseReason, String> {
        let mut chunk = vec![0u8; READ_CHUNK];
        loop {
            match conn.recv(&mut chunk) {
                Ok(0) => return Ok(CloseReason::TransferDone),
                Ok(_) => {}
                Err(e) => return Err(format!("reading: {e}")),
            }
        }
    }
}
