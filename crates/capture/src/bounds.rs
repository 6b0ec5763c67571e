//! Named upper bounds on lengths read from untrusted headers: anything above them is
//! reported as damage instead of being allocated or waited for.

/// Largest captured length accepted for one packet record. libpcap never captures more
/// than 262 144 bytes (MAXIMUM_SNAPLEN, which Wireshark also uses as its limit for
/// Ethernet); Linux BIG TCP super-segments reach 512 KiB on the sender. 1 MiB leaves room
/// for both; a larger caplen is a damaged file (a real one in the test set claims 3.9 GB).
pub const MAX_CAPTURED_LEN: u32 = 1024 * 1024;

/// Largest pcapng block accepted (any type). Packet blocks stay far below it (captured
/// length bound + options); it also bounds name-resolution and custom blocks, which
/// tcpwhy skips. It is the most memory one record can make the stream reader use.
pub const MAX_BLOCK_LEN: usize = 16 * 1024 * 1024;

/// Most interfaces one pcapng section may describe; each costs a few bytes of state, and
/// a stream of bogus Interface Description Blocks must not grow memory without end.
pub const MAX_INTERFACES: usize = 65_536;
