//! How a file says "wsbench wrote me", one mark per format, so that the
//! output guard ([`super::file`]) replaces only files wsbench wrote, and
//! only with a file of the same kind (a JSON never replaces a results CSV):
//!
//! | kind | mark |
//! |---|---|
//! | CSV | the header's first columns, `schema_version,timestamp,git_sha,` |
//! | JSON | a top-level `"generator": "wsbench …"` member |
//! | markdown, HTML, SVG | a comment `<!-- written by wsbench (KIND) -->` |
//! | PNG | a `tEXt` chunk `Software` = `wsbench …` |
//! | `.hlog` | a `#wsbench.` metadata comment line |
//! | SQLite | `PRAGMA application_id` = [`SQLITE_APPLICATION_ID`] |
//!
//! Every writer makes its bytes through the functions here, and
//! [`super::file::write_output`] refuses bytes that carry no mark, so a new
//! writer cannot forget it.

use anyhow::{Context, Result};
use serde::Serialize;

/// What JSON documents name as their `generator`.
pub const GENERATOR: &str = concat!("wsbench ", env!("CARGO_PKG_VERSION"));
/// The SQLite history's `PRAGMA application_id` ("wsbh").
pub const SQLITE_APPLICATION_ID: i32 = 0x7773_6268;
/// The first columns of every results CSV header wsbench wrote.
const CSV_MARK: &[u8] = b"schema_version,timestamp,git_sha,";
/// The prefix of the metadata comments of wsbench's HDR logs.
const HLOG_MARK: &[u8] = b"#wsbench.";
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
const PNG_KEYWORD: &str = "Software";
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// Byte offsets of `user_version` and `application_id` in an SQLite header.
const SQLITE_USER_VERSION_AT: usize = 60;
const SQLITE_APPLICATION_ID_AT: usize = 68;

/// The kinds of file wsbench writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A results CSV.
    Csv,
    /// Any JSON document.
    Json,
    /// A markdown summary or report.
    Markdown,
    /// The HTML report.
    Html,
    /// An SVG chart.
    Svg,
    /// A PNG chart.
    Png,
    /// An HdrHistogram interval log.
    Hlog,
    /// The SQLite history.
    Sqlite,
}

impl Kind {
    /// The kind's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Csv => "a results CSV",
            Kind::Json => "a JSON document",
            Kind::Markdown => "a markdown file",
            Kind::Html => "an HTML report",
            Kind::Svg => "an SVG chart",
            Kind::Png => "a PNG chart",
            Kind::Hlog => "an HDR log",
            Kind::Sqlite => "an SQLite history",
        }
    }

    fn comment(self) -> Option<&'static str> {
        match self {
            Kind::Markdown => Some("<!-- written by wsbench (markdown) -->"),
            Kind::Html => Some("<!-- written by wsbench (html) -->"),
            Kind::Svg => Some("<!-- written by wsbench (svg) -->"),
            _ => None,
        }
    }
}

/// The comment that marks a markdown, HTML or SVG file; put it in the text.
pub fn comment(kind: Kind) -> &'static str {
    kind.comment().expect("only markdown, HTML and SVG carry a comment mark")
}

/// `text` with `kind`'s comment mark appended on its own line (after an
/// SVG's root element, a comment is still well-formed XML).
pub fn with_comment(kind: Kind, text: &str) -> String {
    let sep = if text.ends_with('\n') || text.is_empty() { "" } else { "\n" };
    format!("{text}{sep}{}\n", comment(kind))
}

/// A JSON document with the `generator` member added at the top, pretty
/// printed with a final newline.
pub fn json<T: Serialize>(doc: &T) -> Result<Vec<u8>> {
    let mut value = serde_json::to_value(doc).context("cannot encode JSON")?;
    let object = value.as_object_mut().context("a JSON document must be an object")?;
    object.insert("generator".to_string(), serde_json::Value::String(GENERATOR.to_string()));
    let mut bytes = serde_json::to_vec_pretty(&value).context("cannot encode JSON")?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Encodes an RGB bitmap as a PNG carrying the `Software` mark.
pub fn png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.add_text_chunk(PNG_KEYWORD.to_string(), GENERATOR.to_string()).context("cannot mark the PNG")?;
        let mut writer = encoder.write_header().context("cannot encode the PNG")?;
        writer.write_image_data(rgb).context("cannot encode the PNG")?;
    }
    Ok(out)
}

/// The kind of wsbench file `bytes` (a whole file) is, by its mark; `None`
/// for a file wsbench did not write.
pub fn kind_of(bytes: &[u8]) -> Option<Kind> {
    if bytes.starts_with(CSV_MARK) {
        return Some(Kind::Csv);
    }
    if bytes.starts_with(PNG_SIGNATURE) {
        return png_marked(bytes).then_some(Kind::Png);
    }
    if bytes.starts_with(SQLITE_MAGIC) {
        return sqlite_marked(bytes).then_some(Kind::Sqlite);
    }
    if bytes.split(|b| *b == b'\n').any(|line| line.starts_with(HLOG_MARK)) {
        return Some(Kind::Hlog);
    }
    for kind in [Kind::Markdown, Kind::Html, Kind::Svg] {
        let mark = comment(kind).as_bytes();
        if bytes.windows(mark.len()).any(|w| w == mark) {
            return Some(kind);
        }
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{') {
        let doc: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let generator = doc.get("generator")?.as_str()?;
        return generator.starts_with("wsbench").then_some(Kind::Json);
    }
    None
}

/// Whether a PNG has a `tEXt` chunk `Software` naming wsbench.
fn png_marked(bytes: &[u8]) -> bool {
    let mut at = PNG_SIGNATURE.len();
    while let Some(head) = bytes.get(at..at + 8) {
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let Some(data) = bytes.get(at + 8..(at + 8).saturating_add(len)) else { return false };
        match &head[4..8] {
            b"tEXt" => {
                let mut parts = data.splitn(2, |b| *b == 0);
                if parts.next() == Some(PNG_KEYWORD.as_bytes())
                    && parts.next().is_some_and(|t| t.starts_with(b"wsbench"))
                {
                    return true;
                }
            }
            b"IEND" => return false,
            _ => {}
        }
        at += 12 + len;
    }
    false
}

/// Whether an SQLite file is a wsbench history: its application_id, or
/// (a history made before the id was set, which `Store` then marks) no id
/// and a non-zero `user_version`.
fn sqlite_marked(bytes: &[u8]) -> bool {
    let word = |at: usize| bytes.get(at..at + 4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    match (word(SQLITE_APPLICATION_ID_AT), word(SQLITE_USER_VERSION_AT)) {
        (Some(id), _) if id == SQLITE_APPLICATION_ID => true,
        (Some(0), Some(version)) => version != 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mark_is_recognised_and_foreign_files_are_not() {
        assert_eq!(kind_of(b"schema_version,timestamp,git_sha,host\n"), Some(Kind::Csv));
        assert_eq!(kind_of(&json(&serde_json::json!({"a": 1})).unwrap()), Some(Kind::Json));
        assert_eq!(kind_of(with_comment(Kind::Markdown, "# x").as_bytes()), Some(Kind::Markdown));
        assert_eq!(kind_of(with_comment(Kind::Html, "<html></html>").as_bytes()), Some(Kind::Html));
        assert_eq!(kind_of(with_comment(Kind::Svg, "<svg></svg>").as_bytes()), Some(Kind::Svg));
        assert_eq!(kind_of(&png(&[0; 12], 2, 2).unwrap()), Some(Kind::Png));
        assert_eq!(kind_of(b"#wsbench.cell: x\n#[StartTime: 0]\n"), Some(Kind::Hlog));
        for foreign in [&b"a,b\n1,2\n"[..], b"{\"a\": 1}", b"# notes\n", b"", b"\x89PNG\r\n\x1a\n"] {
            assert_eq!(kind_of(foreign), None, "{:?}", String::from_utf8_lossy(foreign));
        }
        let mut db = SQLITE_MAGIC.to_vec();
        db.resize(100, 0);
        assert_eq!(kind_of(&db), None, "an SQLite file of another program");
        db[SQLITE_APPLICATION_ID_AT..SQLITE_APPLICATION_ID_AT + 4]
            .copy_from_slice(&SQLITE_APPLICATION_ID.to_be_bytes());
        assert_eq!(kind_of(&db), Some(Kind::Sqlite));
    }
}
