//! Faster recovery while a fast drain runs (`osd rm --fast`): what to set,
//! what to put back, and what keeps a setting from working.
//!
//! Under mClock (Quincy and later) recovery is given its share by the
//! profile: `osd_mclock_profile high_recovery_ops` (Ceph's own study,
//! doc/dev/osd_internals/mclock_wpq_cmp_study.rst, measured about twice
//! the recovery rate of `high_client_ops` at about equal client IOPS).
//! Under wpq (Pacific's default) it is `osd_max_backfills` and
//! `osd_recovery_max_active`, raised to twice what the OSDs run with, at
//! least 4 and 8.
//!
//! The values are set once for the `osd` section of the monitors' config
//! database (a drain's receivers are spread by CRUSH over most OSDs, and
//! one setting per option is one call to make and one to undo), after the
//! values there were read and the boost, with them, was stored: after a
//! crash the cluster holds the boosted values, so they are never read
//! again as "the previous ones". When the last fast drain ends or is
//! stopped each option goes back to what it was (removed where it was not
//! set), unless someone changed it meanwhile: theirs stays.
//!
//! Two traps are reported, not worked around: under mClock, a change of
//! `osd_max_backfills` or `osd_recovery_max_active` does not take effect
//! unless `osd_mclock_override_recovery_settings` is true (seen on Reef
//! 18.2.7: the OSD removes the key from the monitors' database and logs
//! "Change to osd_max_backfills on osd.0 did not take effect"; values from
//! its ceph.conf still apply from its start), so an operator's limits
//! there are a trap and the boost takes the profile; and a value in an
//! OSD's local ceph.conf (or set for `osd.N`) wins over the `osd` section,
//! so a boost there does not reach that OSD.

use super::Removal;

/// The section the boost sets.
pub const SECTION: &str = "osd";

/// The OSDs' op scheduler (`osd_op_queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    Wpq,
    Mclock,
}

impl Scheduler {
    pub const ALL: [Scheduler; 2] = [Scheduler::Wpq, Scheduler::Mclock];

    pub fn as_str(self) -> &'static str {
        match self {
            Scheduler::Wpq => "wpq",
            Scheduler::Mclock => "mclock",
        }
    }

    pub fn parse(s: &str) -> Option<Scheduler> {
        Scheduler::ALL.into_iter().find(|q| q.as_str() == s)
    }
}

/// One option as an OSD runs with it (`config show-with-defaults`).
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    pub name: String,
    pub value: String,
    /// `default`, `file`, `mon`, `override`...
    pub source: String,
}

/// One entry of the monitors' config database (`config dump`).
#[derive(Debug, Clone, PartialEq)]
pub struct DbEntry {
    pub section: String,
    pub name: String,
    pub value: String,
}

/// What the cluster says, read when a boost starts.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryNow {
    /// Which OSD `running` is from.
    pub probe: u32,
    pub running: Vec<Running>,
    pub database: Vec<DbEntry>,
}

impl RecoveryNow {
    fn running(&self, name: &str) -> Option<&Running> {
        self.running.iter().find(|r| r.name == name)
    }

    pub(super) fn number(&self, name: &str) -> Option<u64> {
        self.running(name).and_then(|r| r.value.parse().ok())
    }

    pub fn scheduler(&self) -> Scheduler {
        match self.running("osd_op_queue").map(|r| r.value.as_str()) {
            Some("mclock_scheduler") => Scheduler::Mclock,
            _ => Scheduler::Wpq,
        }
    }
}

/// An option's value in the `osd` section before the boost; None: not set.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub name: String,
    pub value: Option<String>,
}

/// A boost under way. Stored before its first `config set`, removed after
/// the restore.
#[derive(Debug, Clone, PartialEq)]
pub struct Boost {
    pub scheduler: Scheduler,
    /// What the `osd` section held before.
    pub saved: Vec<Saved>,
    /// (option, value) the boost sets.
    pub set: Vec<(String, String)>,
    /// Every `config set` went through.
    pub applied: bool,
}

/// What the boost does to the cluster as it is now.
pub fn plan(now: &RecoveryNow) -> Boost {
    let scheduler = now.scheduler();
    let set: Vec<(String, String)> = match scheduler {
        Scheduler::Mclock => vec![("osd_mclock_profile".into(), "high_recovery_ops".into())],
        Scheduler::Wpq => {
            let backfills = now.number("osd_max_backfills").unwrap_or(1);
            // 0 means "by device class": the larger of the two classes' values.
            let active = match now.number("osd_recovery_max_active") {
                Some(n) if n > 0 => n,
                _ => now
                    .number("osd_recovery_max_active_hdd")
                    .max(now.number("osd_recovery_max_active_ssd"))
                    .unwrap_or(3),
            };
            vec![
                ("osd_max_backfills".into(), (2 * backfills).max(4).to_string()),
                ("osd_recovery_max_active".into(), (2 * active).max(8).to_string()),
            ]
        }
    };
    let saved = set
        .iter()
        .map(|(name, _)| Saved { name: name.clone(), value: db_value(&now.database, name).map(str::to_string) })
        .collect();
    Boost { scheduler, saved, set, applied: false }
}

fn db_value<'a>(db: &'a [DbEntry], name: &str) -> Option<&'a str> {
    db.iter().find(|e| e.section == SECTION && e.name == name).map(|e| e.value.as_str())
}

/// The mClock trap, in words, when the cluster is in it: recovery limits
/// an operator set that mClock ignores.
pub fn mclock_trap(now: &RecoveryNow) -> Option<String> {
    if now.scheduler() != Scheduler::Mclock {
        return None;
    }
    if now.running("osd_mclock_override_recovery_settings").is_some_and(|r| r.value == "true") {
        return None;
    }
    let ignored: Vec<String> = ["osd_max_backfills", "osd_recovery_max_active"]
        .iter()
        .filter_map(|name| now.running(name))
        .filter(|r| !matches!(r.source.as_str(), "default" | "mclock"))
        .map(|r| format!("{} = {} (from {})", r.name, r.value, r.source))
        .collect();
    (!ignored.is_empty()).then(|| {
        format!(
            "the OSDs run mClock without osd_mclock_override_recovery_settings, so a change of their recovery \
             limits does not take effect (they run with {}); --fast sets osd_mclock_profile high_recovery_ops \
             instead",
            ignored.join(", ")
        )
    })
}

/// The options the boost set that osd.`probe` does not run with, and why
/// (a value from its ceph.conf, or one set for that OSD, wins).
pub fn not_applied(b: &Boost, probe: u32, running: &[Running]) -> Vec<String> {
    b.set
        .iter()
        .filter_map(|(name, value)| {
            let r = running.iter().find(|r| &r.name == name)?;
            (r.value != *value).then(|| {
                format!("osd.{probe} runs {name} {} from its {} settings, not the boost's {value}", r.value, r.source)
            })
        })
        .collect()
}

/// Whether osd.`probe` may simply not have the boost's values yet: the
/// monitors hand a `config set` to the OSDs a moment later (seen on Reef:
/// read right after the set, osd.0 still ran the default profile), and
/// only a value from a stronger source (its file, an override) keeps one
/// out for good.
pub fn still_arriving(b: &Boost, running: &[Running]) -> bool {
    b.set.iter().any(|(name, value)| {
        running
            .iter()
            .find(|r| &r.name == name)
            .is_some_and(|r| r.value != *value && matches!(r.source.as_str(), "default" | "mon" | "mclock"))
    })
}

/// Putting one option back.
#[derive(Debug, Clone, PartialEq)]
pub enum Restore {
    Set {
        name: String,
        value: String,
    },
    /// It was not set before the boost.
    Remove {
        name: String,
    },
    /// Someone changed it since the boost set it: theirs stays.
    Keep {
        name: String,
        now: Option<String>,
    },
}

/// How to put back what `b` set, given the database now.
pub fn restore_plan(b: &Boost, database: &[DbEntry]) -> Vec<Restore> {
    b.set
        .iter()
        .map(|(name, ours)| {
            let now = db_value(database, name);
            if b.applied && now != Some(ours.as_str()) {
                return Restore::Keep { name: name.clone(), now: now.map(str::to_string) };
            }
            match b.saved.iter().find(|s| &s.name == name).and_then(|s| s.value.clone()) {
                Some(value) => Restore::Set { name: name.clone(), value },
                None => Restore::Remove { name: name.clone() },
            }
        })
        .collect()
}

/// What the worker does about the boost this round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoostStep {
    /// Read the values, store the boost, then set.
    Start,
    /// Stored but not (all) set: a crash came between. Set again.
    Apply,
    /// No fast drain left: put the values back, then forget the boost.
    Restore,
    Nothing,
}

/// Whether a fast drain runs among `active` removals.
pub fn wanted(active: &[&Removal]) -> bool {
    active.iter().any(|r| r.fast && r.phase.is_draining() && !r.stop_requested)
}

pub fn boost_step(wanted: bool, stored: Option<&Boost>) -> BoostStep {
    match (wanted, stored) {
        (true, None) => BoostStep::Start,
        (true, Some(b)) if !b.applied => BoostStep::Apply,
        (false, Some(_)) => BoostStep::Restore,
        _ => BoostStep::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::removal::Phase;

    fn running(values: &[(&str, &str, &str)]) -> Vec<Running> {
        values
            .iter()
            .map(|(n, v, s)| Running { name: n.to_string(), value: v.to_string(), source: s.to_string() })
            .collect()
    }

    fn db(values: &[(&str, &str)]) -> Vec<DbEntry> {
        values
            .iter()
            .map(|(n, v)| DbEntry { section: SECTION.into(), name: n.to_string(), value: v.to_string() })
            .collect()
    }

    /// The sandbox: wpq, osd_max_backfills 4 and osd_recovery_max_active 4 from ceph.conf.
    fn sandbox(database: Vec<DbEntry>) -> RecoveryNow {
        RecoveryNow {
            probe: 1,
            running: running(&[
                ("osd_op_queue", "wpq", "default"),
                ("osd_max_backfills", "4", "file"),
                ("osd_recovery_max_active", "4", "file"),
                ("osd_recovery_max_active_hdd", "3", "default"),
                ("osd_recovery_max_active_ssd", "10", "default"),
            ]),
            database,
        }
    }

    #[test]
    fn wpq_doubles_the_limits_and_keeps_what_was_set_before() {
        let b = plan(&sandbox(db(&[("osd_recovery_max_active", "3")])));
        assert_eq!(b.scheduler, Scheduler::Wpq);
        assert_eq!(b.set, [("osd_max_backfills".into(), "8".into()), ("osd_recovery_max_active".into(), "8".into())]);
        assert_eq!(
            b.saved,
            [
                Saved { name: "osd_max_backfills".into(), value: None },
                Saved { name: "osd_recovery_max_active".into(), value: Some("3".into()) }
            ]
        );
        // Pacific's defaults: 1 backfill, recovery by device class (3 hdd, 10 ssd).
        let mut defaults = sandbox(vec![]);
        defaults.running = running(&[
            ("osd_max_backfills", "1", "default"),
            ("osd_recovery_max_active", "0", "default"),
            ("osd_recovery_max_active_hdd", "3", "default"),
            ("osd_recovery_max_active_ssd", "10", "default"),
        ]);
        let b = plan(&defaults);
        assert_eq!(b.set, [("osd_max_backfills".into(), "4".into()), ("osd_recovery_max_active".into(), "20".into())]);
    }

    #[test]
    fn mclock_gets_its_profile_and_the_trap_is_named() {
        let mut now = sandbox(vec![]);
        now.running = running(&[
            ("osd_op_queue", "mclock_scheduler", "default"),
            ("osd_max_backfills", "8", "mon"),
            ("osd_recovery_max_active", "0", "default"),
            ("osd_mclock_override_recovery_settings", "false", "default"),
        ]);
        let b = plan(&now);
        assert_eq!(b.set, [("osd_mclock_profile".into(), "high_recovery_ops".into())]);
        assert_eq!(
            mclock_trap(&now).as_deref(),
            Some(
                "the OSDs run mClock without osd_mclock_override_recovery_settings, so a change of their \
                 recovery limits does not take effect (they run with osd_max_backfills = 8 (from mon)); --fast \
                 sets osd_mclock_profile high_recovery_ops instead"
            )
        );
        now.running[3].value = "true".into();
        assert_eq!(mclock_trap(&now), None, "overridden on purpose");
        assert_eq!(mclock_trap(&sandbox(vec![])), None, "wpq honours them");
    }

    #[test]
    fn a_value_not_received_yet_is_waited_for_and_one_kept_out_by_a_stronger_source_is_not() {
        let b = Boost {
            scheduler: Scheduler::Mclock,
            saved: vec![],
            set: vec![("osd_mclock_profile".into(), "high_recovery_ops".into())],
            applied: true,
        };
        let profile = |value: &str, source: &str| running(&[("osd_mclock_profile", value, source)]);
        assert!(still_arriving(&b, &profile("balanced", "default")), "read right after the set (Reef)");
        assert!(still_arriving(&b, &profile("balanced", "mon")), "an older value from the monitors");
        assert!(!still_arriving(&b, &profile("high_recovery_ops", "mon")), "arrived");
        assert!(!still_arriving(&b, &profile("balanced", "file")), "its ceph.conf wins for good");
        assert!(!still_arriving(&b, &profile("balanced", "override")));
        assert!(!still_arriving(&b, &[]), "an option the OSD does not know");
    }

    #[test]
    fn a_value_from_ceph_conf_keeps_the_boost_from_an_osd() {
        let b = plan(&sandbox(vec![]));
        let after = running(&[("osd_max_backfills", "4", "file"), ("osd_recovery_max_active", "8", "mon")]);
        assert_eq!(
            not_applied(&b, 1, &after),
            ["osd.1 runs osd_max_backfills 4 from its file settings, not the boost's 8"]
        );
    }

    #[test]
    fn the_restore_puts_back_removes_or_leaves_someone_elses_value() {
        let mut b = plan(&sandbox(db(&[("osd_recovery_max_active", "3")])));
        b.applied = true;
        let now = db(&[("osd_max_backfills", "8"), ("osd_recovery_max_active", "8")]);
        assert_eq!(
            restore_plan(&b, &now),
            [
                Restore::Remove { name: "osd_max_backfills".into() },
                Restore::Set { name: "osd_recovery_max_active".into(), value: "3".into() }
            ]
        );
        let changed = db(&[("osd_max_backfills", "2"), ("osd_recovery_max_active", "8")]);
        assert_eq!(
            restore_plan(&b, &changed)[0],
            Restore::Keep { name: "osd_max_backfills".into(), now: Some("2".into()) }
        );
        // Never applied (a crash before the first set): put back whatever is there.
        b.applied = false;
        assert_eq!(restore_plan(&b, &changed)[0], Restore::Remove { name: "osd_max_backfills".into() });
    }

    #[test]
    fn the_boost_lasts_while_a_fast_drain_does() {
        let mut fast = Removal::new(4, "h".into(), false, false, false, vec![]);
        fast.fast = true;
        fast.phase = Phase::Draining;
        let mut plain = fast.clone();
        plain.fast = false;
        assert!(wanted(&[&plain, &fast]));
        assert!(!wanted(&[&plain]));
        let mut stopped = fast.clone();
        stopped.stop_requested = true;
        assert!(!wanted(&[&stopped]), "rm stop ends it");
        let mut queued = fast.clone();
        queued.phase = Phase::Queued;
        assert!(!wanted(&[&queued]), "not before the drain begins");
        let b = plan(&sandbox(vec![]));
        assert_eq!(boost_step(true, None), BoostStep::Start);
        assert_eq!(boost_step(true, Some(&b)), BoostStep::Apply, "stored, not set: a crash between");
        let applied = Boost { applied: true, ..b.clone() };
        assert_eq!(boost_step(true, Some(&applied)), BoostStep::Nothing);
        assert_eq!(boost_step(false, Some(&applied)), BoostStep::Restore);
        assert_eq!(boost_step(false, Some(&b)), BoostStep::Restore);
        assert_eq!(boost_step(false, None), BoostStep::Nothing);
    }
}
