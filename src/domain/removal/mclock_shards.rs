//! What else slows a drain on mClock, said when a fast drain starts: the
//! HDD shards (`boost.rs` holds the boost itself and the override trap).

use super::boost::{RecoveryNow, Scheduler};

/// mClock's HDD shards, in words, when they split an HDD OSD's recovery:
/// mClock gives each shard its part of the OSD's IOPS capacity, so with
/// Pacific's and early Reef's 5 shards × 1 thread a lone backfill gets a
/// fifth of the disk. Ceph 18.2.5 made it 1 shard × 5 threads (PR 59972);
/// an older OSD, or one configured so, is named with how to change it.
///
/// `hdd_osds`: whether the cluster has OSDs of class `hdd` at all (an SSD
/// OSD reports the HDD options too, and runs the SSD ones).
pub fn mclock_hdd_shards(now: &RecoveryNow, hdd_osds: bool) -> Option<String> {
    if !hdd_osds || now.scheduler() != Scheduler::Mclock {
        return None;
    }
    // A fixed count for every class wins over the HDD one.
    if now.number("osd_op_num_shards").is_some_and(|n| n > 0) {
        return None;
    }
    let shards = now.number("osd_op_num_shards_hdd").filter(|&n| n > 1)?;
    let threads = now.number("osd_op_num_threads_per_shard_hdd").unwrap_or(1);
    Some(format!(
        "HDD OSDs run mClock with osd_op_num_shards_hdd = {shards} (× {threads} thread(s)): each shard gets \
         1/{shards} of the disk's IOPS capacity, which slows a drain from HDDs; Ceph 18.2.5 runs 1 shard × 5 \
         threads (`ceph config set osd osd_op_num_shards_hdd 1` and `osd_op_num_threads_per_shard_hdd 5`, \
         applied when each OSD restarts)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::removal::boost::Running;

    /// A wpq OSD with nothing else said.
    fn wpq() -> RecoveryNow {
        RecoveryNow { probe: 1, running: running(&[("osd_op_queue", "wpq", "default")]), database: vec![] }
    }

    fn running(values: &[(&str, &str, &str)]) -> Vec<Running> {
        values
            .iter()
            .map(|(n, v, s)| Running { name: n.to_string(), value: v.to_string(), source: s.to_string() })
            .collect()
    }

    #[test]
    fn mclock_hdd_shards_of_reef_before_18_2_5_are_named_and_18_2_5s_are_not() {
        let mut now = wpq();
        now.running = running(&[
            ("osd_op_queue", "mclock_scheduler", "default"),
            ("osd_op_num_shards", "0", "default"),
            ("osd_op_num_shards_hdd", "5", "default"),
            ("osd_op_num_threads_per_shard_hdd", "1", "default"),
        ]);
        let said = mclock_hdd_shards(&now, true).expect("18.2.4's defaults split the disk");
        assert!(said.starts_with("HDD OSDs run mClock with osd_op_num_shards_hdd = 5 (× 1 thread(s))"), "{said}");
        now.running[2].value = "1".into();
        now.running[3].value = "5".into();
        assert_eq!(mclock_hdd_shards(&now, true), None, "18.2.5's defaults");
        now.running[2].value = "5".into();
        now.running[1].value = "8".into();
        assert_eq!(mclock_hdd_shards(&now, true), None, "a count for every class wins");
        now.running[1].value = "0".into();
        assert!(mclock_hdd_shards(&now, true).is_some());
        assert_eq!(mclock_hdd_shards(&now, false), None, "an all-flash cluster runs the SSD shards");
        let mut wpq = wpq();
        wpq.running.push(Running { name: "osd_op_num_shards_hdd".into(), value: "5".into(), source: "default".into() });
        assert_eq!(mclock_hdd_shards(&wpq, true), None, "wpq has no per-shard capacity");
    }
}
