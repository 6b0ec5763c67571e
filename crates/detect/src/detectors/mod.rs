//! The detectors, one module per mechanism, in one ordered registry.

pub mod app_limited;
pub mod bufferbloat;
pub mod delayed_ack;
pub mod early_exit;
pub mod idle_close;
pub mod new_connection;
pub mod recovery;
pub mod reordering;
pub mod restart_after_idle;
pub mod server_think_time;
pub mod short_lived;
pub mod sndbuf;
pub mod syn_retransmit;
pub mod windows;

use crate::detector::Detector;

/// Every detector, in the order their findings are produced (the report sorts by cost).
pub fn registry() -> Vec<Box<dyn Detector>> {
    vec![
        Box::new(syn_retransmit::SynRetransmit::default()),
        Box::new(short_lived::ShortLived::default()),
        Box::new(idle_close::IdleClose::default()),
        Box::new(new_connection::NewConnection::default()),
        Box::new(restart_after_idle::RestartAfterIdle::default()),
        Box::new(early_exit::EarlyExit::default()),
        Box::new(delayed_ack::DelayedAck::default()),
        Box::new(server_think_time::ServerThinkTime::default()),
        Box::new(app_limited::AppLimited::default()),
        Box::new(recovery::Recovery::default()),
        Box::new(reordering::Reordering::default()),
        Box::new(bufferbloat::Bufferbloat::default()),
        Box::new(windows::Windows::default()),
        Box::new(sndbuf::SndbufLimited::default()),
    ]
}
