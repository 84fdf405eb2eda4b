//! The values of a `chess.v1` enum, read from the descriptor set the server also serves by
//! reflection. Why: the metrics export a series for every `ErrorReason` and every ending
//! `GameStatus` from the start (at 0), and a list read from the compiled `.proto` grows
//! with it by itself, where a hand-kept list would miss a value someone adds.

use prost::Message as _;

/// The value names of enum `full_name` (`chess.v1.GameStatus`), in declaration order;
/// empty if the descriptor set has no such enum.
pub fn value_names(full_name: &str) -> Vec<String> {
    let Ok(set) = prost_types::FileDescriptorSet::decode(crate::pb::FILE_DESCRIPTOR_SET) else {
        return Vec::new();
    };
    for file in &set.file {
        let package = file.package();
        for e in &file.enum_type {
            let name = if package.is_empty() {
                e.name().to_string()
            } else {
                format!("{package}.{}", e.name())
            };
            if name == full_name {
                return e.value.iter().map(|v| v.name().to_string()).collect();
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_value_of_the_chess_enums() {
        let statuses = value_names("chess.v1.GameStatus");
        assert_eq!(
            statuses.first().map(String::as_str),
            Some("GAME_STATUS_UNSPECIFIED")
        );
        assert!(statuses.iter().any(|s| s == "GAME_STATUS_OUT_OF_TIME"));
        // Every name is a value of the generated enum, and every value of it is listed.
        for name in &statuses {
            assert!(
                crate::pb::GameStatus::from_str_name(name).is_some(),
                "{name}"
            );
        }
        let listed = (0..=i32::from(u8::MAX))
            .filter(|&n| crate::pb::GameStatus::try_from(n).is_ok())
            .count();
        assert_eq!(statuses.len(), listed);
        let reasons = value_names("chess.v1.ErrorReason");
        assert!(reasons.iter().any(|s| s == "DISK_FULL"), "{reasons:?}");
        for name in &reasons {
            assert!(
                crate::pb::ErrorReason::from_str_name(name).is_some(),
                "{name}"
            );
        }
        assert!(value_names("chess.v1.NoSuchEnum").is_empty());
    }
}
