//! What the lab's test binaries share.

use std::process::Command;

/// Root and `ip netns`: what every run of the lab needs. Without them a test notes it was
/// skipped and passes, as on a developer's unprivileged machine (CI runs as root).
pub fn root_and_netns() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let netns = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .is_ok_and(|o| o.status.success());
    root && netns
}
