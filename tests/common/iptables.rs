//! A real network cut, made with iptables: DROP rules for one loopback address and port,
//! both ways, in the OUTPUT chain (every packet on loopback passes it once: the replica's
//! to the server, and the server's replies). Nothing arrives and nothing is refused; TCP
//! retransmits into the void, with the kernel's own back-off, and only timeouts notice.
//!
//! Why next to `blackhole.rs`'s proxy: issue 24 asks for real network faults. A proxy
//! holds bytes in user space, so connections it cuts are never in TCP's retransmission
//! back-off, and what the kernel does on a real partition (and after it heals) goes
//! untested. The cut is scoped to one address (the test cluster also listens on
//! [`CUT_ADDR`], and only the replica to be cut connects through it) and one port (that
//! test's cluster), so other tests and other processes are untouched.
//!
//! The rules carry a comment unique to this process and cut (`chess-test-<pid>-<n>`);
//! [`Cut::heal`] deletes exactly those, and so does dropping the [`Cut`], so a failing
//! test leaves no rule behind (a test process killed outright can: `iptables -S OUTPUT |
//! grep chess-test-` finds them).
//!
//! iptables needs root and the `iptables` command. Without them [`available`] says so
//! loudly and returns false (the test passes as skipped), unless
//! `CHESS_REQUIRE_IPTABLES=1` (CI sets it), which makes it fail.

#![allow(dead_code)]

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The loopback address the test clusters also listen on, for replicas to be cut.
pub const CUT_ADDR: &str = "127.0.0.2";

fn required() -> bool {
    std::env::var("CHESS_REQUIRE_IPTABLES").is_ok_and(|v| v == "1")
}

/// Whether cuts can be made here. Says loudly why not (or fails, under
/// `CHESS_REQUIRE_IPTABLES=1`).
pub fn available(test: &str) -> bool {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let why = if !is_root {
        "the tests do not run as root, which iptables needs".to_string()
    } else {
        match Command::new("iptables")
            .args(["-w", "-n", "-L", "OUTPUT"])
            .stdin(Stdio::null())
            .output()
        {
            Ok(o) if o.status.success() => return true,
            Ok(o) => format!(
                "`iptables -L OUTPUT` failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => format!("iptables cannot be run ({e})"),
        }
    };
    if required() {
        panic!("{test}: {why}, and CHESS_REQUIRE_IPTABLES=1 requires iptables");
    }
    eprintln!(
        "\n==================== SKIPPED: {test} ====================\n\
         {why}.\n\
         Run the tests as root with iptables installed (apt-get install iptables);\n\
         CHESS_REQUIRE_IPTABLES=1 turns this skip into a failure (CI sets it).\n\
         ========================================================\n"
    );
    false
}

/// DROP rules for traffic to and from `addr:port`, while cut. Healed when dropped.
pub struct Cut {
    addr: String,
    port: u16,
    comment: String,
    active: bool,
}

impl Cut {
    /// A cut of `addr:port` (TCP), not yet made.
    pub fn new(addr: &str, port: u16) -> Cut {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Cut {
            addr: addr.to_string(),
            port,
            comment: format!("chess-test-{}-{n}", std::process::id()),
            active: false,
        }
    }

    /// The two rules: packets to the address and port, and packets from them.
    fn rules(&self) -> [Vec<String>; 2] {
        let port = self.port.to_string();
        let rule = |addr_flag: &str, port_flag: &str| -> Vec<String> {
            [
                "-p",
                "tcp",
                addr_flag,
                &self.addr,
                port_flag,
                &port,
                "-m",
                "comment",
                "--comment",
                &self.comment,
                "-j",
                "DROP",
            ]
            .map(String::from)
            .to_vec()
        };
        [rule("-d", "--dport"), rule("-s", "--sport")]
    }

    fn run(action: &[&str], rule: &[String]) -> Result<(), String> {
        let out = Command::new("iptables")
            .arg("-w")
            .args(action)
            .args(rule)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("iptables cannot be run: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "iptables {action:?} {rule:?} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// From now on nothing passes, either way (the rules go first in OUTPUT).
    pub fn cut(&mut self) {
        assert!(!self.active, "{} is cut already", self.comment);
        self.active = true; // before adding: a half-made cut is healed on drop too
        for rule in self.rules() {
            Cut::run(&["-I", "OUTPUT", "1"], &rule).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// Traffic passes again: exactly this cut's rules are deleted.
    pub fn heal(&mut self) {
        let errors = self.remove();
        assert!(errors.is_empty(), "healing {}: {errors:?}", self.comment);
    }

    /// Deletes this cut's rules (each as often as it was added: at most once); returns
    /// the failures other than "no such rule".
    fn remove(&mut self) -> Vec<String> {
        if !self.active {
            return Vec::new();
        }
        self.active = false;
        let mut errors = Vec::new();
        for rule in self.rules() {
            // A rule `cut` did not get to add is no error.
            let exists = Cut::run(&["-C", "OUTPUT"], &rule).is_ok();
            if exists && let Err(e) = Cut::run(&["-D", "OUTPUT"], &rule) {
                errors.push(e);
            }
        }
        errors
    }
}

impl Drop for Cut {
    fn drop(&mut self) {
        for e in self.remove() {
            eprintln!("leaving a cut behind: {e}");
        }
    }
}
