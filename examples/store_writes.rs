//! The latency of one write of the daemon's store, on a local file and on
//! a database kept in RADOS: N event-log entries, each its own
//! transaction (what every step of an operation costs at least), then N
//! reads of the log's newest entries. Prints one Markdown row.
//!
//!     cargo run --release --example store_writes -- DB [N]
//!
//! DB is a file or `ceph:POOL/NAMESPACE/NAME` (its pool must exist, and
//! `CEPH_CONF` name the cluster, as for `osdkeeper serve`).

use std::time::{Duration, Instant};

use osdkeeper::domain::event::{EventKind, Level};
use osdkeeper::store::location::DbLocation;
use osdkeeper::store::{NewEvent, Store};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let db = args.next().expect("usage: store_writes DB [N]");
    let n: usize = args.next().map(|s| s.parse().expect("N is a count")).unwrap_or(1000);
    let location = DbLocation::parse(&db).unwrap_or_else(|e| panic!("{e}"));
    let store = match &location {
        DbLocation::File(path) => Store::open(path).await,
        // No effect goes out here, so nothing asks the lease: any bound.
        DbLocation::Rados(r) => Store::open_rados(r, |why| panic!("lost the lock: {why}"), Duration::MAX).await,
    }
    .unwrap_or_else(|e| panic!("cannot open {location}: {e}"));
    let mut writes = Vec::with_capacity(n);
    let started = Instant::now();
    for i in 0..n {
        let event = NewEvent {
            level: Level::Info,
            kind: EventKind::HostAdded,
            host: Some(format!("bench-{}", i % 50)),
            subject: None,
            message: format!("store write {i}"),
            actor: None,
        };
        let t = Instant::now();
        store.add_events(vec![event], i as i64).await.unwrap_or_else(|e| panic!("write {i}: {e}"));
        writes.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let total = started.elapsed().as_secs_f64();
    let mut reads = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        store.events(None, 20).await.unwrap_or_else(|e| panic!("read: {e}"));
        reads.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    store.close().await;
    writes.sort_by(f64::total_cmp);
    reads.sort_by(f64::total_cmp);
    let mean = writes.iter().sum::<f64>() / n as f64;
    println!("| store | writes | mean ms | p50 ms | p99 ms | writes/s | read (20 newest) p50 ms | p99 ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {location} | {n} | {mean:.2} | {:.2} | {:.2} | {:.0} | {:.3} | {:.3} |",
        percentile(&writes, 0.5),
        percentile(&writes, 0.99),
        n as f64 / total,
        percentile(&reads, 0.5),
        percentile(&reads, 0.99)
    );
}
