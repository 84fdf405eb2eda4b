//! [`ByColor`]: one value per side, indexed by [`Color`] (as shakmaty has), so that code
//! reads `clock[Color::White]` rather than an index into `[u64; 2]` that could be mixed up.

use std::ops::{Index, IndexMut};

use super::square::Color;

/// One value for each side.
///
/// ```
/// use chess_service::rules::{ByColor, Color};
///
/// let mut remaining = ByColor::splat(60_000u64);
/// remaining[Color::Black] -= 1_500;
/// assert_eq!(remaining, ByColor { white: 60_000, black: 58_500 });
/// assert_eq!(remaining.get(Color::White), &60_000);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByColor<T> {
    /// White's value.
    pub white: T,
    /// Black's value.
    pub black: T,
}

impl<T> ByColor<T> {
    /// The same value for both sides.
    pub fn splat(value: T) -> ByColor<T>
    where
        T: Clone,
    {
        ByColor {
            white: value.clone(),
            black: value,
        }
    }

    /// `color`'s value.
    pub const fn get(&self, color: Color) -> &T {
        match color {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    /// `color`'s value, to change.
    pub const fn get_mut(&mut self, color: Color) -> &mut T {
        match color {
            Color::White => &mut self.white,
            Color::Black => &mut self.black,
        }
    }
}

impl<T> Index<Color> for ByColor<T> {
    type Output = T;

    fn index(&self, color: Color) -> &T {
        self.get(color)
    }
}

impl<T> IndexMut<Color> for ByColor<T> {
    fn index_mut(&mut self, color: Color) -> &mut T {
        self.get_mut(color)
    }
}
