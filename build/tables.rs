//! Build-time generation of the sliding-piece attack tables.
//!
//! Two layouts of the same attack sets are written to `OUT_DIR`: one indexed by
//! "fancy" magic multiplication (portable) and one indexed by `pext` (BMI2), chosen at
//! run time. Generating them here keeps the hot path free of lazy initialisation.

use std::fmt::Write as _;
use std::path::Path;

const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn slide(sq: usize, occ: u64, dirs: &[(i32, i32)]) -> u64 {
    let (f0, r0) = ((sq % 8) as i32, (sq / 8) as i32);
    let mut out = 0u64;
    for &(df, dr) in dirs {
        let (mut f, mut r) = (f0 + df, r0 + dr);
        while (0..8).contains(&f) && (0..8).contains(&r) {
            let bit = 1u64 << (r * 8 + f);
            out |= bit;
            if occ & bit != 0 {
                break;
            }
            f += df;
            r += dr;
        }
    }
    out
}

/// Relevant occupancy: the rays without their last square (an edge piece never blocks further).
fn relevant_mask(sq: usize, dirs: &[(i32, i32)]) -> u64 {
    let (f0, r0) = ((sq % 8) as i32, (sq / 8) as i32);
    let mut out = 0u64;
    for &(df, dr) in dirs {
        let (mut f, mut r) = (f0 + df, r0 + dr);
        while (0..8).contains(&(f + df)) && (0..8).contains(&(r + dr)) {
            out |= 1u64 << (r * 8 + f);
            f += df;
            r += dr;
        }
    }
    out
}

/// Software `pdep`: scatters the low bits of `src` onto the set bits of `mask`.
fn pdep(mut src: u64, mut mask: u64) -> u64 {
    let mut out = 0;
    while mask != 0 {
        let low = mask & mask.wrapping_neg();
        if src & 1 != 0 {
            out |= low;
        }
        src >>= 1;
        mask &= mask - 1;
    }
    out
}

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

struct Entry {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

fn build(
    dirs: &[(i32, i32)],
    base: usize,
    rng: &mut XorShift,
    magic: &mut Vec<u64>,
    pext: &mut Vec<u64>,
) -> Vec<Entry> {
    let mut entries = Vec::with_capacity(64);
    let mut offset = base;
    for sq in 0..64 {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        let size = 1usize << bits;
        let occs: Vec<u64> = (0..size as u64).map(|i| pdep(i, mask)).collect();
        let attacks: Vec<u64> = occs.iter().map(|&o| slide(sq, o, dirs)).collect();
        pext.extend_from_slice(&attacks);
        let shift = 64 - bits;
        let mut table = vec![0u64; size];
        let mut used = vec![u32::MAX; size];
        let mut attempt = 0u32;
        let chosen = loop {
            attempt += 1;
            let candidate = rng.sparse();
            if ((mask.wrapping_mul(candidate)) >> 56).count_ones() < 6 {
                continue;
            }
            let mut ok = true;
            for (i, (&o, &a)) in occs.iter().zip(&attacks).enumerate() {
                let idx = (o.wrapping_mul(candidate) >> shift) as usize;
                if used[idx] != attempt {
                    used[idx] = attempt;
                    table[idx] = a;
                } else if table[idx] != a {
                    ok = false;
                    break;
                }
                let _ = i;
            }
            if ok {
                break candidate;
            }
        };
        magic.extend_from_slice(&table);
        entries.push(Entry {
            mask,
            magic: chosen,
            shift,
            offset,
        });
        offset += size;
    }
    entries
}

fn write_entries(src: &mut String, name: &str, entries: &[Entry]) {
    writeln!(src, "pub(crate) static {name}: [SliderEntry; 64] = [").unwrap();
    for e in entries {
        writeln!(
            src,
            "    SliderEntry {{ mask: {:#018x}, magic: {:#018x}, shift: {}, offset: {} }},",
            e.mask, e.magic, e.shift, e.offset
        )
        .unwrap();
    }
    writeln!(src, "];").unwrap();
}

fn write_table(path: &Path, table: &[u64], big_endian: bool) {
    let mut bytes = Vec::with_capacity(table.len() * 8);
    for &v in table {
        if big_endian {
            bytes.extend_from_slice(&v.to_be_bytes());
        } else {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(path, bytes).expect("write attack table");
}

/// Writes `slider_tables.rs`, `magic_attacks.bin` and `pext_attacks.bin` into `out_dir`.
pub fn generate(out_dir: &Path) {
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut magic = Vec::new();
    let mut pext = Vec::new();
    let rook = build(&ROOK_DIRS, 0, &mut rng, &mut magic, &mut pext);
    let bishop = build(&BISHOP_DIRS, magic.len(), &mut rng, &mut magic, &mut pext);
    assert_eq!(magic.len(), pext.len());

    let mut src = String::new();
    writeln!(src, "// Generated by build/tables.rs. Do not edit.").unwrap();
    writeln!(
        src,
        "pub(crate) const SLIDER_TABLE_LEN: usize = {};",
        magic.len()
    )
    .unwrap();
    write_entries(&mut src, "ROOK_ENTRIES", &rook);
    write_entries(&mut src, "BISHOP_ENTRIES", &bishop);
    std::fs::write(out_dir.join("slider_tables.rs"), src).expect("write slider_tables.rs");
    write_table(&out_dir.join("magic_attacks.bin"), &magic, big_endian);
    write_table(&out_dir.join("pext_attacks.bin"), &pext, big_endian);
}
