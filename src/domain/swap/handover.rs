//! The hand-over: which PGs move, where, in what order and how many at
//! once, from the PG map now and the final map beside it (the old OSDs at
//! CRUSH weight 0, the new ones at their own: CRUSH's answer, computed by
//! the Ceph adapter with osdmaptool). Each copy that differs moves once,
//! straight to its final place, so that setting the final weights moves
//! nothing and leaves nothing pinned (docs/design/swap.md: why not "old →
//! new").

use super::upmap::{apply, entry, is_noop, kept, same_osds};
use super::MAX_BATCH;

/// One PG now and in the final map.
#[derive(Debug, Clone, PartialEq)]
pub struct PgNow {
    pub pgid: String,
    pub pool: i64,
    /// Its pool is erasure coded: a shard keeps its position.
    pub erasure: bool,
    /// CRUSH's own set now, before upmaps.
    pub raw: Vec<u32>,
    /// With the upmap entries applied: where the PG belongs now.
    pub up: Vec<u32>,
    /// Where its data is.
    pub acting: Vec<u32>,
    pub state: String,
    /// Bytes one copy holds.
    pub bytes: u64,
    /// Its `pg_upmap_items` entry now.
    pub items: Vec<(u32, u32)>,
    /// CRUSH's set in the final map, and the up set there with the
    /// entries of now applied as Ceph applies them.
    pub final_raw: Vec<u32>,
    pub final_up: Vec<u32>,
}

impl PgNow {
    fn clean(&self) -> bool {
        self.state == "active+clean"
    }

    /// Where the PG ends. An entry that would keep it on an old OSD is one
    /// the monitors cancel once that OSD weighs 0: CRUSH's set then.
    fn target(&self, olds: &[u32]) -> &[u32] {
        if self.final_up.iter().any(|o| olds.contains(o)) {
            &self.final_raw
        } else {
            &self.final_up
        }
    }

    fn same(&self, a: &[u32], b: &[u32]) -> bool {
        if self.erasure {
            a == b
        } else {
            same_osds(a, b)
        }
    }

    /// The copies not yet in their final place (the OSDs they go to).
    fn missing(&self, olds: &[u32]) -> Vec<u32> {
        self.target(olds).iter().filter(|o| !self.acting.contains(o)).copied().collect()
    }

    /// (pool, PG number): the order PGs are handed over in, after the
    /// ones with a copy on an old OSD.
    fn order(&self) -> (i64, u64) {
        let ps = self.pgid.split_once('.').and_then(|(_, n)| u64::from_str_radix(n, 16).ok()).unwrap_or(u64::MAX);
        (self.pool, ps)
    }
}

/// A `pg-upmap-items` entry: the PG and its whole list of pairs. No
/// pairs: the PG goes back to CRUSH's own set (`rm-pg-upmap-items`).
#[derive(Debug, Clone, PartialEq)]
pub struct UpmapItem {
    pub pgid: String,
    pub pairs: Vec<(u32, u32)>,
}

/// An entry the swap issued.
pub type Handed = UpmapItem;

/// What the hand-over does next.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// The entries to issue now.
    pub issue: Vec<UpmapItem>,
    /// Why nothing (more) is issued now.
    pub waiting: Option<String>,
    /// PGs whose copies are not all in their final place yet.
    pub pgs_left: usize,
    /// Bytes still to write there.
    pub bytes_left: u64,
    /// PGs that cannot be handed over without moving twice, with why.
    pub cannot: Vec<String>,
    /// Every PG is active+clean in its final place: the weights may be set.
    pub finished: bool,
}

/// The next entries to issue. `unhealthy` is the drains' rule (PGs
/// degraded, undersized, inactive or toofull, in the cluster's words):
/// while it holds nothing new moves. At most `osd_max_backfills` × the
/// OSDs receiving copies are in flight (a backfill holds a reservation on
/// the OSD it writes to), and at most `MAX_BATCH` are issued at once.
pub fn plan(pgs: &[PgNow], olds: &[u32], unhealthy: Option<&str>, max_backfills: u32) -> Plan {
    let mut p = Plan::default();
    let mut receivers: Vec<u32> = Vec::new();
    let mut candidates: Vec<(&PgNow, Vec<(u32, u32)>)> = Vec::new();
    let mut not_clean = 0usize;
    let mut in_flight = 0usize;
    let mut on_old = false;
    for pg in pgs {
        let target = pg.target(olds);
        if !pg.same(&pg.up, &pg.acting) {
            in_flight += 1;
        }
        on_old |= pg.acting.iter().chain(&pg.up).any(|o| olds.contains(o));
        let missing = pg.missing(olds);
        let placed = pg.same(&pg.up, target);
        if missing.is_empty() && placed {
            not_clean += usize::from(!pg.clean());
            continue;
        }
        p.pgs_left += 1;
        p.bytes_left += pg.bytes * missing.len() as u64;
        for o in missing {
            if !receivers.contains(&o) {
                receivers.push(o);
            }
        }
        if placed {
            // Issued; its data is on the way.
            continue;
        }
        if !pg.clean() {
            not_clean += 1;
            continue;
        }
        match checked_entry(pg, target) {
            Ok(pairs) => candidates.push((pg, pairs)),
            Err(why) => p.cannot.push(format!("{}: {why}", pg.pgid)),
        }
    }
    p.finished = p.pgs_left == 0 && not_clean == 0 && p.cannot.is_empty() && !on_old;
    if p.finished {
        return p;
    }
    if let Some(why) = unhealthy {
        p.waiting = Some(format!("waiting: {why}"));
        return p;
    }
    let limit = max_backfills.max(1) as usize * receivers.len().max(1);
    let room = limit.saturating_sub(in_flight).min(MAX_BATCH);
    candidates.sort_by_key(|(pg, _)| (!pg.acting.iter().any(|o| olds.contains(o)), pg.order()));
    p.issue = candidates.into_iter().take(room).map(|(pg, pairs)| UpmapItem { pgid: pg.pgid.clone(), pairs }).collect();
    if p.issue.is_empty() {
        p.waiting = Some(waiting(&p, in_flight, limit, max_backfills, receivers.len(), not_clean));
    }
    p
}

fn waiting(p: &Plan, in_flight: usize, limit: usize, max_backfills: u32, receivers: usize, not_clean: usize) -> String {
    if !p.cannot.is_empty() {
        let names: Vec<&str> = p.cannot.iter().map(|c| c.split(':').next().unwrap_or(c)).collect();
        return format!(
            "handing over: {} PG{} cannot be handed over without moving twice ({}); settling waits",
            names.len(),
            plural(names.len()),
            names.join(", ")
        );
    }
    if in_flight >= limit {
        return format!(
            "handing over: {in_flight} PG{} moving (a new one starts below {limit}: osd_max_backfills {max_backfills} × \
             {receivers} OSD{} receiving)",
            plural(in_flight),
            plural(receivers)
        );
    }
    if not_clean > 0 {
        return format!("handing over: waiting for {not_clean} PG{} to be active+clean", plural(not_clean));
    }
    format!("handing over: {} PG{} moving", p.pgs_left, plural(p.pgs_left))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The entry for a PG, if it gives the target now and again once the
/// final weights are set (the monitors then drop the pairs whose source
/// left the raw set).
fn checked_entry(pg: &PgNow, target: &[u32]) -> Result<Vec<(u32, u32)>, String> {
    let pairs = entry(&pg.raw, target, pg.erasure);
    let now = apply(&pg.raw, &pairs);
    if !pg.same(&now, target) {
        return Err(format!("no entry maps {:?} onto {:?}", pg.raw, target));
    }
    let after = apply(&pg.final_raw, &kept(&pg.final_raw, &pairs));
    if !pg.same(&after, target) {
        return Err(format!("its entry would map it to {after:?} once the weights are set, not {target:?}"));
    }
    Ok(pairs)
}

/// Once the final weights are set: the swap's entries that are no-ops now
/// (removing them moves nothing) and those that are not (left, and named).
/// An entry the monitors dropped already is neither.
pub fn cleanup(pgs: &[PgNow], handed: &[Handed]) -> (Vec<String>, Vec<String>) {
    let (mut noop, mut pinned) = (Vec::new(), Vec::new());
    for h in handed {
        let Some(pg) = pgs.iter().find(|p| p.pgid == h.pgid) else { continue };
        if pg.items.is_empty() || pg.items != h.pairs {
            continue;
        }
        if is_noop(&pg.raw, &pg.items) {
            noop.push(pg.pgid.clone());
        } else {
            pinned.push(pg.pgid.clone());
        }
    }
    (noop, pinned)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A size-2 PG on `raw` now and `fin` in the final map, clean, no entry.
    pub(in crate::domain::swap) fn pg(pgid: &str, raw: &[u32], fin: &[u32]) -> PgNow {
        PgNow {
            pgid: pgid.into(),
            pool: 1,
            erasure: false,
            raw: raw.to_vec(),
            up: raw.to_vec(),
            acting: raw.to_vec(),
            state: "active+clean".into(),
            bytes: 100,
            items: vec![],
            final_raw: fin.to_vec(),
            final_up: fin.to_vec(),
        }
    }

    /// Osd.8 leaves, osd.20 arrives on its host (siblings 15); 3 and 4 elsewhere.
    fn map() -> Vec<PgNow> {
        vec![
            pg("1.0", &[8, 3], &[20, 3]),  // old → new
            pg("1.1", &[8, 4], &[15, 4]),  // old → sibling
            pg("1.2", &[15, 3], &[20, 3]), // sibling → new
            pg("1.3", &[15, 4], &[15, 4]), // untouched
        ]
    }

    #[test]
    fn each_copy_goes_once_to_its_final_place_off_the_old_osd_first() {
        let p = plan(&map(), &[8], None, 4);
        let issued: Vec<(&str, &[(u32, u32)])> = p.issue.iter().map(|i| (i.pgid.as_str(), &i.pairs[..])).collect();
        assert_eq!(issued, [("1.0", &[(8, 20)][..]), ("1.1", &[(8, 15)][..]), ("1.2", &[(15, 20)][..])]);
        assert_eq!((p.pgs_left, p.bytes_left), (3, 300));
        assert!(!p.finished && p.cannot.is_empty());
    }

    #[test]
    fn in_flight_moves_are_held_to_the_backfill_reservations() {
        let mut pgs = map();
        // 1.0 issued and backfilling: its up set is the target, its data still on 8.
        pgs[0].items = vec![(8, 20)];
        pgs[0].up = vec![20, 3];
        pgs[0].state = "active+remapped+backfilling".into();
        pgs[0].final_up = vec![20, 3];
        // Receivers 20 and 15: two at once with osd_max_backfills 1.
        let p = plan(&pgs, &[8], None, 1);
        assert_eq!(p.issue.iter().map(|i| i.pgid.as_str()).collect::<Vec<_>>(), ["1.1"]);
        let p = plan(&pgs, &[8], None, 0);
        assert_eq!(p.issue.len(), 1, "a cluster that says 0 still backfills one at a time");
        pgs[1].up = vec![15, 4];
        pgs[1].items = vec![(8, 15)];
        pgs[1].state = "active+remapped+backfill_wait".into();
        let p = plan(&pgs, &[8], None, 1);
        assert!(p.issue.is_empty());
        assert_eq!(
            p.waiting.as_deref(),
            Some("handing over: 2 PGs moving (a new one starts below 2: osd_max_backfills 1 × 2 OSDs receiving)")
        );
    }

    #[test]
    fn nothing_moves_while_the_cluster_is_unhealthy_and_unclean_pgs_wait() {
        let p = plan(&map(), &[8], Some("3 PGs degraded"), 4);
        assert!(p.issue.is_empty());
        assert_eq!(p.waiting.as_deref(), Some("waiting: 3 PGs degraded"));
        let mut pgs = map();
        pgs[0].state = "active+undersized+degraded".into();
        let p = plan(&pgs, &[8], None, 4);
        assert!(!p.issue.iter().any(|i| i.pgid == "1.0"), "a PG short of a copy is left alone");
    }

    #[test]
    fn finished_when_every_pg_is_clean_in_its_final_place_and_nothing_is_on_the_old_osd() {
        let mut pgs = map();
        for pg in &mut pgs {
            pg.items = entry(&pg.raw, &pg.final_up, false);
            pg.up = apply(&pg.raw, &pg.items);
            pg.acting = pg.up.clone();
        }
        assert!(plan(&pgs, &[8], Some("1 PG degraded"), 1).finished, "the weights may be set even then");
        pgs[1].state = "active+clean+scrubbing".into();
        assert!(!plan(&pgs, &[8], None, 1).finished);
    }

    #[test]
    fn a_pg_whose_entry_would_not_survive_the_final_weights_is_not_handed_over() {
        // The final map keeps 8's copy where 8 is... in a shard order Ceph cannot reach with items.
        let mut pgs = vec![pg("2.0", &[3, 8], &[8, 3])];
        pgs[0].erasure = true;
        let p = plan(&pgs, &[], None, 1);
        assert!(p.issue.is_empty() && !p.finished);
        assert_eq!(p.cannot.len(), 1, "{p:?}");
        assert!(p.waiting.unwrap().contains("cannot be handed over without moving twice (2.0)"));
    }

    #[test]
    fn a_balancer_pin_onto_an_old_osd_is_not_a_target() {
        // The final up set keeps 8 through someone's entry (5 → 8): cancelled once 8 weighs 0.
        let mut p0 = pg("1.9", &[5, 3], &[5, 3]);
        p0.items = vec![(5, 8)];
        p0.up = vec![8, 3];
        p0.acting = vec![8, 3];
        p0.final_up = vec![8, 3];
        let p = plan(&[p0], &[8], None, 1);
        assert_eq!(p.issue, [UpmapItem { pgid: "1.9".into(), pairs: vec![] }], "back to CRUSH's own set");
    }

    #[test]
    fn cleanup_removes_only_entries_that_are_no_ops_now() {
        let handed = vec![
            UpmapItem { pgid: "1.0".into(), pairs: vec![(8, 20)] },
            UpmapItem { pgid: "1.1".into(), pairs: vec![(8, 15)] },
            UpmapItem { pgid: "1.2".into(), pairs: vec![(15, 20)] },
        ];
        let mut pgs = map();
        // Settled: raw sets are the final ones; the monitors dropped 1.1's entry already.
        for pg in &mut pgs {
            pg.raw = pg.final_raw.clone();
        }
        pgs[0].items = vec![(8, 20)];
        pgs[2].items = vec![(3, 20)];
        let (noop, pinned) = cleanup(&pgs, &handed);
        assert_eq!(noop, ["1.0"]);
        assert!(pinned.is_empty(), "1.2's entry is no longer the one the swap issued: not the swap's to remove");
        pgs[2].items = vec![(15, 20)];
        pgs[2].raw = vec![15, 3];
        assert_eq!(cleanup(&pgs, &handed).1, ["1.2"], "not a no-op: left, and named");
    }
}
