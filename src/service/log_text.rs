//! Client-supplied text in log lines: escaped and cut short.
//!
//! Why: a caller chooses game ids, move text and request paths. Written raw, a newline
//! forges a log line of its own, control characters garble a terminal, and a 10 KB id
//! fills the log. [`Clean`] writes printable ASCII as it is and everything else as a
//! Rust escape (`\n`, `\u{202e}`), backslash and double quote included so an escape
//! cannot be faked, and stops after a bounded number of characters, saying how long the
//! whole text was.

use std::fmt;

/// The usual bound for an identifier or a move in a log line, in characters: room for
/// the longest key of a tenant's game (`#`, a 64-character tenant, `/`, a 64-character
/// game id: 130), so a logged key is never cut.
pub const MAX_LOGGED_ID: usize = 136;

/// Client text for a log line: `format!("{}", Clean::new(text, max))`.
#[derive(Clone, Copy, Debug)]
pub struct Clean<'a> {
    text: &'a str,
    max_chars: usize,
}

impl<'a> Clean<'a> {
    /// `text`, of which at most `max_chars` characters are written.
    pub fn new(text: &'a str, max_chars: usize) -> Clean<'a> {
        Clean { text, max_chars }
    }

    /// `text` cut at [`MAX_LOGGED_ID`] characters.
    pub fn id(text: &'a str) -> Clean<'a> {
        Clean::new(text, MAX_LOGGED_ID)
    }
}

impl fmt::Display for Clean<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (written, c) in self.text.chars().enumerate() {
            if written == self.max_chars {
                return write!(f, "...({} bytes in all)", self.text.len());
            }
            if (c.is_ascii_graphic() || c == ' ') && c != '\\' && c != '"' {
                f.write_fmt(format_args!("{c}"))?;
            } else {
                write!(f, "{}", c.escape_default())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        let s = Clean::id("e2e4\nINFO forged line\r\t\u{1b}[31m\u{202e}\\\"").to_string();
        assert_eq!(
            s,
            "e2e4\\nINFO forged line\\r\\t\\u{1b}[31m\\u{202e}\\\\\\\""
        );
        assert!(!s.chars().any(|c| c.is_control()));
    }

    #[test]
    fn long_text_is_cut_and_says_its_length() {
        let long = "x".repeat(10_000);
        let s = Clean::id(&long).to_string();
        assert!(s.starts_with(&"x".repeat(MAX_LOGGED_ID)));
        assert!(s.ends_with("...(10000 bytes in all)"), "{s}");
        assert!(s.len() < 200);
        assert_eq!(Clean::id("short").to_string(), "short");
    }
}
