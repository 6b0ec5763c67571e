//! Live sources for tcpwhy: what the kernel says about TCP while it happens, instead of
//! a capture file.
//!
//! `tcpwhy watch` reads every TCP socket's `struct tcp_info` and socket memory through
//! NETLINK_SOCK_DIAG ([`sockdiag`]), optionally inside a named network namespace
//! ([`netns`]), together with the host's TCP memory state ([`hostmem`]); [`watch`]
//! keeps the previous sample of each socket and hands each pair of samples to the rules
//! ([`rules`]), which turn the deltas of the kernel's own counters into findings from
//! the catalogue (`rwnd.limited`, `slow_start.restart_after_idle`, `loss.*` …), each
//! with the share of the interval it cost. Nothing here reads the clock or draws on a
//! terminal: the caller passes the sample time in, so the rules are tested with
//! synthetic samples ([`sample`]). docs/watch.md describes every rule and its kernel
//! source.
//!
//! `tcpwhy analyze -i` captures live through tcpdump ([`capture`]) into the same pass
//! that reads files.

pub mod capture;
pub mod hostmem;
pub mod netns;
pub mod rules;
pub mod sample;
pub mod sockdiag;
pub mod watch;
