//! The daemon's side of the host agents: a trait the daemon talks to, and
//! its HTTP implementation. Only this module and `wire::agent` know how
//! agents are reached; `credentials.rs`, which secret each host's agent gets.

mod credentials;

mod answer;

use std::time::Duration;

use futures::future::BoxFuture;

pub use credentials::{AgentCredentials, Fallback};

use crate::error_chain::with_causes;
use crate::store::ManagedHost;
use crate::wire::agent::{
    ActivateRequest, AgentErrorBody, AgentErrorCode, AgentIdentity, CephVolumeRequest, CommandResult, HostOsds,
    InventoryReport, OsdDaemonStatus, ProbeRequest, ProbeResult, RawInventoryReport, ReplaceHeaderRequest,
    ReplaceHeaderResult, StopRequest, ZapOsdRequest, ZapOsdResult, ZapRequest, ZapResult,
};

#[derive(Debug, Clone, thiserror::Error)]
pub enum AgentError {
    #[error("cannot reach the agent at {addr}: {message}")]
    Unreachable { addr: String, message: String },
    #[error("the agent at {addr} did not answer within {seconds} s")]
    Timeout { addr: String, seconds: u64 },
    #[error("the agent at {addr} refused: {message} (HTTP {status})")]
    Refused { addr: String, status: u16, message: String },
    /// Another command that changes the host's disks or daemons ran on it:
    /// nothing was done, and the request may be repeated later.
    #[error("the agent at {addr} refused: {message} (HTTP 409)")]
    Busy { addr: String, message: String },
    #[error("the agent at {addr} sent something unreadable: {message}")]
    Decode { addr: String, message: String },
    /// An answer longer than the daemon reads from its route (`AnswerCap`).
    #[error(
        "the agent at {addr} answered {route} with more than {cap} bytes, the most the daemon reads from that route"
    )]
    TooLarge { addr: String, route: String, cap: usize },
    /// Not what the request named is on the host (`identity_mismatch`): final.
    #[error("the agent at {addr} refused: {message} (HTTP 409)")]
    Mismatch { addr: String, message: String },
    #[error(
        "not sent to the agent at {addr}: plain HTTP off loopback would carry the agent token in clear; \
         give the host an https:// address (and the daemon --agent-ca)"
    )]
    InClear { addr: String },
}

/// An agent's answer to an inventory request.
#[derive(Debug)]
pub enum InventoryAnswer {
    /// The inventory whose ETag the request named is still the host's.
    Unchanged,
    /// The host's inventory (changed, or none was named).
    Fresh(RawInventoryReport),
}

impl InventoryAnswer {
    /// What an agent that has `report` answers to a request naming `known`
    /// (for agents that are not reached over HTTP: the simulator, fakes).
    pub fn of(report: InventoryReport, known: Option<&str>) -> InventoryAnswer {
        let raw = report.into_raw();
        match known {
            Some(etag) if raw.etag(&raw.fingerprint()) == etag => InventoryAnswer::Unchanged,
            _ => InventoryAnswer::Fresh(raw),
        }
    }
}

/// Who an agent is, by its inventory: for agents without `/v1/identity`.
async fn identity_by_inventory<A: HostAgents + ?Sized>(
    agents: &A,
    host: &ManagedHost,
) -> Result<AgentIdentity, AgentError> {
    match agents.inventory(host, None).await? {
        InventoryAnswer::Fresh(report) => Ok(AgentIdentity { host: report.host, version: String::new() }),
        InventoryAnswer::Unchanged => Err(AgentError::Decode {
            addr: host.addr.clone(),
            message: "answered 304 Not Modified to a request without an ETag".into(),
        }),
    }
}

/// What the daemon asks of the agents. Implemented over HTTP, and by the
/// simulator for demos and scale tests.
pub trait HostAgents: Send + Sync {
    /// The host's inventory; `known`: the ETag of the one the daemon has
    /// (`wire::agent::inventory_etag`), which the agent then need not send again.
    fn inventory<'a>(
        &'a self,
        host: &'a ManagedHost,
        known: Option<&'a str>,
    ) -> BoxFuture<'a, Result<InventoryAnswer, AgentError>>;
    /// Who answers at the host's address, without a scan. The default asks
    /// for an inventory (the simulator's and the tests' agents have no
    /// other way); the HTTP agents override it.
    fn identity<'a>(&'a self, host: &'a ManagedHost) -> BoxFuture<'a, Result<AgentIdentity, AgentError>> {
        Box::pin(identity_by_inventory(self, host))
    }
    fn ceph_volume<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a CephVolumeRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>>;
    fn osd_status<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>>;
    fn stop_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
        req: &'a StopRequest,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>>;
    fn zap<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ZapRequest,
    ) -> BoxFuture<'a, Result<ZapResult, AgentError>>;
    /// Removes one LVM OSD's LVs (`POST /v1/zap-osd`).
    fn zap_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ZapOsdRequest,
    ) -> BoxFuture<'a, Result<ZapOsdResult, AgentError>>;
    /// The OSDs ceph-volume finds on the host's devices.
    fn list_osds<'a>(&'a self, host: &'a ManagedHost) -> BoxFuture<'a, Result<HostOsds, AgentError>>;
    fn activate_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
        request: &'a ActivateRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>>;
    fn start_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>>;
    /// fio on a blank device; the agent checks that it is blank first.
    fn probe<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ProbeRequest,
    ) -> BoxFuture<'a, Result<ProbeResult, AgentError>>;
    /// Writes or erases ceph-volume's "being replaced" header on a blank
    /// disk (`POST /v1/replace-header`).
    fn replace_header<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ReplaceHeaderRequest,
    ) -> BoxFuture<'a, Result<ReplaceHeaderResult, AgentError>>;
}

/// How long the daemon waits for a probe's answer: the agent's own bound
/// on fio, plus its fresh inventory, the checks and the zeroing.
pub fn probe_timeout(request: &ProbeRequest) -> Duration {
    Duration::from_secs(request.mode.time_bound_s() + 90)
}

impl AgentError {
    /// The agent runs another disk command now: the request may be repeated later.
    pub fn is_busy(&self) -> bool {
        matches!(self, AgentError::Busy { .. })
    }

    /// An agent's error answer, by its code. An agent from before the
    /// codes sends none: its answer is judged by its status alone, and
    /// never as busy, which its 409 cannot tell from a refusal (a device in
    /// use, an OSD still running); the daemon then takes a busy agent's
    /// answer for a refusal, as final, until the agent is upgraded.
    pub fn answered(addr: &str, status: u16, body: &[u8]) -> AgentError {
        let (message, code) = match serde_json::from_slice::<AgentErrorBody>(body) {
            Ok(b) => (b.error, b.code),
            Err(_) => (String::from_utf8_lossy(body).chars().take(300).collect(), None),
        };
        match code {
            Some(AgentErrorCode::Busy) => AgentError::Busy { addr: addr.into(), message },
            Some(AgentErrorCode::IdentityMismatch) => AgentError::Mismatch { addr: addr.into(), message },
            _ => AgentError::Refused { addr: addr.into(), status, message },
        }
    }

    /// The request may have been carried out, or not: no answer came, or
    /// one too large to be read.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, AgentError::Unreachable { .. } | AgentError::Timeout { .. } | AgentError::TooLarge { .. })
    }
}

/// Agents over HTTP, each with its host's bearer token.
pub struct HttpAgents {
    client: reqwest::Client,
    credentials: AgentCredentials,
    inventory_timeout: Duration,
    command_timeout: Duration,
}

impl HttpAgents {
    /// `ca`: the CA of the agents' certificates, for `https://` agents.
    pub fn new(
        credentials: AgentCredentials,
        inventory_timeout: Duration,
        command_timeout: Duration,
        ca: Option<&std::path::Path>,
    ) -> Result<Self, crate::tls::TlsError> {
        let client = crate::tls::client_builder(ca)?
            .connect_timeout(Duration::from_secs(5))
            .build()
            .expect("an HTTP client from checked settings");
        Ok(HttpAgents { client, credentials, inventory_timeout, command_timeout })
    }

    fn url(addr: &str, path: &str) -> String {
        if addr.starts_with("http://") || addr.starts_with("https://") {
            format!("{}{path}", addr.trim_end_matches('/'))
        } else {
            format!("http://{addr}{path}")
        }
    }

    /// POSTs a command's JSON body and reads its JSON answer, within the
    /// command timeout.
    async fn command<T: serde::de::DeserializeOwned>(
        &self,
        host: &ManagedHost,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<T, AgentError> {
        let req = self.client.post(Self::url(&host.addr, path)).json(body);
        self.send(host, req, self.command_timeout).await
    }

    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        host: &ManagedHost,
        req: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<T, AgentError> {
        let body = self.exchange(host, req, timeout).await?.ok_or_else(|| AgentError::Decode {
            addr: host.addr.clone(),
            message: "304 Not Modified to a request that named no inventory".into(),
        })?;
        decode(&host.addr, body.as_ref())
    }

    /// Sends the request with the host's credential (`credentials.rs`).
    async fn exchange(
        &self,
        host: &ManagedHost,
        req: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<Option<Vec<u8>>, AgentError> {
        let send = |token: Option<String>| {
            let req = req.try_clone().expect("the agents' requests have no streamed body");
            self.exchange_as(&host.addr, req, token, timeout)
        };
        self.credentials.send(&host.name, send).await
    }

    /// Sends the request with `token`: the body of a successful answer,
    /// `None` for `304 Not Modified`, else the agent's refusal.
    async fn exchange_as(
        &self,
        addr: &str,
        req: reqwest::RequestBuilder,
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Option<Vec<u8>>, AgentError> {
        let req = match token {
            Some(_) if !crate::tls::keeps_secrets(&Self::url(addr, "/")) => {
                return Err(AgentError::InClear { addr: addr.into() })
            }
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let resp = req.timeout(timeout).send().await.map_err(|e| {
            if e.is_timeout() {
                AgentError::Timeout { addr: addr.to_string(), seconds: timeout.as_secs() }
            } else {
                AgentError::Unreachable { addr: addr.to_string(), message: with_causes(&e) }
            }
        })?;
        answer::read(addr, resp).await
    }
}

fn decode<T: serde::de::DeserializeOwned>(addr: &str, body: &[u8]) -> Result<T, AgentError> {
    serde_json::from_slice(body).map_err(|e| AgentError::Decode { addr: addr.into(), message: e.to_string() })
}

impl HostAgents for HttpAgents {
    fn inventory<'a>(
        &'a self,
        host: &'a ManagedHost,
        known: Option<&'a str>,
    ) -> BoxFuture<'a, Result<InventoryAnswer, AgentError>> {
        Box::pin(async move {
            // cephadm sees the inventory through `--filter-for-batch`: no partitions,
            // nothing mounted, whole disks only.
            let mut req = self.client.get(Self::url(&host.addr, "/v1/inventory?filter_for_batch=true"));
            if let Some(etag) = known {
                req = req.header(reqwest::header::IF_NONE_MATCH, format!("\"{etag}\""));
            }
            let Some(body) = self.exchange(host, req, self.inventory_timeout).await? else {
                return match known {
                    Some(_) => Ok(InventoryAnswer::Unchanged),
                    None => Err(AgentError::Decode {
                        addr: host.addr.clone(),
                        message: "304 Not Modified to a request that named no inventory".into(),
                    }),
                };
            };
            // An agent from before the ETag ignores If-None-Match and sends
            // the same inventory again: the poller compares fingerprints.
            Ok(InventoryAnswer::Fresh(decode(&host.addr, body.as_ref())?))
        })
    }

    fn identity<'a>(&'a self, host: &'a ManagedHost) -> BoxFuture<'a, Result<AgentIdentity, AgentError>> {
        Box::pin(async move {
            let req = self.client.get(Self::url(&host.addr, "/v1/identity"));
            match self.send(host, req, self.command_timeout).await {
                // An agent older than the endpoint: its inventory names it.
                Err(AgentError::Refused { status: 404, .. }) => identity_by_inventory(self, host).await,
                other => other,
            }
        })
    }

    fn ceph_volume<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a CephVolumeRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        Box::pin(self.command(host, "/v1/ceph-volume", request))
    }

    fn osd_status<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        Box::pin(async move {
            let req = self.client.get(Self::url(&host.addr, &format!("/v1/osd/{osd_id}")));
            self.send(host, req, self.inventory_timeout).await
        })
    }

    fn stop_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
        req: &'a StopRequest,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        Box::pin(async move { self.command(host, &format!("/v1/osd/{osd_id}/stop"), req).await })
    }

    fn zap<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ZapRequest,
    ) -> BoxFuture<'a, Result<ZapResult, AgentError>> {
        Box::pin(self.command(host, "/v1/zap", request))
    }

    fn zap_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ZapOsdRequest,
    ) -> BoxFuture<'a, Result<ZapOsdResult, AgentError>> {
        Box::pin(self.command(host, "/v1/zap-osd", request))
    }

    fn list_osds<'a>(&'a self, host: &'a ManagedHost) -> BoxFuture<'a, Result<HostOsds, AgentError>> {
        Box::pin(async move {
            let req = self.client.get(Self::url(&host.addr, "/v1/osds"));
            self.send(host, req, self.inventory_timeout).await
        })
    }

    fn activate_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
        request: &'a ActivateRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        Box::pin(async move {
            let req = self.client.post(Self::url(&host.addr, &format!("/v1/osd/{osd_id}/activate"))).json(request);
            self.send(host, req, self.command_timeout).await
        })
    }

    fn start_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        // An empty JSON body: a POST without its content type is refused (`wire::browser_guard`).
        Box::pin(async move { self.command(host, &format!("/v1/osd/{osd_id}/start"), &serde_json::json!({})).await })
    }

    fn probe<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ProbeRequest,
    ) -> BoxFuture<'a, Result<ProbeResult, AgentError>> {
        Box::pin(async move {
            let req = self.client.post(Self::url(&host.addr, "/v1/probe")).json(request);
            self.send(host, req, probe_timeout(request)).await
        })
    }

    fn replace_header<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ReplaceHeaderRequest,
    ) -> BoxFuture<'a, Result<ReplaceHeaderResult, AgentError>> {
        Box::pin(self.command(host, "/v1/replace-header", request))
    }
}

#[cfg(test)]
mod tests;
