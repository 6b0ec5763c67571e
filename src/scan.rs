//! The terminal side of a pass: a progress bar on standard error for large inputs. The
//! pass itself is `tcpwhy_pipeline`.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use tcpwhy_pipeline::Progress;

/// Inputs smaller than this finish too fast for a progress bar to help.
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

/// A progress bar drawn only on a terminal and only for a large input of known size.
pub struct Bar(ProgressBar);

impl Bar {
    pub fn new() -> Self {
        Bar(ProgressBar::hidden())
    }
}

impl Progress for Bar {
    fn start(&self, total_bytes: Option<u64>) {
        let Some(total) = total_bytes else { return };
        if total < PROGRESS_MIN_BYTES || !std::io::stderr().is_terminal() {
            return;
        }
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
        {
            self.0.set_style(style);
        }
        self.0.set_length(total);
        self.0
            .set_draw_target(indicatif::ProgressDrawTarget::stderr());
    }

    fn update(&self, bytes_read: u64) {
        self.0.set_position(bytes_read);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
