//! Exit statuses, decided here and nowhere else: 0 success, 1 a negative
//! answer ([`Negative`]: a regression, every run failed, nothing to plot),
//! 2 every error (bad input, unusable files, a failed write).

use std::process::ExitCode;

/// Exit status when wsbench worked and the answer is no: `compare` found a
/// regression, every run of `run` failed, `plot` found nothing to draw.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status of every error: bad input (an option, a value, a file that
/// cannot be read or written; clap's usage errors exit 2 as well) and a
/// result file that could not be written. Never a regression.
pub const EXIT_UNUSABLE: u8 = 2;

/// An answer of "no" reported as an error message: exits
/// [`EXIT_FAILURE`] rather than [`EXIT_UNUSABLE`].
#[derive(Debug)]
pub struct Negative(pub String);

impl std::fmt::Display for Negative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Negative {}

/// A [`Negative`] outcome as an error.
pub fn negative(message: String) -> anyhow::Error {
    anyhow::Error::new(Negative(message))
}

/// The exit status for an error: 1 for a [`Negative`] outcome, else 2.
pub fn exit_code_for(err: &anyhow::Error) -> ExitCode {
    if err.downcast_ref::<Negative>().is_some() {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::from(EXIT_UNUSABLE)
    }
}
