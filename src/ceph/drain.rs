//! What the removal worker reads about drains beyond the round's cluster
//! state: the PGs still on a draining OSD (`pg ls-by-osd`, for the bytes
//! left and what holds them); when a drain could start, what the pacing
//! weighs (pools and their rules, the CRUSH tree, the `osd_max_backfills`
//! an OSD runs with); and for fast drains the recovery settings (`config
//! show-with-defaults`, `config dump`) and their changes (`config set`,
//! `config rm`). The config database's entries name their section as
//! `config set` does, with the mask (`osd/host:NAME`).

use super::cli::CephCli;
use super::placement::crush_items;
use super::wire::{ConfigDumped, ConfigShown, CrushRule, OsdDumpPools, OsdTree, PgDump, PgStatEntry};
use super::CephError;
use crate::domain::removal::boost::{DbEntry, RecoveryNow, Running};
use crate::domain::removal::{PacingFacts, PgOnOsd};

impl CephCli {
    pub(super) async fn read_pgs_on_osd(&self, id: u32) -> Result<Vec<PgOnOsd>, CephError> {
        let dump: PgDump = self.json(&["pg", "ls-by-osd", &id.to_string()]).await?;
        Ok(dump.pg_stats.into_iter().map(PgStatEntry::on_osd).collect())
    }

    /// `probe` is the OSD whose `osd_max_backfills` stands for all: `config
    /// show` gives what a running OSD uses (ceph.conf, the monitors'
    /// database or mClock's own choice alike), where `config get` gives only
    /// the database's; one OSD, because asking each costs a call apiece and
    /// clusters set it per class at most.
    pub(super) async fn read_pacing_facts(&self, probe: u32) -> Result<PacingFacts, CephError> {
        let who = format!("osd.{probe}");
        let config_show = ["config", "show", who.as_str(), "osd_max_backfills"];
        let (osd_dump, rules, tree, max) = tokio::try_join!(
            self.json::<OsdDumpPools>(&["osd", "dump"]),
            self.json::<Vec<CrushRule>>(&["osd", "crush", "rule", "dump"]),
            self.json::<OsdTree>(&["osd", "tree"]),
            self.ok(&config_show),
        )?;
        let max_backfills = max.stdout.trim().parse().map_err(|_| CephError::Decode {
            command: format!("config show {who} osd_max_backfills"),
            message: format!("not a count: {:?}", max.stdout.trim()),
        })?;
        let pools = self.pool_rules_of(&osd_dump, &rules).await?;
        Ok(PacingFacts { max_backfills, pools, crush: crush_items(tree) })
    }

    pub(super) async fn read_recovery_config(&self, probe: u32) -> Result<RecoveryNow, CephError> {
        let who = format!("osd.{probe}");
        let show = ["config", "show-with-defaults", who.as_str()];
        let (shown, dumped) = tokio::try_join!(self.json::<Vec<ConfigShown>>(&show), self.read_config_dump(),)?;
        let running = shown.into_iter().map(|c| Running { name: c.name, value: c.value, source: c.source }).collect();
        Ok(RecoveryNow { probe, running, database: dumped })
    }

    pub(super) async fn read_config_dump(&self) -> Result<Vec<DbEntry>, CephError> {
        let dumped: Vec<ConfigDumped> = self.json(&["config", "dump"]).await?;
        Ok(dumped
            .into_iter()
            .map(|c| DbEntry { section: who(&c.section, &c.mask), name: c.name, value: c.value })
            .collect())
    }
}

/// The section an option is set for, as `config set` names it: with its
/// mask (`osd/host:f5-422-03`), so that a value for some OSDs only is not
/// read as the whole section's.
fn who(section: &str, mask: &str) -> String {
    if mask.is_empty() {
        section.to_string()
    } else {
        format!("{section}/{mask}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_masked_option_is_named_as_config_set_names_it() {
        assert_eq!(super::who("osd", ""), "osd");
        assert_eq!(super::who("osd", "host:f5-422-03"), "osd/host:f5-422-03");
    }
}
