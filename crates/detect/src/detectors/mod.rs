//! The detectors, one module per mechanism, in one ordered registry.

pub mod server_think_time;
pub mod syn_retransmit;

use crate::detector::Detector;

/// Every detector, in the order their findings are produced (the report sorts by cost).
pub fn registry() -> Vec<Box<dyn Detector>> {
    vec![
        Box::new(syn_retransmit::SynRetransmit::default()),
        Box::new(server_think_time::ServerThinkTime),
    ]
}
