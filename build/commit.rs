//! The commit the binary is built from, for `chess_build_info{commit}`: `git rev-parse HEAD`
//! where the source is a git checkout and git is installed, else `unknown` (a source
//! archive, a container build whose context leaves `.git` out). `CHESS_BUILD_COMMIT`, when
//! set at build time, wins (a container build can pass its commit that way).

use std::process::Command;

pub fn emit() {
    println!("cargo:rerun-if-env-changed=CHESS_BUILD_COMMIT");
    let (commit, source) = match std::env::var("CHESS_BUILD_COMMIT") {
        Ok(commit) if !commit.trim().is_empty() => (commit.trim().to_string(), "env"),
        _ => match head() {
            Some(commit) => (commit, "git"),
            None => ("unknown".to_string(), "unknown"),
        },
    };
    println!("cargo:rustc-env=CHESS_BUILD_COMMIT={commit}");
    // Where the name came from (git, env, unknown): the tests check a git one against HEAD.
    println!("cargo:rustc-env=CHESS_BUILD_COMMIT_SOURCE={source}");
}

/// HEAD's commit, and the files that change when HEAD moves (so that a new commit builds
/// again with its own name): HEAD itself, the branch it names, and the packed refs.
fn head() -> Option<String> {
    let commit = git(&["rev-parse", "HEAD"])?;
    if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) =
        git(&["rev-parse", "--symbolic-full-name", "HEAD"]).filter(|r| r.starts_with("refs/"))
    {
        watched.push(branch);
    }
    for name in watched {
        // Only files that exist: cargo runs a build script again on every build while a
        // path it watches is missing.
        if let Some(path) = git(&["rev-parse", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    Some(commit)
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string())
}
