//! The client end of each workload: connects with the case's socket options, drives the
//! pattern, and records what it waited for. Every blocking call is bounded by the overall
//! deadline.

use super::sock::{self, Conn};
use super::{
    framing, tick, Anchor, BulkConfig, ClientConnection, ClientTimings, Deadline, Direction,
    EchoConfig, EchoRound, HttpConfig, Kind, RequestTiming, SlowReaderConfig, TransferTiming,
    WorkloadConfig,
};
use std::io;
use std::time::{Duration, Instant};

/// Receive buffer of the client's reads (http and bulk): large enough that a read is
/// limited by what the kernel has, not by us.
const READ_CHUNK: usize = 64 * 1024;

struct Client<'a> {
    cfg: &'a WorkloadConfig,
    anchor: Anchor,
    deadline: Deadline,
    t: ClientTimings,
}

pub fn run(cfg: &WorkloadConfig) -> Result<ClientTimings, String> {
    let anchor = Anchor::now();
    let mut c = Client {
        cfg,
        anchor,
        deadline: Deadline::after_ms(anchor.start, cfg.deadline_ms),
        t: ClientTimings {
            kind: cfg.kind.name().to_string(),
            epoch_ns: anchor.epoch_ns,
            monotonic_ns: anchor.monotonic_ns,
            server: Some(cfg.server),
            ..ClientTimings::default()
        },
    };
    match &cfg.kind {
        Kind::Http(h) => c.http(h)?,
        Kind::Echo(e) => c.echo(e)?,
        Kind::Bulk(b) => c.bulk(b)?,
        Kind::SlowReader(s) => c.slow_reader(s)?,
    }
    c.t.total_ns = c.anchor.ns();
    Ok(c.t)
}

impl Client<'_> {
    /// Error text for a failed socket call: the deadline if that is what stopped it.
    fn fail(&self, doing: &str, e: io::Error) -> String {
        if sock::is_timeout(&e) || Instant::now() >= self.deadline.at {
            self.deadline.exceeded(doing)
        } else {
            format!("{doing}: {e}")
        }
    }

    /// Bounds the next socket calls by the time left.
    fn arm(&self, conn: &Conn, doing: &str) -> Result<(), String> {
        let left = self.deadline.remaining(doing)?;
        conn.set_timeout(Some(left))
            .map_err(|e| format!("{doing}: setting timeouts: {e}"))
    }

    fn connect(&mut self, doing: &str) -> Result<Conn, String> {
        let left = self.deadline.remaining(doing)?;
        let connect_start_ns = self.anchor.ns();
        let stream = sock::connect(self.cfg.server, &self.cfg.client_sock, left)
            .map_err(|e| self.fail(&format!("{doing}: connecting to {}", self.cfg.server), e))?;
        let connected_ns = self.anchor.ns();
        let (congestion, sndbuf, rcvbuf) = sock::effective(&stream);
        let conn = Conn::new(stream, self.cfg.client_sock.quickack);
        self.t.connections.push(ClientConnection {
            local_port: conn.local_port(),
            connect_start_ns,
            connected_ns,
            congestion,
            sndbuf,
            rcvbuf,
        });
        Ok(conn)
    }

    /// Sleeps until `due` unless the deadline comes first.
    fn sleep_until(&self, due: Instant, doing: &str) -> Result<(), String> {
        if due > self.deadline.at {
            return Err(self.deadline.exceeded(doing));
        }
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        Ok(())
    }

    fn http(&mut self, h: &HttpConfig) -> Result<(), String> {
        let host = self.cfg.server.to_string();
        let mut conn: Option<Conn> = None;
        // When the last response on the kept-alive connection was read.
        let mut idle_since: Option<Instant> = None;
        for i in 0..h.requests {
            let due = tick(self.anchor.start, h.interval_ms, i);
            let doing = format!("http request {i}");
            // The pool's idle timeout runs out before the request is due: close (FIN).
            let mut client_idle_closed_ns = None;
            if let (Some(limit), Some(since), true) =
                (h.client_idle_close_ms, idle_since, conn.is_some())
            {
                let expiry = since + Duration::from_millis(limit);
                if expiry < due {
                    self.sleep_until(expiry, &doing)?;
                    conn = None;
                    client_idle_closed_ns =
                        Some(u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX));
                }
            }
            self.sleep_until(due, &doing)?;
            let request = framing::request(
                i,
                h.response_bytes,
                &host,
                h.new_connection_per_request,
                h.request_bytes,
            )
            .ok_or_else(|| format!("{doing}: request_bytes below the head size"))?;
            let mut r = RequestTiming {
                index: i,
                due_ns: self.anchor.at(due),
                start_ns: self.anchor.ns(),
                request_bytes: request.len() as u64,
                client_idle_closed_ns,
                ..RequestTiming::default()
            };
            // A kept-alive connection the server has closed is replaced before sending,
            // and once more if it dies before the first response byte (the close can
            // cross our request on the wire).
            let mut attempts = 0;
            loop {
                attempts += 1;
                if let Some(c) = &conn {
                    if c.peer_closed() {
                        conn = None;
                        r.reconnected = true;
                    }
                }
                let c = match &mut conn {
                    Some(c) => c,
                    None => {
                        let c = self.connect(&doing)?;
                        r.connected_ns = Some(self.anchor.ns());
                        conn.insert(c)
                    }
                };
                r.local_port = c.local_port();
                match exchange(self, c, &request, &mut r, &doing)? {
                    Exchange::Done => break,
                    Exchange::ClosedBeforeResponse
                        if attempts < 2 && !h.new_connection_per_request =>
                    {
                        conn = None;
                        r.reconnected = true;
                    }
                    Exchange::ClosedBeforeResponse => {
                        return Err(format!("{doing}: the server closed before responding"))
                    }
                }
            }
            r.latency_ns = r.last_byte_ns.saturating_sub(r.start_ns);
            idle_since = Some(Instant::now());
            self.t.requests.push(r);
            if h.new_connection_per_request {
                // The server closes after `Connection: close`; we close our side too.
                conn = None;
            }
        }
        Ok(())
    }

    fn echo(&mut self, e: &EchoConfig) -> Result<(), String> {
        let mut conn = self.connect("echo")?;
        let msg: Vec<u8> = framing::filler(e.write_bytes as usize).collect();
        let mut echo = vec![0u8; e.write_bytes as usize];
        for i in 0..e.rounds {
            let due = tick(self.anchor.start, e.round_interval_ms, i);
            let doing = format!("echo round {i}");
            self.sleep_until(due, &doing)?;
            self.arm(&conn, &doing)?;
            let mut round = EchoRound {
                index: i,
                local_port: conn.local_port(),
                start_ns: self.anchor.ns(),
                ..EchoRound::default()
            };
            for _ in 0..e.writes {
                // One write call per message, as the seed's send() loop.
                conn.send_all(&msg)
                    .map_err(|err| self.fail(&format!("{doing}: writing"), err))?;
            }
            round.writes_done_ns = self.anchor.ns();
            let mut last = round.writes_done_ns;
            for m in 0..e.writes {
                let calls = conn
                    .recv_exact(&mut echo)
                    .map_err(|err| self.fail(&format!("{doing}: reading echo {m}"), err))?;
                let now = self.anchor.ns();
                round.recv_wait_ns.push(now - last);
                round.recv_calls.push(calls);
                last = now;
            }
            round.end_ns = last;
            round.max_recv_wait_ns = round.recv_wait_ns.iter().copied().max().unwrap_or(0);
            self.t.rounds.push(round);
        }
        Ok(())
    }

    fn bulk(&mut self, b: &BulkConfig) -> Result<(), String> {
        let mut conn = self.connect("bulk")?;
        let connected_ns = self.anchor.ns();
        self.arm(&conn, "bulk")?;
        let mut t = TransferTiming {
            local_port: conn.local_port(),
            bytes: b.bytes,
            connected_ns,
            ..TransferTiming::default()
        };
        match b.direction {
            Direction::Download => {
                t.direction = "download".into();
                self.read_to_end(&mut conn, &mut t, None)?;
            }
            Direction::Upload => {
                t.direction = "upload".into();
                let chunk: Vec<u8> = framing::filler(b.write_size as usize).collect();
                let start = Instant::now();
                let mut left = b.bytes;
                while left > 0 {
                    if b.write_interval_ms > 0 {
                        let i = u32::try_from(t.calls).unwrap_or(u32::MAX);
                        let due = tick(start, b.write_interval_ms, i);
                        self.sleep_until(due, "bulk upload: waiting to write")?;
                    }
                    let n = left.min(chunk.len() as u64) as usize;
                    conn.send_all(&chunk[..n])
                        .map_err(|e| self.fail("bulk upload: writing", e))?;
                    t.calls += 1;
                    if t.first_byte_ns == 0 {
                        t.first_byte_ns = self.anchor.ns();
                    }
                    left -= n as u64;
                }
                conn.stream
                    .shutdown(std::net::Shutdown::Write)
                    .map_err(|e| self.fail("bulk upload: shutdown", e))?;
                // The server closes once it has read everything: its EOF is delivery.
                let mut buf = [0u8; 512];
                loop {
                    let n = conn
                        .recv(&mut buf)
                        .map_err(|e| self.fail("bulk upload: waiting for the server", e))?;
                    if n == 0 {
                        break;
                    }
                }
                t.last_byte_ns = self.anchor.ns();
            }
        }
        self.finish_transfer(t);
        Ok(())
    }

    fn slow_reader(&mut self, s: &SlowReaderConfig) -> Result<(), String> {
        let mut conn = self.connect("slow_reader")?;
        let connected_ns = self.anchor.ns();
        let connected = Instant::now();
        self.arm(&conn, "slow_reader")?;
        let mut t = TransferTiming {
            local_port: conn.local_port(),
            direction: "download".into(),
            bytes: s.bytes,
            connected_ns,
            ..TransferTiming::default()
        };
        let pace = Pace {
            read_size: s.read_size as usize,
            interval_ms: s.read_interval_ms,
            start: connected,
        };
        self.read_to_end(&mut conn, &mut t, Some(pace))?;
        self.finish_transfer(t);
        Ok(())
    }

    /// Reads until the server's EOF (it closes after sending `t.bytes`), at full speed or
    /// `pace.read_size` per tick.
    fn read_to_end(
        &self,
        conn: &mut Conn,
        t: &mut TransferTiming,
        pace: Option<Pace>,
    ) -> Result<(), String> {
        let mut buf = vec![0u8; READ_CHUNK.max(pace.as_ref().map_or(0, |p| p.read_size))];
        let mut got: u64 = 0;
        let mut n: u32 = 0;
        loop {
            let want = match &pace {
                None => buf.len(),
                Some(p) => {
                    self.sleep_until(tick(p.start, p.interval_ms, n), "slow_reader: waiting")?;
                    n = n.saturating_add(1);
                    p.read_size
                }
            };
            // A paced read takes up to read_size, with as many recv() as needed, the way
            // an application reading fixed records would.
            let mut in_tick = 0;
            let eof = loop {
                let n = conn
                    .recv(&mut buf[in_tick..want])
                    .map_err(|e| self.fail("reading the transfer", e))?;
                t.calls += 1;
                if n == 0 {
                    break true;
                }
                if t.first_byte_ns == 0 {
                    t.first_byte_ns = self.anchor.ns();
                }
                in_tick += n;
                if pace.is_none() || in_tick == want {
                    break false;
                }
            };
            got += in_tick as u64;
            if eof {
                break;
            }
            t.last_byte_ns = self.anchor.ns();
        }
        if got != t.bytes {
            return Err(format!(
                "transfer ended after {got} of {} bytes (the server closed early)",
                t.bytes
            ));
        }
        Ok(())
    }

    fn finish_transfer(&mut self, mut t: TransferTiming) {
        t.duration_ns = t.last_byte_ns.saturating_sub(t.connected_ns);
        t.throughput_bytes_per_s = if t.duration_ns > 0 {
            t.bytes as f64 * 1e9 / t.duration_ns as f64
        } else {
            0.0
        };
        self.t.transfer = Some(t);
    }
}

/// The slow reader's schedule: `read_size` bytes at `start + k × interval`.
struct Pace {
    read_size: usize,
    interval_ms: u64,
    start: Instant,
}

enum Exchange {
    Done,
    /// EOF or reset before any response byte: the server closed the connection.
    ClosedBeforeResponse,
}

/// Sends one request and reads its response, filling the timing.
fn exchange(
    cl: &Client,
    c: &mut Conn,
    request: &[u8],
    r: &mut RequestTiming,
    doing: &str,
) -> Result<Exchange, String> {
    cl.arm(c, doing)?;
    match c.send_all(request) {
        Ok(()) => {}
        Err(e) if is_closed(&e) => return Ok(Exchange::ClosedBeforeResponse),
        Err(e) => return Err(cl.fail(&format!("{doing}: writing"), e)),
    }
    r.request_sent_ns = cl.anchor.ns();
    let mut buf = vec![0u8; READ_CHUNK];
    let mut have = 0;
    // Head first: it may arrive with part of the body.
    let head = loop {
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match c.recv(&mut buf[have..]) {
            Ok(n) => n,
            Err(e) if have == 0 && is_closed(&e) => return Ok(Exchange::ClosedBeforeResponse),
            Err(e) => return Err(cl.fail(&format!("{doing}: reading the response"), e)),
        };
        if n == 0 {
            if have == 0 {
                return Ok(Exchange::ClosedBeforeResponse);
            }
            return Err(format!(
                "{doing}: the server closed inside the response head"
            ));
        }
        if have == 0 {
            r.first_byte_ns = cl.anchor.ns();
        }
        have += n;
        if let Some(p) =
            framing::parse_response(&buf[..have]).map_err(|e| format!("{doing}: {e}"))?
        {
            break p;
        }
    };
    let total = head.head_len as u64 + head.body_len;
    let mut got = have as u64;
    buf.truncate(READ_CHUNK);
    while got < total {
        let n = c
            .recv(&mut buf)
            .map_err(|e| cl.fail(&format!("{doing}: reading the response body"), e))?;
        if n == 0 {
            return Err(format!(
                "{doing}: the server closed after {got} of {total} response bytes"
            ));
        }
        got += n as u64;
    }
    if got > total {
        return Err(format!(
            "{doing}: {} bytes beyond the response",
            got - total
        ));
    }
    r.last_byte_ns = cl.anchor.ns();
    r.response_bytes = total;
    Ok(Exchange::Done)
}

fn is_closed(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::UnexpectedEof
    )
}
