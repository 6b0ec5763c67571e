//! `slow_start.new_connection` (to be written: see mechanisms.md).

use crate::detector::Detector;

#[derive(Default)]
pub struct NewConnection {}

impl Detector for NewConnection {}
