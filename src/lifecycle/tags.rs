//! A game's PGN tag pairs as the caller set them (`Event`, `White`, `Round`, any tag of
//! their own), checked once when they come in (parse, don't validate): a [`Tags`] value
//! always holds tags the PGN export can write and the record can store.
//!
//! Why these rules:
//! - The server owns the tags that say what it decides or knows better than the caller
//!   ([`SERVER_TAGS`]: the result, how the game ended, its clock, its start and variant).
//!   A caller's `Result` could contradict the game, so it is refused, in any spelling of
//!   its case (`result` would read as the same tag to many PGN readers).
//! - Names are PGN tag names (export format, section 8.1.1): letters, digits and `_`,
//!   starting with a letter or digit; at most [`MAX_NAME_LEN`] bytes.
//! - Values are one line of text: no control characters (a newline would end the tag
//!   pair), at most [`MAX_VALUE_LEN`] bytes. `"` and `\` are allowed: the export escapes
//!   them.
//! - At most [`MAX_TAGS`] tags, so a game's tags stay a small, bounded part of its record
//!   (about 10 KiB at most, once per game).
//!
//! The tags are kept sorted by name (byte order): the order the export writes the
//! caller's other tags in, the same in every build.

use crate::rules::clip::clipped;
use std::collections::BTreeMap;

/// The tags the server sets itself; a caller may not set them (in any case spelling).
pub const SERVER_TAGS: [&str; 6] = [
    "Result",
    "Termination",
    "TimeControl",
    "SetUp",
    "FEN",
    "Variant",
];

/// At most this many tags per game.
pub const MAX_TAGS: usize = 32;

/// A tag name is at most this many bytes.
pub const MAX_NAME_LEN: usize = 64;

/// A tag value is at most this many bytes (UTF-8).
pub const MAX_VALUE_LEN: usize = 256;

/// A game's caller-set PGN tags, checked (see the module docs), sorted by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tags(BTreeMap<String, String>);

/// What is wrong with a tag name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// The name is empty.
    Empty,
    /// Longer than [`MAX_NAME_LEN`] bytes.
    TooLong,
    /// Starts with `_` (a PGN tag name starts with a letter or digit).
    BadStart,
    /// Holds a character other than an ASCII letter, digit or `_`.
    BadCharacter,
}

/// What is wrong with a tag value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueProblem {
    /// Longer than [`MAX_VALUE_LEN`] bytes.
    TooLong,
    /// Holds a control character (a newline, a tab, NUL, ...).
    ControlCharacter,
}

/// Why a caller's tags were refused; each names the tag at fault (see [`TagError::tag`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    /// More than [`MAX_TAGS`] tags.
    #[error("{count} PGN tags were given; at most {MAX_TAGS} are allowed")]
    TooMany {
        /// How many were given.
        count: usize,
        /// The first tag past the limit (by name order).
        first_extra: String,
    },
    /// A tag the server sets itself.
    #[error(
        "PGN tag '{name}' is set by the server (it owns Result, Termination, TimeControl, SetUp, FEN and Variant, in any case); leave it out"
    )]
    ServerOwned {
        /// The tag as given.
        name: String,
    },
    /// The name is not a PGN tag name.
    #[error("'{name}' is not a PGN tag name: {}", name_problem(*.problem))]
    BadName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// The value cannot be written as a PGN tag value.
    #[error("the value of PGN tag '{name}' {}", value_problem(*.problem))]
    BadValue {
        /// The tag.
        name: String,
        /// What is wrong with its value.
        problem: ValueProblem,
    },
    /// The same name twice.
    #[error("PGN tag '{name}' is given twice; give each tag once")]
    Duplicate {
        /// The tag.
        name: String,
    },
}

fn name_problem(p: NameProblem) -> String {
    match p {
        NameProblem::Empty => "a tag name cannot be empty".into(),
        NameProblem::TooLong => format!("a tag name has at most {MAX_NAME_LEN} bytes"),
        NameProblem::BadStart => "a tag name starts with a letter or a digit".into(),
        NameProblem::BadCharacter => "a tag name holds only ASCII letters, digits and '_'".into(),
    }
}

fn value_problem(p: ValueProblem) -> String {
    match p {
        ValueProblem::TooLong => format!("is longer than {MAX_VALUE_LEN} bytes"),
        ValueProblem::ControlCharacter => {
            "holds a control character (a newline, a tab, ...); a tag value is one line of text"
                .into()
        }
    }
}

impl TagError {
    /// The tag at fault, as the caller spelled it (clipped, see [`clip`](crate::rules::clip)).
    pub fn tag(&self) -> &str {
        match self {
            TagError::TooMany { first_extra, .. } => first_extra,
            TagError::ServerOwned { name }
            | TagError::BadName { name, .. }
            | TagError::BadValue { name, .. }
            | TagError::Duplicate { name } => name,
        }
    }
}

fn check_name(name: &str) -> Result<(), TagError> {
    let bad = |problem| {
        Err(TagError::BadName {
            name: clipped(name),
            problem,
        })
    };
    let Some(first) = name.bytes().next() else {
        return bad(NameProblem::Empty);
    };
    if name.len() > MAX_NAME_LEN {
        return bad(NameProblem::TooLong);
    }
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return bad(NameProblem::BadCharacter);
    }
    if !first.is_ascii_alphanumeric() {
        return bad(NameProblem::BadStart);
    }
    if is_server_tag(name) {
        return Err(TagError::ServerOwned {
            name: clipped(name),
        });
    }
    Ok(())
}

/// Whether `name` is a tag the server derives itself (in any case spelling): callers may
/// not set it, and an imported file's value is not kept.
pub fn is_server_tag(name: &str) -> bool {
    SERVER_TAGS.iter().any(|s| s.eq_ignore_ascii_case(name))
}

fn check_value(name: &str, value: &str) -> Result<(), TagError> {
    let bad = |problem| {
        Err(TagError::BadValue {
            name: clipped(name),
            problem,
        })
    };
    if value.len() > MAX_VALUE_LEN {
        return bad(ValueProblem::TooLong);
    }
    if value.chars().any(char::is_control) {
        return bad(ValueProblem::ControlCharacter);
    }
    Ok(())
}

impl Tags {
    /// No tags.
    pub fn none() -> Tags {
        Tags::default()
    }

    /// Checks a caller's tag pairs. Each pair is checked in name order, so the error
    /// for a set with several faults is the same whatever order they came in.
    pub fn new<I, K, V>(pairs: I) -> Result<Tags, TagError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut pairs: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        pairs.sort();
        let mut map = BTreeMap::new();
        for (name, value) in pairs {
            check_name(&name)?;
            check_value(&name, &value)?;
            if map.contains_key(&name) {
                return Err(TagError::Duplicate {
                    name: clipped(&name),
                });
            }
            if map.len() == MAX_TAGS {
                return Err(TagError::TooMany {
                    count: map.len() + 1,
                    first_extra: clipped(&name),
                });
            }
            map.insert(name, value);
        }
        Ok(Tags(map))
    }

    /// The value of tag `name` (exact spelling), if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The tags, sorted by name (byte order).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many tags there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(name: &str, value: &str) -> Result<Tags, TagError> {
        Tags::new([(name, value)])
    }

    #[test]
    fn ordinary_tags_are_kept_sorted_by_name() {
        let tags = Tags::new([
            ("White", "Carlsen, Magnus"),
            ("Event", "Tata Steel"),
            ("Annotator", "a \"quoted\" \\ name"),
            ("2ndRound", "x"),
            ("my_tag", ""),
        ])
        .expect("valid tags");
        assert_eq!(
            tags.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["2ndRound", "Annotator", "Event", "White", "my_tag"]
        );
        assert_eq!(tags.get("White"), Some("Carlsen, Magnus"));
        assert_eq!(tags.get("white"), None);
        assert_eq!(tags.len(), 5);
        assert!(Tags::none().is_empty());
    }

    #[test]
    fn server_tags_are_refused_in_any_case() {
        for name in SERVER_TAGS {
            for spelled in [name.to_string(), name.to_lowercase(), name.to_uppercase()] {
                let e = one(&spelled, "x").expect_err(&spelled);
                assert_eq!(
                    e,
                    TagError::ServerOwned {
                        name: spelled.clone()
                    }
                );
                assert_eq!(e.tag(), spelled);
                assert!(e.to_string().contains("set by the server"), "{e}");
            }
        }
        // Names that merely contain one are the caller's.
        assert!(one("Results", "x").is_ok());
        assert!(one("FENs", "x").is_ok());
    }

    #[test]
    fn names_must_be_pgn_tag_names() {
        let problem = |name: &str| match one(name, "x") {
            Err(TagError::BadName { problem, name: n }) => {
                assert_eq!(n, name);
                Some(problem)
            }
            _ => None,
        };
        assert_eq!(problem(""), Some(NameProblem::Empty));
        assert_eq!(problem("_x"), Some(NameProblem::BadStart));
        assert_eq!(problem("a b"), Some(NameProblem::BadCharacter));
        assert_eq!(problem("a-b"), Some(NameProblem::BadCharacter));
        assert_eq!(problem("a\"b"), Some(NameProblem::BadCharacter));
        assert_eq!(problem("Événement"), Some(NameProblem::BadCharacter));
        assert_eq!(
            problem(&"a".repeat(MAX_NAME_LEN + 1)),
            Some(NameProblem::TooLong)
        );
        assert_eq!(problem(&"a".repeat(MAX_NAME_LEN)), None);
        assert_eq!(problem("9x_"), None);
    }

    #[test]
    fn values_are_one_bounded_line() {
        let problem = |value: &str| match one("Event", value) {
            Err(TagError::BadValue { problem, name }) => {
                assert_eq!(name, "Event");
                Some(problem)
            }
            Ok(_) => None,
            Err(e) => panic!("unexpected {e}"),
        };
        assert_eq!(problem("a\nb"), Some(ValueProblem::ControlCharacter));
        assert_eq!(problem("a\tb"), Some(ValueProblem::ControlCharacter));
        assert_eq!(problem("\0"), Some(ValueProblem::ControlCharacter));
        assert_eq!(problem("\u{7f}"), Some(ValueProblem::ControlCharacter));
        assert_eq!(problem("\u{85}"), Some(ValueProblem::ControlCharacter));
        assert_eq!(problem(&"é".repeat(129)), Some(ValueProblem::TooLong));
        assert_eq!(problem(&"é".repeat(128)), None);
        assert_eq!(problem("\"quoted\" \\ back"), None);
    }

    #[test]
    fn at_most_thirty_two_tags_and_no_duplicates() {
        let names: Vec<String> = (0..=MAX_TAGS).map(|i| format!("T{i:02}")).collect();
        let e = Tags::new(names.iter().map(|n| (n.as_str(), "x"))).expect_err("33 tags");
        assert_eq!(
            e,
            TagError::TooMany {
                count: MAX_TAGS + 1,
                first_extra: names[MAX_TAGS].clone()
            }
        );
        assert_eq!(e.tag(), "T32");
        assert_eq!(
            Tags::new(names[..MAX_TAGS].iter().map(|n| (n.as_str(), "x")))
                .expect("32 tags")
                .len(),
            MAX_TAGS
        );
        assert_eq!(
            Tags::new([("A", "1"), ("A", "2")]),
            Err(TagError::Duplicate { name: "A".into() })
        );
    }
}
