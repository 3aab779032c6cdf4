//! `osd replace ID... --with HOST:DEV...` (and `--in-place`): checked in
//! full before anything is stored, previewed with what each way costs, and
//! `swap stop`.

use super::Swaps;
use crate::clock::now_ms;
use crate::daemon::deploy::making_pace;
use crate::daemon::{audit, DaemonError};
use crate::domain::cluster::same_host;
use crate::domain::copies::Accept;
use crate::domain::drain_preview::observed;
use crate::domain::event::{EventKind, Level};
use crate::domain::inventory::Device;
use crate::domain::operation::NewOperation;
use crate::domain::removal::{identify, RemovalRecord};
use crate::domain::spec::Method;
use crate::domain::swap::cost::{costs, in_place_refusals, risk, CostInput, Costs};
use crate::domain::swap::{method_of, NewDisk, OldOsd, Recipe, Swap, SwapRecord, Way};
use crate::store::{RemovalCodec, SwapCodec};

/// What `osd replace` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct SwapRequest {
    pub osds: Vec<u32>,
    /// The host of the new disks; the old OSDs' when not given.
    pub host: Option<String>,
    /// The new disks (free bay), or the slot the new disk goes in (in
    /// place; the old OSD's disk when not given).
    pub devices: Vec<String>,
    pub way: Way,
    pub accept: Accept,
    /// How the new OSDs are made: the old OSDs' method when not given.
    pub method: Option<Method>,
    pub encrypted: bool,
}

/// A request that passed every check, with what it costs.
pub(super) struct Checked {
    pub swap: Swap,
    pub costs: Costs,
    pub refusals: Vec<String>,
}

fn invalid(field: &str, value: impl std::fmt::Display, why: &str) -> DaemonError {
    DaemonError::Invalid(format!("{field}: {value}: {why}"))
}

/// A disk's CRUSH weight as ceph-osd gives it: its size in TiB.
fn weight_of(d: &Device) -> f64 {
    d.size_bytes.unwrap_or(0.0) / (1u64 << 40) as f64
}

impl Swaps {
    /// Stores the swap, or refuses it saying which field and why.
    pub async fn schedule(&self, req: &SwapRequest) -> Result<(SwapRecord, Costs), DaemonError> {
        let checked = self.check(req).await?;
        if !checked.refusals.is_empty() {
            return Err(DaemonError::RefusedUnsafe(format!("{}; nothing was scheduled", checked.refusals.join("; "))));
        }
        let mut swap = checked.swap;
        if swap.way == Way::InPlace {
            swap.risk = Some(risk(&checked.costs.in_place, req.accept));
        }
        let host = swap.host.clone();
        if let Some(active) = self.store.ops::<SwapCodec>().active().await?.first() {
            return Err(DaemonError::Conflict(format!(
                "swap {} runs on {} ({}); one swap runs at a time",
                active.number,
                active.state.host,
                active.state.phase.as_str()
            )));
        }
        // Held before the swap is stored: a spec must not take them first.
        let held: Vec<String> = match swap.way {
            Way::FreeBay => swap.news.iter().map(|n| n.path.clone()).collect(),
            Way::InPlace => Vec::new(),
        };
        for disk in swap.news.iter().filter(|n| held.contains(&n.path)) {
            let reason = format!("taken by a swap of {} on {host}", osd_names(&swap.old_ids()));
            self.store.hold(&host, &disk.path, Some(&disk.device_id), &reason, now_ms()).await?;
        }
        let new = NewOperation { subject: host.clone(), host: Some(host.clone()), state: swap, actor: audit::actor() };
        let busy = |s: &str| format!("a swap already runs on {s}");
        let rec = match self.store.ops::<SwapCodec>().add(&[new], now_ms(), busy, |_, _| {}).await {
            Ok(mut recs) => recs.remove(0),
            Err(e) => {
                self.release(&host, &held).await;
                return Err(e.into());
            }
        };
        let accepted = rec.state.risk.as_ref().map(|r| r.accepted.clone()).unwrap_or_default();
        let (level, risk_words) = if accepted.is_empty() {
            (Level::Info, String::new())
        } else {
            (Level::Warning, format!("; risk accepted: {}", accepted.join(", ")))
        };
        let message = format!(
            "Scheduled swap {} on {host} ({}): {} out, {} in{risk_words}",
            rec.number,
            rec.state.way.as_str(),
            osd_names(&rec.state.old_ids()),
            rec.state.news.iter().map(|n| n.path.as_str()).collect::<Vec<_>>().join(", ")
        );
        self.events.record(level, EventKind::SwapScheduled, Some(&host), None, message).await;
        self.worker.wake();
        Ok((rec, checked.costs))
    }

    /// Lifts the holds a refused request placed.
    async fn release(&self, host: &str, paths: &[String]) {
        for path in paths {
            if let Err(e) = self.store.release(host, path).await {
                tracing::error!("cannot release {path} on {host} after a refused swap: {e}");
            }
        }
    }

    /// What the swap would cost each way and why it would be refused; nothing changes.
    pub async fn preview(&self, req: &SwapRequest) -> Result<(Swap, Costs, Vec<String>), DaemonError> {
        let c = self.check(req).await?;
        Ok((c.swap, c.costs, c.refusals))
    }

    /// `swap stop N`: taken until the old OSDs are retired (free bay), or
    /// until its removal has begun (in place: the swap then asks it to
    /// stop, and it cancels).
    pub async fn stop(&self, number: i64) -> Result<SwapRecord, DaemonError> {
        let rec = self.store.ops::<SwapCodec>().get(number).await?;
        if rec.state.phase.is_finished() {
            return Err(DaemonError::Conflict(format!("swap {number} has ended ({})", rec.state.phase.as_str())));
        }
        let removals = if rec.state.way == Way::InPlace { self.removals_of(&rec).await? } else { Vec::new() };
        let begun = |r: &&RemovalRecord| !r.state.phase.can_stop() && !r.state.phase.is_finished();
        if let Some(r) = removals.iter().find(begun) {
            return Err(DaemonError::Conflict(format!(
                "swap {number} is past the point of no return (the removal of osd.{} is {}); it can no longer be \
                 stopped",
                r.state.osd_id,
                r.state.phase.as_str()
            )));
        }
        let missing = |s: &str| Some(format!("no swap runs on {s}"));
        let change = |s: &mut Swap| {
            if !s.can_stop() {
                return Err(format!(
                    "swap {number} is past the point of no return ({}); it can no longer be stopped",
                    s.phase.as_str()
                ));
            }
            Ok(!std::mem::replace(&mut s.stop_requested, true))
        };
        let recs = self
            .store
            .ops::<SwapCodec>()
            .update_active(std::slice::from_ref(&rec.subject), now_ms(), missing, change)
            .await?;
        let host = rec.state.host.clone();
        let message = format!("Stopping swap {number}: what was handed over stays, what was set is put back");
        self.events.record(Level::Info, EventKind::SwapStop, Some(&host), None, message).await;
        self.worker.wake();
        Ok(recs.into_iter().next().unwrap_or(rec))
    }

    async fn check(&self, req: &SwapRequest) -> Result<Checked, DaemonError> {
        check_ids(&req.osds)?;
        if req.way == Way::InPlace && req.osds.len() != 1 {
            return Err(invalid("osds", osd_names(&req.osds), "the in-place way replaces one OSD at a time"));
        }
        if req.way == Way::FreeBay && req.devices.is_empty() {
            return Err(DaemonError::Invalid("devices: none given: name the new disks (`--with HOST:DEV`)".into()));
        }
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        let mut host: Option<String> = None;
        let mut metas = Vec::new();
        for &id in &req.osds {
            let osd = state.osd(id).ok_or_else(|| invalid("osds", format!("osd.{id}"), "not in the cluster"))?;
            if osd.destroyed || !osd.up || !osd.is_in {
                return Err(invalid("osds", format!("osd.{id}"), "not up and in: a swap moves data off a live OSD"));
            }
            if let Some(r) = self.store.ops::<RemovalCodec>().active_on(&crate::store::removal_subject(id)).await? {
                let why = format!("being removed ({}): stop that removal first", r.state.phase.as_str());
                return Err(invalid("osds", format!("osd.{id}"), &why));
            }
            let meta = self.ceph.osd_devices(id).await.ok();
            let on = meta.as_ref().map(|m| m.hostname.clone()).or_else(|| osd.crush_host.clone()).unwrap_or_default();
            match &host {
                Some(h) if !same_host(h, &on) => {
                    let why = format!("on {on}, not on {h} with the others: a swap works on one host");
                    return Err(invalid("osds", format!("osd.{id}"), &why));
                }
                _ => host = Some(on),
            }
            metas.push((id, osd.crush_weight.unwrap_or(0.0), osd.uuid.clone(), meta));
        }
        let host = self.managed(host.unwrap_or_default(), req.host.as_deref()).await?;
        let inventory = match self.store.inventory(&host).await? {
            Some(i) => self.inventory.parsed(&i).map_err(DaemonError::Internal)?,
            None => return Err(invalid("host", &host, "its inventory was never read")),
        };
        let mut olds = Vec::new();
        for (id, weight, uuid, meta) in metas {
            let found = identify(id, &host, meta.as_ref(), &inventory, req.way == Way::InPlace)
                .map_err(|e| DaemonError::CannotAct(e.to_string()))?;
            olds.push(OldOsd { id, uuid, weight, devices: found.paths, device_ids: found.device_ids });
        }
        let news = match req.way {
            Way::FreeBay => self.new_disks(&host, &req.devices, &inventory).await?,
            Way::InPlace => {
                let slot = req.devices.first().cloned().or_else(|| olds[0].devices.first().cloned());
                let slot =
                    slot.ok_or_else(|| invalid("devices", "none", "osd.N's disk is not known: name its slot"))?;
                vec![NewDisk {
                    path: slot,
                    device_id: String::new(),
                    weight: olds[0].weight,
                    osd: None,
                    planned_id: None,
                }]
            }
        };
        // Made as the old ones were unless told: a raw OSD's disk swapped
        // for one that ceph-volume makes an LVM OSD of would change how
        // the host's OSDs are activated and zapped.
        let old_method = |o: &OldOsd| method_of(o.id, &o.devices, &inventory);
        let method = req.method.unwrap_or_else(|| {
            if olds.iter().all(|o| old_method(o) == Method::Raw) {
                Method::Raw
            } else {
                Method::Lvm
            }
        });
        let mut swap = Swap::new(host.clone(), req.way, olds, news);
        swap.recipe = Recipe { method, encrypted: req.encrypted };
        let weights: Vec<f64> = swap.news.iter().map(|n| n.weight).collect();
        let placements = self
            .ceph
            .swap_placements(&swap.old_ids(), &host, if req.way == Way::FreeBay { &weights } else { &[] })
            .await
            .map_err(|e| DaemonError::CannotAct(format!("cannot compute the swap's preview: {e}")))?;
        let input = CostInput {
            olds: swap.old_ids(),
            throughput: observed(placements.recovery_now, &self.removals.recent_drains().await?),
            final_known: placements.final_known,
            pgs: placements.pgs,
            pools: placements.pools,
            down: placements.down,
            making: making_pace(&self.store, &host, swap.olds.len()).await,
        };
        let costs = costs(&input);
        let refusals =
            if req.way == Way::InPlace { in_place_refusals(&costs.in_place, req.accept) } else { Vec::new() };
        Ok(Checked { swap, costs, refusals })
    }

    /// The host osdkeeper manages that the OSDs are on (and the new disks, if named).
    async fn managed(&self, on: String, asked: Option<&str>) -> Result<String, DaemonError> {
        if let Some(asked) = asked.filter(|a| !same_host(a, &on)) {
            let why = format!("the OSDs are on {on}: the new disks go on their host, so that no copy changes host");
            return Err(invalid("host", asked, &why));
        }
        let hosts = self.store.hosts().await?;
        hosts
            .into_iter()
            .find(|h| same_host(&h.name, &on))
            .map(|h| h.name)
            .ok_or_else(|| invalid("host", &on, "osdkeeper does not manage it: add it with `osdkeeper host add` first"))
    }

    async fn new_disks(&self, host: &str, paths: &[String], inventory: &[Device]) -> Result<Vec<NewDisk>, DaemonError> {
        let holds = self.store.holds().await?;
        let mut out: Vec<NewDisk> = Vec::new();
        for path in paths {
            if out.iter().any(|n| &n.path == path) {
                return Err(invalid("devices", path, "listed twice"));
            }
            let Some(d) = inventory.iter().find(|d| &*d.path == path.as_str()) else {
                return Err(invalid("devices", format!("{path} on {host}"), "not in the host's inventory"));
            };
            if !d.available || !d.lvs.is_empty() {
                let why = match d.rejected_reasons.first() {
                    Some(r) => format!("not blank ({r})"),
                    None => "not blank".into(),
                };
                return Err(invalid("devices", format!("{path} on {host}"), &why));
            }
            if let Some(h) = holds.iter().find(|h| h.host == host && h.path == *path) {
                let why = format!("held by osdkeeper ({}): `osdkeeper device release` first", h.reason);
                return Err(invalid("devices", format!("{path} on {host}"), &why));
            }
            out.push(NewDisk {
                path: path.clone(),
                device_id: d.device_id.to_string(),
                weight: weight_of(d),
                osd: None,
                planned_id: None,
            });
        }
        Ok(out)
    }
}

fn check_ids(ids: &[u32]) -> Result<(), DaemonError> {
    if ids.is_empty() {
        return Err(DaemonError::Invalid("osds: none given: name the OSDs to take out".into()));
    }
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(invalid("osds", format!("osd.{id}"), "listed twice"));
        }
    }
    Ok(())
}

pub(super) fn osd_names(ids: &[u32]) -> String {
    ids.iter().map(|i| format!("osd.{i}")).collect::<Vec<_>>().join(", ")
}
