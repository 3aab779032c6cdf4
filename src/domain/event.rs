//! What the event log can say: a closed list of kinds, each with its level
//! of concern. The daemon records them, the API and CLI show them, and the
//! dashboard reads the same names (served from this list, not retyped).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Info, Level::Warning, Level::Error];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

macro_rules! event_kinds {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal,)*) => {
        /// A stable, machine-readable kind of event.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum EventKind {
            $($(#[doc = $doc])* $variant,)*
        }

        impl EventKind {
            /// Every kind, in the order they are declared.
            pub const ALL: &'static [EventKind] = &[$(EventKind::$variant,)*];

            /// The name stored, sent and matched on.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(EventKind::$variant => $name,)*
                }
            }
        }
    };
}

event_kinds! {
    /// A daemon took the lock of the database in RADOS and leads (after
    /// another's end, or first).
    DaemonLeading = "daemon-leading",
    /// A host was added with its agent's address.
    HostAdded = "host-added",
    HostRemoved = "host-removed",
    HostLabelAdded = "host-label-added",
    HostLabelRemoved = "host-label-removed",
    /// A host's agent answers again after failed polls.
    HostReachable = "host-reachable",
    HostUnreachable = "host-unreachable",
    /// A host's first inventory arrived.
    InventoryFirst = "inventory-first",
    /// Devices appeared, disappeared or changed (cephadm's "Detected new or changed devices").
    DevicesChanged = "devices-changed",
    /// A host's ceph-volume is of another release than before, or of a
    /// major the cluster does not run (a warning then).
    HostCephRelease = "host-ceph-release",
    /// A device held back from specs was released.
    DeviceReleased = "device-released",
    /// `device replace`: a disk's OSDs are being removed to take a new disk, its slot held.
    DeviceReplace = "device-replace",
    /// `device replace --clear`: the slot's holds lifted, its removals stopped where they could be.
    DeviceReplaceCleared = "device-replace-cleared",
    /// A new disk is in a replaced disk's slot: its holds are lifted, specs redeploy the ids.
    DeviceSlotFilled = "device-slot-filled",
    /// ceph-volume's "being replaced" header written on a replaced disk
    /// that is still in its slot, or erased from it (`--clear`, a release).
    DeviceReplaceHeader = "device-replace-header",
    SpecApplied = "spec-applied",
    SpecRemoved = "spec-removed",
    /// ceph-volume is about to run for a spec on a host.
    OsdCreate = "osd-create",
    OsdCreated = "osd-created",
    OsdCreateFailed = "osd-create-failed",
    /// The agent could not be asked; the creation is tried again later.
    OsdCreateDeferred = "osd-create-deferred",
    /// The host's agent cannot create OSDs (e.g. it serves a fixed inventory file).
    OsdCreateRefused = "osd-create-refused",
    /// A new OSD's daemon is being started (cephadm's "Deploying daemon osd.N on HOST").
    OsdDeploying = "osd-deploying",
    /// New OSDs are up and in under their host.
    OsdDeployed = "osd-deployed",
    RemovalScheduled = "removal-scheduled",
    /// `osd rm stop` was asked for.
    RemovalStop = "removal-stop",
    RemovalDraining = "removal-draining",
    RemovalDrained = "removal-drained",
    RemovalStopping = "removal-stopping",
    RemovalDestroying = "removal-destroying",
    /// Purged, or destroyed for a replacement.
    RemovalPurged = "removal-purged",
    RemovalDone = "removal-done",
    RemovalRestoring = "removal-restoring",
    /// In place: destroyed and zapped, waiting under `noout` for its new disk.
    RemovalRejoining = "removal-rejoining",
    RemovalCancelled = "removal-cancelled",
    /// Another OSD took a removal's id, or another disk its disk's path:
    /// the removal ended, acting on nothing more.
    RemovalSuperseded = "removal-superseded",
    /// A step of a removal failed; it is tried again.
    RemovalActionFailed = "removal-action-failed",
    /// An in-place disk change's stop, destroy or zap waits: the cluster is
    /// worse than accepted (the PGs named), or its PG map cannot be read.
    InPlaceHeld = "in-place-held",
    /// The cluster is no worse than accepted again: the held act goes on.
    InPlaceHoldLifted = "in-place-hold-lifted",
    /// Fast drains: recovery settings raised (what, from what, and what keeps them from working).
    RecoveryBoosted = "recovery-boosted",
    /// The last fast drain ended or was stopped: the settings are back.
    RecoveryRestored = "recovery-restored",
    /// A device is about to be wiped.
    Zap = "zap",
    Zapped = "zapped",
    /// A disk an operation would have wiped is not the one it recorded
    /// (another disk at the path, another OSD's or cluster's volumes on it):
    /// it is left alone.
    DiskNotOurs = "disk-not-ours",
    /// An API token was created (its name and role; never its secret).
    TokenCreated = "token-created",
    TokenRevoked = "token-revoked",
    /// A token asked for a change its role does not allow.
    AccessDenied = "access-denied",
    /// Benchmarks were queued (per OSD or of the cluster).
    BenchRequested = "bench-requested",
    BenchFinished = "bench-finished",
    /// A benchmark failed, or a restart cut it off.
    BenchFailed = "bench-failed",
    /// An OSD is much slower than comparable ones.
    BenchOutlier = "bench-outlier",
    /// A disk probe (fio on a blank disk) was asked for.
    ProbeRequested = "probe-requested",
    ProbeFinished = "probe-finished",
    /// A probe was refused by the agent, failed, or a restart cut it off.
    ProbeFailed = "probe-failed",
    /// A probed disk is far below comparable disks.
    ProbeOutlier = "probe-outlier",
    /// A swap (old OSDs out, new disks in) was asked for; at level
    /// warning when the in-place way's risk was accepted.
    SwapScheduled = "swap-scheduled",
    /// `swap stop` was asked for.
    SwapStop = "swap-stop",
    /// A swap moved to its next phase.
    SwapPhase = "swap-phase",
    /// A step of a swap failed; it is tried again.
    SwapActionFailed = "swap-action-failed",
    /// A swap ended: done, stopped or failed, with what it left.
    SwapEnded = "swap-ended",
}

impl EventKind {
    pub fn parse(s: &str) -> Option<EventKind> {
        EventKind::ALL.iter().copied().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_by_name_and_json() {
        let mut names = std::collections::HashSet::new();
        for k in EventKind::ALL {
            assert!(names.insert(k.as_str()), "{} is listed twice", k.as_str());
            assert_eq!(EventKind::parse(k.as_str()), Some(*k));
            let json = serde_json::to_string(k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<EventKind>(&json).unwrap(), *k);
        }
        assert_eq!(EventKind::parse("no-such-kind"), None);
    }
}
