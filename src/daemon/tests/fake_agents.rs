//! Host agents in process: a fixed device list per host, and a record of
//! what was asked of them.

use std::sync::Mutex;

use futures::future::BoxFuture;

use super::probes;
use crate::agent_client::{AgentError, HostAgents, InventoryAnswer};
use crate::store::ManagedHost;
use crate::store::Store;
use crate::wire::agent::{
    ActivateRequest, CephVolumeRequest, CommandResult, HostOsds, InventoryReport, InventorySource, OsdDaemonStatus,
    ProbeRequest, ProbeResult, ReplaceHeaderRequest, ReplaceHeaderResult, StopRequest, ZapOsdRequest, ZapOsdResult,
    ZapRequest, ZapResult,
};

/// Serves one fixed device list per host and records ceph-volume calls.
#[derive(Default)]
pub(in crate::daemon) struct FakeAgents {
    pub(in crate::daemon) devices: Mutex<std::collections::HashMap<String, Vec<serde_json::Value>>>,
    pub(in crate::daemon) calls: Mutex<Vec<(String, CephVolumeRequest)>>,
    pub(in crate::daemon) down: Mutex<Vec<String>>,
    /// What a zap answers instead of success; it records the holds it saw.
    pub(in crate::daemon) zap_error: Mutex<Option<AgentError>>,
    pub(in crate::daemon) zaps: Mutex<Vec<String>>,
    /// The 4k sync-write IOPS a probe of a path reports (5000 if not
    /// set), or the refusal every probe gets; each probe asked for, with
    /// the state its stored row had at that moment (from `store`).
    pub(in crate::daemon) probe_iops: Mutex<std::collections::HashMap<String, f64>>,
    pub(in crate::daemon) probe_error: Mutex<Option<AgentError>>,
    pub(in crate::daemon) probes: Mutex<Vec<(ProbeRequest, Option<String>)>>,
    pub(in crate::daemon) store: Mutex<Option<Store>>,
    /// Each inventory request: the host and the ETag it named.
    pub(in crate::daemon) inventory_requests: Mutex<Vec<(String, Option<String>)>>,
    /// Answer in full even when the ETag named is current (as agents from
    /// before the ETag do).
    pub(in crate::daemon) ignores_etag: Mutex<bool>,
    /// The time inventories say they were taken at (default: now).
    pub(in crate::daemon) taken_at_ms: Mutex<Option<i64>>,
    /// The release of ceph-volume's Ceph each host reports (default: none).
    pub(in crate::daemon) ceph_release: Mutex<std::collections::HashMap<String, String>>,
}

impl HostAgents for FakeAgents {
    fn inventory<'a>(
        &'a self,
        host: &'a ManagedHost,
        known: Option<&'a str>,
    ) -> BoxFuture<'a, Result<InventoryAnswer, AgentError>> {
        Box::pin(async move {
            if self.down.lock().unwrap().contains(&host.name) {
                return Err(AgentError::Unreachable { addr: host.addr.clone(), message: "connection refused".into() });
            }
            self.inventory_requests.lock().unwrap().push((host.name.clone(), known.map(str::to_string)));
            let devices = self.devices.lock().unwrap().get(&host.name).cloned().unwrap_or_default();
            let report = InventoryReport {
                host: host.name.clone(),
                source: InventorySource::Kernel,
                taken_at_ms: self.taken_at_ms.lock().unwrap().unwrap_or_else(crate::clock::now_ms),
                devices,
                can_create_osds: true,
                note: None,
                ceph_release: self.ceph_release.lock().unwrap().get(&host.name).cloned(),
            };
            let known = if *self.ignores_etag.lock().unwrap() { None } else { known };
            Ok(InventoryAnswer::of(report, known))
        })
    }

    fn ceph_volume<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a CephVolumeRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        Box::pin(async move {
            self.calls.lock().unwrap().push((host.name.clone(), request.clone()));
            Ok(CommandResult {
                command: request.args.join(" "),
                exit_code: 0,
                stdout: String::new(),
                stderr: String::new(),
            })
        })
    }

    fn osd_status<'a>(
        &'a self,
        _host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        Box::pin(async move { Ok(OsdDaemonStatus { osd_id, running: false, pids: vec![], detail: String::new() }) })
    }

    fn stop_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
        _request: &'a StopRequest,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        self.osd_status(host, osd_id)
    }

    fn zap<'a>(
        &'a self,
        _host: &'a ManagedHost,
        request: &'a ZapRequest,
    ) -> BoxFuture<'a, Result<ZapResult, AgentError>> {
        Box::pin(async move {
            self.zaps.lock().unwrap().push(request.path.clone());
            match self.zap_error.lock().unwrap().clone() {
                Some(e) => Err(e),
                None => Ok(ZapResult { path: request.path.clone(), steps: vec![] }),
            }
        })
    }

    fn zap_osd<'a>(
        &'a self,
        _host: &'a ManagedHost,
        request: &'a ZapOsdRequest,
    ) -> BoxFuture<'a, Result<ZapOsdResult, AgentError>> {
        Box::pin(async move {
            self.zaps.lock().unwrap().push(format!("osd.{} ({})", request.osd_id, request.osd_fsid));
            match self.zap_error.lock().unwrap().clone() {
                Some(e) => Err(e),
                None => Ok(ZapOsdResult {
                    osd_id: request.osd_id,
                    osd_fsid: request.osd_fsid.clone(),
                    devices: vec![],
                    steps: vec![],
                }),
            }
        })
    }

    fn list_osds<'a>(&'a self, _host: &'a ManagedHost) -> BoxFuture<'a, Result<HostOsds, AgentError>> {
        Box::pin(async move { Ok(HostOsds { osds: vec![], notes: vec![] }) })
    }

    fn activate_osd<'a>(
        &'a self,
        _host: &'a ManagedHost,
        osd_id: u32,
        _request: &'a ActivateRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        Box::pin(async move {
            Ok(CommandResult {
                command: format!("activate {osd_id}"),
                exit_code: 0,
                stdout: String::new(),
                stderr: String::new(),
            })
        })
    }

    fn start_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        self.osd_status(host, osd_id)
    }

    fn probe<'a>(
        &'a self,
        _host: &'a ManagedHost,
        request: &'a ProbeRequest,
    ) -> BoxFuture<'a, Result<ProbeResult, AgentError>> {
        Box::pin(async move {
            let store = self.store.lock().unwrap().clone();
            let state = match store {
                Some(store) => {
                    let running = store.ops::<crate::store::ProbeCodec>().in_phase("running").await.unwrap();
                    running.iter().find(|p| p.state.path == request.path).map(|p| p.state.phase.as_str().to_string())
                }
                None => None,
            };
            self.probes.lock().unwrap().push((request.clone(), state));
            if let Some(e) = self.probe_error.lock().unwrap().clone() {
                return Err(e);
            }
            let sync_iops = self.probe_iops.lock().unwrap().get(&request.path).copied().unwrap_or(5000.0);
            Ok(probes::answer(request, sync_iops))
        })
    }

    fn replace_header<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ReplaceHeaderRequest,
    ) -> BoxFuture<'a, Result<ReplaceHeaderResult, AgentError>> {
        Box::pin(async move {
            let mut devices = self.devices.lock().unwrap();
            let disk = devices.get_mut(&host.name).and_then(|ds| ds.iter_mut().find(|d| d["path"] == *request.path));
            let Some(disk) = disk else {
                return Err(AgentError::Refused {
                    addr: host.addr.clone(),
                    status: 404,
                    message: format!("{} is not a device in this host's current inventory", request.path),
                });
            };
            let changed = disk["being_replaced"] != serde_json::json!(request.mark);
            disk["being_replaced"] = serde_json::json!(request.mark);
            Ok(ReplaceHeaderResult { path: request.path.clone(), marked: request.mark, changed, steps: Vec::new() })
        })
    }
}
