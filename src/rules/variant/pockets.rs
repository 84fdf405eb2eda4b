//! Crazyhouse pockets: the captured pieces each side may drop.

use crate::rules::piece::Role;
use crate::rules::square::Color;

/// How many pawns, knights, bishops, rooks and queens each side holds in hand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pockets([[u8; 5]; 2]);

/// The roles a pocket holds, in the order FEN writes them (queen first).
pub const POCKET_ROLES: [Role; 5] = [
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
    Role::Pawn,
];

impl Pockets {
    /// How many pieces of `role` `color` holds (never a king).
    #[inline(always)]
    pub fn count(&self, color: Color, role: Role) -> u8 {
        match role {
            Role::King => 0,
            _ => self.0[color.index()][role.index()],
        }
    }

    /// Every piece `color` holds.
    pub fn total(&self, color: Color) -> u32 {
        self.0[color.index()].iter().map(|&n| u32::from(n)).sum()
    }

    /// Adds a piece (a capture). A pocket saturates at 255 of a role, far beyond the 64
    /// pieces a board can hold.
    #[inline(always)]
    pub(crate) fn add(&mut self, color: Color, role: Role) {
        let slot = &mut self.0[color.index()][role.index()];
        *slot = slot.saturating_add(1);
    }

    /// Takes a piece out (a drop); the generator drops only what is there.
    #[inline(always)]
    pub(crate) fn take(&mut self, color: Color, role: Role) {
        let slot = &mut self.0[color.index()][role.index()];
        debug_assert!(*slot > 0, "drop of a {role:?} the pocket does not hold");
        *slot = slot.saturating_sub(1);
    }

    /// The pocket as FEN writes it inside `[...]`: white's pieces in upper case, then
    /// black's, queens first.
    pub fn to_fen(&self) -> String {
        let mut out = String::new();
        for color in Color::ALL {
            for role in POCKET_ROLES {
                for _ in 0..self.count(color, role) {
                    let c = role.char();
                    out.push(if color == Color::White {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    });
                }
            }
        }
        out
    }
}
