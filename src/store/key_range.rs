//! Which ids a listing covers: a half-open range of id bytes. The store knows nothing of
//! what the ids mean; the service lists one tenant's games as the range of that tenant's
//! keys (see `service::game_key`), so a listing never reads, and never pages through,
//! another tenant's games.

use std::ops::Bound;

/// The ids `from <= id < to` (a missing end: unbounded), in byte order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// The least id listed (inclusive); `None`: from the first.
    pub from: Option<String>,
    /// The first id past the range (exclusive); `None`: to the last.
    pub to: Option<String>,
}

impl KeyRange {
    /// Every id.
    pub fn all() -> KeyRange {
        KeyRange::default()
    }

    /// Whether `id` lies in the range.
    pub fn contains(&self, id: &str) -> bool {
        self.from.as_deref().is_none_or(|from| id >= from)
            && self.to.as_deref().is_none_or(|to| id < to)
    }

    /// Where a listing that resumes after `after` starts: just past `after`, or at the
    /// range's start when `after` lies before it.
    pub fn start<'a>(&'a self, after: Option<&'a str>) -> Bound<&'a str> {
        match (after, self.from.as_deref()) {
            (Some(after), Some(from)) if after < from => Bound::Included(from),
            (Some(after), _) => Bound::Excluded(after),
            (None, Some(from)) => Bound::Included(from),
            (None, None) => Bound::Unbounded,
        }
    }

    /// Whether a listing that resumes after `after` has nothing left to cover (its start
    /// lies at or past the range's end). Checked before a range scan: an ordered map
    /// panics on a range that ends before it starts.
    pub fn exhausted(&self, after: Option<&str>) -> bool {
        let start = match self.start(after) {
            Bound::Included(s) | Bound::Excluded(s) => s,
            Bound::Unbounded => return false,
        };
        self.to.as_deref().is_some_and(|to| start >= to)
    }

    /// Where a listing ends.
    pub fn end(&self) -> Bound<&str> {
        self.to.as_deref().map_or(Bound::Unbounded, Bound::Excluded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_start_at_the_later_of_their_start_and_the_cursor() {
        let r = KeyRange {
            from: Some("b".into()),
            to: Some("d".into()),
        };
        assert!(r.contains("b") && r.contains("c~") && !r.contains("d") && !r.contains("a"));
        assert_eq!(r.start(None), Bound::Included("b"));
        assert_eq!(r.start(Some("a")), Bound::Included("b"));
        assert_eq!(r.start(Some("b")), Bound::Excluded("b"));
        assert_eq!(r.end(), Bound::Excluded("d"));
        assert!(!r.exhausted(None) && !r.exhausted(Some("c")));
        assert!(r.exhausted(Some("d")) && r.exhausted(Some("x")));
        let all = KeyRange::all();
        assert!(all.contains("") && all.contains("#t/x"));
        assert_eq!(all.start(None), Bound::Unbounded);
        assert_eq!(all.end(), Bound::Unbounded);
    }
}
