//! The last-copy gate of the in-place swap (`gate::last_copy`): right
//! before the stop, the destroy and each zap, a fresh read of every PG's
//! copies; each act waits while the cluster is worse than accepted.

use super::tests::{calm, disk, in_place, run, uuid};
use super::*;
use crate::domain::copies::{Copies, Pg, Pool};

/// Pool 'rbd' (size 2, min_size 1), its two PGs with these acting sets,
/// the OSDs `down` down.
fn copies(acting: [&[u32]; 2], down: &[u32]) -> Option<Result<Copies, String>> {
    let pg = |i: usize| Pg { pgid: format!("1.{i}"), pool: 1, acting: acting[i].to_vec() };
    let pool = Pool { id: 1, name: "rbd".into(), size: 2, min_size: 1, data_shards: 1, pg_num: 2 };
    Some(Ok(Copies { pgs: vec![pg(0), pg(1)], pools: vec![pool], down: down.to_vec() }))
}

fn risk(single_copy: bool, inactive: bool) -> Risk {
    Risk {
        pgs_degraded: 2,
        bytes: 20,
        accepted: vec![],
        window_s: None,
        making_s: None,
        accept_inactive: inactive,
        accept_single_copy: single_copy,
    }
}

/// An act's name, the operation and what it saw, the effect, the acting sets.
type Act = (&'static str, Swap, Observation, Effect, [&'static [u32]; 2]);

/// Each act of the in-place way as its phase asks for it: osd.8's PG 1.0
/// holds its other copy on osd.3, 1.1 on osd.15.
fn acts() -> Vec<Act> {
    let mut stopping = calm();
    stopping.osds[0].noout = true;
    let mut down = stopping.clone();
    down.osds[0].up = false;
    let mut destroyed = down.clone();
    (destroyed.osds[0].destroyed, destroyed.osds[0].uuid) = (true, None);
    destroyed.disks = vec![disk("/dev/sdd", "HDD-8", Some(&uuid(8)))];
    let zap = Effect::Zap { path: "/dev/sdd".into() };
    vec![
        ("the stop of osd.8", in_place(Phase::Stopping), stopping, Effect::StopDaemon { osd: 8 }, [&[8, 3], &[8, 15]]),
        ("the destroy of osd.8", in_place(Phase::Destroying), down, Effect::Destroy { osd: 8 }, [&[3], &[15]]),
        ("the zap of /dev/sdd", in_place(Phase::Zapping), destroyed, zap, [&[3], &[15]]),
    ]
}

#[test]
fn no_act_of_an_in_place_swap_leaves_a_pg_without_a_copy_whatever_it_accepted() {
    for (act, mut s, mut o, effect, acting) in acts() {
        s.risk = Some(risk(true, true));
        o.copies = copies(acting, &[]);
        assert_eq!(run(&s, &o).effect, Some(effect.clone()), "{act}: one copy each, accepted");
        o.copies = copies(acting, &[3]);
        let st = run(&s, &o);
        assert_eq!((st.effect.clone(), st.next.phase), (None, s.phase), "{act}: {st:?}");
        let why = format!(
            "{act} waits: pool 'rbd' (size 2, min_size 1): 1 PG with no copy left (1.0); no flag accepts a PG's last \
             copy; it goes on once the OSDs holding the other copies are back"
        );
        assert_eq!(
            (st.waiting_on.as_deref(), st.next.last_copy_hold.as_deref()),
            (Some(why.as_str()), Some(why.as_str()))
        );
        o.copies = copies(acting, &[]);
        let st = run(&st.next, &o);
        assert_eq!((st.effect, st.next.last_copy_hold), (Some(effect), None), "{act}");
    }
}

#[test]
fn an_in_place_swap_waits_for_single_copy_unless_it_was_accepted_and_never_acts_on_a_guess() {
    for (act, mut s, mut o, effect, acting) in acts() {
        s.risk = Some(risk(false, true));
        o.copies = copies(acting, &[]);
        let st = run(&s, &o);
        assert_eq!(st.effect, None, "{act}: single copy was not accepted");
        assert!(st.waiting_on.unwrap().contains("2 PGs with one copy left (1.0, 1.1); not accepted when it was"));
        s.risk = Some(risk(true, false));
        o.copies = Some(Err("`ceph osd dump` failed (exit 1): connection refused".into()));
        assert_eq!(run(&s, &o).effect, None, "{act}: the PG map unreadable");
        o.copies = None;
        let st = run(&s, &o);
        assert_eq!((st.effect, st.next.last_copy_hold), (None, None), "{act}: not read yet, no hold announced");
        o.copies = copies(acting, &[]);
        assert_eq!(run(&s, &o).effect, Some(effect));
    }
    // The free bay destroys nothing itself: never held.
    let mut free = calm();
    free.copies = None;
    assert!(run(&super::tests::swap(Phase::Queued), &free).next.last_copy_hold.is_none());
}
