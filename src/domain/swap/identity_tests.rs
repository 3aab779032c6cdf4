//! The in-place way and the free bay against another OSD at an old OSD's
//! id, and another disk in the in-place way's bay. Once an in-place swap's
//! removal is stored, the removal's own gates hold its acts on the OSD
//! and its disk (`domain/removal/gate.rs`, `removal::zap_expect`).

use super::tests::{calm, deployed, disk, in_place, removal, run, swap};
use super::*;
use crate::domain::removal::Phase as RemovalPhase;

/// Another OSD at an old OSD's id (its uuid): the in-place way ends before
/// its removal is stored; the free bay unwinds before its weights.
#[test]
fn another_uuid_at_an_old_osds_id_ends_the_swap_acting_on_nothing_of_it() {
    let mut taken = calm();
    taken.osds[0].uuid = Some("9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a".into());
    taken.removals = Some(vec![]);
    for phase in [Phase::Queued, Phase::Retiring] {
        let st = run(&in_place(phase), &taken);
        assert_eq!((st.next.phase, st.effect.clone()), (Phase::Failed, None), "{phase:?}: {st:?}");
        let ending = st.next.ending.unwrap();
        assert!(ending.starts_with("superseded: osd.8 is now another OSD (uuid 9f1e2d3c-"), "{ending}");
        assert!(ending.ends_with("nothing more was done to it"), "{ending}");
    }
    // Stored: the removal's gate ends the removal, and the swap with its words.
    taken.removals = Some(vec![removal(RemovalPhase::Queued)]);
    assert_eq!(run(&in_place(Phase::Retiring), &taken).next.phase, Phase::Retiring);
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
    mine.removals = Some(vec![removal(RemovalPhase::Done)]);
    assert_eq!(run(&in_place(Phase::Recovering), &mine).next.phase, Phase::Done);
}

/// A used disk in the bay once the old one is destroyed and zapped (the
/// old one pulled, a used one pushed in; the removal passed it over: not
/// its disk): never wiped by the swap, nor taken for the new disk; the
/// swap waits and says what is there.
#[test]
fn in_place_never_takes_or_wipes_a_used_disk_in_the_bay() {
    let mut o = calm();
    o.osds[0] = OsdSeen { up: false, destroyed: true, uuid: None, ..o.osds[0].clone() };
    o.disks = vec![disk("/dev/sdd", "USED-ELSEWHERE", Some("1d0c2e4a"))];
    o.removals = Some(vec![removal(RemovalPhase::Rejoining)]);
    let st = run(&in_place(Phase::Retiring), &o);
    assert_eq!((st.next.phase, st.effect), (Phase::AwaitingDisk, None));
    assert_eq!(
        st.next.passed_over,
        [(
            "/dev/sdd".to_string(),
            "a used disk is in the slot (USED-ELSEWHERE): it holds an LV of osd.8 (fsid 1d0c2e4a)".into()
        )]
    );
    let waiting = st.waiting_on.unwrap();
    assert!(
        waiting.contains("the disk in /dev/sdd is not blank") && waiting.contains("never wipes a used disk"),
        "{waiting}"
    );
    // Without a serial, at the old disk's own path: it cannot be told from the old one, and is not taken.
    let mut s = in_place(Phase::AwaitingDisk);
    s.olds[0].device_ids = vec![String::new()];
    o.disks = vec![disk("/dev/sdd", "", Some("1d0c2e4a"))];
    let st = run(&s, &o);
    assert_eq!((st.next.phase, st.effect.clone()), (Phase::AwaitingDisk, None), "{st:?}");
}
