//! The drain ETA on the field report's timeline, sample by sample: the
//! estimate (`domain::progress`, from the bytes still to move, smoothed)
//! and a naive PG-count rate since the drain began, each beside the time
//! that was actually left. Prints the Markdown table BENCHMARKS.md holds.
//!
//!     cargo run --example drain_eta

use osdkeeper::domain::progress::field_report::timelines;
use osdkeeper::domain::progress::{format_duration, naive_pg_eta, replay, Settings, SMOOTHING_MS};

fn main() {
    // The daemon's default stall time (removal.stall_after_s: 600).
    let settings = Settings { smoothing_ms: SMOOTHING_MS, stall_after_ms: 600_000 };
    println!("| OSD | sample (UTC) | PGs left | GiB left | actually left | estimate (basis) | error | naive PG rate | error |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for t in timelines() {
        for (s, e) in t.samples.iter().zip(replay(&t.samples, settings)) {
            let actual = (t.ended_at - s.at) as f64 / 1000.0;
            let cell = |eta: Option<f64>| match eta {
                Some(x) => (format_duration(x), format!("{:+.0} %", (x - actual) / actual * 100.0)),
                None => ("—".into(), "—".into()),
            };
            let (est, est_err) = cell(e.eta_s);
            let (naive, naive_err) = cell(naive_pg_eta(t.pgs_at_start, t.started_at, s));
            let clock = chrono::DateTime::from_timestamp_millis(s.at).map(|d| d.format("%H:%M:%S").to_string());
            println!(
                "| osd.{} | {} | {} | {} | {} | {est}{} | {est_err} | {naive} | {naive_err} |",
                t.osd,
                clock.unwrap_or_default(),
                s.pgs,
                s.bytes_left.map_or("—".into(), |b| format!("{:.0}", b as f64 / (1u64 << 30) as f64)),
                format_duration(actual),
                e.basis.map_or(String::new(), |b| format!(" ({})", b.as_str())),
            );
        }
    }
}
