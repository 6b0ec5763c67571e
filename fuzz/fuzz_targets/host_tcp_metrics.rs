//! Fuzz target for the host-state tcp_metrics parser(s): arbitrary text (invalid UTF-8 replaced,
//! as HostState::read_bundle does) must never panic, and the result stays bounded (see
//! host_parsers.rs).
#![no_main]

mod host_parsers;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    host_parsers::tcp_metrics(&String::from_utf8_lossy(data));
});
