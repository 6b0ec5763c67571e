//! `connection.idle_close` (to be written: see mechanisms.md).

use crate::detector::Detector;

#[derive(Default)]
pub struct IdleClose {}

impl Detector for IdleClose {}
