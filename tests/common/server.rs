//! Runs the real `chess-server` binary on an ephemeral port with a temporary data
//! directory, and connects tonic clients generated from the same proto.
//!
//! A server keeps its games in sled unless the test names another store: a server started
//! through [`Server::on`]`(`[`TestStore::Postgres`]`)` without its own `--database-url`
//! keeps them in PostgreSQL instead, in a database of the process's shared throwaway
//! cluster that belongs to its data directory (so a restart on the same directory finds
//! the same games). That is how the gRPC suites run against both stores: each crate that
//! includes them wraps them in a module whose `STORE` their tests pass to [`Server::on`].

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chess_service::pb::chess_service_client::ChessServiceClient;
use tonic::transport::Channel;
use tonic_types::{ErrorInfo, StatusExt};

/// The store a test's servers keep their games in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TestStore {
    /// The embedded sled store in the server's data directory.
    #[default]
    Sled,
    /// PostgreSQL: a database per data directory in a cluster shared by the process.
    Postgres,
}

/// A running server process; killed when dropped.
pub struct Server {
    child: Child,
    pub addr: String,
    log: Arc<Mutex<Vec<String>>>,
    /// The temporary data directory, when the server owns one.
    _data: Option<tempfile::TempDir>,
}

/// Starts servers that keep their games in one store ([`Server::on`]). The [`Server`]
/// functions of the same names start servers on sled.
#[derive(Clone, Copy, Debug, Default)]
pub struct Launcher {
    store: TestStore,
}

impl Launcher {
    /// Starts the server with `--listen 127.0.0.1:0`, a fresh data directory and `args`,
    /// and waits for the "listening on ADDR" log line.
    pub fn start(self, args: &[&str]) -> Server {
        let data = tempfile::tempdir().expect("temporary data directory");
        let mut server = self.start_in(data.path(), args);
        server._data = Some(data);
        server
    }

    /// Starts the server on an existing data directory (a restart), which the caller owns.
    pub fn start_in(self, data_dir: &std::path::Path, args: &[&str]) -> Server {
        self.start_with(data_dir, args, &[])
    }

    /// Starts the server on `data_dir` with `args` and extra environment variables
    /// `env` (for instance `("CHESS_AUTH_TOKENS", path)`), which the caller owns.
    pub fn start_with(
        self,
        data_dir: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        Server::spawn(
            self.store,
            Command::new(env!("CARGO_BIN_EXE_chess-server")),
            data_dir,
            args,
            env,
        )
    }

    /// Starts the server like [`Launcher::start`], with at most `nofile` open file
    /// descriptors (`ulimit -n`, set by a shell that then becomes the server, so
    /// [`Server::pid`] is the server's).
    pub fn start_with_fd_limit(self, args: &[&str], nofile: u64) -> Server {
        let data = tempfile::tempdir().expect("temporary data directory");
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_chess-server"));
        let mut server = Server::spawn(self.store, shell, data.path(), args, &[]);
        server._data = Some(data);
        server
    }
}

impl Server {
    /// Starts servers that keep their games in `store`: with [`TestStore::Postgres`], in
    /// a database of this process's throwaway cluster, unless the arguments name a
    /// `--database-url` of their own.
    pub fn on(store: TestStore) -> Launcher {
        Launcher { store }
    }

    /// [`Launcher::start`] on sled.
    pub fn start(args: &[&str]) -> Server {
        Launcher::default().start(args)
    }

    /// [`Launcher::start_in`] on sled.
    pub fn start_in(data_dir: &std::path::Path, args: &[&str]) -> Server {
        Launcher::default().start_in(data_dir, args)
    }

    /// [`Launcher::start_with`] on sled.
    pub fn start_with(data_dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        Launcher::default().start_with(data_dir, args, env)
    }

    /// [`Launcher::start_with_fd_limit`] on sled.
    pub fn start_with_fd_limit(args: &[&str], nofile: u64) -> Server {
        Launcher::default().start_with_fd_limit(args, nofile)
    }

    fn spawn(
        store: TestStore,
        mut command: Command,
        data_dir: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let database = (store == TestStore::Postgres && !args.contains(&"--database-url"))
            .then(|| super::postgres::database_for(data_dir))
            .flatten();
        command
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir);
        if let Some(url) = &database {
            command.args(["--database-url", url]);
        }
        let mut child = command
            .args(args)
            .env("RUST_LOG", "info")
            .env_remove("CHESS_LISTEN")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the chess-server binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(addr) = line.split("listening on ").nth(1) {
                    let addr = addr
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(addr);
                    }
                }
                sink.lock().expect("log lock").push(line);
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the server logs its listening address");
        Server {
            child,
            addr,
            log,
            _data: None,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url())
            .expect("valid url")
            .connect()
            .await
            .expect("connects to the server")
    }

    pub async fn client(&self) -> ChessServiceClient<Channel> {
        ChessServiceClient::new(self.channel().await)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The address of the server's Prometheus endpoint (started with
    /// `--metrics-listen 127.0.0.1:0`), from its log.
    pub fn metrics_addr(&self) -> String {
        let line = self
            .wait_for_log("Prometheus metrics on ", Duration::from_secs(10))
            .expect("the server logs its metrics address");
        line.split("Prometheus metrics on ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .expect("an address after 'Prometheus metrics on'")
            .to_string()
    }

    /// The CPU time the process has used so far (user and system), from `/proc`.
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .expect("the server's /proc stat");
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .expect("a command name in parentheses")
            .1
            .split_whitespace()
            .collect();
        // Fields 14 and 15 (utime, stime), in clock ticks of 1/100 s (USER_HZ).
        let ticks: u64 =
            fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
        Duration::from_millis(ticks * 10)
    }

    /// The log lines so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().expect("log lock").clone()
    }

    /// Waits (at most `limit`) for a log line containing `needle`, and returns it.
    pub fn wait_for_log(&self, needle: &str, limit: Duration) -> Option<String> {
        let start = Instant::now();
        loop {
            if let Some(line) = self.log().into_iter().find(|l| l.contains(needle)) {
                return Some(line);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends the signal `name` (`HUP`, `TERM`, ...) to the process.
    pub fn signal(&self, name: &str) {
        // The shell's own `kill`, so no procps package is needed.
        let sent = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -{name} {}", self.child.id()))
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -{name} works");
    }

    /// Sends SIGTERM and waits (at most `limit`) for the process to exit.
    pub fn terminate(&mut self, limit: Duration) -> Option<(ExitStatus, Duration)> {
        let start = Instant::now();
        // The shell's own `kill`, so no procps package is needed.
        let sent = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -TERM {}", self.child.id()))
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM works");
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some((status, start.elapsed()));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Server {
    /// Waits (at most `limit`) for the process to exit by itself; its exit status, or
    /// `None` if it is still running.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills the process with SIGKILL (no shutdown, no flush) and reaps it.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `ErrorInfo` of a status, checked to be in the `chess.v1` domain.
pub fn error_info(status: &tonic::Status) -> ErrorInfo {
    let info = status
        .get_error_details()
        .error_info()
        .cloned()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    assert_eq!(info.domain, "chess.v1", "{status:?}");
    info
}

/// Asserts a call failed with `code` and `reason`; returns the status.
pub fn expect_error<T: std::fmt::Debug>(
    result: Result<tonic::Response<T>, tonic::Status>,
    code: tonic::Code,
    reason: &str,
) -> tonic::Status {
    let status = match result {
        Ok(response) => panic!(
            "expected {code:?} {reason}, got {:?}",
            response.into_inner()
        ),
        Err(status) => status,
    };
    assert_eq!(status.code(), code, "{status:?}");
    let sent = error_info(&status).reason;
    assert_eq!(sent, reason, "{status:?}");
    // Every reason the server sends is a value of the proto's ErrorReason: every error
    // test of every crate walks through here.
    assert!(
        chess_service::pb::ErrorReason::from_str_name(&sent)
            .is_some_and(|r| r != chess_service::pb::ErrorReason::Unspecified),
        "the reason {sent} is not a value of chess.v1.ErrorReason"
    );
    status
}

/// The field names of a status's `BadRequest` violations.
pub fn violated_fields(status: &tonic::Status) -> Vec<String> {
    status
        .get_error_details()
        .bad_request()
        .map(|b| b.field_violations.iter().map(|v| v.field.clone()).collect())
        .unwrap_or_default()
}
