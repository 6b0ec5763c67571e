//! The path emulator: runs in the router namespace, takes every forwarded TCP packet from
//! an NFQUEUE, and gives each its verdict when the emulated path says so — after the
//! direction's delay (± jitter, in order), never (loss, deterministic drops), or late enough
//! to be overtaken (reordering). The lab's kernel has no netem qdisc, so this replaces it;
//! rate limits stay with tc (htb/tbf), set up by the orchestrator.
//!
//! Start: the orchestrator adds `iptables -A FORWARD -p tcp -j NFQUEUE --queue-num N` in the
//! router namespace and runs `tcpwhy-lab emulate --queue N --config path.json --log
//! decisions.jsonl` there. Packets queued before the emulator binds are dropped by the
//! kernel, so wait until the log's first line (`{"start": …}`, written and flushed right
//! after binding) exists, or for the line `ready` on stdout. Stop: SIGTERM or SIGINT; every
//! held packet is then accepted, the summary line written, and the exit status is 0.
//!
//! The log (JSON lines) is the scenario's ground truth for the path. One line per packet,
//! written when its verdict is issued (sort by `id` or `t_us` for arrival order):
//! `{"id", "t_us" (arrival, µs since the emulator started), "dir", "src", "sport", "dst",
//! "dport", "flags" ("SA", "PA", …), "seq", "ack", "len" (TCP payload bytes), "data_index",
//! "burst", "verdict" ("accept"|"drop"), "release_us" (planned verdict time), "verdict_us"
//! (when the verdict was issued), "late_us" (verdict_us − release_us), "rule"}` — `rule` is one of `delay`, `loss`, `drop_data`,
//! `drop_syn`, `drop_tail`, `reorder`, `delay_change`, `shutdown` (see [`schedule::Rule`]).
//! Packets that are not TCP/IPv4 are accepted at once and only counted. A line
//! `{"kernel_drops": …}` appears if the kernel dropped queued packets (queue or socket
//! buffer full: the emulation is then wrong), and the last line is `{"summary": …}` with
//! the counts per rule, the most packets held at once, the kernel's drop counters and the
//! release lateness percentiles.
//!
//! Timing: the wait until the next due time is a `ppoll` with a µs timeout (timer slack set
//! to 1 ns), time is CLOCK_MONOTONIC, and a packet's arrival time is when we read it from
//! the queue. Held packets leave in order of their due time (`release_us`, then arrival),
//! never before it, whatever the load; only how late they leave depends on the machine,
//! which `bench/emulator.sh` measures. Measured on the 2-core lab VM (debug build): with
//! 20 ms each way and ≈ 1500 packets/s through the emulator (a 100-byte write every ms,
//! echoed), verdicts left a median of 5 µs and a 99th percentile of ≈ 50 µs after their due
//! time, the worst of ≈ 3000 between 0.2 and 1.1 ms over several runs; a handshake through
//! 20 + 20 ms took 40.5–40.6 ms. That is far below the 4 ms (HZ = 250) granularity of the
//! kernel TCP timers the lab studies. `late_us` in the log shows it for every run. The
//! emulator runs at a real-time priority ([`REALTIME_PRIORITY`]): at normal priority,
//! during sweeps on the 2-core machine, 68 of seed 67's 100 runs had a verdict over 3 ms
//! late (the median run's worst 3.7 ms); at SCHED_FIFO 14 (median worst 1.05 ms).

pub mod config;
mod packet;
mod schedule;

pub use config::PathConfig;

use crate::cli::EmulateArgs;
use nfq::{Message, Queue};
use packet::TcpSummary;
use schedule::{Outcome, Scheduler, Verdict};
use serde_json::json;
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Bytes of each packet copied to us: a 60-byte maximal IPv4 header plus a 60-byte maximal
/// TCP header fit; the payload length comes from the IP total length.
const COPY_RANGE: u16 = 128;
/// Packets the kernel may keep queued for us (NFQA_CFG_QUEUE_MAXLEN; the kernel default of
/// 1024 is below what a bulk transfer holds during 100+ ms of delay). Beyond it the kernel
/// drops packets (fail-open is off: accepting them would bypass the emulation).
const QUEUE_MAX_LEN: u32 = 65_536;
/// Receive buffer of the netlink socket. Every queued packet is a netlink message of a few
/// hundred bytes waiting here until we read it; when it is full the kernel drops packets
/// (counted as user_dropped in /proc/net/netfilter/nfnetlink_queue).
const SOCKET_RCVBUF_BYTES: libc::c_int = 16 << 20;
/// How often the kernel's drop counters are read and the log flushed while running.
const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(1);
/// Timer slack of this thread in ns (PR_SET_TIMERSLACK): the default 50 µs would add up to
/// 50 µs to every wake-up.
const TIMER_SLACK_NS: libc::c_ulong = 1;
/// Release lateness samples kept for the summary's percentiles (oldest kept; a lab run has
/// far fewer packets).
const MAX_LATENESS_SAMPLES: usize = 1 << 20;

/// Real-time priority of the emulator (SCHED_FIFO, 1–99): above every normal task, so the
/// endpoints, tcpdump and anything else on the machine wait for it, as hosts wait for a
/// router, and not the other way round; low among real-time tasks (the kernel's own
/// threads stay above it).
const REALTIME_PRIORITY: libc::c_int = 10;

/// Runs the emulator ahead of every normal task. On 2 cores shared with three tcpdumps and
/// both endpoints, a normal-priority emulator was descheduled for up to 5.8 ms while
/// holding packets (s67-096, s76-041: `late_us` max 5,816 and 4,999), a stall of the path
/// that a capture behind it reads as the sender's application pausing or the server
/// thinking. It only sleeps in `ppoll` between verdicts, so it cannot starve the machine
/// (and the kernel keeps 5 % of each second for normal tasks, `sched_rt_runtime_us`).
/// Without the privilege it runs as before, and says so.
fn run_before_the_workload() {
    let param = libc::sched_param {
        sched_priority: REALTIME_PRIORITY,
    };
    // SAFETY: sched_setscheduler reads `param` for the call only.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        eprintln!(
            "emulate: SCHED_FIFO refused ({}): running at normal priority",
            std::io::Error::last_os_error()
        );
    }
}

pub fn run(args: EmulateArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.config)
        .map_err(|e| format!("reading {}: {e}", args.config.display()))?;
    let cfg =
        PathConfig::from_json(&text).map_err(|e| format!("{}: {e}", args.config.display()))?;
    let log =
        File::create(&args.log).map_err(|e| format!("creating {}: {e}", args.log.display()))?;
    let signals = SignalFd::new()?;
    let mut emu = Emulator::open(args.queue, cfg.clone(), BufWriter::new(log))?;
    emu.write_line(&json!({ "start": { "queue": args.queue, "config": cfg } }))?;
    emu.log
        .flush()
        .map_err(|e| format!("writing the log: {e}"))?;
    println!("ready");
    let result = emu.serve(&signals);
    // Whatever happened, nothing stays held.
    let finish = emu.finish();
    result.and(finish)
}

/// The NFQUEUE, the scheduler and the log.
struct Emulator {
    queue: Queue,
    queue_num: u16,
    queue_fd: RawFd,
    sched: Scheduler<Message>,
    start: Instant,
    log: BufWriter<File>,
    non_tcp: u64,
    verdict_errors: u64,
    lateness_us: Vec<u64>,
    kernel_drops: KernelDrops,
}

impl Emulator {
    fn open(queue_num: u16, cfg: PathConfig, log: BufWriter<File>) -> Result<Emulator, String> {
        let mut queue = Queue::open().map_err(|e| format!("opening NFQUEUE: {e}"))?;
        let queue_fd = find_netfilter_socket()?;
        let ctx = |what: &str, e: std::io::Error| format!("NFQUEUE {queue_num}: {what}: {e}");
        queue.bind(queue_num).map_err(|e| ctx("bind", e))?;
        queue
            .set_copy_range(queue_num, COPY_RANGE)
            .map_err(|e| ctx("copy range", e))?;
        queue
            .set_queue_max_len(queue_num, QUEUE_MAX_LEN)
            .map_err(|e| ctx("queue length", e))?;
        queue
            .set_fail_open(queue_num, false)
            .map_err(|e| ctx("fail-open", e))?;
        queue.set_nonblocking(true);
        set_rcvbuf(queue_fd, SOCKET_RCVBUF_BYTES);
        // SAFETY: prctl with an integer argument has no memory effects.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0) };
        run_before_the_workload();
        Ok(Emulator {
            queue,
            queue_num,
            queue_fd,
            sched: Scheduler::new(cfg),
            start: Instant::now(),
            log,
            non_tcp: 0,
            verdict_errors: 0,
            lateness_us: Vec::new(),
            kernel_drops: KernelDrops::default(),
        })
    }

    fn now_us(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Until a signal: release what is due, wait for the next due time or a packet.
    fn serve(&mut self, signals: &SignalFd) -> Result<(), String> {
        let mut next_housekeeping = Instant::now() + HOUSEKEEPING_EVERY;
        loop {
            self.release_due()?;
            let now_us = self.now_us();
            let mut timeout = next_housekeeping.saturating_duration_since(Instant::now());
            if let Some(due) = self.sched.next_due_us() {
                timeout = timeout.min(Duration::from_micros(due.saturating_sub(now_us)));
            }
            let (packets, signal) = wait(self.queue_fd, signals.fd, timeout)?;
            if signal {
                return Ok(());
            }
            if packets {
                self.receive()?;
            }
            if Instant::now() >= next_housekeeping {
                next_housekeeping += HOUSEKEEPING_EVERY;
                self.housekeeping()?;
            }
        }
    }

    /// Takes every packet the kernel has queued for us.
    fn receive(&mut self) -> Result<(), String> {
        loop {
            let msg = match self.queue.recv() {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("NFQUEUE receive: {e}")),
            };
            let now_us = self.now_us();
            match TcpSummary::parse(msg.get_payload()) {
                Ok(pkt) => {
                    if let Some(out) = self.sched.arrive(now_us, pkt, msg) {
                        self.issue(out, now_us)?;
                    }
                }
                Err(_) => {
                    self.non_tcp += 1;
                    self.verdict(msg, Verdict::Accept);
                }
            }
        }
    }

    fn release_due(&mut self) -> Result<(), String> {
        let now_us = self.now_us();
        while let Some(out) = self.sched.pop_due(now_us) {
            self.issue(out, now_us)?;
        }
        Ok(())
    }

    /// Issues one verdict and logs it.
    fn issue(&mut self, out: Outcome<Message>, now_us: u64) -> Result<(), String> {
        let late_us = now_us.saturating_sub(out.release_us);
        if self.lateness_us.len() < MAX_LATENESS_SAMPLES && out.verdict == Verdict::Accept {
            self.lateness_us.push(late_us);
        }
        let p = out.pkt;
        let line = json!({
            "id": out.id,
            "t_us": out.arrival_us,
            "dir": out.dir,
            "src": p.src,
            "sport": p.sport,
            "dst": p.dst,
            "dport": p.dport,
            "flags": p.flag_letters(),
            "seq": p.seq,
            "ack": p.ack,
            "len": p.payload_len,
            "data_index": out.data_index,
            "burst": out.burst,
            "verdict": out.verdict,
            "release_us": out.release_us,
            "verdict_us": now_us,
            "late_us": late_us,
            "rule": out.rule,
        });
        self.verdict(out.token, out.verdict);
        self.write_line(&line)
    }

    fn verdict(&mut self, mut msg: Message, v: Verdict) {
        msg.set_verdict(match v {
            Verdict::Accept => nfq::Verdict::Accept,
            Verdict::Drop => nfq::Verdict::Drop,
        });
        // A failed verdict (the packet is gone, e.g. its device was removed) is counted,
        // not fatal: the rest of the path still works.
        if self.queue.verdict(msg).is_err() {
            self.verdict_errors += 1;
        }
    }

    fn write_line(&mut self, v: &serde_json::Value) -> Result<(), String> {
        serde_json::to_writer(&mut self.log, v)
            .and_then(|()| self.log.write_all(b"\n").map_err(serde_json::Error::io))
            .map_err(|e| format!("writing the log: {e}"))
    }

    fn housekeeping(&mut self) -> Result<(), String> {
        if let Some(k) = KernelDrops::read(self.queue_num) {
            if k != self.kernel_drops {
                self.kernel_drops = k;
                let t_us = self.now_us();
                self.write_line(&json!({ "kernel_drops": {
                    "t_us": t_us,
                    "queue_dropped": k.queue_dropped,
                    "user_dropped": k.user_dropped,
                }}))?;
            }
        }
        self.log
            .flush()
            .map_err(|e| format!("writing the log: {e}"))
    }

    /// Accepts every held packet, writes the summary, flushes.
    fn finish(&mut self) -> Result<(), String> {
        let now_us = self.now_us();
        let mut result = Ok(());
        for out in self.sched.drain(now_us) {
            // Keep accepting the rest even if the log fails.
            if let Err(e) = self.issue(out, now_us) {
                result = Err(e);
            }
        }
        let _ = self.queue.unbind(self.queue_num);
        if let Some(k) = KernelDrops::read(self.queue_num) {
            self.kernel_drops = k;
        }
        let mut late = std::mem::take(&mut self.lateness_us);
        late.sort_unstable();
        let pct = |p: usize| late.get((late.len().saturating_sub(1)) * p / 100).copied();
        let summary = json!({ "summary": {
            "t_us": now_us,
            "counts": self.sched.stats(),
            "non_tcp": self.non_tcp,
            "verdict_errors": self.verdict_errors,
            "kernel_queue_dropped": self.kernel_drops.queue_dropped,
            "kernel_user_dropped": self.kernel_drops.user_dropped,
            "late_us": { "p50": pct(50), "p99": pct(99), "max": late.last() },
        }});
        result = result.and(self.write_line(&summary));
        result.and(
            self.log
                .flush()
                .map_err(|e| format!("writing the log: {e}")),
        )
    }
}

/// Waits for packets or a signal; `(packets readable, signal pending)`.
fn wait(queue_fd: RawFd, signal_fd: RawFd, timeout: Duration) -> Result<(bool, bool), String> {
    let mut fds = [
        libc::pollfd {
            fd: queue_fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: signal_fd,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().try_into().unwrap_or(libc::time_t::MAX),
        tv_nsec: timeout.subsec_nanos().into(),
    };
    // SAFETY: fds and ts are valid for the call; a null sigmask keeps the current one.
    let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == ErrorKind::Interrupted {
            return Ok((false, false));
        }
        return Err(format!("ppoll: {e}"));
    }
    let bad = libc::POLLERR | libc::POLLNVAL;
    if fds[0].revents & libc::POLLNVAL != 0 || fds[1].revents & bad != 0 {
        return Err("ppoll: queue or signal descriptor failed".into());
    }
    // POLLERR on the netlink socket is an ENOBUFS report; reading clears it.
    Ok((
        fds[0].revents & (libc::POLLIN | libc::POLLERR) != 0,
        fds[1].revents & libc::POLLIN != 0,
    ))
}

/// SIGTERM and SIGINT delivered as a readable descriptor, so the poll loop sees them
/// between two verdicts rather than inside one.
struct SignalFd {
    fd: RawFd,
}

impl SignalFd {
    fn new() -> Result<SignalFd, String> {
        // SAFETY: sigset_t is plain data initialised by sigemptyset; the calls get valid
        // pointers. The signals are blocked before any thread exists, so none is lost.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGINT);
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return Err("blocking SIGTERM/SIGINT failed".into());
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(format!("signalfd: {}", std::io::Error::last_os_error()));
            }
            Ok(SignalFd { fd })
        }
    }
}

impl Drop for SignalFd {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.fd) };
    }
}

fn open_fds() -> Vec<RawFd> {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The nfq crate (0.2) does not expose its socket, and we need it to poll with a timeout
/// and to enlarge its buffer: it is this process's only netfilter netlink socket. (Not
/// "the descriptor that appeared": listing /proc/self/fd before opening the queue frees the
/// very number the queue then gets.)
fn find_netfilter_socket() -> Result<RawFd, String> {
    let sockopt = |fd: RawFd, opt: libc::c_int| -> Option<libc::c_int> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: v and len are valid for the call; a non-socket fd just fails.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        (r == 0).then_some(v)
    };
    let found: Vec<RawFd> = open_fds()
        .into_iter()
        .filter(|&fd| {
            sockopt(fd, libc::SO_DOMAIN) == Some(libc::AF_NETLINK)
                && sockopt(fd, libc::SO_PROTOCOL) == Some(libc::NETLINK_NETFILTER)
        })
        .collect();
    match found[..] {
        [fd] => Ok(fd),
        _ => Err(format!("cannot tell the NFQUEUE socket among {found:?}")),
    }
}

/// Best effort: SO_RCVBUFFORCE (root) lifts the rmem_max cap, SO_RCVBUF is the fallback.
fn set_rcvbuf(fd: RawFd, bytes: libc::c_int) {
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: a valid pointer to an int of the given size.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                (&bytes as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            return;
        }
    }
}

/// The kernel's per-queue drop counters (/proc/net/netfilter/nfnetlink_queue, per network
/// namespace: queue, portid, queued, copy mode, copy range, queue_dropped, user_dropped, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct KernelDrops {
    queue_dropped: u64,
    user_dropped: u64,
}

impl KernelDrops {
    fn read(queue_num: u16) -> Option<KernelDrops> {
        let text = std::fs::read_to_string("/proc/net/netfilter/nfnetlink_queue").ok()?;
        Self::parse(&text, queue_num)
    }

    fn parse(text: &str, queue_num: u16) -> Option<KernelDrops> {
        text.lines().find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.first()?.parse::<u16>().ok()? != queue_num {
                return None;
            }
            Some(KernelDrops {
                queue_dropped: f.get(5)?.parse().ok()?,
                user_dropped: f.get(6)?.parse().ok()?,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_drop_counters_of_our_queue_only() {
        let text = "    3  12345     0 2   128     0     0       10  1\n\
                    \x20  81  23456     2 2   128     7     1     4711  1\n";
        assert_eq!(
            KernelDrops::parse(text, 81),
            Some(KernelDrops {
                queue_dropped: 7,
                user_dropped: 1
            })
        );
        assert_eq!(KernelDrops::parse(text, 5), None);
        assert_eq!(KernelDrops::parse("garbage\n", 81), None);
    }
}
