use super::*;

const MIN: i64 = 60_000;
const GIB: u64 = 1 << 30;

fn settings() -> Settings {
    Settings { smoothing_ms: SMOOTHING_MS, stall_after_ms: 10 * MIN }
}

fn sample(minute: i64, pgs: i64, gib: Option<u64>) -> DrainSample {
    DrainSample { at: minute * MIN, pgs, bytes_left: gib.map(|g| g * GIB), blocked: None }
}

#[test]
fn a_steady_drain_gets_its_rate_and_eta_from_the_bytes() {
    // 1 GiB a minute, 100 GiB to go, PGs leaving unevenly.
    let s: Vec<DrainSample> = (0..=30).map(|m| sample(m, 90 - m * m / 12, Some(130 - m as u64))).collect();
    let e = estimate(&s, settings());
    assert_eq!(e.basis, Some(Basis::Bytes));
    assert!((e.bytes_per_s.unwrap() - GIB as f64 / 60.0).abs() < 1.0, "{e:?}");
    assert!((e.eta_s.unwrap() - 100.0 * 60.0).abs() < 1e-6, "{e:?}");
    assert_eq!((e.pgs_now, e.bytes_left, e.stalled), (Some(15), Some(100 * GIB), None));
}

#[test]
fn one_early_step_does_not_dominate_the_rate() {
    // A big PG leaves in the first minute, then 1 GiB/min for half an hour.
    let mut s = vec![sample(0, 50, Some(200)), sample(1, 49, Some(180))];
    s.extend((2..=30).map(|m| sample(m, 49, Some(181 - m as u64))));
    let r = estimate(&s, settings()).bytes_per_s.unwrap() * 60.0 / GIB as f64;
    assert!((1.0..1.5).contains(&r), "GiB/min {r}: the 20 GiB step has faded");
    let first = estimate(&s[..3], settings()).bytes_per_s.unwrap() * 60.0 / GIB as f64;
    assert!((first - 10.5).abs() < 1e-9, "the mean since the first sample: {first}");
}

#[test]
fn flat_data_grows_the_eta_then_stalls_with_the_clusters_reason() {
    let mut s: Vec<DrainSample> = (0..=20).map(|m| sample(m, 40 - m, Some(60 - 2 * m as u64))).collect();
    // From minute 20 nothing moves; at 26 the cluster says why.
    s.extend((21..=35).map(|m| sample(m, 20, Some(20))));
    s[26].blocked = Some("3 PGs backfill_toofull".into());
    let etas = replay(&s, settings());
    let flat: Vec<Option<f64>> = etas[20..].iter().map(|e| e.eta_s).collect();
    for pair in flat.windows(2) {
        if let [Some(a), Some(b)] = pair {
            assert!(b > a, "the ETA never shrinks while nothing moves: {flat:?}");
        }
    }
    let stalled_at = etas.iter().position(|e| e.stalled.is_some()).unwrap();
    assert_eq!(stalled_at, 30, "ten minutes after the last new low");
    assert!(etas[stalled_at..].iter().all(|e| e.eta_s.is_none() && e.stalled.is_some()));
    let last = etas.last().unwrap();
    assert_eq!(last.stalled, Some(Stall { since: 20 * MIN, reason: Some("3 PGs backfill_toofull".into()) }));
    // Moving again ends the stall.
    s.push(sample(36, 19, Some(19)));
    let moving = estimate(&s, settings());
    assert_eq!(moving.stalled, None);
    assert!(moving.eta_s.is_some());
}

#[test]
fn data_that_comes_back_is_a_stall_too() {
    // Someone set the weight back: PGs return, the remaining data rises.
    let mut s: Vec<DrainSample> = (0..=10).map(|m| sample(m, 30 - m, Some(30 - m as u64))).collect();
    s.extend((11..=22).map(|m| sample(m, 25, Some(26))));
    s[12].blocked = Some("osd.8's CRUSH weight was set to 1 by someone else".into());
    let e = estimate(&s, settings());
    assert_eq!(e.stalled.as_ref().map(|x| x.since), Some(10 * MIN));
    assert_eq!(e.stalled.unwrap().reason.as_deref(), Some("osd.8's CRUSH weight was set to 1 by someone else"));
    assert_eq!(e.eta_s, None);
    let (before, rising) = (estimate(&s[..11], settings()), estimate(&s[..12], settings()));
    assert!(rising.stalled.is_none(), "not yet: {rising:?}");
    assert!(rising.eta_s.unwrap() > before.eta_s.unwrap(), "data coming back lengthens the ETA: {rising:?}");
}

#[test]
fn an_old_reason_is_not_given_for_a_new_stall() {
    let mut s: Vec<DrainSample> = (0..=10).map(|m| sample(m, 30 - m, Some(30 - m as u64))).collect();
    s[3].blocked = Some("2 PGs backfill_toofull".into());
    s.extend((11..=25).map(|m| sample(m, 20, Some(20))));
    assert_eq!(estimate(&s, settings()).stalled, Some(Stall { since: 10 * MIN, reason: None }));
}

#[test]
fn without_bytes_pgs_and_when_done_zero() {
    // The field report's osd.15 without bytes: 186, 140 after 30 min, 76 after 2 h.
    let s = [sample(0, 186, None), sample(30, 140, None), sample(120, 76, None)];
    let e = estimate(&s, settings());
    assert_eq!(e.basis, Some(Basis::Pgs));
    let per_min = e.pgs_per_min.unwrap();
    assert!((per_min - 64.0 / 90.0).abs() < 1e-3, "the latest interval weighs nearly all: {per_min}");
    assert!((e.eta_s.unwrap() - 76.0 / per_min * 60.0).abs() < 1e-6);
    let done = estimate(&[sample(0, 5, Some(1)), sample(1, 0, Some(0))], settings());
    assert_eq!(done.eta_s, Some(0.0));
    // Only empty PGs left: no bytes, but not done; their own pace.
    let empty = estimate(&[sample(0, 10, Some(1)), sample(1, 4, Some(0))], settings());
    assert!((empty.eta_s.unwrap() - 40.0).abs() < 1e-9, "{empty:?}");
    assert_eq!(estimate(&s[..1], settings()), Estimate { pgs_now: Some(186), ..Estimate::default() });
    assert_eq!(format_duration(4920.0), "1h 22m");
}

#[test]
fn the_naive_rate_counts_pgs_since_the_start() {
    let now = sample(50, 65, None);
    assert_eq!(naive_pg_eta(91, 0, &now), Some(65.0 / (26.0 / 3000.0)));
    assert_eq!(naive_pg_eta(91, 0, &sample(50, 91, None)), None, "nothing moved yet");
}

#[test]
fn a_low_reading_while_pgs_remap_does_not_make_a_steady_fall_a_stall() {
    // The sandbox host drain: right after the reweight a reading from the old
    // mapping's stats was low, then the data showed whole and fell from there.
    let mut s = vec![sample(0, 15, Some(3)), sample(1, 15, Some(40))];
    s.extend((2..=20).map(|m| sample(m, 15 - m / 2, Some(40 - m as u64))));
    let e = estimate(&s, settings());
    assert_eq!(e.stalled, None, "falling for 19 minutes: {e:?}");
    // The same drain flat for the whole wait afterwards is stalled since its last fall.
    s.extend((21..=31).map(|m| sample(m, 5, Some(20))));
    assert_eq!(estimate(&s, settings()).stalled.map(|x| x.since), Some(20 * MIN));
}
