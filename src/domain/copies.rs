//! The last copy (docs/design/swap.md, "The last copy"): how many copies of
//! each PG can still be read, and what an in-place disk change may do while
//! some cannot. The in-place way stops, destroys and zaps an OSD whose
//! copies the others rebuild later; right before each of those acts the
//! copies are counted again from a fresh PG dump, and the act waits while
//! the cluster is worse than what was accepted when it was scheduled.
//!
//! A PG's live copies are the OSDs of its acting set that are up and not
//! leaving (erasure-coded: its shards; a missing shard is left out of the
//! set). A PG at its pool's size is fine whatever its pool; one short of
//! it is, worst first:
//! * lost: fewer than the copies needed to read it (replicated: none;
//!   erasure-coded: fewer than k shards). No flag accepts it.
//! * inactive: fewer than `min_size` (client I/O to it stops).
//! * single copy: replicated, one copy; erasure-coded, exactly k shards
//!   (no redundancy left).
//!
//! Every PG of the cluster counts, not only the leaving OSD's: once it is
//! down its PGs no longer name it in their acting sets, and a PG split
//! since has ids it never had; so the disk may hold the last copy of any PG
//! short of copies.

use super::event::{EventKind, Level};
use super::operation::Step;

/// A pool as the count needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    pub id: i64,
    pub name: String,
    pub size: u32,
    pub min_size: u32,
    /// The copies a PG needs to be read: 1 replicated, k erasure-coded.
    pub data_shards: u32,
    /// Its PGs (`pg_num`): a PG dump listing fewer is not complete yet.
    pub pg_num: u32,
}

/// One PG: its pool, and the OSDs that serve it (missing shards left out).
#[derive(Debug, Clone, PartialEq)]
pub struct Pg {
    pub pgid: String,
    pub pool: i64,
    pub acting: Vec<u32>,
}

/// A fresh read of the PGs' copies (`pg dump pgs_brief`, `osd dump`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Copies {
    pub pgs: Vec<Pg>,
    pub pools: Vec<Pool>,
    /// OSDs down now: they serve no copy.
    pub down: Vec<u32>,
}

/// How short of copies a PG is, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Lost,
    Inactive,
    SingleCopy,
}

/// The risks an operator accepted for an in-place disk change; the loss of
/// a PG's last copy is never one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accept {
    pub single_copy: bool,
    pub inactive: bool,
}

impl Accept {
    pub fn accepts(self, class: Class) -> bool {
        match class {
            Class::Lost => false,
            Class::Inactive => self.inactive,
            Class::SingleCopy => self.single_copy,
        }
    }
}

/// The copies of a PG that can be read: the distinct OSDs of its acting
/// set neither leaving nor down.
pub fn live(acting: &[u32], leaving: &[u32], down: &[u32]) -> u32 {
    let mut seen: Vec<u32> = Vec::with_capacity(acting.len());
    for o in acting {
        if !leaving.contains(o) && !down.contains(o) && !seen.contains(o) {
            seen.push(*o);
        }
    }
    seen.len() as u32
}

/// The class of a PG of `pool` with `live` copies; None: at its pool's
/// size, or short but with more than one copy's redundancy left.
pub fn class(pool: &Pool, live: u32) -> Option<Class> {
    let needed = pool.data_shards.max(1);
    if live >= pool.size {
        None
    } else if live < needed {
        Some(Class::Lost)
    } else if live < pool.min_size {
        Some(Class::Inactive)
    } else if live <= needed {
        Some(Class::SingleCopy)
    } else {
        None
    }
}

/// A pool's PGs in each class, by id.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolExposure {
    pub pool: Pool,
    pub lost: Vec<String>,
    pub inactive: Vec<String>,
    pub single_copy: Vec<String>,
}

impl PoolExposure {
    fn list(&self, class: Class) -> &[String] {
        match class {
            Class::Lost => &self.lost,
            Class::Inactive => &self.inactive,
            Class::SingleCopy => &self.single_copy,
        }
    }
}

/// The PGs short of copies with the `leaving` OSDs gone, by pool.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Exposure {
    pub pools: Vec<PoolExposure>,
}

/// The PG id's pool and placement seed, for a stable order.
fn order(pgid: &str) -> (i64, u64) {
    let (pool, seed) = pgid.split_once('.').unwrap_or((pgid, ""));
    (pool.parse().unwrap_or(i64::MAX), u64::from_str_radix(seed, 16).unwrap_or(u64::MAX))
}

pub fn exposure(copies: &Copies, leaving: &[u32]) -> Exposure {
    let mut out: Vec<PoolExposure> = Vec::new();
    let mut pgs: Vec<&Pg> = copies.pgs.iter().collect();
    pgs.sort_by_key(|p| order(&p.pgid));
    for pg in pgs {
        // A PG of a pool the dump does not list: `incomplete` says so.
        let Some(pool) = copies.pools.iter().find(|p| p.id == pg.pool) else { continue };
        let Some(class) = class(pool, live(&pg.acting, leaving, &copies.down)) else { continue };
        let at = match out.iter().position(|e| e.pool.id == pool.id) {
            Some(i) => i,
            None => {
                let empty = PoolExposure { pool: pool.clone(), lost: vec![], inactive: vec![], single_copy: vec![] };
                out.push(empty);
                out.len() - 1
            }
        };
        let e = &mut out[at];
        match class {
            Class::Lost => e.lost.push(pg.pgid.clone()),
            Class::Inactive => e.inactive.push(pg.pgid.clone()),
            Class::SingleCopy => e.single_copy.push(pg.pgid.clone()),
        }
    }
    Exposure { pools: out }
}

/// Why a read cannot be counted on: a pool whose PGs the dump does not all
/// list (the manager's PG map is not complete yet, or a pool grew), or a
/// PG of a pool the OSD map does not know.
pub fn incomplete(copies: &Copies) -> Option<String> {
    if let Some(pg) = copies.pgs.iter().find(|pg| !copies.pools.iter().any(|p| p.id == pg.pool)) {
        return Some(format!("PG {} is of pool {}, which the OSD map does not list", pg.pgid, pg.pool));
    }
    copies.pools.iter().find_map(|pool| {
        let listed = copies.pgs.iter().filter(|pg| pg.pool == pool.id).count();
        (listed < pool.pg_num as usize).then(|| {
            format!("the PG dump lists {listed} of pool '{}''s {} PGs (not complete yet)", pool.name, pool.pg_num)
        })
    })
}

/// How many PG ids words name before "and N more".
pub const NAMED: usize = 8;

/// Some PG ids, the first few named.
pub fn named(pgids: &[String]) -> String {
    let shown = pgids.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
    match pgids.len().saturating_sub(NAMED) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// A pool as words name it: its size, min_size and, erasure-coded, its k.
pub fn pool_words(name: &str, size: u32, min_size: u32, data_shards: u32) -> String {
    if data_shards > 1 {
        format!("pool '{name}' (erasure-coded, k={data_shards}, size {size}, min_size {min_size})")
    } else {
        format!("pool '{name}' (size {size}, min_size {min_size})")
    }
}

/// A class in words.
pub fn class_words(class: Class, data_shards: u32) -> String {
    match class {
        Class::Lost if data_shards > 1 => format!("with fewer than k={data_shards} shards left: unreadable"),
        Class::Lost => "with no copy left".into(),
        Class::Inactive => "inactive (below min_size: client I/O to them stops)".into(),
        Class::SingleCopy if data_shards > 1 => format!("with k={data_shards} shards and no redundancy left"),
        Class::SingleCopy => "with one copy left".into(),
    }
}

/// What of an exposure is not accepted, in words, worst first: each
/// pool's PGs in each class beyond `accept`, the first few named.
pub fn beyond(exposure: &Exposure, accept: Accept) -> Vec<String> {
    let mut out = Vec::new();
    for class in [Class::Lost, Class::Inactive, Class::SingleCopy] {
        if accept.accepts(class) {
            continue;
        }
        for e in &exposure.pools {
            let pgs = e.list(class);
            if pgs.is_empty() {
                continue;
            }
            let p = &e.pool;
            out.push(format!(
                "{}: {} PG{} {} ({})",
                pool_words(&p.name, p.size, p.min_size, p.data_shards),
                pgs.len(),
                if pgs.len() == 1 { "" } else { "s" },
                class_words(class, p.data_shards),
                named(pgs)
            ));
        }
    }
    out
}

/// What the gate makes of a read right before an act.
#[derive(Debug, Clone, PartialEq)]
pub enum Hold {
    /// The cluster is no worse than accepted.
    Go,
    /// Not read in this observation (the phase was reached within it).
    NotRead,
    /// Worse than accepted, or not readable: why, in words.
    Held(String),
}

/// Whether the act may go ahead on this read, with the `leaving` OSDs gone.
pub fn hold(read: Option<&Result<Copies, String>>, leaving: &[u32], accept: Accept) -> Hold {
    let copies = match read {
        None => return Hold::NotRead,
        Some(Err(e)) => return Hold::Held(format!("the PG map cannot be read ({e}); nothing is done on a guess")),
        Some(Ok(c)) => c,
    };
    if let Some(why) = incomplete(copies) {
        return Hold::Held(format!("{why}; nothing is done on a guess"));
    }
    let exposure = exposure(copies, leaving);
    let beyond = beyond(&exposure, accept);
    if beyond.is_empty() {
        return Hold::Go;
    }
    let lost = exposure.pools.iter().any(|e| !e.lost.is_empty());
    let remedy = if lost {
        "no flag accepts a PG's last copy; it goes on once the OSDs holding the other copies are back"
    } else {
        "not accepted when it was scheduled; it goes on once the cluster is back to what was accepted"
    };
    Hold::Held(format!("{}; {remedy}", beyond.join("; ")))
}

/// The last-copy gate around a step of an in-place disk change. `act`
/// names the step's effect when it is a stop, destroy or zap; `before` is
/// the state the step was decided from. Held: the step becomes a wait on
/// `before`, its hold recorded (`hold_of`, the words when the hold began);
/// the act going ahead, or the operation ending, clears it.
pub fn gate<S: Clone, E>(
    before: &S,
    step: Step<S, E>,
    act: Option<String>,
    hold: Hold,
    finished: impl Fn(&S) -> bool,
    hold_of: impl Fn(&mut S) -> &mut Option<String>,
) -> Step<S, E> {
    let mut step = step;
    let Some(act) = act else {
        if finished(&step.next) {
            *hold_of(&mut step.next) = None;
        }
        return step;
    };
    match hold {
        Hold::Go => {
            *hold_of(&mut step.next) = None;
            step
        }
        Hold::NotRead => Step::wait(before.clone(), format!("{act}: the PGs' copies are not read yet")),
        Hold::Held(why) => {
            let mut next = before.clone();
            let words = format!("{act} waits: {why}");
            hold_of(&mut next).get_or_insert_with(|| words.clone());
            Step::wait(next, words)
        }
    }
}

/// The event a change of an operation's hold records, `who` naming the
/// operation: held (the PGs named), or lifted (what it held for).
pub fn hold_event(who: &str, before: Option<&String>, after: Option<&String>) -> Option<(EventKind, Level, String)> {
    match (before, after) {
        (None, Some(words)) => Some((EventKind::InPlaceHeld, Level::Warning, format!("{who}: {words}"))),
        (Some(words), None) => Some((
            EventKind::InPlaceHoldLifted,
            Level::Info,
            format!("{who}: goes on, the cluster no worse than accepted again (it held: {words})"),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
