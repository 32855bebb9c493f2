//! Exit statuses, decided here and nowhere else: 0 success, 1 a negative
//! answer ([`Negative`]: a regression, every run failed, nothing to plot),
//! 2 every error (bad input, unusable files, a failed write), 130 a `run`
//! stopped by SIGINT/SIGTERM ([`crate::run::interrupt`]). And how an
//! error is written for people ([`render`]): the one path every message
//! of every subcommand goes through.

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

/// Characters of a quoted value kept in a message; a longer value (a
/// 100 KB `--param`) is cut to this many, with its length in bytes.
pub const MAX_VALUE_CHARS: usize = 80;

/// Whether `cause` is a bare parse error of the standard library ("invalid
/// digit found in string", "cannot parse float from empty string"): the
/// context above it already names the value and the allowed forms, so it
/// is left out of the message.
fn is_bare_parse_error(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.is::<std::num::ParseIntError>()
        || cause.is::<std::num::ParseFloatError>()
        || cause.is::<std::str::ParseBoolError>()
        || cause.is::<std::time::TryFromFloatSecsError>()
}

/// An error as one line for people: its context chain joined by `: `,
/// with no `error:` prefix inside it (a clap message carried over), no
/// cause repeated that an outer message already holds ("Address already in
/// use (os error 98)" once), no bare standard-library parse error, and
/// every quoted value longer than [`MAX_VALUE_CHARS`] cut short.
pub fn render(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        if !parts.is_empty() && is_bare_parse_error(cause) {
            continue;
        }
        let text = cause.to_string();
        let text = text.trim().strip_prefix("error: ").unwrap_or(text.trim()).trim().to_string();
        if text.is_empty() || parts.iter().any(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    shorten_values(&parts.join(": "))
}

/// `text` with each value between backticks or single quotes longer than
/// [`MAX_VALUE_CHARS`] cut to that many characters plus `…(N bytes)`; a
/// long unquoted word is cut the same way. A single quote opens a value
/// only at the start of a word (so `run's` is no quote) and closes it only
/// before a non-alphanumeric character.
pub fn shorten_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * MAX_VALUE_CHARS));
    let mut rest = text;
    while let Some((open, quote)) = opening_quote(rest) {
        let (before, after) = rest.split_at(open + 1);
        out.push_str(&shorten_words(before));
        match closing_quote(after, quote) {
            Some(close) => {
                out.push_str(&cut(&after[..close]));
                out.push(quote);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&shorten_words(after));
                rest = "";
            }
        }
    }
    out.push_str(&shorten_words(rest));
    out
}

/// The first quote in `text` that opens a value, with its character.
fn opening_quote(text: &str) -> Option<(usize, char)> {
    let mut previous: Option<char> = None;
    for (i, c) in text.char_indices() {
        let word_start = previous.is_none_or(|p| p.is_whitespace() || matches!(p, '(' | '=' | '[' | ','));
        if c == '`' || (c == '\'' && word_start) {
            return Some((i, c));
        }
        previous = Some(c);
    }
    None
}

/// Where the value opened by `quote` ends in `text`.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    text.char_indices()
        .filter(|&(_, c)| c == quote)
        .map(|(i, _)| i)
        .find(|&i| quote == '`' || !text[i + 1..].chars().next().is_some_and(char::is_alphanumeric))
}

/// `value` cut to [`MAX_VALUE_CHARS`] characters, with its length.
fn cut(value: &str) -> String {
    match value.char_indices().nth(MAX_VALUE_CHARS) {
        Some((end, _)) => format!("{}…({} bytes)", &value[..end], value.len()),
        None => value.to_string(),
    }
}

fn shorten_words(text: &str) -> String {
    if !text.split_whitespace().any(|w| w.chars().count() > MAX_VALUE_CHARS) {
        return text.to_string();
    }
    let mut out = String::new();
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&cut(word));
    }
    out
}

#[cfg(test)]
mod tests {
    use anyhow::Context;

    use super::*;

    #[test]
    fn one_line_per_error_without_repeats_or_rust_parse_errors() {
        let os = std::io::Error::from_raw_os_error(98);
        let err = anyhow::Error::new(os).context(format!("binding: {}", std::io::Error::from_raw_os_error(98)));
        assert_eq!(render(&err), "binding: Address already in use (os error 98)");
        let err = anyhow::anyhow!("error: unexpected argument '--x' found");
        assert_eq!(render(&err), "unexpected argument '--x' found");
        let err = "".parse::<f64>().context("`` is not a number; allowed: 0.05").unwrap_err();
        assert_eq!(render(&err), "`` is not a number; allowed: 0.05");
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        let long = "v".repeat(100_000);
        let text = render(&anyhow::anyhow!("bad value `{long}` for --param x; allowed: 1..=4"));
        let kept = "v".repeat(MAX_VALUE_CHARS);
        assert_eq!(text, format!("bad value `{kept}…(100000 bytes)` for --param x; allowed: 1..=4"));
        let text = shorten_values(&format!("invalid value '{long}' for '--runs <N>'"));
        assert_eq!(text, format!("invalid value '{kept}…(100000 bytes)' for '--runs <N>'"));
        let text = shorten_values(&format!("word {long} end"));
        assert_eq!(text, format!("word {kept}…(100000 bytes) end"));
        assert_eq!(shorten_values("short `x` and 'y' stay"), "short `x` and 'y' stay");
        let apostrophes = format!("the run's child {} can't", "w ".repeat(100));
        assert_eq!(shorten_values(&apostrophes), apostrophes);
    }
}
