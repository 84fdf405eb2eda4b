//! The process's own figures for the standard `process_*` metrics, read from `/proc/self`
//! at each scrape (Linux; elsewhere every figure is absent and the metric left out).
//! Each is read on its own: one that cannot be read (no descriptor left to open the
//! file, while descriptors run out) leaves out that metric alone.

use std::time::{SystemTime, UNIX_EPOCH};

/// Clock ticks per second of `/proc/*/stat` times: the kernel's USER_HZ, which is 100 on
/// every Linux architecture (the kernel scales to it whatever its internal HZ).
const USER_HZ: f64 = 100.0;

/// What could be read; `None` for what could not.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProcessStats {
    /// User and system CPU time, in seconds.
    pub cpu_seconds: Option<f64>,
    /// Resident set size, in bytes.
    pub resident_bytes: Option<u64>,
    /// Virtual memory size, in bytes.
    pub virtual_bytes: Option<u64>,
    /// Open file descriptors.
    pub open_fds: Option<u64>,
    /// The soft limit of open file descriptors.
    pub max_fds: Option<u64>,
    /// OS threads.
    pub threads: Option<u64>,
    /// Start of the process, in seconds since the Unix epoch.
    pub start_time_seconds: Option<f64>,
}

/// Reads the figures now.
pub fn read() -> ProcessStats {
    let mut p = ProcessStats::default();
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        // The command name (field 2) may hold spaces: count fields after its ')'.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        // `fields[0]` is field 3 (state): field N is fields[N - 3].
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
        if let (Some(utime), Some(stime)) = (field(14), field(15)) {
            p.cpu_seconds = Some((utime + stime) as f64 / USER_HZ);
        }
        p.virtual_bytes = field(23);
        if let (Some(start_ticks), Some(boot)) = (field(22), boot_time()) {
            p.start_time_seconds = Some(boot + start_ticks as f64 / USER_HZ);
        }
    }
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        for line in status.lines() {
            if let Some(kb) = line.strip_prefix("VmRSS:") {
                p.resident_bytes = kib(kb);
            } else if let Some(n) = line.strip_prefix("Threads:") {
                p.threads = n.trim().parse().ok();
            }
        }
    }
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        // Less the descriptor of the listing itself.
        p.open_fds = Some(dir.count().saturating_sub(1) as u64);
    }
    if let Ok(limits) = std::fs::read_to_string("/proc/self/limits") {
        p.max_fds = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|soft| soft.parse().ok());
    }
    p
}

/// "  1234 kB" as bytes.
fn kib(text: &str) -> Option<u64> {
    let n: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(n * 1024)
}

/// The boot time in seconds since the Unix epoch: `btime` of `/proc/stat`, else now less
/// the uptime.
fn boot_time() -> Option<f64> {
    if let Ok(stat) = std::fs::read_to_string("/proc/stat")
        && let Some(btime) = stat
            .lines()
            .find_map(|l| l.strip_prefix("btime "))
            .and_then(|b| b.trim().parse::<u64>().ok())
    {
        return Some(btime as f64);
    }
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
    Some(now.as_secs_f64() - uptime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_has_figures() {
        let p = read();
        assert!(p.resident_bytes.is_some_and(|b| b > 0), "{p:?}");
        assert!(p.open_fds.is_some_and(|n| n >= 3), "{p:?}");
        assert!(p.max_fds.is_some_and(|n| n > 0), "{p:?}");
        assert!(p.cpu_seconds.is_some(), "{p:?}");
        assert!(p.threads.is_some_and(|n| n >= 1), "{p:?}");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_secs_f64();
        let start = p.start_time_seconds.expect("a start time");
        assert!(
            start <= now + 1.0 && start > now - 86_400.0 * 365.0,
            "{p:?}"
        );
    }
}
