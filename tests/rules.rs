//! The rules engine on its own: perft against published counts, the differential corpus,
//! property tests over random games and arbitrary text, and the rules' behaviour case by case.

mod common;

#[path = "rules/behaviour.rs"]
mod behaviour;
#[path = "rules/corpus.rs"]
mod corpus;
#[path = "rules/dead_positions.rs"]
mod dead_positions;
#[path = "rules/perft.rs"]
mod perft;
#[path = "rules/pgn_import.rs"]
mod pgn_import;
#[path = "rules/properties.rs"]
mod properties;
#[path = "rules/variant_corpus.rs"]
mod variant_corpus;
#[path = "rules/variant_perft.rs"]
mod variant_perft;
#[path = "rules/variant_properties.rs"]
mod variant_properties;
#[path = "rules/winnability.rs"]
mod winnability;
#[path = "rules/winnability_chess960.rs"]
mod winnability_chess960;
