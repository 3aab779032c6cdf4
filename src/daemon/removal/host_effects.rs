//! The removal's effects on its OSD's host, through the host's agent:
//! stopping the daemon, zapping an LVM OSD's LVs, wiping a device.

use super::Removals;
use crate::domain::event::{EventKind, Level};
use crate::domain::removal::{Effect, Removal};
use crate::wire::agent::{ZapOsdRequest, ZapRequest};

impl Removals {
    pub(super) async fn carry_out_on_host(&self, r: &Removal, effect: &Effect) -> Result<String, String> {
        let id = r.osd_id;
        let host = self.store.host(&r.host).await.map_err(|e| e.to_string())?;
        let done = match effect {
            Effect::Zap { path } => {
                self.zap_event(r, format!("Zapping devices for osd.{id} on {}", r.host)).await;
                let req = ZapRequest { path: path.clone(), force: true, reason: Some(format!("removal of osd.{id}")) };
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
                    reason: Some(format!("removal of osd.{id}")),
                };
                self.agents.zap_osd(&host, &req).await.map(|z| z.steps.join("; "))
            }
            _ => self.agents.stop_osd(&host, id).await.map(|s| s.detail),
        };
        done.map_err(|e| e.to_string())
    }

    async fn zap_event(&self, r: &Removal, text: String) {
        let osd = format!("osd.{}", r.osd_id);
        self.events.record(Level::Info, EventKind::Zap, Some(&r.host), Some(&osd), text).await;
    }
}
