//! A live capture for `tcpwhy analyze -i`: tcpdump (libpcap) captures on the interface and
//! writes pcap to a pipe that the ordinary pass reads as a stream, frame by frame as they
//! arrive.
//!
//! Why a tcpdump process rather than a socket of our own: as Wireshark leaves capturing
//! to dumpcap, the privileged part stays a small program every distribution audits and
//! keeps; libpcap compiles the BPF filter (tcpdump's syntax, which users already know)
//! into the kernel, so a busy interface does not copy every packet to us; timestamps are
//! the kernel's (TPACKET), not the time we happened to read; and drops are counted by
//! the kernel and reported. The pipe is the only coupling: the pass is the same one that
//! reads a file from standard input.
//!
//! Stopping: [`Stopper::stop`] (a timer for `--duration`, Ctrl-C) sends tcpdump SIGINT;
//! it flushes, prints its counts and exits, the pipe ends, and the pass finishes with
//! every connection still open finalised, as at the end of a file.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long tcpdump may take to say it listens (opening the interface, compiling the
/// filter) before the start is called failed.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// What to capture.
#[derive(Clone, Debug, Default)]
pub struct LiveOptions {
    pub interface: String,
    /// A capture filter in tcpdump's syntax, as words (joined by tcpdump).
    pub filter: Vec<String>,
    /// Bytes kept of each packet; `None`: tcpdump's default (the whole packet).
    pub snaplen: Option<u32>,
    /// Also write the capture here (pcap, as tcpdump writes it).
    pub save: Option<PathBuf>,
    /// The tcpdump to run; `None`: `tcpdump` from PATH.
    pub tcpdump: Option<PathBuf>,
}

/// Stops a running capture; cheap to clone, callable from a signal handler's thread.
#[derive(Clone)]
pub struct Stopper {
    pid: Arc<AtomicI32>,
    stopped: Arc<AtomicBool>,
}

impl Stopper {
    /// Asks tcpdump to end (SIGINT: it flushes and prints its counts). Idempotent.
    pub fn stop(&self) {
        let pid = self.pid.load(Ordering::SeqCst);
        if pid > 0 && !self.stopped.swap(true, Ordering::SeqCst) {
            // SAFETY: kill has no memory preconditions; the pid is our child's, which
            // cannot be reaped (and its number reused) before `finish` waits for it.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
        }
    }
}

/// What tcpdump said at the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveCounts {
    /// "N packets captured".
    pub captured: Option<u64>,
    /// "N packets received by filter".
    pub received_by_filter: Option<u64>,
    /// "N packets dropped by kernel": packets the analysis never saw.
    pub dropped_by_kernel: Option<u64>,
}

/// A running capture: give [`LiveCapture::path`] to the pass, then [`LiveCapture::finish`].
pub struct LiveCapture {
    child: Child,
    /// The read end the pass opens by its `/dev/fd` path.
    reader: OwnedFd,
    stopper: Stopper,
    tee: Option<JoinHandle<io::Result<u64>>>,
    stderr: JoinHandle<Vec<String>>,
    /// What tcpdump said when it started ("listening on IFACE, link-type …, snapshot
    /// length N bytes"): the link type and snaplen the user is told.
    pub listening: String,
}

impl LiveCapture {
    /// Starts tcpdump and waits until it listens; its error (no such device, not
    /// permitted, a bad filter) is the error here. Call from the main thread (see the
    /// parent-death signal below).
    pub fn start(o: &LiveOptions) -> Result<LiveCapture, String> {
        let exe = o
            .tcpdump
            .clone()
            .unwrap_or_else(|| PathBuf::from("tcpdump"));
        let mut cmd = Command::new(&exe);
        // -U: each packet written as it is captured; --immediate-mode: delivered by the
        // kernel at once, not in buffer-sized blocks; nanosecond stamps when the
        // interface has them (libpcap falls back to µs and says nothing).
        cmd.args(["-i", &o.interface, "-w", "-", "-U", "--immediate-mode"])
            .args(["--time-stamp-precision", "nano"]);
        // As root, tcpdump keeps root instead of switching to its own user (Debian's
        // default, -Z tcpdump): changing user clears the parent-death signal below, and
        // a tcpdump that only writes the raw capture (-w) parses no packet to protect.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            cmd.args(["-Z", "root"]);
        }
        if let Some(s) = o.snaplen {
            cmd.args(["-s", &s.to_string()]);
        }
        cmd.args(&o.filter)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so that a Ctrl-C at the terminal reaches only us and
        // we stop it once, in order ([`Stopper`]); and it is told to end if we die
        // without stopping it (SIGKILL), so no capture is left running. The parent-death
        // signal follows the thread that forks: call `start` from the main thread.
        cmd.process_group(0);
        // SAFETY: between fork and exec only async-signal-safe calls: prctl is one.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => format!(
                "-i needs tcpdump to capture ({} not found): apt-get install tcpdump",
                exe.display()
            ),
            _ => format!("starting {}: {e}", exe.display()),
        })?;
        let stopper = Stopper {
            pid: Arc::new(AtomicI32::new(i32::try_from(child.id()).unwrap_or(0))),
            stopped: Arc::new(AtomicBool::new(false)),
        };
        let (stdout, stderr) = match (child.stdout.take(), child.stderr.take()) {
            (Some(o), Some(e)) => (o, e),
            _ => return Err("tcpdump's output pipes were not set up".into()),
        };
        // Its stderr: the first line says it listens (or why not), the last ones count.
        let (started_tx, started_rx) = std::sync::mpsc::channel::<Result<String, String>>();
        let stderr = std::thread::spawn(move || {
            let mut lines = Vec::new();
            let mut told = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !told && line.contains("listening on") {
                    let _ = started_tx.send(Ok(line.clone()));
                    told = true;
                }
                lines.push(line);
            }
            if !told {
                let _ = started_tx.send(Err(lines.join("\n")));
            }
            lines
        });
        let listening = match started_rx.recv_timeout(START_TIMEOUT) {
            Ok(Ok(line)) => line,
            Ok(Err(said)) => {
                let _ = child.wait();
                let said = said.trim();
                return Err(if said.is_empty() {
                    format!("tcpdump on {} ended without capturing", o.interface)
                } else {
                    format!("tcpdump on {}: {said}", o.interface)
                });
            }
            Err(_) => {
                stopper.stop();
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "tcpdump on {} did not start within {START_TIMEOUT:?}",
                    o.interface
                ));
            }
        };
        let (reader, tee) = match &o.save {
            // The pass reads tcpdump's own pipe.
            None => (OwnedFd::from(stdout), None),
            Some(path) => {
                let file =
                    std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
                let (r, w) = pipe().map_err(|e| format!("a pipe for the pass: {e}"))?;
                let tee = std::thread::spawn(move || tee_to(stdout, file, w));
                (r, Some(tee))
            }
        };
        Ok(LiveCapture {
            child,
            reader,
            stopper,
            tee,
            stderr,
            listening,
        })
    }

    /// The path the pass opens to read the capture (this process's `/dev/fd/N`).
    pub fn path(&self) -> String {
        format!("/dev/fd/{}", self.reader.as_raw_fd())
    }

    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Stops tcpdump if it still runs, waits for it and returns its counts. Call after
    /// the pass has read the pipe to its end.
    pub fn finish(mut self) -> Result<LiveCounts, String> {
        self.stopper.stop();
        let status = self.child.wait().map_err(|e| format!("tcpdump: {e}"))?;
        let saved = match self.tee.take() {
            Some(t) => match t.join() {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(format!("saving the capture: {e}")),
                Err(_) => Err("saving the capture: the writer failed".into()),
            },
            None => Ok(()),
        };
        let lines = self.stderr.join().unwrap_or_default();
        saved?;
        // SIGINT is how it is stopped; any other failure is reported with what it said.
        let by_signal = std::os::unix::process::ExitStatusExt::signal(&status).is_some();
        if !status.success() && !by_signal {
            let tail: Vec<&str> = lines.iter().rev().take(3).map(String::as_str).collect();
            let said: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!("tcpdump ended with {status}: {}", said.join(" / ")));
        }
        Ok(counts(&lines))
    }
}

/// Copies tcpdump's output to the saved file and to the pass's pipe, as it comes.
fn tee_to(mut from: impl Read, mut file: std::fs::File, to: OwnedFd) -> io::Result<u64> {
    let mut to = std::fs::File::from(to);
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0u64;
    let mut pass_gone = false;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        file.write_all(&buf[..n])?;
        // A pass that stopped reading (an error in the capture) must not stop the
        // saving: the file is what the user keeps.
        if !pass_gone && to.write_all(&buf[..n]).is_err() {
            pass_gone = true;
        }
        total += n as u64;
    }
    file.flush()?;
    Ok(total)
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// tcpdump's closing counts, from the lines it printed on standard error.
fn counts(lines: &[String]) -> LiveCounts {
    let mut c = LiveCounts::default();
    for l in lines {
        let mut words = l.split_whitespace();
        let Some(n) = words.next().and_then(|w| w.parse::<u64>().ok()) else {
            continue;
        };
        let rest: Vec<&str> = words.collect();
        match rest.as_slice() {
            ["packet" | "packets", "captured"] => c.captured = Some(n),
            ["packet" | "packets", "received", "by", "filter"] => c.received_by_filter = Some(n),
            ["packet" | "packets", "dropped", "by", "kernel"] => c.dropped_by_kernel = Some(n),
            _ => {}
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tcpdumps_closing_counts() {
        let lines: Vec<String> = [
            "tcpdump: listening on veth0, link-type EN10MB (Ethernet), snapshot length 262144 bytes",
            "1234 packets captured",
            "1240 packets received by filter",
            "6 packets dropped by kernel",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            counts(&lines),
            LiveCounts {
                captured: Some(1234),
                received_by_filter: Some(1240),
                dropped_by_kernel: Some(6),
            }
        );
        assert_eq!(counts(&["1 packet captured".to_string()]).captured, Some(1));
    }

    #[test]
    fn a_missing_tcpdump_says_what_to_install() {
        let e = LiveCapture::start(&LiveOptions {
            interface: "lo".into(),
            tcpdump: Some("/nonexistent/tcpdump".into()),
            ..Default::default()
        })
        .err()
        .unwrap();
        assert!(e.contains("apt-get install tcpdump"), "{e}");
    }

    #[test]
    fn tees_everything_to_the_file_even_when_the_pass_stops_reading() {
        let dir = std::env::temp_dir().join(format!("tcpwhy-live-tee-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.pcap");
        let (r, w) = pipe().unwrap();
        drop(r); // the pass is gone
        let data = vec![7u8; 200_000];
        let n = tee_to(&data[..], std::fs::File::create(&path).unwrap(), w).unwrap();
        assert_eq!(n, 200_000);
        assert_eq!(std::fs::read(&path).unwrap(), data);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
