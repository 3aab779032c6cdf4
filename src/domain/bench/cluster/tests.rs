use super::*;

#[test]
fn requests_are_checked_field_by_field() {
    let b = new_run(None, None, None, Some("before swap".into()), false).unwrap();
    assert_eq!((b.own_pool, b.seconds, b.pg_num, b.label.as_deref()), (true, 60, 32, Some("before swap")));
    assert!(new_run(None, Some(0), None, None, false).unwrap_err().starts_with("seconds 0"));
    assert!(new_run(None, Some(4000), None, None, false).unwrap_err().starts_with("seconds 4000"));
    assert!(new_run(Some("rbd".into()), None, Some(256), None, false).unwrap_err().starts_with("pg_num is only"));
    assert!(new_run(None, None, Some(0), None, false).unwrap_err().starts_with("pg_num 0"));
    assert!(new_run(Some("a b".into()), None, None, None, false).unwrap_err().starts_with("pool \"a b\""));
    assert!(new_run(None, None, None, Some("x\ny".into()), false).unwrap_err().starts_with("label"));
    assert!(!new_run(Some("testbench".into()), None, None, None, false).unwrap().own_pool);
}

#[test]
fn phases_follow_each_other_and_failures_still_clean_up() {
    use ClusterPhase::*;
    let mut p = Queued;
    let mut walked = vec![p];
    while !p.is_finished() {
        p = next(p, false);
        walked.push(p);
    }
    assert_eq!(walked, vec![Queued, Preparing, Write, Seq, Rand, Cleaning, Done]);
    assert_eq!(next(Seq, true), Cleaning);
    assert_eq!(next(Cleaning, true), Failed);
    assert_eq!(next(Queued, true), Failed, "nothing was made: nothing to clean");
}

#[test]
fn a_pass_cut_off_is_not_repeated_but_the_cleanup_is() {
    let mut b = new_run(None, None, None, None, false).unwrap();
    b.phase = ClusterPhase::Write;
    let after = interrupted(b.clone(), BenchEffect::Pass(Pass::Write));
    assert_eq!(after.phase, ClusterPhase::Cleaning);
    assert!(after.failure.unwrap().contains("during the write phase"));
    b.phase = ClusterPhase::Cleaning;
    let after = interrupted(b.clone(), BenchEffect::CleanUp);
    assert_eq!((after.phase, after.failure), (ClusterPhase::Cleaning, None));
    b.phase = ClusterPhase::Queued;
    assert_eq!(interrupted(b.clone(), BenchEffect::Check), b, "a check only read: it runs again");
    b.phase = ClusterPhase::Preparing;
    assert_eq!(interrupted(b, BenchEffect::PreparePool).phase, ClusterPhase::Cleaning, "the pool may exist");
}

#[test]
fn each_phase_has_one_effect_and_its_outcome_moves_the_run_on() {
    let mut b = new_run(None, Some(1), None, None, false).unwrap();
    let mut effects = Vec::new();
    while let Some(e) = advance(&b).effect {
        effects.push(e.name());
        let out = match e {
            BenchEffect::Check => BenchOutput::Health("HEALTH_OK".into()),
            BenchEffect::PreparePool => BenchOutput::Shape(ClusterShape::default()),
            BenchEffect::Pass(pass) => BenchOutput::Pass(PassResult {
                pass,
                seconds: 1.0,
                ops: 10,
                op_size: 4 << 20,
                bandwidth_mb_s: 40.0,
                iops: 10.0,
                avg_latency_s: 0.1,
                max_latency_s: 0.2,
                min_latency_s: 0.05,
            }),
            BenchEffect::CleanUp => BenchOutput::CleanedUp,
        };
        b = apply(&b, &Outcome::Done(out));
    }
    assert_eq!(effects, ["bench-check", "bench-prepare", "bench-write", "bench-seq", "bench-rand", "bench-cleanup"]);
    assert_eq!((b.phase, b.results.len(), b.health.as_deref()), (ClusterPhase::Done, 3, Some("HEALTH_OK")));
    assert!(b.warnings.iter().any(|w| w.contains("too short")), "warnings follow the results: {:?}", b.warnings);
    for e in BenchEffect::ALL {
        assert_eq!(BenchEffect::parse(e.name()), Some(e));
    }
}

#[test]
fn a_failed_pass_still_cleans_up_and_ends_failed() {
    let mut b = new_run(None, None, None, None, false).unwrap();
    b.phase = ClusterPhase::Seq;
    let b = apply(&b, &Outcome::Failed("rados exited 1".into()));
    assert_eq!((b.phase, b.failure.as_deref()), (ClusterPhase::Cleaning, Some("rados exited 1")));
    let b = apply(&b, &Outcome::Done(BenchOutput::CleanedUp));
    assert_eq!(b.phase, ClusterPhase::Failed);
}
