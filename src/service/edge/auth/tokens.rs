//! The token file: one `NAME ROLE SHA256HEX [TENANT]` line per token, `#` starts a
//! comment. TENANT, when given, confines the token to that tenant's games. The
//! file holds only the SHA-256 of each token, so reading it (a backup, a leaked
//! ConfigMap) gives no token away; a presented token is hashed and compared to every
//! entry in constant time.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{Caller, Role, Tenant};

/// Longest NAME accepted: it is written into every call's log span.
const MAX_NAME_LEN: usize = 64;

/// Why a token file was refused (the server keeps the previous one on a reload).
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file cannot be read.
    #[error("cannot read the token file {path}: {source}")]
    Read {
        /// The token file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A line of the file is malformed.
    #[error("token file line {line}: {why}")]
    Line {
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
}

/// One token: who it names, what it may do, and the SHA-256 of the token.
#[derive(Clone, Debug)]
struct Entry {
    caller: Caller,
    hash: [u8; 32],
}

/// The tokens a server accepts.
#[derive(Clone, Debug, Default)]
pub struct TokenTable {
    entries: Vec<Entry>,
}

impl TokenTable {
    /// Reads and parses the token file at `path`.
    pub fn load(path: &Path) -> Result<TokenTable, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        TokenTable::parse(&text)
    }

    /// Parses the text of a token file; any bad line refuses the whole file.
    pub fn parse(text: &str) -> Result<TokenTable, TokenFileError> {
        let mut entries: Vec<Entry> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let bad = |why: String| TokenFileError::Line { line, why };
            let content = raw.split('#').next().unwrap_or_default().trim();
            if content.is_empty() {
                continue;
            }
            let fields: Vec<&str> = content.split_whitespace().collect();
            let (name, role, hex, tenant) = match fields[..] {
                [name, role, hex] => (name, role, hex, None),
                [name, role, hex, tenant] => (name, role, hex, Some(tenant)),
                _ => {
                    return Err(bad(format!(
                        "expected 3 or 4 fields 'NAME ROLE SHA256HEX [TENANT]', found {}",
                        fields.len()
                    )));
                }
            };
            if name.len() > MAX_NAME_LEN
                || !name.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | ':' | '/')
                })
            {
                return Err(bad(format!(
                    "NAME must be 1-{MAX_NAME_LEN} characters of A-Z a-z 0-9 - _ . @ : /"
                )));
            }
            let role = Role::parse(role)
                .ok_or_else(|| bad("ROLE must be read, play or admin (lower case)".to_string()))?;
            let hash = parse_sha256_hex(hex).ok_or_else(|| {
                bad("SHA256HEX must be 64 lower-case hex digits, the SHA-256 of the token (printf %s TOKEN | sha256sum); the file holds hashes, never tokens".to_string())
            })?;
            let tenant = tenant
                .map(Tenant::parse)
                .transpose()
                .map_err(|e| bad(format!("TENANT: {e}")))?;
            if let Some(other) = entries.iter().find(|e| e.hash == hash) {
                return Err(bad(format!(
                    "the same token hash is already given for '{}'",
                    other.caller.name
                )));
            }
            entries.push(Entry {
                caller: Caller {
                    name: Arc::from(name),
                    role,
                    from_token: true,
                    tenant,
                },
                hash,
            });
        }
        Ok(TokenTable { entries })
    }

    /// Tokens in the table.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the table admits no one.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The caller a token belongs to. The token's hash is compared with every entry in
    /// constant time, with no early exit, so the time taken says nothing about how much
    /// of a hash matched.
    pub fn lookup(&self, token: &str) -> Option<Caller> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for entry in &self.entries {
            if bool::from(entry.hash.ct_eq(&digest)) {
                found = Some(entry.caller.clone());
            }
        }
        found
    }
}

/// 64 lower-case hex digits as 32 bytes.
fn parse_sha256_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in hex.as_bytes().chunks_exact(2).enumerate() {
        out[i] = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A well-formed hash (of no token in particular).
    const READER_HASH: &str = "9a1a2d3c1cf2c3e1bb1b8bd2d3a9d0e5bd9ac4a72ef75dd8b37b2fd7af9d6c43";

    fn hash_of(token: &str) -> String {
        Sha256::digest(token.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn parses_lines_comments_and_finds_tokens() {
        let text = format!(
            "# who may call\n\nmatchmaker play {}  # the matchmaking service\nops admin {}\n",
            hash_of("m-token"),
            hash_of("o-token")
        );
        let table = TokenTable::parse(&text).expect("a valid file");
        assert_eq!(table.len(), 2);
        let m = table.lookup("m-token").expect("known token");
        assert_eq!((&*m.name, m.role), ("matchmaker", Role::Play));
        assert_eq!(table.lookup("o-token").map(|c| c.role), Some(Role::Admin));
        assert_eq!(m.tenant, None, "no fourth column: the default tenant");
        assert_eq!(table.lookup("m-token "), None);
        assert_eq!(table.lookup(""), None);
    }

    #[test]
    fn refuses_bad_lines_with_their_number() {
        for (text, needle) in [
            ("a play\n", "3 or 4 fields"),
            (&*format!("a read {READER_HASH} t extra"), "3 or 4 fields"),
            (&*format!("a read {READER_HASH} t/x"), "TENANT"),
            (
                &*format!("a read {READER_HASH} {}", "t".repeat(65)),
                "TENANT",
            ),
            (&*format!("a owner {READER_HASH}"), "ROLE"),
            ("a read 1234\n", "SHA256HEX"),
            (
                &*format!("a read {}", READER_HASH.to_uppercase()),
                "SHA256HEX",
            ),
            (&*format!("a\u{7} read {READER_HASH}"), "NAME"),
            (
                &*format!("a read {READER_HASH}\nb play {READER_HASH}"),
                "already",
            ),
        ] {
            let e = TokenTable::parse(text).expect_err(text).to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
            assert!(e.starts_with("token file line "), "{e}");
        }
    }

    #[test]
    fn a_fourth_column_names_the_tenant() {
        let text = format!(
            "b-play play {} tenant-b # the second backend\nb-ops admin {} tenant-b\nops admin {}\n",
            hash_of("b"),
            hash_of("bo"),
            hash_of("o")
        );
        let table = TokenTable::parse(&text).expect("a valid file");
        let b = table.lookup("b").expect("known token");
        assert_eq!(b.tenant.as_ref().map(Tenant::as_str), Some("tenant-b"));
        assert!(!b.is_unscoped_admin());
        let b_ops = table.lookup("bo").expect("known token");
        assert_eq!((b_ops.role, b_ops.tenant.is_some()), (Role::Admin, true));
        assert!(!b_ops.is_unscoped_admin(), "a tenant scopes admins too");
        assert!(table.lookup("o").expect("known token").is_unscoped_admin());
    }
}
