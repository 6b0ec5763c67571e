//! Sockets with the options of a case (socket2, plus libc for TCP_QUICKACK and
//! TCP_CONGESTION), a reading wrapper that re-arms TCP_QUICKACK after every recv, the
//! monotonic clock, and the server's signal mask.

use super::SockOpts;
use socket2::{Domain, Protocol, SockRef, Socket, Type};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Backlog of the server's listening socket: far more than any workload opens at once.
const LISTEN_BACKLOG: i32 = 128;
/// Longest congestion control name (Linux TCP_CA_NAME_MAX).
const TCP_CA_NAME_MAX: usize = 16;

fn new_socket(addr: SocketAddr, o: &SockOpts) -> io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Buffers before connect / listen: the window scale of the handshake is chosen from
    // the receive buffer at that moment.
    if let Some(b) = o.sndbuf {
        s.set_send_buffer_size(b as usize)?;
    }
    if let Some(b) = o.rcvbuf {
        s.set_recv_buffer_size(b as usize)?;
    }
    s.set_tcp_nodelay(o.nodelay)?;
    if let Some(cc) = &o.congestion {
        set_congestion(s.as_raw_fd(), cc)?;
    }
    Ok(s)
}

/// A listening socket with the server's options (accepted sockets inherit the buffers).
pub fn listen(addr: SocketAddr, o: &SockOpts) -> io::Result<TcpListener> {
    let s = new_socket(addr, o)?;
    // A scenario run right after another must not fail on the previous one's TIME_WAIT.
    s.set_reuse_address(true)?;
    // On the listener, before any connection: accepted sockets inherit it, and the
    // kernel stamps arriving packets only once some socket asked (net_enable_timestamp),
    // so a request arriving with the handshake is stamped too.
    enable_arrival_times(s.as_raw_fd())?;
    s.bind(&addr.into())?;
    s.listen(LISTEN_BACKLOG)?;
    Ok(s.into())
}

/// Sets what the listener's options do not carry over to an accepted socket for sure.
pub fn setup_accepted(s: &TcpStream, o: &SockOpts) -> io::Result<()> {
    s.set_nodelay(o.nodelay)?;
    if let Some(cc) = &o.congestion {
        // Linux hands the listener's choice to the child; only set it when it did not, as
        // setting it re-initialises the congestion state.
        if congestion(s.as_raw_fd()).as_deref() != Some(cc.as_str()) {
            set_congestion(s.as_raw_fd(), cc)?;
        }
    }
    if o.quickack {
        set_quickack(s.as_raw_fd())?;
    }
    Ok(())
}

/// Asks the kernel for the arrival time of what each recv returns: with SO_TIMESTAMPNS
/// set, tcp_recvmsg adds an SCM_TIMESTAMPNS message holding the receive timestamp of
/// the last segment it read (tcp_recv_timestamp; taken when the packet reached the
/// host's stack, net_timestamp_check), so a request that waited unread in the socket
/// is dated by its arrival, not by the application's read.
fn enable_arrival_times(fd: i32) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a valid socket and a c_int option value of the given size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Connects with the client's options, giving up after `timeout`.
pub fn connect(addr: SocketAddr, o: &SockOpts, timeout: Duration) -> io::Result<TcpStream> {
    let s = new_socket(addr, o)?;
    s.connect_timeout(&addr.into(), timeout)?;
    let s: TcpStream = s.into();
    if o.quickack {
        set_quickack(s.as_raw_fd())?;
    }
    Ok(s)
}

/// (congestion, sndbuf, rcvbuf) as the kernel reports them now.
pub fn effective(s: &TcpStream) -> (Option<String>, Option<u32>, Option<u32>) {
    let r = SockRef::from(s);
    let to_u32 = |v: io::Result<usize>| v.ok().and_then(|v| u32::try_from(v).ok());
    (
        congestion(s.as_raw_fd()),
        to_u32(r.send_buffer_size()),
        to_u32(r.recv_buffer_size()),
    )
}

/// TCP_INFINITE_SSTHRESH (include/net/tcp.h): the snd_ssthresh of a connection that has
/// not left slow start and found none in tcp_metrics.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// tcp_info's snd_ssthresh now, as the kernel reports it (`TCP_INFINITE_SSTHRESH`: none).
/// Read at accept, it is what tcp_init_metrics left: a cached ssthresh or none, decided
/// before the first byte of the response.
pub fn ssthresh(s: &TcpStream) -> io::Result<u32> {
    // SAFETY: tcp_info is plain old data; zeroed is a valid value of it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into info and updates len.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info.tcpi_snd_ssthresh)
}

fn setsockopt_int(fd: i32, level: i32, name: i32, v: i32) -> io::Result<()> {
    // SAFETY: fd is an open socket owned by the caller; the option value is a local int
    // whose size is passed along.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// TCP_QUICKACK on: ACK at once until the kernel decides to delay again.
pub fn set_quickack(fd: i32) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_QUICKACK, 1)
}

fn set_congestion(fd: i32, name: &str) -> io::Result<()> {
    // SAFETY: fd is an open socket; the name's bytes and length are passed together.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        let e = io::Error::last_os_error();
        Err(io::Error::new(
            e.kind(),
            format!("TCP_CONGESTION {name:?}: {e} (is the module loaded?)"),
        ))
    }
}

fn congestion(fd: i32) -> Option<String> {
    let mut buf = [0u8; TCP_CA_NAME_MAX];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into buf and updates len.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 {
        return None;
    }
    let name = &buf[..(len as usize).min(buf.len())];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    String::from_utf8(name[..end].to_vec()).ok()
}

/// A connected socket with the end's read habits: TCP_QUICKACK re-armed after each recv
/// when asked (Linux clears it), and counting of bytes and calls.
pub struct Conn {
    pub stream: TcpStream,
    quickack: bool,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub recv_calls: u64,
}

impl Conn {
    pub fn new(stream: TcpStream, quickack: bool) -> Conn {
        Conn {
            stream,
            quickack,
            bytes_read: 0,
            bytes_written: 0,
            recv_calls: 0,
        }
    }

    /// One recv(); Ok(0) at EOF.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (&self.stream).read(buf)?;
        self.recv_calls += 1;
        self.bytes_read += n as u64;
        if self.quickack && n > 0 {
            set_quickack(self.stream.as_raw_fd())?;
        }
        Ok(n)
    }

    /// [`Self::recv`] with the wall-clock arrival time (ns since the Unix epoch) of the
    /// last segment read, when the socket reports it ([`enable_arrival_times`]).
    pub fn recv_arrival(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
        let fd = self.stream.as_raw_fd();
        // Room for one cmsg holding a timespec, u64-aligned as cmsghdr needs.
        let mut control = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: a zeroed msghdr is valid; its pointers are set to live buffers below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = loop {
            // SAFETY: msg points at buf and control, both alive and writable for the call.
            let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        let mut arrival = None;
        // SAFETY: the CMSG_* walk stays within msg_controllen of the kernel-filled buffer.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    arrival = Some(
                        (ts.tv_sec as u64)
                            .saturating_mul(1_000_000_000)
                            .saturating_add(ts.tv_nsec as u64),
                    );
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        self.recv_calls += 1;
        self.bytes_read += n as u64;
        if self.quickack && n > 0 {
            set_quickack(fd)?;
        }
        Ok((n, arrival))
    }

    /// Fills `buf` with recv() calls; returns the number of calls, or UnexpectedEof.
    pub fn recv_exact(&mut self, buf: &mut [u8]) -> io::Result<u32> {
        let mut got = 0;
        let mut calls = 0;
        while got < buf.len() {
            let n = self.recv(&mut buf[got..])?;
            calls += 1;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            got += n;
        }
        Ok(calls)
    }

    pub fn send_all(&mut self, buf: &[u8]) -> io::Result<()> {
        (&self.stream).write_all(buf)?;
        self.bytes_written += buf.len() as u64;
        Ok(())
    }

    /// Bounds the next blocking reads and writes (None: block).
    pub fn set_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.stream.set_read_timeout(t)?;
        self.stream.set_write_timeout(t)
    }

    /// Whether the peer has closed (EOF or reset already received), without blocking:
    /// what a client checks before reusing a kept-alive connection.
    pub fn peer_closed(&self) -> bool {
        let mut b = [0u8; 1];
        if self.stream.set_nonblocking(true).is_err() {
            return true;
        }
        let r = self.stream.peek(&mut b);
        let closed = match r {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        };
        closed || self.stream.set_nonblocking(false).is_err()
    }

    pub fn local_port(&self) -> u16 {
        self.stream.local_addr().map(|a| a.port()).unwrap_or(0)
    }
}

/// True for the errors a read/write timeout produces.
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// CLOCK_MONOTONIC now, in ns.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// SIGTERM and SIGINT, blocked in the calling thread (and so in every thread spawned after)
/// and received only by [`StopSignals::wait`]: no async-signal handler, no interrupted syscall.
pub struct StopSignals(libc::sigset_t);

impl StopSignals {
    pub fn block() -> io::Result<StopSignals> {
        // SAFETY: set is initialised by sigemptyset before use; pthread_sigmask only reads
        // it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGINT);
            let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if r != 0 {
                return Err(io::Error::from_raw_os_error(r));
            }
            Ok(StopSignals(set))
        }
    }

    /// Waits for one of the signals for at most `timeout`: true if one came.
    pub fn wait(&self, timeout: Duration) -> bool {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: the set was built by block(); a null info pointer is allowed.
        let r = unsafe { libc::sigtimedwait(&self.0, std::ptr::null_mut(), &ts) };
        r > 0
    }
}
