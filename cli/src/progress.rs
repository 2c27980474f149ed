//! A progress bar on standard error for long conversions, shown only when standard error is a
//! terminal and the conversion is large (so scripts and small files see no extra output).

use std::io::IsTerminal;

/// Conversions smaller than this get no bar.
const MIN_BYTES: u64 = 256 << 20;

/// A byte-count progress bar, or nothing.
pub(crate) struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// A bar for `total` bytes labelled `what`, if standard error is a terminal.
    pub(crate) fn new(total: u64, what: &str) -> Bar {
        if total < MIN_BYTES || !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let b = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        b.set_message(what.to_string());
        Bar(Some(b))
    }

    /// `n` more bytes done.
    pub(crate) fn add(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }

    /// Remove the bar.
    pub(crate) fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
