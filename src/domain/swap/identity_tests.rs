//! The in-place way and the free bay against another OSD at an old OSD's
//! id, and another disk in the in-place way's bay.

use super::tests::{calm, deployed, disk, in_place, run, swap, uuid};
use super::*;
use crate::domain::cluster::Verdict;

/// Another OSD at an old OSD's id (its uuid): the in-place way ends before
/// any noout, stop or destroy of it; the free bay unwinds before its weights.
#[test]
fn another_uuid_at_an_old_osds_id_ends_the_swap_acting_on_nothing_of_it() {
    let mut taken = calm();
    taken.osds[0].uuid = Some("9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a".into());
    taken.ok_to_stop = Some(Verdict::yes());
    for phase in [Phase::Queued, Phase::Noout, Phase::Stopping, Phase::Destroying] {
        let mut o = taken.clone();
        o.osds[0].up = phase != Phase::Destroying;
        let st = run(&in_place(phase), &o);
        assert_eq!((st.next.phase, st.effect.clone()), (Phase::Failed, None), "{phase:?}: {st:?}");
        let ending = st.next.ending.unwrap();
        assert!(ending.starts_with("superseded: osd.8 is now another OSD (uuid 9f1e2d3c-"), "{ending}");
        assert!(ending.ends_with("nothing more was done to it"), "{ending}");
    }
    let (s, mut o) = deployed(swap(Phase::Settling));
    o.osds[0].uuid = taken.osds[0].uuid.clone();
    o.pgs = Some(vec![]);
    let st = run(&s, &o);
    assert!(!matches!(st.effect, Some(Effect::SetWeights { .. })), "{st:?}");
    assert!(st.next.failure.unwrap().starts_with("superseded: osd.8 is now another OSD"));
    // The new OSD that takes the destroyed id in place is the swap's own.
    let mut mine = calm();
    mine.osds[0] = OsdSeen { uuid: Some("new-osd-8".into()), ..mine.osds[0].clone() };
    mine.short_pgs = Some(0);
    assert_eq!(run(&in_place(Phase::Recovering), &mine).next.phase, Phase::Done);
}

/// The bay holds another disk than the old one when the zap comes (the old
/// one pulled, a used one pushed in): it is never wiped, and it is not
/// taken for the new disk either; the swap waits and says what is there.
#[test]
fn in_place_never_zaps_another_disk_in_the_bay() {
    let mut o = calm();
    o.osds[0] = OsdSeen { up: false, destroyed: true, uuid: None, ..o.osds[0].clone() };
    o.disks = vec![disk("/dev/sdd", "USED-ELSEWHERE", Some("1d0c2e4a"))];
    let st = run(&in_place(Phase::Zapping), &o);
    assert_eq!((st.next.phase, st.effect), (Phase::AwaitingDisk, None));
    assert_eq!(
        st.next.passed_over,
        [(
            "/dev/sdd".to_string(),
            "another disk is there (USED-ELSEWHERE), and it holds an LV of osd.8 (fsid 1d0c2e4a)".into()
        )]
    );
    let waiting = st.waiting_on.unwrap();
    assert!(
        waiting.contains("the disk in /dev/sdd is not blank") && waiting.contains("never wipes a used disk"),
        "{waiting}"
    );
    // The old disk, holding another OSD's volumes now (no serial to tell it by): left alone too.
    let mut s = in_place(Phase::Zapping);
    s.olds[0].device_ids = vec![String::new()];
    o.disks = vec![disk("/dev/sdd", "", Some("1d0c2e4a"))];
    let st = run(&s, &o);
    assert_eq!(st.effect, None, "{st:?}");
    // Its own volumes on it: zapped, naming the old OSD and the disk.
    o.disks = vec![disk("/dev/sdd", "", Some(&uuid(8)))];
    assert_eq!(run(&s, &o).effect, Some(Effect::Zap { path: "/dev/sdd".into() }));
    let e = zap_expect(&s, "/dev/sdd", Some("c1"));
    assert_eq!((e.device_id.as_str(), e.osd_fsids, e.cluster_fsid), ("", Some(vec![uuid(8)]), Some("c1".into())));
    // Refused by the agent (a label of another OSD): passed over, not retried.
    let refused = apply(
        &s,
        &Effect::Zap { path: "/dev/sdd".into() },
        &crate::domain::operation::Outcome::<()>::Refused("x".into()),
    );
    assert_eq!(refused.passed_over, [("/dev/sdd".to_string(), "x".to_string())]);
    assert_eq!(run(&refused, &o).next.phase, Phase::AwaitingDisk);
    // Nothing in the bay: no zap is asked of a path with no disk.
    o.disks.clear();
    assert!(run(&s, &o).waiting_on.unwrap().contains("no disk at /dev/sdd"));
}
