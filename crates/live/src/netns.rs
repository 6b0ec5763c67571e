//! Entering a named network namespace (`ip netns add NAME` makes /run/netns/NAME) with
//! setns(2), so that the sock_diag socket opened afterwards, /proc/net/sockstat and the
//! namespace's /proc/sys/net settings are that namespace's. setns changes the calling
//! thread only: call it before opening anything and before starting threads.

use std::fmt;
use std::os::fd::AsRawFd;

/// Where `ip netns` keeps its namespaces (iproute2's NETNS_RUN_DIR).
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// Why a namespace could not be entered.
#[derive(Debug)]
pub enum Error {
    /// The name is not a plain file name (empty, `.`/`..`, or with a `/`).
    BadName(String),
    /// /run/netns/NAME could not be opened (no such namespace, not permitted).
    Open(String, std::io::Error),
    /// setns(2) refused (needs CAP_SYS_ADMIN).
    Setns(String, std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadName(n) => write!(f, "--netns {n:?}: not a namespace name"),
            Error::Open(p, e) => write!(f, "{p}: {e} (see `ip netns list`)"),
            Error::Setns(p, e) => write!(f, "setns({p}): {e} (entering a namespace needs root)"),
        }
    }
}

impl std::error::Error for Error {}

/// Moves the calling thread into the network namespace `name` of `ip netns`.
pub fn enter(name: &str) -> Result<(), Error> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(Error::BadName(name.to_string()));
    }
    let path = format!("{NETNS_RUN_DIR}/{name}");
    let file = std::fs::File::open(&path).map_err(|e| Error::Open(path.clone(), e))?;
    // SAFETY: setns takes a valid open descriptor (held by `file` for the call) and a
    // namespace type; it touches no memory of ours.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        return Err(Error::Setns(path, std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_paths_are_refused_before_any_system_call() {
        for bad in ["", ".", "..", "a/b", "../etc"] {
            assert!(matches!(enter(bad), Err(Error::BadName(_))), "{bad:?}");
        }
    }
}
