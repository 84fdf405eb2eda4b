//! A throwaway PostgreSQL for the tests.
//!
//! With `CHESS_TEST_DATABASE_URL` set (a `postgres://` URL of a user that may create
//! databases), each test gets a fresh database in that server. Otherwise each test starts
//! its own cluster: `initdb` and `pg_ctl` from `/usr/lib/postgresql/*/bin`, run as the
//! `postgres` user when the tests run as root (PostgreSQL refuses root), in a directory
//! under `/tmp` given to that user (a root-made temp directory is 0700), on a free
//! loopback port, with `fsync` and `synchronous_commit` on; stopped and removed on drop.
//! It listens on 127.0.0.1 and on `iptables::CUT_ADDR` (127.0.0.2) too: a replica given
//! [`Pg::url_via`] that address can be cut off alone, with iptables (`common/iptables.rs`).
//!
//! When PostgreSQL is not installed, [`Pg::start`] says so loudly and returns `None` (the
//! test passes as skipped), unless `CHESS_REQUIRE_POSTGRES=1`, which makes it fail.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A PostgreSQL server for one test.
pub struct Pg {
    kind: Kind,
    /// The database this test uses.
    pub url: String,
}

enum Kind {
    /// A server the environment gave us.
    External,
    /// Our own cluster.
    Local(Cluster),
}

struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
}

fn required() -> bool {
    std::env::var("CHESS_REQUIRE_POSTGRES").is_ok_and(|v| v == "1")
}

/// Says loudly that a test did not run; fails instead when PostgreSQL is required.
fn skip(test: &str, why: &str) -> Option<Pg> {
    if required() {
        panic!("{test}: {why}, and CHESS_REQUIRE_POSTGRES=1 requires PostgreSQL");
    }
    eprintln!(
        "\n==================== SKIPPED: {test} ====================\n\
         {why}.\n\
         Install PostgreSQL (apt-get install postgresql) or set CHESS_TEST_DATABASE_URL;\n\
         CHESS_REQUIRE_POSTGRES=1 turns this skip into a failure (CI sets it).\n\
         ========================================================\n"
    );
    None
}

/// The newest installed `/usr/lib/postgresql/N/bin` with an `initdb`.
fn find_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((major, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A database name unique to this process and call.
fn unique_name(test: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let clean: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(30)
        .collect();
    format!("t_{clean}_{}_{n}", std::process::id())
}

/// A directory for a cluster's data: under /tmp (world-traversable), not a root-only temp
/// dir the postgres user cannot reach; then given to that user (`as_postgres`).
fn cluster_dir(prefix: &str, as_postgres: bool) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/tmp")
        .expect("a cluster directory under /tmp");
    if as_postgres {
        let out = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir.path())
            .output()
            .expect("chown runs");
        assert!(
            out.status.success(),
            "chown of the cluster directory failed"
        );
    }
    dir
}

impl Cluster {
    /// A new cluster, initialised and started; `None` when PostgreSQL is not installed.
    fn create() -> Option<Cluster> {
        let bin = find_bin()?;
        let as_postgres = is_root();
        let dir = cluster_dir("chess-pg-", as_postgres);
        let cluster = Cluster {
            bin,
            dir,
            port: free_port(),
            as_postgres,
        };
        let data = cluster.data();
        let out = cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        cluster.start();
        Some(cluster)
    }

    /// The URL of the cluster's `postgres` database (for creating others).
    fn base_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn run(&self, program: &str, args: &[&str]) -> std::process::Output {
        let path = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        cmd.args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", path.display()))
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn start(&self) {
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1,{} -c unix_socket_directories={} -c fsync=on \
             -c synchronous_commit=on -c max_connections=300",
            self.port,
            super::iptables::CUT_ADDR,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log").display().to_string();
        let out = self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &opts,
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// A crash of the database: `pg_ctl stop -m immediate` (no checkpoint; recovery from
    /// the WAL at the next start).
    fn stop_immediate(&self) {
        let out = self.run(
            "pg_ctl",
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
        assert!(
            out.status.success(),
            "pg_ctl stop failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.run(
            "pg_ctl",
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
        // The TempDir removes the directory (root or its owner may).
    }
}

impl Pg {
    /// A fresh database for `test`, or `None` (said loudly) when no PostgreSQL exists.
    pub async fn start(test: &str) -> Option<Pg> {
        if let Ok(base) = std::env::var("CHESS_TEST_DATABASE_URL") {
            let name = unique_name(test);
            create_database(&base, &name).await;
            return Some(Pg {
                kind: Kind::External,
                url: with_database(&base, &name),
            });
        }
        let Some(cluster) = Cluster::create() else {
            return skip(
                test,
                "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)",
            );
        };
        let base = cluster.base_url();
        let name = unique_name(test);
        create_database(&base, &name).await;
        Some(Pg {
            url: with_database(&base, &name),
            kind: Kind::Local(cluster),
        })
    }

    /// True when this test owns the cluster (and so may stop and start it).
    pub fn is_local(&self) -> bool {
        matches!(self.kind, Kind::Local(_))
    }

    /// Crashes the database (`pg_ctl stop -m immediate`). Only for a local cluster.
    pub fn stop_immediate(&self) {
        match &self.kind {
            Kind::Local(c) => c.stop_immediate(),
            Kind::External => panic!("cannot stop an external database"),
        }
    }

    /// Starts the database again after [`Pg::stop_immediate`] (crash recovery runs).
    pub fn restart(&self) {
        match &self.kind {
            Kind::Local(c) => c.start(),
            Kind::External => panic!("cannot start an external database"),
        }
    }

    /// The cluster's port (`None` for an external database).
    pub fn port(&self) -> Option<u16> {
        match &self.kind {
            Kind::Local(c) => Some(c.port),
            Kind::External => None,
        }
    }

    /// This test's database through another of the cluster's listen addresses (such as
    /// `iptables::CUT_ADDR`); `None` for an external database, whose addresses are its own.
    pub fn url_via(&self, addr: &str) -> Option<String> {
        let port = self.port()?;
        let (_, database) = self.url.rsplit_once('/')?;
        Some(format!("postgres://postgres@{addr}:{port}/{database}"))
    }

    /// The cluster's server log (for failure messages).
    pub fn server_log(&self) -> String {
        match &self.kind {
            Kind::Local(c) => {
                std::fs::read_to_string(c.dir.path().join("server.log")).unwrap_or_default()
            }
            Kind::External => String::new(),
        }
    }

    /// A connection for checks made behind the service's back.
    pub async fn connect(&self) -> tokio_postgres::Client {
        connect(&self.url).await
    }
}

/// `base` with its database name replaced by `name`.
fn with_database(base: &str, name: &str) -> String {
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (base, None),
    };
    let authority_end = head
        .find("://")
        .map(|i| i + 3)
        .and_then(|start| head[start..].find('/').map(|j| start + j))
        .unwrap_or(head.len());
    let mut url = format!("{}/{name}", &head[..authority_end]);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    url
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match tokio_postgres::connect(url, tokio_postgres::NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                return client;
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("cannot connect to {url}: {e}"),
        }
    }
}

async fn create_database(base: &str, name: &str) {
    let client = connect(base).await;
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name} failed: {e}"));
}

/// The cluster the gRPC suites share when they run on PostgreSQL (one per test process),
/// and the database each data directory was given.
struct Shared {
    base: String,
    databases: std::sync::Mutex<std::collections::HashMap<PathBuf, String>>,
    /// Kept for the life of the process; a watcher stops and removes it afterwards.
    _cluster: Option<Cluster>,
}

static SHARED: std::sync::OnceLock<Option<Shared>> = std::sync::OnceLock::new();

/// The database URL of the server that keeps its data in `data_dir`, in the process's
/// shared cluster (started on first use): a fresh database for a new directory, the same
/// one again for a restart. `None` (said loudly; a failure under
/// `CHESS_REQUIRE_POSTGRES=1`) when no PostgreSQL exists: the caller then uses sled.
pub fn database_for(data_dir: &std::path::Path) -> Option<String> {
    let shared = SHARED
        .get_or_init(|| {
            if let Ok(base) = std::env::var("CHESS_TEST_DATABASE_URL") {
                return Some(Shared {
                    base,
                    databases: Default::default(),
                    _cluster: None,
                });
            }
            let Some(cluster) = Cluster::create() else {
                skip(
                    "the gRPC suites on PostgreSQL",
                    "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); \
                     these tests run on the sled store instead",
                );
                return None;
            };
            cluster.remove_after_exit();
            Some(Shared {
                base: cluster.base_url(),
                databases: Default::default(),
                _cluster: Some(cluster),
            })
        })
        .as_ref()?;
    let mut databases = shared.databases.lock().expect("databases lock");
    if let Some(url) = databases.get(data_dir) {
        return Some(url.clone());
    }
    let name = unique_name("suite");
    let (base, db) = (shared.base.clone(), name.clone());
    // The harness is synchronous and may be called inside a test's runtime: a runtime of
    // its own, on a thread of its own.
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for CREATE DATABASE")
            .block_on(create_database(&base, &db))
    })
    .join()
    .expect("CREATE DATABASE finished");
    let url = with_database(&shared.base, &name);
    databases.insert(data_dir.to_path_buf(), url.clone());
    Some(url)
}

impl Cluster {
    /// A static is never dropped: a detached shell waits for this process to end, then
    /// stops the cluster and removes its directory.
    fn remove_after_exit(&self) {
        let pg_ctl = self.bin.join("pg_ctl").display().to_string();
        let stop = if self.as_postgres {
            format!("runuser -u postgres -- {pg_ctl}")
        } else {
            pg_ctl
        };
        // The outer shell returns at once (it is waited for); its background child lives on.
        let script = format!(
            "(while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
             {stop} -D '{data}' -m immediate -w stop; rm -rf '{dir}') &",
            pid = std::process::id(),
            data = self.data(),
            dir = self.dir.path().display(),
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the cluster's clean-up watcher starts");
    }
}

/// A primary and its streaming standby (`pg_basebackup -R`), for the failover tests: the
/// test's database is on both, and [`Replicated::url`] is the multi-host URL an operator
/// would give the service (the standby first, `target_session_attrs=read-write`, so the
/// service skips whichever is read-only). Only with a cluster of our own: `None` (said
/// loudly; a failure under `CHESS_REQUIRE_POSTGRES=1`) when PostgreSQL is not installed or
/// `CHESS_TEST_DATABASE_URL` names an external server.
pub struct Replicated {
    primary: Cluster,
    standby: Cluster,
    /// The multi-host URL of the test's database: standby, then primary.
    pub url: String,
}

impl Replicated {
    /// A primary with the test's database and a standby streaming from it; with
    /// `synchronous`, every commit waits for the standby's flush
    /// (`synchronous_standby_names = '*'`, `synchronous_commit = on`).
    pub async fn start(test: &str, synchronous: bool) -> Option<Replicated> {
        if std::env::var("CHESS_TEST_DATABASE_URL").is_ok() {
            eprintln!(
                "\n==================== SKIPPED: {test} ====================\n\
                 CHESS_TEST_DATABASE_URL names an external server; a failover test needs a\n\
                 primary and a standby of its own (unset it to run this test).\n\
                 ========================================================\n"
            );
            return None;
        }
        let Some(primary) = Cluster::create() else {
            return skip(
                test,
                "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)",
            )
            .and(None);
        };
        let name = unique_name(test);
        create_database(&primary.base_url(), &name).await;
        let standby = primary.standby();
        let replicated = Replicated {
            url: format!(
                "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{name}?target_session_attrs=read-write",
                standby.port, primary.port
            ),
            primary,
            standby,
        };
        replicated.wait_streaming(synchronous).await;
        Some(replicated)
    }

    /// Waits (at most 30 s) until the standby streams, with `sync_state` `sync` when
    /// `synchronous` (set on the primary only now: a standby copied with it set would wait
    /// for a standby of its own once promoted).
    async fn wait_streaming(&self, synchronous: bool) {
        let primary = connect(&self.primary.base_url()).await;
        if synchronous {
            // Two statements: ALTER SYSTEM may not run in the implicit transaction of a
            // multi-statement query.
            for sql in [
                "ALTER SYSTEM SET synchronous_standby_names = '*'",
                "SELECT pg_reload_conf()",
            ] {
                primary
                    .batch_execute(sql)
                    .await
                    .expect("synchronous_standby_names set on the primary");
            }
        }
        let want = if synchronous { "sync" } else { "async" };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let rows = primary
                .query(
                    "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'",
                    &[],
                )
                .await
                .expect("pg_stat_replication");
            if rows.iter().any(|r| r.get::<_, String>(0) == want) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the standby is not streaming ({want}) after 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits (at most 30 s) until the standby has replayed everything the primary has
    /// written so far.
    pub async fn wait_caught_up(&self) {
        let primary = connect(&self.primary.base_url()).await;
        let standby = connect(&self.standby.base_url()).await;
        let target: String = primary
            .query_one("SELECT pg_current_wal_lsn()::text", &[])
            .await
            .expect("the primary's WAL position")
            .get(0);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let behind: bool = standby
                .query_one(
                    "SELECT pg_last_wal_replay_lsn() < $1::text::pg_lsn",
                    &[&target],
                )
                .await
                .expect("the standby's replay position")
                .get(0);
            if !behind {
                return;
            }
            assert!(Instant::now() < deadline, "the standby did not catch up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Cuts the standby off from the primary: its WAL receiver stops (an empty
    /// `primary_conninfo`), so nothing the primary commits from now on reaches it.
    pub async fn detach_standby(&self) {
        let standby = connect(&self.standby.base_url()).await;
        for sql in [
            "ALTER SYSTEM SET primary_conninfo = ''",
            "SELECT pg_reload_conf()",
        ] {
            standby
                .batch_execute(sql)
                .await
                .expect("primary_conninfo cleared on the standby");
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let receiving: i64 = standby
                .query_one("SELECT count(*) FROM pg_stat_wal_receiver", &[])
                .await
                .expect("pg_stat_wal_receiver")
                .get(0);
            if receiving == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the standby's WAL receiver did not stop"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `kill -9` of the primary's postmaster (its backends notice and exit).
    pub fn kill_primary(&self) {
        let pid_file = std::path::Path::new(&self.primary.data()).join("postmaster.pid");
        let text = std::fs::read_to_string(&pid_file).expect("the primary's postmaster.pid");
        let pid = text.lines().next().expect("a pid line").trim().to_string();
        let out = Command::new("kill")
            .args(["-9", &pid])
            .output()
            .expect("kill runs");
        assert!(out.status.success(), "kill -9 {pid} failed");
    }

    /// Promotes the standby (`pg_ctl promote`, waiting until it takes writes).
    pub fn promote(&self) {
        let out = self
            .standby
            .run("pg_ctl", &["-D", &self.standby.data(), "-w", "promote"]);
        assert!(
            out.status.success(),
            "pg_ctl promote failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Cluster {
    /// A streaming standby of this cluster: `pg_basebackup -R` into a directory of its
    /// own, started on a port of its own.
    fn standby(&self) -> Cluster {
        let dir = cluster_dir("chess-pg-standby-", self.as_postgres);
        let standby = Cluster {
            bin: self.bin.clone(),
            dir,
            port: free_port(),
            as_postgres: self.as_postgres,
        };
        let port = self.port.to_string();
        let out = standby.run(
            "pg_basebackup",
            &[
                "-D",
                &standby.data(),
                "-R",
                "-X",
                "stream",
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                // An immediate checkpoint: the default spreads it over minutes.
                "--checkpoint=fast",
                "--no-sync",
            ],
        );
        assert!(
            out.status.success(),
            "pg_basebackup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        standby.start();
        standby
    }
}
