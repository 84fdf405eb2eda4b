//! A caller's text echoed in an error, cut short.
//!
//! Why: an error that repeats what it refuses (a tag name, a `[Variant]` value) would
//! repeat it whole, however long: a 200 KB tag name once made a 1 MB error trailer, past
//! what gRPC clients accept as metadata (they then report RESOURCE_EXHAUSTED instead of
//! the error). Every echo of a caller's text keeps at most [`MAX_ECHO_BYTES`] bytes of
//! it, and says that it was clipped and how long the whole text was.

use std::borrow::Cow;

/// The most bytes of a caller's text repeated in any message or metadata value.
pub const MAX_ECHO_BYTES: usize = 128;

/// `text` as an error may repeat it: itself when it is at most [`MAX_ECHO_BYTES`] bytes,
/// else its first bytes (cut at a character boundary) followed by
/// `...[clipped: N bytes in all]`.
pub fn clip(text: &str) -> Cow<'_, str> {
    clip_to(text, MAX_ECHO_BYTES)
}

/// `text` cut at `max` bytes the same way, for other bounds (a whole message).
pub fn clip_to(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}...[clipped: {} bytes in all]",
        &text[..end],
        text.len()
    ))
}

/// [`clip`] as an owned string, for errors that keep the text.
pub fn clipped(text: &str) -> String {
    clip(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(clip("Event"), "Event");
        let exact = "x".repeat(MAX_ECHO_BYTES);
        assert_eq!(clip(&exact), exact.as_str());
    }

    #[test]
    fn long_text_keeps_its_start_and_says_its_length() {
        let long = "a".repeat(200_000);
        let c = clip(&long);
        assert!(c.starts_with(&"a".repeat(MAX_ECHO_BYTES)));
        assert!(c.ends_with("...[clipped: 200000 bytes in all]"), "{c}");
        assert!(c.len() < MAX_ECHO_BYTES + 40);
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let long = "é".repeat(100); // 200 bytes, 2 each
        let c = clip(&long);
        assert!(c.starts_with(&"é".repeat(64)));
        assert!(c.contains("[clipped: 200 bytes in all]"));
    }
}
