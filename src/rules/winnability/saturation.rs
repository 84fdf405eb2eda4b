//! The fixpoint of the static analysis (chasolver's saturation): grow every piece's
//! reachable set with the moves the current state allows, drop the moves the structure
//! rules out, update what follows, and repeat until nothing changes. Sets only grow, so
//! it ends.

use super::super::attacks;
use super::super::bitboard::Bitboard;
use super::super::piece::Role;
use super::super::square::{Color, Square};
use super::analysis::{Analysis, PROMOTION_RANKS, file_of, line, piece_attacks, piece_moves};

#[inline(always)]
fn update(field: &mut Bitboard, new: Bitboard, progress: &mut bool) {
    if *field != new {
        *field = new;
        *progress = true;
    }
}

impl Analysis {
    /// Squares each colour attacks whatever its uncapturable pieces do: a square counts
    /// for a piece only if attacked from every square the piece may stand on.
    pub(super) fn update_attacked_squares(&mut self) {
        self.attacked = [Bitboard::EMPTY; 2];
        for s in self.occupied & !self.capturable {
            let role = self.role(s);
            let color = self.color(s);
            let mut attacked = Bitboard::FULL;
            let mut obstacles = !self.clear;
            if role == Role::Bishop {
                // Friendly bishops that only bishops of this colour can ever reach are
                // transparent to each other (chasolver's argument).
                obstacles &= !(self.side(color)
                    & self.role_bb(Role::Bishop)
                    & !self.reachable_by_non_bishop[color.index()]
                    & !self.capturable);
            }
            for t in self.reachable[s.index()] {
                attacked &= piece_attacks(role, color, t, obstacles);
            }
            self.attacked[color.index()] |= attacked;
        }
    }

    /// Runs the fixpoint.
    pub(super) fn saturate(&mut self) {
        let white_has_more_than_one_piece = self.white.count() > 2;
        loop {
            let mut progress = false;
            for s in self.occupied {
                let role = self.role(s);
                let color = self.color(s);
                for source in self.reachable[s.index()] {
                    let mut targets = piece_moves(role, color, source, self.steady);
                    // A white pawn always may capture; a black one only if White has more
                    // than one piece besides the king to give up.
                    if role == Role::Pawn
                        && (color == Color::White || white_has_more_than_one_piece)
                    {
                        targets |= attacks::pawn_attacks(color, source)
                            & self.sacrificable[(!color).index()];
                    }
                    let targets = self.filter_targets(s, role, color, source, targets);
                    self.update_reachable(s, role, color, targets, &mut progress);
                    if (targets & !Bitboard::from_square(s)).any() {
                        let movable = self.movable | s;
                        update(&mut self.movable, movable, &mut progress);
                    }
                }

                let reachable = self.reachable[s.index()];
                if (reachable & !Bitboard::from_square(s)).any() {
                    let steady = self.steady.without(s);
                    update(&mut self.steady, steady, &mut progress);
                }

                let mut capturable = Bitboard::EMPTY;
                let mut mask = !self.kings;
                if role == Role::Pawn {
                    mask &= !file_of(s);
                }
                if color == Color::White || white_has_more_than_one_piece {
                    for opp in self.side(!color) & mask {
                        if (reachable & self.reachable[opp.index()]).any() {
                            capturable |= opp;
                        }
                    }
                }
                self.update_capturable(capturable, &mut progress);

                let steady = self.steady & !(reachable.without(s) & !self.kings);
                update(&mut self.steady, steady, &mut progress);
                let clear = self.clear & !reachable;
                update(&mut self.clear, clear, &mut progress);
                if role != Role::King {
                    let sac = self.sacrificable[color.index()] | reachable;
                    update(&mut self.sacrificable[color.index()], sac, &mut progress);
                }

                // A pawn that may promote may become anything: it may reach every square
                // but those of steady friends and steady kings.
                if role == Role::Pawn && (self.reachable[s.index()] & PROMOTION_RANKS).any() {
                    self.promotable = true;
                    let unreachable = self.steady & (self.side(color) | self.kings);
                    self.update_reachable(s, role, color, !unreachable, &mut progress);
                }
            }
            self.update_attacked_squares();
            if !progress {
                break;
            }
        }
    }

    fn update_reachable(
        &mut self,
        s: Square,
        role: Role,
        color: Color,
        targets: Bitboard,
        progress: &mut bool,
    ) {
        let reach = self.reachable[s.index()] | targets;
        update(&mut self.reachable[s.index()], reach, progress);
        if role != Role::Bishop {
            let r = self.reachable_by_non_bishop[color.index()] | targets;
            update(
                &mut self.reachable_by_non_bishop[color.index()],
                r,
                progress,
            );
        }
    }

    fn update_capturable(&mut self, capturable: Bitboard, progress: &mut bool) {
        let steady_capturable = capturable & self.steady;
        if steady_capturable.any() {
            match self.first_steady_capturable {
                None => self.first_steady_capturable = Some(steady_capturable),
                Some(b) if !self.promotable => {
                    self.first_steady_capturable = Some(b | steady_capturable)
                }
                _ => (),
            }
        }
        let c = self.capturable | capturable;
        update(&mut self.capturable, c, progress);
    }

    /// Drops from `targets` (moves of the piece that started on `initial`, now imagined
    /// on `source`) those that are illegal or pointless given the structure.
    fn filter_targets(
        &self,
        initial: Square,
        role: Role,
        color: Color,
        source: Square,
        mut targets: Bitboard,
    ) -> Bitboard {
        targets &= !self.reachable[initial.index()];
        targets &= !(self.side(color) & self.steady);
        if role == Role::King {
            targets &= !self.attacked[(!color).index()];
        }

        let white_king = self.white & self.kings;
        let white_king_sq = self.pos.king(Color::White);

        // Black must not check a steady white king: White is the one trying to mate, so a
        // check it cannot answer by capturing the checker leads nowhere.
        if color == Color::Black && (white_king & self.steady).any() {
            for t in targets {
                if (white_king & piece_attacks(role, color, t, !self.clear)).any()
                    && !self.sacrificable[Color::White.index()].contains(t)
                {
                    targets = targets.without(t);
                }
            }
            let blockers = !self.clear & !Bitboard::from_square(source);
            let potential_checkers = self.black
                & self.steady
                & !Bitboard::from_square(source)
                & line(white_king_sq, source);
            for t in targets {
                for checker in potential_checkers {
                    if (piece_attacks(self.role(checker), Color::Black, checker, blockers | t)
                        & white_king)
                        .any()
                    {
                        targets = targets.without(t);
                        break;
                    }
                }
            }
        }

        // White's last piece must not check a steady black king from next to it unless
        // White's king could defend it: Black would simply take it.
        let black_king = self.black & self.kings;
        if color == Color::White && self.white.count() == 2 {
            for t in targets {
                if (self.reachable[white_king_sq.index()] & attacks::king_attacks(t)).any() {
                    let unattacked =
                        (self.steady & self.black & !black_king)
                            .into_iter()
                            .all(|a| {
                                !piece_attacks(self.role(a), Color::Black, a, !self.clear)
                                    .contains(t)
                            });
                    if unattacked {
                        continue;
                    }
                }
                if (black_king & self.steady).any()
                    && (piece_attacks(role, color, t, !self.clear)
                        & black_king
                        & attacks::king_attacks(t))
                    .any()
                {
                    targets = targets.without(t);
                }
            }
        }

        // A king move that would stalemate an opponent who can only move the king.
        if role == Role::King {
            let opp = self.side(!color);
            let opp_king = opp & self.kings;
            let opp_can_only_move_king = (!opp_king & opp & self.movable).is_empty();
            let opp_king_sq = self.pos.king(!color);
            let opp_region = self.reachable[opp_king_sq.index()]
                | (attacks::king_attacks(opp_king_sq)
                    & !self.attacked[color.index()]
                    & !self.steady);
            let ours = self.side(color);
            let diag_sliders = ours & (self.role_bb(Role::Bishop) | self.role_bb(Role::Queen));
            let line_sliders = ours & (self.role_bb(Role::Rook) | self.role_bb(Role::Queen));
            if opp_can_only_move_king {
                for t in targets {
                    let attacked_from_target = attacks::king_attacks(t) | t;
                    if (attacks::king_attacks(opp_king_sq) & attacked_from_target).is_empty() {
                        continue;
                    }
                    let blockers = !self.clear | t;
                    let diags = attacks::bishop_attacks(source, blockers) & !blockers;
                    if diag_sliders
                        .into_iter()
                        .any(|s| (self.reachable[s.index()] & diags).any())
                    {
                        continue;
                    }
                    let lines = attacks::rook_attacks(source, blockers) & !blockers;
                    if line_sliders
                        .into_iter()
                        .any(|s| (self.reachable[s.index()] & lines).any())
                    {
                        continue;
                    }
                    if (opp_region & !attacked_from_target).count() <= 1 {
                        targets = targets.without(t);
                    }
                }
            }
        }

        // A piece in the way that can neither get out of the way nor be captured.
        for t in targets {
            let the_way = attacks::between(source, t) | source | t;
            for obstacle in
                self.occupied & the_way & !Bitboard::from_square(initial) & !self.capturable
            {
                let mut the_real_way = the_way;
                let obstacle_role = self.role(obstacle);
                if self.color(obstacle) != color
                    && (obstacle_role != Role::Pawn
                        || role != Role::Pawn
                        || source.file() != t.file())
                {
                    the_real_way = the_real_way.without(obstacle);
                }
                if role == Role::Pawn
                    && obstacle_role == Role::Pawn
                    && (self.reachable[initial.index()] & !file_of(t)).is_empty()
                {
                    the_real_way |= line(initial, obstacle);
                }
                if (self.reachable[obstacle.index()] & !the_real_way).is_empty() {
                    targets = targets.without(t);
                }
            }
            if let Some(uncapturable) = self.uncapturable_while_steady {
                targets &= !(uncapturable & self.steady);
            }
        }

        if let Some(squares) = self.capturable_only_while_steady
            && squares.contains(initial)
        {
            targets = Bitboard::EMPTY;
        }
        targets
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::position::{Position, Variant};
    use super::super::statics::is_statically_unwinnable;
    use super::*;

    /// chasolver's hand-verified saturation results (its `saturation.rs` tests, MIT).
    struct Case {
        fen: &'static str,
        steady: u64,
        clear: u64,
        attacked: (u64, u64),
        capturable: u64,
        winnable: bool,
    }

    const CASES: &[Case] = &[
        Case {
            fen: "8/1p6/kPp3p1/2P3p1/1pP3Pb/1P4p1/6P1/7K",
            steady: 569842407194624,
            clear: 281518488788992,
            attacked: (1419100238643200, 8021392859136),
            capturable: 70368744177664,
            winnable: false,
        },
        Case {
            fen: "7b/1k4bB/8/8/1p1p1p1p/1PpP1P1P/2P3K1/N7",
            steady: 2863531009,
            clear: 5310976,
            attacked: (1426719744, 5573120),
            capturable: 36028797018963968,
            winnable: true,
        },
        Case {
            fen: "7b/1k5B/8/8/1p1p1p1p/1PpP1P1P/2P3K1/N3b3",
            steady: 2863531008,
            clear: 0,
            attacked: (1426718720, 5573120),
            capturable: 36028797018963985,
            winnable: false,
        },
        Case {
            fen: "7b/1k4bB/8/4p3/1p1pPp1p/1PpP1P1P/2P1P1K1/N7",
            steady: 0,
            clear: 0,
            attacked: (0, 0),
            capturable: 9277415304234669057,
            winnable: true,
        },
        Case {
            fen: "4K3/8/8/8/8/p1p2p1p/P1pppp1P/bnrqkrnb",
            steady: 10861950,
            clear: 0,
            attacked: (4325376, 10845822),
            capturable: 0,
            winnable: false,
        },
        Case {
            fen: "4K3/8/8/8/8/p1p2p2/P1pppp2/bnrqkrnb",
            steady: 0,
            clear: 0,
            attacked: (0, 0),
            capturable: 2440431,
            winnable: true,
        },
        Case {
            fen: "k1bK4/1p1p4/1PpPp3/2P1Pp2/2p1pP2/2p1P3/2P5/8",
            steady: 0,
            clear: 0,
            attacked: (0, 0),
            capturable: 0x40a1e3434140400,
            winnable: true,
        },
        Case {
            fen: "Bb1k1b2/bKp1p1p1/1pP1P1P1/pP6/P5P1/8/8/8",
            steady: 2473978141211623424,
            clear: 9223557565466542079,
            attacked: (48137727165595648, 746940051698483200),
            capturable: 72057594037927936,
            winnable: false,
        },
        Case {
            fen: "Bb1k1b2/bKp1p1p1/1pP1P1P1/pP6/6P1/P7/8/8",
            steady: 2473978136899878912,
            clear: 9223557565466476543,
            attacked: (47856243598950400, 746940051664928768),
            capturable: 72057594037927936,
            winnable: true,
        },
        Case {
            fen: "k7/6p1/6P1/p1p1p1PK/P1P1P1P1/6PR/7P/8",
            steady: 18085133756137472,
            clear: 45212099231580159,
            attacked: (45212926914592768, 175922565087232),
            capturable: 0,
            winnable: false,
        },
        Case {
            fen: "5brk/4p1p1/3pP1P1/1B1P4/3p2p1/3P2p1/4K1P1/8",
            steady: 0,
            clear: 0,
            attacked: (0, 0),
            capturable: 6940143826963546112,
            winnable: true,
        },
        Case {
            fen: "7k/8/1p6/1Pp5/2Pp4/pB1Pp1p1/P1B1P1P1/1B1B2K1",
            steady: 2225000239360,
            clear: 5536525625856,
            attacked: (5540871275520, 21643962880), // White attacks are not tight here
            capturable: 0,
            winnable: false,
        },
        Case {
            fen: "7k/8/1p6/1Pp5/2Pp4/pB1Pp1p1/P1B1P1P1/3B2K1",
            steady: 0,
            clear: 0,
            attacked: (0, 0),
            capturable: 2225000371464,
            winnable: true,
        },
        Case {
            fen: "2b5/1p6/pPp3k1/2Pp3p/P2PpBpP/4P1P1/5K2/8",
            steady: 0,
            clear: 0,
            attacked: (0, 0),
            capturable: 288801628164718592,
            winnable: true,
        },
        Case {
            fen: "2b5/1p6/1Pp3k1/p1Pp3p/P2PpBpP/4P1P1/5K2/8",
            steady: 570156259475456,
            clear: 1108213235712,
            attacked: (1418742185590784, 5541961662464),
            capturable: 536870912,
            winnable: false,
        },
        Case {
            fen: "1k6/p1p1p1p1/P1P1P1P1/p1p1p1p1/8/8/P1P1P1P1/4K3",
            steady: 24018831508766720,
            clear: 48037663017533440,
            attacked: (47850746040811520, 186916976721920),
            capturable: 365072220160,
            winnable: false,
        },
        Case {
            fen: "8/2b5/8/4k2B/1p1p4/1P1Pp1p1/4P1P1/2b2BRK",
            steady: 173690912,
            clear: 1290,
            attacked: (363385024, 1419264),
            capturable: 549755813956,
            winnable: false,
        },
        Case {
            fen: "8/2b5/8/4k2B/1p1p4/1P1Pp1p1/4P1P1/2b1KBR1",
            steady: 0,
            clear: 0,
            attacked: (0, 0),
            capturable: 1126449836347492,
            winnable: true,
        },
        Case {
            fen: "1b2k3/8/1p2K3/bP6/Pp6/1Pp5/B1P5/NB6",
            steady: 2211958883586,
            clear: 0,
            attacked: (5506232616194, 2220531976704),
            capturable: 144115188075855873,
            winnable: false,
        },
        Case {
            fen: "1k6/pPp5/BpP4b/1P6/8/7B/8/5B1K",
            steady: 146093218084159488,
            clear: 72057594037927936,
            attacked: (363108226104819712, 506384499693584384),
            capturable: 140737488355328,
            winnable: false,
        },
        Case {
            fen: "8/8/1k1p1p2/3PpP2/3pKp2/b2P1P2/8/3B1B2",
            steady: 44221925425152,
            clear: 0,
            attacked: (92601578946560, 361453846528),
            capturable: 40,
            winnable: false,
        },
        Case {
            fen: "1b3kBR/4pP1P/1p1pP2P/1P1P4/8/K5p1/6P1/1B6",
            steady: 16190610028137283584,
            clear: 1516064996688134144,
            attacked: (5829932807375290368, 8102019800298946560),
            capturable: 4194304,
            winnable: true,
        },
        Case {
            fen: "1b6/6p1/k5P1/8/1p1p4/1P1Pp2p/4Pp1p/1B3Kbr",
            steady: 177909984,
            clear: 354765333,
            attacked: (354971760, 1435728),
            capturable: 70368744177664,
            winnable: false,
        },
        Case {
            fen: "8/1p3b2/pPp1p1p1/BkP1P1P1/1P6/BPB5/PKP5/8",
            steady: 658981160878080,
            clear: 12345959393014054912,
            attacked: (1594313452552192, 8448318111744),
            capturable: 0,
            winnable: true,
        },
        Case {
            fen: "k6B/1b4B1/2b2B2/4B3/3B4/1pB1B3/pP1B4/K7",
            steady: 131841,
            clear: 0,
            attacked: (328451, 1282),
            capturable: 9241421688591353856,
            winnable: true,
        },
        Case {
            fen: "N1b1N1N1/1pPpPpPp/1P1P1P1P/8/8/8/8/kb2B1K1",
            steady: 6196577054285103104,
            clear: 12250072461424459776,
            attacked: (12273903276444876800, 2908208255467520),
            capturable: 18,
            winnable: true,
        },
        Case {
            fen: "8/B4b2/2k5/1p1p4/1P1Pp1pB/1pp1P1P1/1p6/bK3b2",
            steady: 44465259011,
            clear: 17411412,
            attacked: (93012887303, 363335429),
            capturable: 281477124194304,
            winnable: false,
        },
        Case {
            fen: "8/2b4B/4k3/8/8/2p1p1p1/2PpP1P1/1B1K3n",
            steady: 5528712,
            clear: 41072,
            attacked: (11148316, 4237844),
            capturable: 36028797018963970,
            winnable: false,
        },
        Case {
            fen: "7k/5b2/p7/rbp5/p1p1p1p1/P1PpP1P1/PK1P4/RNB1B3",
            steady: 1122418625287,
            clear: 2862765224,
            attacked: (2853637895, 1108297257984),
            capturable: 0,
            winnable: false,
        },
        Case {
            fen: "8/8/7p/5p1P/5p1K/5Pp1/6P1/5kb1",
            steady: 141425226301440,
            clear: 70370086354944,
            attacked: (70372248518656, 276225368064),
            capturable: 64, // Not tight
            winnable: false,
        },
        Case {
            fen: "8/6pp/8/8/ppp5/bkp4Q/qnp2p2/n1K5",
            steady: 117901061,
            clear: 0, // Not tight (b1 will always be clear)
            attacked: (3598, 118427403),
            capturable: 54043195528454144,
            winnable: false,
        },
    ];

    #[test]
    fn saturation_matches_chasolver() {
        for case in CASES {
            let pos = Position::from_fen(&format!("{} w - -", case.fen), Variant::Standard)
                .expect("valid FEN");
            let mut a = Analysis::new(&pos);
            a.saturate();
            assert_eq!(a.steady.0, case.steady, "steady {}", case.fen);
            assert_eq!(a.clear.0, case.clear, "clear {}", case.fen);
            assert_eq!(
                a.attacked[0].0, case.attacked.0,
                "attacked white {}",
                case.fen
            );
            assert_eq!(
                a.attacked[1].0, case.attacked.1,
                "attacked black {}",
                case.fen
            );
            assert_eq!(a.capturable.0, case.capturable, "capturable {}", case.fen);
            assert_eq!(
                is_statically_unwinnable(&pos),
                !case.winnable,
                "verdict {}",
                case.fen
            );
        }
        for fen in [
            "B2b4/8/4k3/8/1p1p1p1p/1PpP1P1P/K1P4b/RB6 w - -",
            "1kb5/1p1p4/1P1P2p1/6p1/6Pb/6p1/6P1/7K w - -",
        ] {
            let pos = Position::from_fen(fen, Variant::Standard).expect("valid FEN");
            assert!(is_statically_unwinnable(&pos), "{fen}");
        }
        let pos = Position::from_fen(
            "8/6R1/8/6p1/2N2pP1/PPPP4/QNP2P1N/1Bk1K2R b - g3",
            Variant::Standard,
        )
        .expect("valid FEN");
        assert!(!is_statically_unwinnable(&pos));
    }
}
