//! The one effect a swap's step asks for, carried out; and what exactly
//! it asks, for the action log. Each is safe to repeat: the deployment
//! and the removals it stores are found again by their subjects, a
//! `pg-upmap-items` issued twice sets the same entry.

use super::schedule::osd_names;
use super::{deployment_service, deployment_subject, Swaps};
use crate::clock::now_ms;
use crate::daemon::removal::outcome_of;
use crate::daemon::removal::RemoveRequest;
use crate::daemon::DaemonError;
use crate::domain::ceph_release::Release;
use crate::domain::cluster::format_weight;
use crate::domain::command::{Argv, CommandLine};
use crate::domain::deploy::Deployment;
use crate::domain::operation::{NewOperation, Outcome};
use crate::domain::swap::{
    deploy_commands, initial_weight_sections, legacy_initial_weight_section, zap_expect, Effect, SwapRecord, UpmapItem,
    Way, HANDOVER_WEIGHT,
};
use crate::store::{DeploymentCodec, StoreError};
use crate::wire::agent::{StopRequest, ZapRequest};

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
                format!("osd rm {} --zap", s.old_ids().iter().map(u32::to_string).collect::<Vec<_>>().join(" "))
            }
            Effect::Noout { osd } => format!("ceph osd add-noout osd.{osd}"),
            Effect::ClearNoout { osd } => format!("ceph osd rm-noout osd.{osd}"),
            Effect::StopDaemon { osd } => format!("stop osd.{osd} on {}", s.host),
            Effect::StartDaemon { osd } => format!("start osd.{osd} on {}", s.host),
            Effect::MarkDown { osd } => format!("ceph osd down {osd}"),
            Effect::Destroy { osd } => format!("ceph osd destroy {osd} --yes-i-really-mean-it"),
            Effect::Zap { path } => format!("zap {path} on {}", s.host),
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
            Effect::Noout { osd } => done(ceph.set_noout(*osd, true).await, format!("noout on osd.{osd}")),
            Effect::ClearNoout { osd } => done(ceph.set_noout(*osd, false).await, format!("noout off osd.{osd}")),
            Effect::MarkDown { osd } => done(ceph.mark_down(*osd).await, format!("marked osd.{osd} down")),
            Effect::Destroy { osd } => done(ceph.destroy_unchecked(*osd).await, format!("destroyed osd.{osd}")),
            Effect::StopDaemon { .. } | Effect::StartDaemon { .. } | Effect::Zap { .. } => {
                self.on_host(rec, effect).await
            }
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

    /// The removals of the old OSDs, weight 0 and empty by now: they go
    /// straight to safe-to-destroy, stop, purge and zap.
    async fn retire(&self, rec: &SwapRecord) -> Outcome<String> {
        let mut ids = Vec::new();
        for id in rec.state.old_ids() {
            match self.store.ops::<crate::store::RemovalCodec>().active_on(&crate::store::removal_subject(id)).await {
                Ok(None) => ids.push(id),
                Ok(Some(_)) => {}
                Err(e) => return Outcome::Failed(e.to_string()),
            }
        }
        if ids.is_empty() {
            return Outcome::Done("the removals were stored already".into());
        }
        let expected_uuids =
            rec.state.olds.iter().filter_map(|o| o.uuid.clone().map(|u| (o.id, u))).collect::<Vec<_>>();
        let req = RemoveRequest { ids: ids.clone(), zap: true, expected_uuids, ..RemoveRequest::default() };
        match self.removals.schedule_removals(&req).await {
            Ok(_) => Outcome::Done(format!("removal of {} stored", osd_names(&ids))),
            Err(DaemonError::NotFound(m)) => Outcome::Done(format!("{m}: nothing to retire")),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    async fn on_host(&self, rec: &SwapRecord, effect: &Effect) -> Outcome<String> {
        let s = &rec.state;
        let host = match self.store.host(&s.host).await {
            Ok(h) => h,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let agents = &self.agents;
        let uuid_of = |osd: u32| s.olds.iter().find(|o| o.id == osd).and_then(|o| o.uuid.clone());
        let done = match effect {
            Effect::Zap { path } => {
                let reason = format!("swap {} of {}", rec.number, osd_names(&s.old_ids()));
                let expect = zap_expect(s, path, self.cluster.fsid().as_deref());
                let req = ZapRequest::expecting(path, expect, reason);
                agents.zap(&host, &req).await.map(|z| z.steps.join("; "))
            }
            Effect::StartDaemon { osd } => agents.start_osd(&host, *osd).await.map(|st| st.detail),
            Effect::StopDaemon { osd } => {
                let req = StopRequest { osd_fsid: uuid_of(*osd) };
                agents.stop_osd(&host, *osd, &req).await.map(|st| st.detail)
            }
            _ => return Outcome::Failed(format!("{} is not done on the host", effect.name())),
        };
        outcome_of(done)
    }
}
