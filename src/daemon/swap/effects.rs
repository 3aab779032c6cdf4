//! The one effect a swap's step asks for, carried out; and what exactly
//! it asks, for the action log. Each is safe to repeat: the deployment
//! and the removals it stores are found again by their subjects, a
//! `pg-upmap-items` issued twice sets the same entry.

use super::schedule::osd_names;
use super::{deployment_service, deployment_subject, Swaps};
use crate::clock::now_ms;
use crate::daemon::removal::RemoveRequest;
use crate::daemon::DaemonError;
use crate::domain::ceph_release::Release;
use crate::domain::cluster::format_weight;
use crate::domain::command::{Argv, CommandLine};
use crate::domain::deploy::Deployment;
use crate::domain::operation::{NewOperation, Outcome};
use crate::domain::removal::InPlace;
use crate::domain::swap::{
    deploy_commands, initial_weight_sections, legacy_initial_weight_section, Effect, SwapRecord, UpmapItem, Way,
    HANDOVER_WEIGHT,
};
use crate::store::{DeploymentCodec, RemovalCodec, StoreError};

fn upmap_line(i: &UpmapItem) -> String {
    if i.pairs.is_empty() {
        return format!("ceph osd rm-pg-upmap-items {}", i.pgid);
    }
    let pairs: Vec<String> = i.pairs.iter().map(|(f, t)| format!("{f} {t}")).collect();
    format!("ceph osd pg-upmap-items {} {}", i.pgid, pairs.join(" "))
}

/// Where the option is taken off: the swap's sections and the host's mask
/// an older osdkeeper set.
pub(super) fn clear_sections(rec: &SwapRecord) -> Vec<String> {
    let mut sections = initial_weight_sections(&rec.state);
    sections.push(legacy_initial_weight_section(&rec.state.host));
    sections
}

/// What the deployment of the new disks runs, each command with its disks.
fn commands(rec: &SwapRecord, release: Release) -> Vec<(Argv, Vec<String>)> {
    let s = &rec.state;
    let disks: Vec<String> = s.news.iter().map(|n| n.path.clone()).collect();
    let ids = match s.way {
        Way::InPlace => s.old_ids(),
        Way::FreeBay => s.news.iter().filter_map(|n| n.planned_id).collect(),
    };
    deploy_commands(s.recipe, release, &disks, &ids)
}

impl Swaps {
    pub(super) fn detail(&self, rec: &SwapRecord, effect: &Effect) -> String {
        let s = &rec.state;
        let each = |sections: Vec<String>, line: &dyn Fn(&str) -> String| {
            sections.iter().map(|sec| line(sec)).collect::<Vec<_>>().join("; ")
        };
        match effect {
            Effect::PauseBalancer => "ceph balancer off".into(),
            Effect::ResumeBalancer => "ceph balancer on".into(),
            Effect::SetInitialWeight => each(initial_weight_sections(s), &|sec| {
                format!("ceph config set {sec} osd_crush_initial_weight {HANDOVER_WEIGHT}")
            }),
            Effect::ClearInitialWeight => {
                each(clear_sections(rec), &|sec| format!("ceph config rm {sec} osd_crush_initial_weight"))
            }
            Effect::Deploy => {
                let release = self.cluster.planning_release();
                let shown: Vec<String> =
                    commands(rec, release).iter().map(|(c, _)| format!("ceph-volume {}", CommandLine(c))).collect();
                format!("deployment on {}: {}", s.host, shown.join("; "))
            }
            Effect::Reweight { osd, weight } => format!("ceph osd crush reweight osd.{osd} {}", format_weight(*weight)),
            Effect::Upmap { items } => items.iter().map(upmap_line).collect::<Vec<_>>().join("; "),
            Effect::SetWeights { weights } => {
                let w: Vec<String> = weights.iter().map(|(id, w)| format!("osd.{id} {}", format_weight(*w))).collect();
                format!("CRUSH weights in one change: {}", w.join(", "))
            }
            Effect::RmUpmap { pgids } => {
                pgids.iter().map(|p| format!("ceph osd rm-pg-upmap-items {p}")).collect::<Vec<_>>().join("; ")
            }
            Effect::Retire => {
                let ids = s.old_ids().iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
                match s.way {
                    Way::FreeBay => format!("osd rm {ids} --zap"),
                    Way::InPlace => format!(
                        "osd rm {ids} --replace --zap, in place (noout, stop, destroy keeping the id, zap), for the \
                         disk in {}",
                        s.news.first().map_or("its slot", |n| n.path.as_str())
                    ),
                }
            }
            Effect::StopRemovals => {
                format!("osd rm stop {}", s.old_ids().iter().map(u32::to_string).collect::<Vec<_>>().join(" "))
            }
        }
    }

    pub(super) async fn carry_out(&self, rec: &SwapRecord, effect: &Effect) -> Outcome<String> {
        let s = &rec.state;
        let ceph = &self.ceph;
        let done = |r: Result<(), crate::ceph::CephError>, what: String| match r {
            Ok(()) => Outcome::Done(what),
            Err(e) => Outcome::Failed(e.to_string()),
        };
        match effect {
            Effect::PauseBalancer => done(ceph.set_balancer(false).await, "balancer off".into()),
            Effect::ResumeBalancer => done(ceph.set_balancer(true).await, "balancer on".into()),
            Effect::SetInitialWeight => {
                let w = HANDOVER_WEIGHT.to_string();
                let sections = initial_weight_sections(s);
                for section in &sections {
                    if let Err(e) = ceph.config_set(section, "osd_crush_initial_weight", &w).await {
                        return Outcome::Failed(format!("{section}: {e}"));
                    }
                }
                Outcome::Done(format!("{} join at CRUSH weight {w}", sections.join(", ")))
            }
            Effect::ClearInitialWeight => {
                for section in clear_sections(rec) {
                    if let Err(e) = ceph.config_rm(&section, "osd_crush_initial_weight").await {
                        return Outcome::Failed(format!("{section}: {e}"));
                    }
                }
                Outcome::Done("option removed".into())
            }
            Effect::Deploy => self.deploy(rec).await,
            Effect::Reweight { osd, weight } => {
                done(ceph.reweight(*osd, *weight).await, format!("osd.{osd} at {}", format_weight(*weight)))
            }
            Effect::Upmap { items } => self.upmaps(items).await,
            Effect::SetWeights { weights } => done(ceph.set_crush_weights(weights).await, "final weights set".into()),
            Effect::RmUpmap { pgids } => {
                let items: Vec<UpmapItem> =
                    pgids.iter().map(|p| UpmapItem { pgid: p.clone(), pairs: Vec::new() }).collect();
                self.upmaps(&items).await
            }
            Effect::Retire => self.retire(rec).await,
            Effect::StopRemovals => self.stop_removals(rec).await,
        }
    }

    /// Every entry of the batch; those that went through show in the next
    /// read, the others are asked again.
    async fn upmaps(&self, items: &[UpmapItem]) -> Outcome<String> {
        let mut failed = Vec::new();
        for item in items {
            if let Err(e) = self.ceph.pg_upmap_items(&item.pgid, &item.pairs).await {
                failed.push(format!("{}: {e}", item.pgid));
            }
        }
        match failed.len() {
            0 => Outcome::Done(format!("{} entr{} set", items.len(), if items.len() == 1 { "y" } else { "ies" })),
            n => Outcome::Failed(format!("{n} of {} failed: {}", items.len(), failed.join("; "))),
        }
    }

    async fn deploy(&self, rec: &SwapRecord) -> Outcome<String> {
        let s = &rec.state;
        let service = deployment_service(rec.number);
        let run_key = format!("swap-{}", rec.number);
        let planned = commands(rec, self.cluster.planning_release());
        let d = Deployment::new(s.host.clone(), service, None, 0, run_key, None, planned);
        let subject = deployment_subject(&s.host, rec.number);
        let new =
            NewOperation { subject: subject.clone(), host: Some(s.host.clone()), state: d, actor: rec.actor.clone() };
        match self
            .store
            .ops::<DeploymentCodec>()
            .add(&[new], now_ms(), |s| format!("{s} is being deployed"), |_, _| {})
            .await
        {
            Ok(recs) => {
                self.deployer.wake();
                Outcome::Done(format!("deployment {} stored", recs[0].number))
            }
            // Stored before a restart cut the outcome off: the same one goes on.
            Err(StoreError::Conflict(m)) => Outcome::Done(m),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    /// The removals of the old OSDs. Free bay: weight 0 and empty by now,
    /// they go straight to safe-to-destroy, stop, purge and zap; an id with
    /// an active removal is left to it. In place: `noout`, stop, destroy
    /// keeping the id and zap, with the risk the swap accepted, the slot
    /// carrying the new disk; asked only while the swap sees none of its
    /// own, so that another removal of the id refuses it.
    async fn retire(&self, rec: &SwapRecord) -> Outcome<String> {
        let s = &rec.state;
        let mut ids = Vec::new();
        for id in s.old_ids() {
            match self.store.ops::<RemovalCodec>().active_on(&crate::store::removal_subject(id)).await {
                Ok(Some(_)) if s.way == Way::FreeBay => {}
                Ok(_) => ids.push(id),
                Err(e) => return Outcome::Failed(e.to_string()),
            }
        }
        if ids.is_empty() {
            return Outcome::Done("the removals were stored already".into());
        }
        let expected_uuids = s.olds.iter().filter_map(|o| o.uuid.clone().map(|u| (o.id, u))).collect::<Vec<_>>();
        let mut req = RemoveRequest { ids: ids.clone(), zap: true, expected_uuids, ..RemoveRequest::default() };
        if s.way == Way::InPlace {
            req.replace = true;
            req.slot = s.news.first().map(|n| n.path.clone());
            let accept = |r: &crate::domain::swap::Risk| InPlace {
                accept_inactive: r.accept_inactive,
                accept_single_copy: r.accept_single_copy,
            };
            req.in_place = Some(s.risk.as_ref().map(accept).unwrap_or_default());
        }
        match self.removals.schedule_removals(&req).await {
            Ok(_) => Outcome::Done(format!("removal of {} stored", osd_names(&ids))),
            Err(DaemonError::NotFound(m)) => Outcome::Done(format!("{m}: nothing to retire")),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    /// `osd rm stop` of the swap's removals not yet asked to stop.
    async fn stop_removals(&self, rec: &SwapRecord) -> Outcome<String> {
        let ids: Vec<u32> = match self.removals_of(rec).await {
            Ok(rs) => rs
                .iter()
                .filter(|r| !r.state.stop_requested && !r.state.phase.is_finished())
                .map(|r| r.state.osd_id)
                .collect(),
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        if ids.is_empty() {
            return Outcome::Done("nothing left to stop".into());
        }
        match self.removals.stop_removals(&ids).await {
            Ok(_) => Outcome::Done(format!("the removal of {} asked to stop", osd_names(&ids))),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}
