//! The host's TCP memory state beside each sample: `net.ipv4.tcp_mem` against the pages
//! all TCP sockets hold (/proc/net/sockstat "TCP: … mem N", the kernel's
//! `tcp_memory_allocated`), and the watched namespace's `tcp_slow_start_after_idle`.
//! The text is parsed by tcpwhy-hoststate, as for `tcpwhy host`.
//!
//! `tcp_mem` is global and registered in the initial namespace only (ipv4_table in
//! net/ipv4/sysctl_net_ipv4.c), so it is opened before [`crate::netns::enter`] and read
//! through that open file afterwards; sockstat and the per-namespace sysctls are read
//! from the current namespace at each sample.

use crate::sample::HostMemory;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

const TCP_MEM: &str = "/proc/sys/net/ipv4/tcp_mem";
const SOCKSTAT: &str = "/proc/net/sockstat";
const SLOW_START_AFTER_IDLE: &str = "/proc/sys/net/ipv4/tcp_slow_start_after_idle";
/// These files are a few hundred bytes; more means something else is there.
const MAX_FILE_BYTES: u64 = 64 << 10;

/// Reads [`HostMemory`] at each sample. Open it before entering a namespace.
pub struct HostMemReader {
    tcp_mem: Option<File>,
}

impl HostMemReader {
    pub fn open() -> HostMemReader {
        HostMemReader {
            tcp_mem: File::open(TCP_MEM).ok(),
        }
    }

    /// What can be read now; unreadable parts stay `None` (the rules that need them then
    /// say nothing rather than guess).
    pub fn read(&mut self) -> HostMemory {
        let tcp_mem = self.tcp_mem.as_mut().and_then(|f| {
            f.seek(SeekFrom::Start(0)).ok()?;
            let mut text = String::new();
            f.take(MAX_FILE_BYTES).read_to_string(&mut text).ok()?;
            parse_tcp_mem(&text)
        });
        let mem_pages = read_small(SOCKSTAT).and_then(|t| {
            tcpwhy_hoststate::parse_sockstat(&t, SOCKSTAT)
                .value
                .tcp()?
                .mem_pages
        });
        let slow_start_after_idle =
            read_small(SLOW_START_AFTER_IDLE).and_then(|t| match t.trim() {
                "0" => Some(false),
                "" => None,
                _ => Some(true),
            });
        HostMemory {
            tcp_mem,
            mem_pages,
            slow_start_after_idle,
        }
    }
}

fn read_small(path: &str) -> Option<String> {
    let mut text = String::new();
    File::open(path)
        .ok()?
        .take(MAX_FILE_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// The three page counts of /proc/sys/net/ipv4/tcp_mem, through the host parser.
pub fn parse_tcp_mem(text: &str) -> Option<tcpwhy_hoststate::TcpMem> {
    tcpwhy_hoststate::parse_proc_sys([(TCP_MEM, text)], TCP_MEM)
        .value
        .tcp_mem()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_mem_file_text_is_three_page_counts() {
        let m = parse_tcp_mem("92451\t123268\t184902\n").unwrap();
        assert_eq!(
            (m.low_pages, m.pressure_pages, m.high_pages),
            (92451, 123268, 184902)
        );
        assert!(parse_tcp_mem("garbage").is_none());
    }
}
