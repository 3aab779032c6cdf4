use super::*;

fn replicated(size: u32, min_size: u32) -> Pool {
    Pool { id: 2, name: "rbd".into(), size, min_size, data_shards: 1, pg_num: 1 }
}

/// An erasure-coded pool of k data and m coding shards.
fn erasure(k: u32, m: u32, min_size: u32) -> Pool {
    Pool { id: 3, name: "ec".into(), size: k + m, min_size, data_shards: k, pg_num: 1 }
}

/// Every class, from a PG's acting set with osd.4 leaving and some OSDs
/// down: replicated size 2 and 3 with min_size 1 and 2, erasure-coded
/// k=2 m=1 and k=4 m=2 (their default min_size k+1, and one lowered to k).
/// A pool, a PG's acting set, the OSDs leaving and the class expected.
type Case = (Pool, &'static [u32], &'static [u32], Option<Class>);

#[test]
fn each_pool_kind_classes_a_pg_by_the_copies_it_keeps() {
    use Class::*;
    let cases: [Case; 22] = [
        (replicated(2, 1), &[4, 1], &[], Some(SingleCopy)),
        (replicated(2, 1), &[4, 1], &[1], Some(Lost)),
        (replicated(2, 1), &[1, 5], &[], None),
        (replicated(2, 1), &[1, 5], &[5], Some(SingleCopy)),
        (replicated(2, 2), &[4, 1], &[], Some(Inactive)),
        (replicated(2, 2), &[4, 1], &[1], Some(Lost)),
        (replicated(3, 2), &[4, 1, 2], &[], None),
        (replicated(3, 2), &[4, 1, 2], &[1], Some(Inactive)),
        (replicated(3, 2), &[4, 1, 2], &[1, 2], Some(Lost)),
        (replicated(3, 1), &[4, 1, 2], &[2], Some(SingleCopy)),
        (replicated(1, 1), &[1], &[], None),
        (replicated(1, 1), &[4], &[], Some(Lost)),
        // k=2 m=1, min_size 3: one shard gone leaves k, below min_size.
        (erasure(2, 1, 3), &[4, 1, 2], &[], Some(Inactive)),
        (erasure(2, 1, 3), &[4, 1, 2], &[1], Some(Lost)),
        (erasure(2, 1, 2), &[4, 1, 2], &[], Some(SingleCopy)),
        // A shard missing already (CRUSH_ITEM_NONE, left out of the set).
        (erasure(2, 1, 2), &[1, 4], &[], Some(Lost)),
        (erasure(4, 2, 5), &[4, 0, 1, 2, 3, 5], &[], None),
        (erasure(4, 2, 5), &[4, 0, 1, 2, 3, 5], &[0], Some(Inactive)),
        (erasure(4, 2, 5), &[4, 0, 1, 2, 3, 5], &[0, 1], Some(Lost)),
        (erasure(4, 2, 4), &[4, 0, 1, 2, 3, 5], &[0], Some(SingleCopy)),
        (erasure(4, 2, 4), &[0, 1, 2, 3, 5, 6], &[6], None),
        (erasure(4, 2, 4), &[0, 1, 2, 3, 5, 6], &[5, 6], Some(SingleCopy)),
    ];
    for (pool, acting, down, want) in cases {
        let n = live(acting, &[4], down);
        assert_eq!(class(&pool, n), want, "{pool:?}, acting {acting:?}, down {down:?}: {n} live");
    }
    assert_eq!(live(&[1, 1, 2], &[], &[]), 2, "an OSD counts once");
}

fn copies(pgs: &[(&str, &[u32])], pools: Vec<Pool>, down: &[u32]) -> Copies {
    Copies {
        pgs: pgs
            .iter()
            .map(|(id, acting)| Pg { pgid: id.to_string(), pool: order(id).0, acting: acting.to_vec() })
            .collect(),
        pools,
        down: down.to_vec(),
    }
}

fn rbd(pg_num: u32) -> Pool {
    Pool { pg_num, ..replicated(2, 1) }
}

#[test]
fn an_exposure_names_each_pool_and_its_pgs_worst_first_the_first_few_by_id() {
    let mut pgs: Vec<(String, Vec<u32>)> = (0..12).map(|i| (format!("2.{i:x}"), vec![4, 1])).collect();
    pgs.push(("2.c".into(), vec![4, 0]));
    pgs.push(("3.0".into(), vec![4, 1, 2]));
    let listed: Vec<(&str, &[u32])> = pgs.iter().map(|(id, a)| (id.as_str(), a.as_slice())).collect();
    let c = copies(&listed, vec![rbd(13), Pool { pg_num: 1, ..erasure(2, 1, 3) }], &[0]);
    let e = exposure(&c, &[4]);
    assert_eq!(e.pools[0].single_copy.len(), 12);
    assert_eq!((e.pools[0].lost.clone(), e.pools[1].inactive.clone()), (vec!["2.c".into()], vec!["3.0".into()]));
    assert_eq!(
        beyond(&e, Accept::default()),
        [
            "pool 'rbd' (size 2, min_size 1): 1 PG with no copy left (2.c)",
            "pool 'ec' (erasure-coded, k=2, size 3, min_size 3): 1 PG inactive (below min_size: client I/O to them \
             stops) (3.0)",
            "pool 'rbd' (size 2, min_size 1): 12 PGs with one copy left (2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7 and \
             4 more)",
        ]
    );
    let both = Accept { single_copy: true, inactive: true };
    assert_eq!(beyond(&e, both), ["pool 'rbd' (size 2, min_size 1): 1 PG with no copy left (2.c)"], "never lost");
}

#[test]
fn the_gate_goes_on_what_was_accepted_and_holds_on_anything_worse() {
    let single = Accept { single_copy: true, inactive: false };
    let ok = copies(&[("2.0", &[4, 1]), ("2.1", &[1, 5])], vec![rbd(2)], &[]);
    assert_eq!(hold(Some(&Ok(ok.clone())), &[4], single), Hold::Go);
    let Hold::Held(why) = hold(Some(&Ok(ok.clone())), &[4], Accept::default()) else { panic!("held") };
    assert!(why.starts_with("pool 'rbd' (size 2, min_size 1): 1 PG with one copy left (2.0); not accepted"), "{why}");
    // osd.1 down: 2.0 would keep no copy; 2.1 one (accepted).
    let down = Copies { down: vec![1], ..ok.clone() };
    let Hold::Held(why) = hold(Some(&Ok(down)), &[4], single) else { panic!("held") };
    assert_eq!(
        why,
        "pool 'rbd' (size 2, min_size 1): 1 PG with no copy left (2.0); no flag accepts a PG's last copy; it goes on \
         once the OSDs holding the other copies are back"
    );
    // Nothing read: never a guess.
    assert_eq!(hold(None, &[4], single), Hold::NotRead);
    let Hold::Held(why) = hold(Some(&Err("`ceph pg dump` timed out".into())), &[4], single) else { panic!() };
    assert_eq!(why, "the PG map cannot be read (`ceph pg dump` timed out); nothing is done on a guess");
    // The manager's PG map not complete yet (just started): 2.1 missing.
    let partial = copies(&[("2.0", &[1, 5])], vec![rbd(2)], &[]);
    let Hold::Held(why) = hold(Some(&Ok(partial)), &[4], single) else { panic!() };
    assert!(why.starts_with("the PG dump lists 1 of pool 'rbd''s 2 PGs (not complete yet)"), "{why}");
    let stray = copies(&[("2.0", &[1, 5]), ("2.1", &[1, 5]), ("7.0", &[1])], vec![rbd(2)], &[]);
    assert_eq!(incomplete(&stray).as_deref(), Some("PG 7.0 is of pool 7, which the OSD map does not list"));
    // An unknown PG (no acting set yet) is no copy at all.
    let unknown = copies(&[("2.0", &[]), ("2.1", &[1, 5])], vec![rbd(2)], &[]);
    assert!(matches!(hold(Some(&Ok(unknown)), &[4], single), Hold::Held(w) if w.contains("no copy left (2.0)")));
}

#[derive(Debug, Clone, PartialEq)]
struct S {
    phase: u8,
    hold: Option<String>,
}

type St = Step<S, &'static str>;

fn gated(before: &S, step: St, act: Option<&str>, h: Hold) -> St {
    gate(before, step, act.map(str::to_string), h, |s| s.phase == 9, |s| &mut s.hold)
}

#[test]
fn a_held_act_waits_on_the_state_it_was_decided_from_and_its_hold_is_recorded_once() {
    let before = S { phase: 1, hold: None };
    let step = || Step::act(S { phase: 2, hold: None }, "destroy");
    let held = gated(&before, step(), Some("the destroy of osd.4"), Hold::Held("2.0 has no copy".into()));
    assert_eq!((held.effect, held.next.phase), (None, 1), "nothing that the act would have changed");
    assert_eq!(held.waiting_on.as_deref(), Some("the destroy of osd.4 waits: 2.0 has no copy"));
    assert_eq!(held.next.hold.as_deref(), Some("the destroy of osd.4 waits: 2.0 has no copy"));
    // Still held, other PGs: the hold keeps the words it began with.
    let again = gated(&held.next, step(), Some("the destroy of osd.4"), Hold::Held("2.1 has no copy".into()));
    assert_eq!(again.next.hold, held.next.hold);
    assert_eq!(again.waiting_on.as_deref(), Some("the destroy of osd.4 waits: 2.1 has no copy"));
    // Not read within this observation: a wait, no hold recorded.
    let unread = gated(&before, step(), Some("the destroy of osd.4"), Hold::NotRead);
    assert_eq!((unread.effect, unread.next.hold.clone()), (None, None));
    // Lifted: the act goes ahead and the hold is cleared.
    let go = gated(&again.next, step(), Some("the destroy of osd.4"), Hold::Go);
    assert_eq!((go.effect, go.next.hold), (Some("destroy"), None));
    // Another effect: untouched, unless the operation ended.
    let other = gated(&again.next, Step::act(again.next.clone(), "noout"), None, Hold::NotRead);
    assert_eq!((other.effect, other.next.hold.is_some()), (Some("noout"), true));
    let ended = gated(&again.next, Step::go(S { phase: 9, hold: again.next.hold.clone() }), None, Hold::NotRead);
    assert_eq!(ended.next.hold, None);
}
