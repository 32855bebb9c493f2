//! The terminal: its width, and text wrapped to it. The run table keeps
//! to [`TABLE_WIDTH`] columns unless `--wide`, `list` to [`LIST_WIDTH`],
//! and footnotes wrap at the terminal's width ([`width`]).

use std::io::IsTerminal;

/// The run table's width without `--wide`.
pub const TABLE_WIDTH: usize = 120;
/// `wsbench list`'s width.
pub const LIST_WIDTH: usize = 100;
/// Footnotes' width when stdout is not a terminal (a file, a pipe).
const PIPE_WIDTH: usize = TABLE_WIDTH;
/// Narrower terminals than this still get this width: a word per line
/// helps no one.
const MIN_WIDTH: usize = 40;

/// The width footnotes wrap at: the terminal's columns when stdout is one,
/// else `COLUMNS` when set, else [`PIPE_WIDTH`].
pub fn width() -> usize {
    let term = console::Term::stdout();
    let cols = term
        .size_checked()
        .map(|(_, cols)| usize::from(cols))
        .or_else(|| std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|c| *c > 0));
    cols.unwrap_or(PIPE_WIDTH).max(MIN_WIDTH)
}

/// A footnote as the reader gets it: wrapped at [`width`] (continuation
/// lines indented by 2) when stdout is a terminal; unchanged for a file or
/// a pipe, where one line per footnote serves grep.
pub fn footnote(line: &str) -> String {
    if std::io::stdout().is_terminal() {
        hang("", line, FOOTNOTE_INDENT, width())
    } else {
        line.to_string()
    }
}

/// Continuation lines of a wrapped footnote are indented this far.
const FOOTNOTE_INDENT: usize = 2;

/// `prefix` followed by `text`, word-wrapped so that no line is longer
/// than `width` characters, continuation lines indented by `indent`
/// spaces. A word longer than the room left stays whole on its own line.
/// No trailing newline.
pub fn hang(prefix: &str, text: &str, indent: usize, width: usize) -> String {
    let mut out = String::from(prefix);
    let mut len = prefix.chars().count();
    // Whether the current line holds a word of `text` yet.
    let mut has_word = false;
    let margin = " ".repeat(indent);
    for word in text.split_whitespace() {
        let w = word.chars().count();
        if has_word && len + 1 + w > width {
            out.push('\n');
            out.push_str(&margin);
            len = indent;
        } else if has_word || !(prefix.is_empty() || prefix.ends_with(' ')) {
            out.push(' ');
            len += 1;
        }
        out.push_str(word);
        len += w;
        has_word = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hang_wraps_under_the_indent_and_keeps_long_words_whole() {
        let text = "one two three four five six seven eight nine ten";
        let got = hang("  name   ", text, 9, 25);
        assert_eq!(got, "  name   one two three\n         four five six\n         seven eight nine\n         ten");
        assert!(got.lines().all(|l| l.chars().count() <= 25), "{got}");
        // A word longer than the room stays whole.
        let got = hang("", "a supercalifragilistic b", 2, 10);
        assert_eq!(got, "a\n  supercalifragilistic\n  b");
        // Short text: one line, unchanged.
        assert_eq!(hang("x: ", "short", 3, 80), "x: short");
    }
}
