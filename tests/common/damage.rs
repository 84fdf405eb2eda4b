//! Damage a stored record must not survive: every single-byte change (three flips of each
//! byte), every truncation and one byte too many.

use chess_service::store::codec;

/// Asserts `codec::decode` refuses every damaged copy of `record` (stored under `id`).
pub fn assert_every_damage_refused(id: &str, record: &[u8]) {
    for i in 0..record.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut bad = record.to_vec();
            bad[i] ^= flip;
            assert!(
                codec::decode(id, &bad).is_err(),
                "{id}: byte {i} ^ {flip:#x} went unnoticed"
            );
        }
    }
    for len in 0..record.len() {
        assert!(
            codec::decode(id, &record[..len]).is_err(),
            "{id}: truncation to {len} went unnoticed"
        );
    }
    let mut longer = record.to_vec();
    longer.push(0);
    assert!(
        codec::decode(id, &longer).is_err(),
        "{id}: one byte more went unnoticed"
    );
}

/// Copies a data directory (files and subdirectories) to `to`, created if missing: tests
/// damage or inspect a copy so the original stays as it was.
#[allow(dead_code)] // not every test crate copies directories
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("the copy's directory");
    for entry in std::fs::read_dir(from).expect("the directory to copy") {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("its type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a file copied");
        }
    }
}
