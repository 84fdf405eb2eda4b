//! Connections and one run of callers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::transport::{Channel, Endpoint};

use crate::args::{Args, ClientKind, Connections, Rpc};
use crate::caller::Caller;
use crate::positions::suite_positions;
use crate::report::Report;

/// `count` connections (at least one a target), to the targets in turn.
pub(crate) async fn connect(targets: &[String], count: usize) -> Result<Vec<Channel>, String> {
    let endpoints = targets
        .iter()
        .map(|t| Endpoint::from_shared(t.clone()).map_err(|e| format!("bad --target {t}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    if endpoints.is_empty() {
        return Err("no --target".into());
    }
    let count = count.max(endpoints.len());
    let mut channels = Vec::with_capacity(count);
    for i in 0..count {
        let endpoint = &endpoints[i % endpoints.len()];
        channels.push(
            endpoint
                .connect()
                .await
                .map_err(|e| format!("cannot connect to {}: {e}", targets[i % targets.len()]))?,
        );
    }
    Ok(channels)
}

pub(crate) async fn run(
    args: &Args,
    rpc: Rpc,
    client: ClientKind,
    mode: Connections,
    concurrency: usize,
) -> Result<Report, String> {
    let channels = connect(&args.target, mode.count(concurrency)).await?;
    let positions = Arc::new(suite_positions());
    let mut callers = Vec::with_capacity(concurrency);
    for i in 0..concurrency {
        let channel = channels[i % channels.len()].clone();
        let mut caller = Caller::new(
            channel,
            args,
            rpc,
            positions.clone(),
            client,
            0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
        )
        .await
        .map_err(|e| format!("setting up caller {i}: {e}"))?;
        caller.watcher = Some(channels[(i + 1) % channels.len()].clone());
        callers.push(caller);
    }
    let warmup = Duration::from_secs_f64(args.warmup);
    let measured = Duration::from_secs_f64(args.duration);
    let start = Instant::now() + Duration::from_millis(50);
    let measure_from = start + warmup;
    let end = measure_from + measured;
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let mut tasks = Vec::with_capacity(concurrency);
    for mut caller in callers {
        let first_error = first_error.clone();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(start.into()).await;
            let mut latencies = Vec::with_capacity(1 << 16);
            let mut errors = 0u64;
            let mut bytes = 0u64;
            loop {
                let t0 = Instant::now();
                if t0 >= end {
                    break;
                }
                let result = caller.call(rpc).await;
                let t1 = Instant::now();
                if t0 < measure_from || t1 > end {
                    continue;
                }
                match result {
                    Ok(n) => {
                        latencies.push((t1 - t0).as_nanos() as u64);
                        bytes += n;
                    }
                    Err(status) => {
                        errors += 1;
                        if let Ok(mut first) = first_error.lock() {
                            first.get_or_insert_with(|| {
                                format!("{:?}: {}", status.code(), status.message())
                            });
                        }
                    }
                }
            }
            (latencies, errors, bytes)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut answer_bytes = 0;
    for task in tasks {
        let (l, e, b) = task
            .await
            .map_err(|e| format!("a caller task failed: {e}"))?;
        latencies.extend(l);
        errors += e;
        answer_bytes += b;
    }
    latencies.sort_unstable();
    let first_error = first_error.lock().map(|e| e.clone()).unwrap_or_default();
    Ok(Report {
        rpc,
        client,
        concurrency,
        mode,
        seconds: measured.as_secs_f64(),
        ok: latencies.len() as u64,
        errors,
        first_error,
        latencies,
        answer_bytes,
    })
}
