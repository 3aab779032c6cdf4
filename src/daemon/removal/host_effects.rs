//! The removal's effects on its OSD's host, through the host's agent:
//! stopping the daemon, zapping an LVM OSD's LVs, wiping a device. Each
//! request names what it expects (the OSD's fsid, the disk's id, the
//! devices); an agent that finds something else refuses it, and the
//! refusal comes back as `Outcome::Refused`.

use super::Removals;
use crate::agent_client::AgentError;
use crate::domain::event::{EventKind, Level};
use crate::domain::operation::Outcome;
use crate::domain::removal::{zap_expect, Effect, Removal};
use crate::wire::agent::{StopRequest, ZapOsdRequest, ZapRequest};

/// An agent's answer as the outcome of an effect: a refusal because the
/// host holds something other than what was named is final.
fn outcome_of<T>(answer: Result<T, AgentError>) -> Outcome<T> {
    match answer {
        Ok(t) => Outcome::Done(t),
        Err(AgentError::Mismatch { message, .. }) => Outcome::Refused(message),
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

impl Removals {
    pub(super) async fn carry_out_on_host(&self, r: &Removal, effect: &Effect) -> Outcome<String> {
        let id = r.osd_id;
        let host = match self.store.host(&r.host).await {
            Ok(h) => h,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let reason = format!("removal of osd.{id}");
        let done = match effect {
            Effect::Zap { path } => {
                self.zap_event(r, format!("Zapping devices for osd.{id} on {}", r.host)).await;
                let expect = zap_expect(r, path, self.cluster.fsid().as_deref());
                let req = ZapRequest::expecting(path, expect, reason);
                self.agents.zap(&host, &req).await.map(|z| z.steps.join("; "))
            }
            Effect::ZapLvs { fsid } => {
                let shared = match r.shared_devices.len() {
                    0 => String::new(),
                    1 => format!("; {} keeps the other OSDs' LVs", r.shared_devices[0]),
                    _ => format!("; {} keep the other OSDs' LVs", r.shared_devices.join(", ")),
                };
                self.zap_event(r, format!("Zapping the LVs of osd.{id} (fsid {fsid}) on {}{shared}", r.host)).await;
                let req = ZapOsdRequest {
                    osd_id: id,
                    osd_fsid: fsid.clone(),
                    force: true,
                    reason: Some(reason),
                    devices: Some(r.devices.clone()),
                };
                self.agents.zap_osd(&host, &req).await.map(|z| z.steps.join("; "))
            }
            _ => {
                let req = StopRequest { osd_fsid: r.uuid().map(str::to_string) };
                self.agents.stop_osd(&host, id, &req).await.map(|s| s.detail)
            }
        };
        outcome_of(done)
    }

    async fn zap_event(&self, r: &Removal, text: String) {
        let osd = format!("osd.{}", r.osd_id);
        self.events.record(Level::Info, EventKind::Zap, Some(&r.host), Some(&osd), text).await;
    }
}
