//! The few Chrome DevTools Protocol calls the report page's browser test makes, over
//! Chromium's `--remote-debugging-pipe`: commands go to the browser's fd 3 and replies and
//! events come from its fd 4, each a JSON object ended by a NUL byte (Chromium's
//! `devtools_pipe_handler`). One page, attached in flattened mode (`Target.attachToTarget`
//! with `flatten`), so every command to it carries its `sessionId`.
//!
//! Hand-written rather than headless_chrome: that crate and the 72 it pulled in (its
//! generated protocol types, a WebSocket and TLS stack, regex) were a third of the test
//! suite's build. `cargo test --workspace --profile test-release --no-run --timings` from
//! scratch on the 2-core VM (session 34): 529 s (1,042 s of CPU, 262 s of it
//! headless_chrome alone) with them, 336 s (669 s of CPU) with this: a pipe and
//! serde_json.

use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long a command may take before the test gives up on the browser.
const TIMEOUT: Duration = Duration::from_secs(20);
/// The browser's standard error, in its profile directory: its last lines explain a
/// browser that exited.
const STDERR_LOG: &str = "stderr.log";

/// A headless Chromium with one page.
pub struct Browser {
    child: Child,
    commands: File,
    messages: Receiver<Result<Value, String>>,
    next_id: u64,
    session: String,
    /// What went wrong in the page, from the events read so far.
    problems: Vec<String>,
    /// A load event was read since the last navigation began.
    loaded: bool,
    profile: tempfile::TempDir,
}

/// A pipe with both ends closed on exec, numbered 10 or above: the child's ends are
/// duplicated onto 3 and 4 there (which clears the flag on the copies), and neither may
/// already be 3 or 4, which dup2 would leave marked, or overwrite before copying.
fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both are open and owned by nobody else.
    let ends = unsafe { [OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])] };
    let [read, write] = ends.map(|fd| {
        // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor (or -1), owned here.
        let high = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
        (high >= 0).then(|| unsafe { OwnedFd::from_raw_fd(high) })
    });
    match (read, write) {
        (Some(r), Some(w)) => Ok((r, w)),
        _ => Err(format!("pipe: {}", std::io::Error::last_os_error())),
    }
}

impl Browser {
    /// Starts `chromium` headless at `width` × `height` and opens a blank page.
    pub fn launch(chromium: &Path, width: u32, height: u32) -> Result<Browser, String> {
        let profile = tempfile::tempdir().map_err(|e| format!("profile dir: {e}"))?;
        let log = File::create(profile.path().join(STDERR_LOG))
            .map_err(|e| format!("browser log: {e}"))?;
        let (cmd_read, cmd_write) = pipe()?;
        let (msg_read, msg_write) = pipe()?;
        let (fd3, fd4) = (cmd_read.as_raw_fd(), msg_write.as_raw_fd());
        let mut command = Command::new(chromium);
        command
            .args([
                "--headless",
                // Tests run as root in CI containers, where Chromium's sandbox cannot start.
                "--no-sandbox",
                "--remote-debugging-pipe",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--hide-scrollbars",
                "--mute-audio",
            ])
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: only dup2, which is async-signal-safe, runs between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(fd3, 3) < 0 || libc::dup2(fd4, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .map_err(|e| format!("starting {}: {e}", chromium.display()))?;
        // The child's ends, closed here: the reader then sees the end of the file when
        // the browser exits.
        drop((cmd_read, msg_write));

        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut from = BufReader::new(File::from(msg_read));
            loop {
                let mut buf = Vec::new();
                match from.read_until(0, &mut buf) {
                    Ok(0) => break,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        let m = serde_json::from_slice(&buf)
                            .map_err(|e| format!("a message that is not JSON: {e}"));
                        if tx.send(m).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(format!("reading from the browser: {e}")));
                        break;
                    }
                }
            }
        });

        let mut browser = Browser {
            child,
            commands: File::from(cmd_write),
            messages,
            next_id: 0,
            session: String::new(),
            problems: Vec::new(),
            loaded: false,
            profile,
        };
        let target = browser.send(None, "Target.createTarget", json!({ "url": "about:blank" }))?;
        let target_id = target["targetId"].clone();
        let attached = browser.send(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        browser.session = attached["sessionId"]
            .as_str()
            .ok_or("attachToTarget gave no sessionId")?
            .to_string();
        for domain in ["Page", "Runtime", "Log"] {
            browser.call(&format!("{domain}.enable"), json!({}))?;
        }
        Ok(browser)
    }

    /// A command to the page; its result.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let session = self.session.clone();
        self.send(Some(&session), method, params)
    }

    fn send(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).map_err(|e| e.to_string())?;
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .map_err(|e| format!("{method}: writing to the browser: {e}{}", self.exit_note()))?;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let m = self.next_message(deadline, method)?;
            if m["id"].as_u64() == Some(id) {
                if let Some(e) = m.get("error") {
                    return Err(format!("{method}: {e}"));
                }
                return Ok(m["result"].clone());
            }
        }
    }

    /// Navigates to `url` and waits for its load event (which may come before the
    /// command's reply).
    pub fn navigate(&mut self, url: &str) -> Result<(), String> {
        self.loaded = false;
        let r = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(e) = r.get("errorText") {
            return Err(format!("navigating to {url}: {e}"));
        }
        let deadline = Instant::now() + TIMEOUT;
        while !self.loaded {
            self.next_message(deadline, "Page.loadEventFired")?;
        }
        Ok(())
    }

    /// `Runtime.evaluate`, awaiting a promise: the value, or the exception as an error.
    pub fn evaluate(&mut self, expr: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "awaitPromise": true, "returnByValue": true }),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(describe_exception(e));
        }
        Ok(r["result"]["value"].clone())
    }

    /// The page's problems since the last call: console errors, log errors, uncaught
    /// exceptions.
    pub fn take_problems(&mut self) -> Vec<String> {
        // Events already sent, not yet read.
        while let Ok(Ok(m)) = self.messages.try_recv() {
            self.note_event(&m);
        }
        std::mem::take(&mut self.problems)
    }

    /// The next message, the events among them noted on the way.
    fn next_message(&mut self, deadline: Instant, waiting_for: &str) -> Result<Value, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        let m = match self.messages.recv_timeout(left) {
            Ok(m) => m?,
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "{waiting_for}: no answer in {} s",
                    TIMEOUT.as_secs()
                ))
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(format!(
                    "{waiting_for}: the browser exited{}",
                    self.exit_note()
                ))
            }
        };
        self.note_event(&m);
        Ok(m)
    }

    /// The browser's exit status and the last lines it wrote, if it has exited.
    fn exit_note(&mut self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        let Ok(Some(status)) = self.child.try_wait() else {
            return String::new();
        };
        let log = std::fs::read_to_string(self.profile.path().join(STDERR_LOG)).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(5)..].join("\n  ");
        format!(" ({status}; its last words:\n  {tail})")
    }

    fn note_event(&mut self, m: &Value) {
        let p = &m["params"];
        let problem = match m["method"].as_str() {
            Some("Page.loadEventFired") => {
                self.loaded = true;
                None
            }
            Some("Runtime.exceptionThrown") => Some(format!(
                "uncaught exception: {}",
                describe_exception(&p["exceptionDetails"])
            )),
            Some("Runtime.consoleAPICalled") if p["type"] == "error" => {
                let args: Vec<String> = p["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| match (&a["value"], a["description"].as_str()) {
                        (Value::Null, Some(d)) => d.to_string(),
                        (Value::Null, None) => String::new(),
                        (v, _) => v.to_string(),
                    })
                    .collect();
                Some(format!("console.error: {}", args.join(" ")))
            }
            Some("Log.entryAdded") if p["entry"]["level"] == "error" => Some(format!(
                "log error: {}",
                p["entry"]["text"].as_str().unwrap_or_default()
            )),
            _ => None,
        };
        self.problems.extend(problem);
    }
}

fn describe_exception(details: &Value) -> String {
    details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
        .unwrap_or("(no description)")
        .to_string()
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.send(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
