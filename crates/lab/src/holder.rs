//! TCP memory held by "other sockets of the host" while a scenario lowers `tcp_mem`: a
//! loopback connection in the lab's own namespace whose receiver never reads.
//!
//! Why it is needed: the kernel compares the machine's counter `tcp_memory_allocated`
//! (sockstat's "mem", in pages) with `tcp_mem` in `__sk_mem_raise_allocated`, but each CPU
//! adds its pages to that counter only in batches of `net.core.mem_pcpu_rsv` (256 pages)
//! (`sk_memory_allocated_add`), and frees likewise. So the counter can read anywhere
//! within a batch per CPU of the real use: 107 pages on one idle machine, 0 on a fresh
//! one. A transfer whose own buffers are about a batch then enters pressure in some runs
//! and not in others (seen in CI: TCPMemoryPressures 0 on a fresh clone). With several
//! batches held here the counter stays above the lowered `tcp_mem[1]` for the whole
//! workload, as on seed 04's busy server, whose other connections held the memory.

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The most this holder queues, whatever the counter says: 64 MB.
const MAX_BYTES: usize = 64 << 20;
/// Written in pieces of this size, reading the counter between them.
const PIECE: usize = 256 << 10;
/// Filling a loopback queue takes milliseconds; beyond this something is wrong.
const FILL_TIMEOUT: Duration = Duration::from_secs(5);

/// The pages to hold so that the machine's counter stays above `pressure_pages` however
/// the CPUs' unflushed batches fall: the counter can read below the real use by up to a
/// batch per CPU.
pub fn pages_to_hold(pressure_pages: u64) -> u64 {
    let batch = std::fs::read_to_string("/proc/sys/net/core/mem_pcpu_rsv")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(256);
    // Every configured CPU keeps a batch, not only those this process may run on.
    // SAFETY: sysconf has no preconditions.
    let conf = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    let cpus = u64::try_from(conf).unwrap_or(1).max(1);
    pressure_pages + batch * cpus
}

/// A loopback connection holding unread data; dropping it frees the memory.
pub struct TcpMemoryHolder {
    _sender: TcpStream,
    _receiver: TcpStream,
    /// Bytes queued at the receiver.
    pub bytes: usize,
    /// sockstat's "mem" (pages) before and after filling.
    pub pages_before: u64,
    pub pages_after: u64,
}

/// The machine's TCP memory counter, pages (`/proc/net/sockstat`, "TCP: … mem N").
pub fn sockstat_tcp_pages() -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/net/sockstat")
        .map_err(|e| format!("reading /proc/net/sockstat: {e}"))?;
    parse_tcp_pages(&text).ok_or_else(|| "no TCP mem in /proc/net/sockstat".to_string())
}

fn parse_tcp_pages(sockstat: &str) -> Option<u64> {
    let line = sockstat.lines().find(|l| l.starts_with("TCP:"))?;
    let mut words = line.split_whitespace();
    words.find(|&w| w == "mem")?;
    words.next()?.parse().ok()
}

impl TcpMemoryHolder {
    /// Queues at least `min_pages` pages of data on a loopback connection, and until the
    /// machine's counter reads above `counter_above`; at most [`MAX_BYTES`].
    pub fn fill(min_pages: u64, counter_above: u64) -> Result<Self, String> {
        let err = |what: &str, e: io::Error| format!("TCP memory holder: {what}: {e}");
        let pages_before = sockstat_tcp_pages()?;
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .map_err(|e| err("binding a loopback listener", e))?;
        // The receive buffer (set before the handshake, so that the window scale fits
        // it) must hold everything queued; above rmem_max, hence the FORCE (root).
        force_rcvbuf(&listener, MAX_BYTES * 2).map_err(|e| err("SO_RCVBUFFORCE", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| err("the listener's address", e))?;
        let mut sender = TcpStream::connect(addr).map_err(|e| err("connecting", e))?;
        let (receiver, _) = listener.accept().map_err(|e| err("accepting", e))?;
        sender
            .set_nonblocking(true)
            .map_err(|e| err("non-blocking sender", e))?;
        let piece = vec![0u8; PIECE];
        let page = 4096u64;
        let start = Instant::now();
        let mut bytes = 0usize;
        loop {
            let pages_now = sockstat_tcp_pages()?;
            let queued_pages = bytes as u64 / page;
            if pages_now > counter_above && queued_pages >= min_pages {
                return Ok(TcpMemoryHolder {
                    _sender: sender,
                    _receiver: receiver,
                    bytes,
                    pages_before,
                    pages_after: pages_now,
                });
            }
            if bytes >= MAX_BYTES || start.elapsed() > FILL_TIMEOUT {
                return Err(format!(
                    "TCP memory holder: {bytes} B queued in {:?}, the machine's TCP memory \
                     reads {pages_now} pages (wanted {min_pages} queued and the counter above \
                     {counter_above})",
                    start.elapsed()
                ));
            }
            match sender.write(&piece) {
                Ok(n) => bytes += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(e) => return Err(err("writing", e)),
            }
        }
    }
}

fn force_rcvbuf(socket: &impl AsRawFd, bytes: usize) -> io::Result<()> {
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: a valid socket descriptor and a c_int option of its size.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_tcp_pages_of_sockstat() {
        let text =
            "sockets: used 9\nTCP: inuse 1 orphan 0 tw 9 alloc 1 mem 107\nUDP: inuse 0 mem 3\n";
        assert_eq!(parse_tcp_pages(text), Some(107));
        assert_eq!(parse_tcp_pages("UDP: inuse 0 mem 3\n"), None);
        assert_eq!(parse_tcp_pages("TCP: inuse 1 mem\n"), None);
    }
}
