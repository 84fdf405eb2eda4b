//! SAN in the variants, as python-chess writes it: drops as `N@f3` (`@e4` for a pawn),
//! king promotions as `=K`, disambiguation against the variant's own legal moves, and `#`
//! for every move that ends the game with a winner (an exploded king, the hill, the third
//! check, a side that lost all its pieces), `+` for check.

use super::{VariantEnd, VariantOutcome, VariantPosition, VariantRules};
use crate::rules::moves::Move;
use crate::rules::piece::Role;

impl<R: VariantRules> VariantPosition<R> {
    /// The SAN of `m`, one of this position's legal moves.
    pub fn san(&self, m: Move) -> String {
        let mut san = if m.is_drop() {
            let mut s = String::with_capacity(6);
            if m.role != Role::Pawn {
                s.push(m.role.upper_char());
            }
            s.push('@');
            s.push_str(&m.to.to_string());
            s
        } else {
            self.board.san_without_suffix_among(m, &self.legal_moves())
        };
        let after = self.after(m);
        match after.outcome() {
            Some(VariantOutcome::Checkmate { .. })
            | Some(VariantOutcome::Variant(VariantEnd::Win(_))) => san.push('#'),
            _ if after.is_check() => san.push('+'),
            _ => {}
        }
        san
    }
}
