//! The recovery boost of fast drains, once per removal round: started when
//! the first fast drain runs (values read, the boost stored, then set),
//! set again when a crash came between, put back when no fast drain is
//! left. The decisions are `domain::removal::boost`'s; errors are logged
//! and the next round tries again from what is stored.

use super::Removals;
use crate::ceph::ClusterState;
use crate::clock::now_ms;
use crate::daemon::DaemonError;
use crate::domain::event::{EventKind, Level};
use crate::domain::removal::boost::{
    boost_step, mclock_trap, not_applied, plan, restore_plan, still_arriving, wanted, Boost, BoostStep, Restore,
    SECTION,
};
use crate::domain::removal::mclock_shards::mclock_hdd_shards;
use crate::domain::removal::RemovalRecord;

/// How long the OSDs are given to receive the boost before what they run is
/// judged (the monitors pass a change on within a second or two).
const ARRIVAL_TRIES: u32 = 10;
const ARRIVAL_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

impl Removals {
    /// `state` is the round's read of the cluster; None when the round had
    /// no removal to read it for (then only a restore can be due).
    pub(super) async fn pace_recovery(&self, active: &[RemovalRecord], state: Option<&ClusterState>) {
        let stored = match self.store.boost().await {
            Ok(b) => b,
            Err(e) => {
                tracing::error!("cannot read the recovery boost: {e}");
                return;
            }
        };
        let removals: Vec<_> = active.iter().map(|r| &r.state).collect();
        let outcome = match (boost_step(wanted(&removals), stored.as_ref()), stored, state) {
            (BoostStep::Start, _, Some(state)) => self.start_boost(state).await,
            (BoostStep::Apply, Some(b), Some(state)) => self.apply_boost(b, state).await,
            (BoostStep::Restore, Some(b), _) => self.restore_boost(&b).await,
            _ => Ok(()),
        };
        if let Err(e) = outcome {
            tracing::error!("recovery boost: {e}");
        }
    }

    fn probe(state: &ClusterState) -> Result<u32, DaemonError> {
        state
            .osds
            .iter()
            .find(|o| o.up && !o.destroyed)
            .map(|o| o.id)
            .ok_or_else(|| DaemonError::CannotAct("no OSD is up to read the recovery settings from".into()))
    }

    async fn start_boost(&self, state: &ClusterState) -> Result<(), DaemonError> {
        let now = self.ceph.recovery_config(Self::probe(state)?).await.map_err(DaemonError::cluster_unreadable)?;
        let boost = plan(&now);
        // Stored before the first set: what is put back never comes from a
        // cluster that already holds the boosted values.
        self.store.save_boost(&boost, now_ms()).await?;
        let hdd_osds = state.osds.iter().any(|o| o.device_class.as_deref() == Some("hdd"));
        for warning in [mclock_trap(&now), mclock_hdd_shards(&now, hdd_osds)].into_iter().flatten() {
            self.events
                .record(Level::Warning, EventKind::RecoveryBoosted, None, None, format!("fast drain: {warning}"))
                .await;
        }
        self.apply_boost(boost, state).await
    }

    async fn apply_boost(&self, mut boost: Boost, state: &ClusterState) -> Result<(), DaemonError> {
        for (name, value) in &boost.set {
            self.ceph.config_set(SECTION, name, value).await.map_err(|e| DaemonError::CannotAct(e.to_string()))?;
        }
        boost.applied = true;
        self.store.save_boost(&boost, now_ms()).await?;
        let before = |name: &str| {
            let saved = boost.saved.iter().find(|s| s.name == name).and_then(|s| s.value.clone());
            saved.unwrap_or_else(|| "unset".into())
        };
        let set: Vec<String> = boost.set.iter().map(|(n, v)| format!("{n} {v} (was {})", before(n))).collect();
        // Whether an OSD runs with them: its ceph.conf, or a value for that OSD, wins.
        let unheard = self.unheard(&boost, state).await?;
        let (level, tail) = if unheard.is_empty() {
            (Level::Info, String::new())
        } else {
            (Level::Warning, format!("; but {}", unheard.join("; ")))
        };
        let message = format!("fast drain: recovery raised for the {SECTION} section: {}{tail}", set.join(", "));
        self.events.record(level, EventKind::RecoveryBoosted, None, None, message).await;
        Ok(())
    }

    /// What keeps the OSDs from running the boost, once they had the time
    /// to receive it.
    async fn unheard(&self, boost: &Boost, state: &ClusterState) -> Result<Vec<String>, DaemonError> {
        let probe = Self::probe(state)?;
        let mut tries = 0;
        loop {
            let after = match self.ceph.recovery_config(probe).await {
                Ok(after) => after,
                Err(e) => return Ok(vec![format!("cannot tell whether the OSDs run with them: {e}")]),
            };
            tries += 1;
            if tries >= ARRIVAL_TRIES || !still_arriving(boost, &after.running) {
                return Ok(not_applied(boost, after.probe, &after.running));
            }
            tokio::time::sleep(ARRIVAL_PAUSE).await;
        }
    }

    async fn restore_boost(&self, boost: &Boost) -> Result<(), DaemonError> {
        let database = self.ceph.config_dump().await.map_err(DaemonError::cluster_unreadable)?;
        // Written again before the first change, as every effect's intent
        // is: a daemon whose database lock has passed to another (RADOS)
        // fails this write and stops, instead of undoing the new leader's boost.
        self.store.save_boost(boost, now_ms()).await?;
        let mut done = Vec::new();
        for step in restore_plan(boost, &database) {
            let outcome = match &step {
                Restore::Set { name, value } => {
                    done.push(format!("{name} {value}"));
                    self.ceph.config_set(SECTION, name, value).await
                }
                Restore::Remove { name } => {
                    done.push(format!("{name} unset"));
                    self.ceph.config_rm(SECTION, name).await
                }
                Restore::Keep { name, now } => {
                    let now = now.as_deref().unwrap_or("unset");
                    done.push(format!("{name} left at {now} (changed by someone else during the boost)"));
                    Ok(())
                }
            };
            outcome.map_err(|e| DaemonError::CannotAct(e.to_string()))?;
        }
        self.store.forget_boost().await?;
        let message =
            format!("no fast drain left: recovery settings of the {SECTION} section back: {}", done.join(", "));
        self.events.record(Level::Info, EventKind::RecoveryRestored, None, None, message).await;
        Ok(())
    }
}
