//! Which placement groups change places: those whose set of OSDs differs
//! before and after (a new primary among the same OSDs copies nothing).

/// One PG with its up set now and after the drain (CRUSH, upmaps applied).
#[derive(Debug, Clone, PartialEq)]
pub struct PgPlacement {
    pub pgid: String,
    pub pool: i64,
    pub up_now: Vec<u32>,
    pub up_after: Vec<u32>,
    /// How many OSDs CRUSH itself places the PG on, now and after, down
    /// OSDs included (the up sets leave those out): whether the PG has a
    /// place does not hang on an OSD that is down for a while.
    pub placed_now: usize,
    pub placed_after: usize,
    /// Bytes one copy holds (`pg dump`'s `num_bytes`).
    pub bytes: u64,
}

/// A PG that moves: the OSDs it leaves and the ones it lands on.
#[derive(Debug, Clone, PartialEq)]
pub struct PgMove {
    pub pgid: String,
    pub pool: i64,
    pub from: Vec<u32>,
    pub to: Vec<u32>,
    pub bytes: u64,
}

pub fn moves(pgs: &[PgPlacement]) -> Vec<PgMove> {
    pgs.iter()
        .filter_map(|pg| {
            let from: Vec<u32> = pg.up_now.iter().filter(|o| !pg.up_after.contains(o)).copied().collect();
            let to: Vec<u32> = pg.up_after.iter().filter(|o| !pg.up_now.contains(o)).copied().collect();
            (!from.is_empty() || !to.is_empty()).then(|| PgMove {
                pgid: pg.pgid.clone(),
                pool: pg.pool,
                from,
                to,
                bytes: pg.bytes,
            })
        })
        .collect()
}
