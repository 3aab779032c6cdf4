//! The last-copy gate of an in-place removal (`gate::last_copy`): right
//! before the stop, the destroy and the zap, a fresh read of every PG's
//! copies; each act waits while the cluster is worse than accepted.

use super::tests::{healthy, in_place, run};
use super::*;
use crate::domain::copies::{Copies, Pg, Pool};

/// Pool 'rbd' (size 2, min_size 1), its two PGs with these acting sets,
/// the OSDs `down` down.
fn copies(acting: [&[u32]; 2], down: &[u32]) -> Option<Result<Copies, String>> {
    let pg = |i: usize| Pg { pgid: format!("2.{i}"), pool: 2, acting: acting[i].to_vec() };
    let pool = Pool { id: 2, name: "rbd".into(), size: 2, min_size: 1, data_shards: 1, pg_num: 2 };
    Some(Ok(Copies { pgs: vec![pg(0), pg(1)], pools: vec![pool], down: down.to_vec() }))
}

/// An act's name, the operation and what it saw, the effect, the acting sets.
type Act = (&'static str, Removal, Observation, Effect, [&'static [u32]; 2]);

/// Each act of an in-place removal as its phase asks for it, with osd.4's
/// PG 2.0 holding its other copy on osd.1 and 2.1 on osd.5: the stop
/// (osd.4 up, in 2.0's acting set), the destroy and the zap (osd.4 down,
/// out of the acting sets).
fn acts() -> Vec<Act> {
    let mut down = healthy();
    (down.up, down.noout, down.daemon_running) = (false, true, Some(false));
    let mut destroyed = down.clone();
    (destroyed.destroyed, destroyed.uuid) = (true, None);
    let mut stopping = healthy();
    stopping.noout = true;
    vec![
        ("the stop of osd.4", in_place(Phase::Stopping), stopping, Effect::StopDaemon, [&[4, 1], &[4, 5]]),
        ("the destroy of osd.4", in_place(Phase::Destroying), down, Effect::Destroy, [&[1], &[5]]),
        (
            "the zap of /dev/loop4",
            in_place(Phase::Zapping),
            destroyed,
            Effect::Zap { path: "/dev/loop4".into() },
            [&[1], &[5]],
        ),
    ]
}

#[test]
fn no_act_of_an_in_place_removal_leaves_a_pg_without_a_copy_whatever_it_accepted() {
    for (act, mut r, mut o, effect, acting) in acts() {
        r.in_place = Some(InPlace { accept_inactive: true, accept_single_copy: true });
        o.copies = copies(acting, &[]);
        assert_eq!(run(&r, &o).effect, Some(effect.clone()), "{act}: one copy each, accepted");
        // osd.1, holding 2.0's other copy, fails meanwhile.
        o.copies = copies(acting, &[1]);
        let s = run(&r, &o);
        assert_eq!((s.effect.clone(), s.next.phase), (None, r.phase), "{act}: {s:?}");
        let why = format!(
            "{act} waits: pool 'rbd' (size 2, min_size 1): 1 PG with no copy left (2.0); no flag accepts a PG's last \
             copy; it goes on once the OSDs holding the other copies are back"
        );
        assert_eq!(
            (s.waiting_on.as_deref(), s.next.last_copy_hold.as_deref()),
            (Some(why.as_str()), Some(why.as_str()))
        );
        // Back: the act goes ahead, the hold is lifted.
        o.copies = copies(acting, &[]);
        let s = run(&s.next, &o);
        assert_eq!((s.effect, s.next.last_copy_hold), (Some(effect), None), "{act}");
    }
}

#[test]
fn an_in_place_act_waits_for_single_copy_unless_it_was_accepted_and_never_acts_on_a_guess() {
    for (act, r, mut o, effect, acting) in acts() {
        o.copies = copies(acting, &[]);
        let s = run(&r, &o);
        assert_eq!(s.effect, None, "{act}: single copy was not accepted");
        assert!(s.waiting_on.unwrap().contains("2 PGs with one copy left (2.0, 2.1); not accepted when it was"));
        o.copies = Some(Err("`ceph pg dump pgs_brief` did not finish within 30 s".into()));
        let mut accepting = r.clone();
        accepting.in_place = Some(InPlace { accept_inactive: false, accept_single_copy: true });
        let s = run(&accepting, &o);
        assert_eq!(s.effect, None, "{act}: the PG map unreadable");
        assert!(s.next.last_copy_hold.unwrap().contains("the PG map cannot be read (`ceph pg dump pgs_brief`"));
        o.copies = None;
        let s = run(&accepting, &o);
        assert_eq!((s.effect, s.next.last_copy_hold), (None, None), "{act}: not read yet, no hold announced");
        o.copies = copies(acting, &[]);
        assert_eq!(run(&accepting, &o).effect, Some(effect));
    }
}

#[test]
fn the_copies_are_asked_in_place_right_before_each_act_and_only_then() {
    for (act, r, o, _, _) in acts() {
        assert!(questions(&r, &o).copies, "{act}");
        let mut drained = r.clone();
        drained.in_place = None;
        assert!(!questions(&drained, &o).copies, "{act}: a drained removal has safe-to-destroy");
    }
    let mut purged_outside = healthy();
    purged_outside.exists = false;
    assert!(questions(&in_place(Phase::Zapping), &purged_outside).copies, "its disk is zapped all the same");
    for phase in [Phase::Queued, Phase::Rejoining] {
        assert!(!questions(&in_place(phase), &healthy()).copies, "{phase:?}");
    }
    let mut no_zap = in_place(Phase::Zapping);
    no_zap.zap = false;
    assert!(!questions(&no_zap, &healthy()).copies);
}

/// Other effects of an in-place removal are not held: `noout` set again
/// while the PGs are short keeps their copies where they are.
#[test]
fn noout_is_set_again_while_an_act_is_held() {
    let (_, mut r, mut o, _, acting) = acts().remove(1);
    o.copies = copies(acting, &[1]);
    let held = run(&r, &o);
    assert!(held.next.last_copy_hold.is_some());
    r = held.next;
    o.noout = false;
    let s = run(&r, &o);
    assert_eq!(s.effect, Some(Effect::Noout { on: true }));
    assert!(s.next.last_copy_hold.is_some(), "still held: lifted only when the act goes ahead");
}
