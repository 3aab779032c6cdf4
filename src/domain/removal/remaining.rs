//! What is still to move off a draining OSD, from the PG stats of the PGs
//! that still list it in their acting set (`ceph pg ls-by-osd`), and the
//! reason the cluster gives for them not moving, in its own words.
//!
//! A PG that is backfilling counts with the share of its objects not yet
//! in their new place (its misplaced copies over the copies leaving), so a
//! big PG shows progress while it moves instead of standing still for the
//! half hour it takes and then dropping at once, which would look like a
//! stall. An erasure-coded PG counts its logical bytes, more than the shard
//! on the OSD; the same for every sample, so rate and ETA are unaffected.

/// One PG that still lists the OSD (`pg ls-by-osd`'s `pg_stats`).
#[derive(Debug, Clone, PartialEq)]
pub struct PgOnOsd {
    pub pgid: String,
    /// `active+remapped+backfilling` and so on.
    pub state: String,
    pub up: Vec<u32>,
    pub acting: Vec<u32>,
    pub bytes: u64,
    pub objects: u64,
    pub misplaced: u64,
}

/// Bytes still to move off `osd`.
pub fn bytes_to_move(osd: u32, pgs: &[PgOnOsd]) -> u64 {
    pgs.iter().map(|pg| (pg.bytes as f64 * share_left(osd, pg)).round() as u64).sum()
}

/// The share of a PG's data still to leave `osd`: all of it while CRUSH
/// still maps the PG there; else its misplaced copies over the copies
/// leaving its acting set. None misplaced means it moved and waits for its
/// mapping to catch up (`active+remapped`) — unless its state says it has
/// not begun or not ended: then its stats are older than the new mapping
/// (for a few seconds after the reweight on 18.2 and 20.2, a whole host's
/// bytes left read 5 MB, then 97 MB), and all of it is still there.
fn share_left(osd: u32, pg: &PgOnOsd) -> f64 {
    if pg.up.contains(&osd) || pg.objects == 0 {
        return 1.0;
    }
    if pg.misplaced == 0 && !moved_waiting_for_mapping(&pg.state) {
        return 1.0;
    }
    let leaving = pg.acting.iter().filter(|o| !pg.up.contains(o)).count().max(1) as f64;
    (pg.misplaced as f64 / (pg.objects as f64 * leaving)).clamp(0.0, 1.0)
}

/// `active+remapped` and nothing more: the data is in its new place.
fn moved_waiting_for_mapping(state: &str) -> bool {
    let words: Vec<&str> = state.split('+').collect();
    words.contains(&"remapped")
        && !words.iter().any(|w| w.starts_with("backfill") || w.starts_with("recover") || *w == "peering")
        && words.contains(&"active")
}

/// PG states that hold data where it is, in Ceph's words, with whether
/// they alone explain why nothing moves: a full OSD and unfound objects
/// do; waiting for a backfill reservation does only while none of the
/// OSD's PGs is backfilling.
const HELD: [(&str, bool); 5] = [
    ("backfill_toofull", true),
    ("recovery_toofull", true),
    ("backfill_unfound", true),
    ("recovery_unfound", true),
    ("backfill_wait", false),
];

/// Why the OSD's PGs do not move, as the cluster says it ("3 PGs
/// backfill_toofull"), or None when nothing holds them.
pub fn held_back(pgs: &[PgOnOsd]) -> Option<String> {
    let has = |pg: &PgOnOsd, s: &str| pg.state.split('+').any(|x| x == s);
    let moving = pgs.iter().any(|pg| has(pg, "backfilling") || has(pg, "recovering"));
    let parts: Vec<String> = HELD
        .iter()
        .filter(|(_, alone)| *alone || !moving)
        .filter_map(|(state, _)| {
            let n = pgs.iter().filter(|pg| has(pg, state)).count();
            (n > 0).then(|| format!("{n} PG{} {state}", if n == 1 { "" } else { "s" }))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(state: &str, up: &[u32], acting: &[u32], bytes: u64, objects: u64, misplaced: u64) -> PgOnOsd {
        PgOnOsd {
            pgid: "2.1".into(),
            state: state.into(),
            up: up.to_vec(),
            acting: acting.to_vec(),
            bytes,
            objects,
            misplaced,
        }
    }

    #[test]
    fn a_moving_pg_counts_the_share_not_yet_moved() {
        let pgs = [
            // Waiting: all of it. Backfilling, a quarter of its objects left.
            pg("active+remapped+backfill_wait", &[3, 5], &[8, 5], 4000, 100, 100),
            pg("active+remapped+backfilling", &[3, 5], &[8, 5], 4000, 100, 25),
            // Two copies leave (size 3 reshuffle): 100 misplaced of 200 copies.
            pg("active+remapped+backfilling", &[3, 4, 5], &[8, 1, 5], 1000, 100, 100),
            // Moved, the mapping not updated yet.
            pg("active+remapped", &[3, 5], &[8, 5], 4000, 100, 0),
        ];
        assert_eq!(bytes_to_move(8, &pgs), 4000 + 1000 + 500);
        // Stats older than the mapping: the state says the move has not
        // begun or not ended, or still says clean; none misplaced yet.
        for state in
            ["active+remapped+backfill_wait", "active+remapped+backfilling", "remapped+peering", "active+clean"]
        {
            assert_eq!(bytes_to_move(8, &[pg(state, &[3, 5], &[8, 5], 4000, 100, 0)]), 4000, "{state}");
        }
        // Still mapped to the OSD by CRUSH: it all has to go.
        assert_eq!(bytes_to_move(8, &[pg("active+clean", &[8, 5], &[8, 5], 700, 7, 0)]), 700);
        assert_eq!(bytes_to_move(8, &[]), 0);
    }

    #[test]
    fn the_reason_is_in_the_clusters_words() {
        let full = pg("active+remapped+backfill_toofull", &[3, 5], &[8, 5], 1, 1, 1);
        let waiting = pg("active+remapped+backfill_wait", &[3, 5], &[8, 5], 1, 1, 1);
        let moving = pg("active+remapped+backfilling", &[3, 5], &[8, 5], 1, 1, 1);
        assert_eq!(
            held_back(&[full.clone(), full.clone(), waiting.clone()]).as_deref(),
            Some("2 PGs backfill_toofull, 1 PG backfill_wait")
        );
        assert_eq!(held_back(&[waiting.clone(), waiting.clone()]).as_deref(), Some("2 PGs backfill_wait"));
        assert_eq!(held_back(&[waiting.clone(), moving.clone()]), None, "waiting its turn behind a backfill");
        assert_eq!(held_back(&[full, moving]).as_deref(), Some("1 PG backfill_toofull"));
        assert_eq!(held_back(&[]), None);
    }
}
