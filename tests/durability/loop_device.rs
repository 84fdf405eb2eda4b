//! Device write errors are harmless (issue 29): the server runs on an ext4 image (4 KiB
//! blocks) on a loop device whose requests are capped at 4 KiB
//! (`/sys/block/loopN/queue/max_sectors_kb`), backed by a sparse file on a tmpfs smaller
//! than the image, so that the device runs out of space for real and a write is stored
//! whole or fails whole. (Uncapped, the loop driver reports a short write to a full
//! backing file as a success: then even a plain write-fsync program loses what it
//! acknowledged, and nothing above can be judged.)
//!
//! First a plain program writes, fsyncs and acknowledges records until the device fails;
//! the tmpfs grows, `e2fsck -fy` repairs the file system, and every acknowledged record
//! must be there, or the test refuses to judge the server on this machine. Then the server
//! starts on a fresh such device, the tmpfs under it is filled but for 8 MiB, and 4 writers
//! play until the device fails; the server must stop by itself, and after the same repair
//! and a restart every acknowledged change must be there.
//!
//! Needs root, `losetup`, `mkfs.ext4` and `e2fsck`; without them it says loudly that it is
//! skipped, unless `CHESS_REQUIRE_LOOP=1` (`.ci/run` sets it).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::common::server::Server;
use crate::faults::{Acked, Tmpfs, assert_every_ack_served, fill, write_until_refused};

/// The image's size, and the tmpfs's before and after it grows.
const IMAGE_BYTES: u64 = 128 * 1024 * 1024;
const TMPFS_SMALL: &str = "24m";
const TMPFS_GROWN: &str = "160m";
/// What the tmpfs keeps free for the server once it is filled: a few of sled's segments.
const ROOM_LEFT: u64 = 8 * 1024 * 1024;

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// An ext4 image on a loop device on a small tmpfs, mounted.
struct LoopDisk {
    tmpfs: Tmpfs,
    dev: String,
    mnt: tempfile::TempDir,
}

impl LoopDisk {
    fn create() -> Result<LoopDisk, String> {
        for tool in ["losetup", "mkfs.ext4", "e2fsck"] {
            run("sh", &["-c", &format!("command -v {tool}")])
                .map_err(|_| format!("{tool} is not installed"))?;
        }
        let tmpfs = Tmpfs::mount(TMPFS_SMALL)?;
        let image = tmpfs.path().join("disk.img");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(IMAGE_BYTES))
            .map_err(|e| format!("cannot create the image: {e}"))?;
        let image = image.to_str().ok_or("a non-UTF-8 path")?.to_string();
        run(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-b",
                "4096",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                &image,
            ],
        )?;
        let dev = run("losetup", &["--find", "--show", &image])?;
        let mnt = tempfile::tempdir().map_err(|e| e.to_string())?;
        let disk = LoopDisk { tmpfs, dev, mnt };
        let name = disk.dev.trim_start_matches("/dev/");
        let cap = format!("/sys/block/{name}/queue/max_sectors_kb");
        std::fs::write(&cap, "4").map_err(|e| format!("cannot write {cap}: {e}"))?;
        let capped = std::fs::read_to_string(&cap).unwrap_or_default();
        if capped.trim() != "4" {
            return Err(format!("{cap} says {capped:?} after writing 4"));
        }
        disk.mount()?;
        Ok(disk)
    }

    fn path(&self) -> &Path {
        self.mnt.path()
    }

    fn mount(&self) -> Result<(), String> {
        let mnt = self.mnt.path().to_str().ok_or("a non-UTF-8 path")?;
        run("mount", &[&self.dev, mnt]).map(|_| ())
    }

    /// After the device failed: more room for the image, the file system unmounted,
    /// repaired with `e2fsck -fy` and mounted again. The repair's report.
    fn grow_repair_remount(&self) -> String {
        let tmpfs = self
            .tmpfs
            .path()
            .to_str()
            .expect("a UTF-8 path")
            .to_string();
        run(
            "mount",
            &["-o", &format!("remount,size={TMPFS_GROWN}"), &tmpfs],
        )
        .expect("the tmpfs grows");
        let mnt = self.mnt.path().to_str().expect("a UTF-8 path").to_string();
        run("umount", &[&mnt]).expect("the file system unmounts");
        let out = Command::new("e2fsck")
            .args(["-fy", &self.dev])
            .output()
            .expect("e2fsck runs");
        // 0: clean; 1: errors corrected; 2: corrected, reboot advised. 4 and up: left.
        let code = out.status.code().unwrap_or(8);
        let report = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(code < 4, "e2fsck -fy left errors ({code}):\n{report}");
        self.mount().expect("the repaired file system mounts");
        report
    }
}

impl Drop for LoopDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// The disk, or `None` (said loudly) when this machine cannot make one and
/// `CHESS_REQUIRE_LOOP=1` is not set.
fn loop_disk(test: &str) -> Option<LoopDisk> {
    let required = std::env::var("CHESS_REQUIRE_LOOP").is_ok_and(|v| v == "1");
    match LoopDisk::create() {
        Ok(disk) => Some(disk),
        Err(why) if !required => {
            eprintln!(
                "\n*** SKIPPED {test}: {why}\n*** (run as root with losetup, mkfs.ext4 and e2fsck, or set CHESS_REQUIRE_LOOP=1 to make this a failure)\n"
            );
            None
        }
        Err(why) => panic!("CHESS_REQUIRE_LOOP=1 but no loop device can be made: {why}"),
    }
}

const RECORD: usize = 4096;

fn record(i: u64) -> Vec<u8> {
    let mut r = vec![(i % 251) as u8; RECORD];
    r[..8].copy_from_slice(&i.to_le_bytes());
    let sum = crc32fast::hash(&r[..RECORD - 4]);
    r[RECORD - 4..].copy_from_slice(&sum.to_le_bytes());
    r
}

/// The plain program: write a record, fsync, acknowledge; until the device fails. The
/// records acknowledged.
fn write_fsync_ack(path: &Path) -> u64 {
    let mut f = std::fs::File::create(path).expect("the control file");
    let mut acked = 0u64;
    loop {
        if f.write_all(&record(acked)).is_err() || f.sync_data().is_err() {
            return acked;
        }
        acked += 1;
        assert!(acked < 1 << 20, "the device never filled");
    }
}

/// The whole, correct records at the start of the file.
fn records_kept(path: &Path) -> u64 {
    let mut bytes = Vec::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_end(&mut bytes);
    }
    bytes
        .chunks_exact(RECORD)
        .enumerate()
        .take_while(|(i, r)| *r == record(*i as u64).as_slice())
        .count() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_write_errors_lose_no_acknowledged_change() {
    let test = "device_write_errors_lose_no_acknowledged_change";
    // The control: a plain write-fsync-acknowledge program on the same kind of device.
    let Some(control) = loop_disk(test) else {
        return;
    };
    let file: PathBuf = control.path().join("control.log");
    let acked = write_fsync_ack(&file);
    let report = control.grow_repair_remount();
    let kept = records_kept(&file);
    eprintln!("control: {acked} records acknowledged, {kept} kept after e2fsck:\n{report}");
    assert!(acked > 0, "the control acknowledged nothing");
    assert!(
        kept >= acked,
        "the plain write-fsync-acknowledge program lost {} acknowledged records on this device: \
         the device lies, so the server cannot be judged here",
        acked - kept
    );
    drop(control);

    let Some(disk) = loop_disk(test) else {
        return;
    };
    let data = disk.path().join("data");
    let mut server = Server::start_in(&data, &[]);
    // sled reuses its log's space as versions are superseded, so games alone take minutes
    // to fill the device: fill the tmpfs under the image instead, then give back a little,
    // so that the server's own writes are what run the device out of space.
    let filler = disk.tmpfs.path().join("filler");
    let written = fill(&filler);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .and_then(|f| f.set_len(written.saturating_sub(ROOM_LEFT)))
        .expect("give some room back");
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let c = server.client().await;
        writers.push(tokio::spawn(write_until_refused(c, w, stop.clone())));
    }
    let stopper = {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(180)).await;
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        })
    };
    let mut acked: Acked = Vec::new();
    let mut refusals = Vec::new();
    for w in writers {
        let (a, refused) = w.await.expect("a writer");
        acked.extend(a);
        refusals.extend(refused);
    }
    stopper.abort();
    assert!(
        !stop.load(std::sync::atomic::Ordering::Relaxed),
        "the device never filled in 180 s"
    );
    let moves: usize = acked.iter().map(|(_, m)| m.len()).sum();
    eprintln!(
        "server: {} games and {moves} moves acknowledged; refusals: {:?}",
        acked.len(),
        refusals
            .iter()
            .map(|s| format!("{:?} {}", s.code(), s.message()))
            .collect::<Vec<_>>()
    );
    // A device error is STORE_STOPPED (or DISK_FULL), never INTERNAL or a lie.
    for s in &refusals {
        assert!(
            matches!(
                s.code(),
                tonic::Code::Unavailable | tonic::Code::ResourceExhausted
            ),
            "{s:?}"
        );
    }
    let exit = server
        .wait_exit(Duration::from_secs(30))
        .expect("the server stops by itself once the device fails (fail-stop)");
    assert!(!exit.success(), "it exits non-zero: {exit:?}");
    drop(server);

    let report = disk.grow_repair_remount();
    eprintln!("e2fsck after the server:\n{report}");
    let restarted = Server::start_in(&data, &[]);
    let mut c = restarted.client().await;
    assert_every_ack_served(&mut c, &acked).await;
    drop(c);
    drop(restarted);
}
