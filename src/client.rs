//! The CLI's client for the daemon's API, typed: every answer is read into
//! the `wire::api` type the daemon sent. The CLI never touches the
//! database: everything goes through `/api/v1/`.

use std::path::Path;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error_chain::with_causes;
use crate::wire::api::backup::{BackupDone, BackupRequest};
use crate::wire::api::bench::{
    ClusterBenchBody, ClusterComparison, ClusterRun, ClusterRunQuery, CompareQuery, OsdBench, OsdBenchBody,
    OsdBenchQuery,
};
use crate::wire::api::deployments::{DeploymentQuery, DeploymentStatus};
use crate::wire::api::devices::{
    DeviceQuery, DeviceRef, Hold, HostDevices, ReplaceBody, Replacement, ReplacementCleared, ZapBody,
};
use crate::wire::api::encode;
use crate::wire::api::error::{ErrorBody, Health};
use crate::wire::api::events::{Event, EventQuery};
use crate::wire::api::hosts::{
    AddHost, Host, HostDrainBody, HostDrainPreviewBody, HostDrainStatus, HostDrainStop, HostQuery, LabelBody,
    RemoveHostQuery,
};
use crate::wire::api::osds::{IdsBody, OsdQuery, OsdRow, RemovalStatus, RemoveBody, StatusQuery};
use crate::wire::api::probes::{DiskProbe, ProbeBody, ProbeQuery};
use crate::wire::api::removal_preview::{PreviewBody, RemovalPreview};
use crate::wire::api::specs::{ApplyQuery, ApplyResponse, SpecDetail, SpecListing, SpecRecord};
use crate::wire::api::swaps::{SwapBody, SwapDetail, SwapPreview, SwapQuery, SwapStatus};
use crate::wire::api::tokens::{CreatedToken, NewToken, TokenInfo, WhoAmI};

/// How long the CLI waits for one answer of the daemon.
const REQUEST_TIMEOUT_S: u64 = 120;
/// How long it waits when it asked the daemon to scan hosts first
/// (`--refresh`): the daemon bounds that by its own `poll.timeout_s`, which
/// an operator raises for hosts whose `ceph-volume inventory` takes minutes.
const SCAN_TIMEOUT_S: u64 = 3600;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the osdkeeper daemon at {url}: {message} (is `osdkeeper serve` running? set --url or OSDKEEPER_URL)")]
    Unreachable { url: String, message: String },
    /// Connected, but no answer in time: the request may still be carried out.
    #[error(
        "the osdkeeper daemon at {url} did not answer within {seconds} s; what was asked may still be under way \
         (see `osdkeeper events`)"
    )]
    Timeout { url: String, seconds: u64 },
    #[error(
        "the daemon at {url} did not prove who it is: {message} (give the CA of its certificate with --cacert \
         or OSDKEEPER_CACERT)"
    )]
    Untrusted { url: String, message: String },
    /// The daemon answered with an error.
    #[error("{}", .body.error)]
    Api { status: u16, body: ErrorBody },
    #[error("the daemon sent something unreadable: {0}")]
    Decode(String),
    /// The command line itself is wrong (checked before asking the daemon).
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Tls(#[from] crate::tls::TlsError),
}

impl ClientError {
    /// The errno name `ceph` prints for the same failure (`Error ENOENT: ...`),
    /// which scripts written for `ceph` look for.
    pub fn errno(&self) -> &'static str {
        match self {
            // 422 without document errors: valid, but the cluster or an agent cannot be asked now.
            ClientError::Api { status: 422, body } if body.errors.is_empty() => "EAGAIN",
            ClientError::Api { status: 400 | 422, .. } | ClientError::Usage(_) => "EINVAL",
            ClientError::Api { status: 401 | 403, .. } | ClientError::Untrusted { .. } => "EACCES",
            ClientError::Api { status: 404, .. } => "ENOENT",
            ClientError::Api { status: 409, .. } => "EBUSY",
            ClientError::Unreachable { .. } => "ECONNREFUSED",
            ClientError::Timeout { .. } => "ETIMEDOUT",
            ClientError::Api { .. } | ClientError::Decode(_) | ClientError::Tls(_) => "EIO",
        }
    }

    /// 4xx or a bad command line: the request was wrong (exit 1); otherwise
    /// the daemon or the network failed (exit 2).
    pub fn is_client_error(&self) -> bool {
        match self {
            ClientError::Api { status, .. } => (400..500).contains(status),
            ClientError::Usage(_) => true,
            _ => false,
        }
    }
}

/// The daemon's address as the operator may write it: a URL, or
/// `HOST:PORT` / `HOST` (port 8740). Without a scheme, loopback is plain
/// HTTP (the daemon serves plain HTTP there only) and any other host is
/// `https://` (the only way the daemon serves off loopback, and the only
/// one a token may travel over).
pub fn daemon_url(arg: &str) -> Result<String, ClientError> {
    let arg = arg.trim();
    let bad = |why: &str| ClientError::Usage(format!("invalid daemon address {arg:?} (--url or OSDKEEPER_URL): {why}"));
    if let Some((scheme, _)) = arg.split_once("://") {
        return match scheme {
            "http" | "https" => reqwest::Url::parse(arg).map(|_| arg.to_string()).map_err(|e| bad(&e.to_string())),
            other => Err(bad(&format!("the daemon speaks http:// or https://, not {other}://"))),
        };
    }
    let mut url = reqwest::Url::parse(&format!("http://{arg}")).map_err(|e| bad(&e.to_string()))?;
    if url.path() != "/" || url.query().is_some() || arg.is_empty() {
        return Err(bad("expected HOST:PORT or a URL, e.g. 127.0.0.1:8740 or https://osd-admin:8740"));
    }
    if url.port().is_none() {
        url.set_port(Some(8740)).map_err(|()| bad("cannot have a port"))?;
    }
    if !crate::tls::keeps_secrets(url.as_str()) {
        url.set_scheme("https").map_err(|()| bad("cannot be an https:// URL"))?;
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
}

pub struct Client {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Client {
    /// A client for the daemon at `base`; `https://` daemons are checked
    /// against the CA certificates in `ca` (and only those).
    pub fn new(base: &str, token: Option<String>, ca: Option<&Path>) -> Result<Client, ClientError> {
        let token = token.filter(|t| !t.is_empty());
        if token.is_some() && !crate::tls::keeps_secrets(base) {
            return Err(ClientError::Usage(format!(
                "{base} is plain HTTP to another machine: the token would cross the network in clear; \
                 use https:// (with --cacert or OSDKEEPER_CACERT)"
            )));
        }
        let http = crate::tls::client_builder(ca)?
            .timeout(Duration::from_secs(REQUEST_TIMEOUT_S))
            .build()
            .map_err(|e| ClientError::Usage(format!("cannot make an HTTP client: {}", with_causes(&e))))?;
        Ok(Client { base: base.trim_end_matches('/').to_string(), token, http })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends; the body of a success, or the daemon's error.
    async fn send(&self, req: reqwest::RequestBuilder) -> Result<Vec<u8>, ClientError> {
        self.send_within(req, REQUEST_TIMEOUT_S).await
    }

    /// Sends, waiting `seconds` for the answer.
    async fn send_within(&self, req: reqwest::RequestBuilder, seconds: u64) -> Result<Vec<u8>, ClientError> {
        let req = req.timeout(Duration::from_secs(seconds));
        let req = match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let resp = req.send().await.map_err(|e| {
            let (url, message) = (self.base.clone(), with_causes(&e));
            if crate::tls::handshake_failed(&e) {
                ClientError::Untrusted { url, message }
            } else if e.is_timeout() {
                ClientError::Timeout { url, seconds }
            } else {
                ClientError::Unreachable { url, message }
            }
        })?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| ClientError::Decode(with_causes(&e)))?;
        if status.is_success() {
            return Ok(bytes.to_vec());
        }
        let body = serde_json::from_slice::<ErrorBody>(&bytes)
            .unwrap_or_else(|_| ErrorBody { error: status.to_string(), errors: Vec::new() });
        Err(ClientError::Api { status: status.as_u16(), body })
    }

    async fn read<T: DeserializeOwned>(&self, req: reqwest::RequestBuilder) -> Result<T, ClientError> {
        self.read_within(req, REQUEST_TIMEOUT_S).await
    }

    async fn read_within<T: DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
        seconds: u64,
    ) -> Result<T, ClientError> {
        let bytes = self.send_within(req, seconds).await?;
        serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Decode(format!("{e}: {}", String::from_utf8_lossy(&bytes))))
    }

    async fn get<T: DeserializeOwned>(&self, path: &str, query: &impl Serialize) -> Result<T, ClientError> {
        self.read(self.http.get(self.url(path)).query(query)).await
    }

    async fn post<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, ClientError> {
        self.read(self.http.post(self.url(path)).json(body)).await
    }

    /// A POST whose request says it all in its path (the API still wants a JSON content type).
    async fn post_empty<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let req = self.http.post(self.url(path)).header(reqwest::header::CONTENT_TYPE, "application/json").body("{}");
        self.read(req).await
    }

    pub async fn hosts(&self, q: &HostQuery) -> Result<Vec<Host>, ClientError> {
        self.get("/api/v1/hosts", q).await
    }

    pub async fn add_host(&self, body: &AddHost) -> Result<Host, ClientError> {
        self.post("/api/v1/hosts", body).await
    }

    pub async fn remove_host(&self, name: &str, q: &RemoveHostQuery) -> Result<(), ClientError> {
        self.send(self.http.delete(self.url(&format!("/api/v1/hosts/{}", encode(name)))).query(q)).await.map(|_| ())
    }

    pub async fn drain_host(&self, name: &str, body: &HostDrainBody) -> Result<HostDrainStatus, ClientError> {
        self.post(&format!("/api/v1/hosts/{}/drain", encode(name)), body).await
    }

    pub async fn preview_host_drain(&self, name: &str, zap: bool) -> Result<RemovalPreview, ClientError> {
        let body = HostDrainPreviewBody { zap_osd_devices: zap };
        self.post(&format!("/api/v1/hosts/{}/drain/preview", encode(name)), &body).await
    }

    pub async fn stop_host_drain(&self, name: &str) -> Result<HostDrainStop, ClientError> {
        self.post_empty(&format!("/api/v1/hosts/{}/drain/stop", encode(name))).await
    }

    pub async fn host_drain_status(&self, name: &str) -> Result<HostDrainStatus, ClientError> {
        self.get(&format!("/api/v1/hosts/{}/drain", encode(name)), &()).await
    }

    pub async fn add_label(&self, host: &str, label: &str) -> Result<Host, ClientError> {
        self.post(&format!("/api/v1/hosts/{}/labels", encode(host)), &LabelBody { label: label.into() }).await
    }

    pub async fn remove_label(&self, host: &str, label: &str) -> Result<Host, ClientError> {
        self.read(self.http.delete(self.url(&format!("/api/v1/hosts/{}/labels/{}", encode(host), encode(label))))).await
    }

    pub async fn devices(&self, q: &DeviceQuery) -> Result<Vec<HostDevices>, ClientError> {
        let seconds = if q.refresh { SCAN_TIMEOUT_S } else { REQUEST_TIMEOUT_S };
        self.read_within(self.http.get(self.url("/api/v1/devices")).query(q), seconds).await
    }

    pub async fn held(&self) -> Result<Vec<Hold>, ClientError> {
        self.get("/api/v1/devices/held", &()).await
    }

    pub async fn release(&self, body: &DeviceRef) -> Result<Hold, ClientError> {
        self.post("/api/v1/devices/release", body).await
    }

    pub async fn zap(&self, body: &ZapBody) -> Result<Vec<String>, ClientError> {
        self.post("/api/v1/devices/zap", body).await
    }

    pub async fn replace_device(&self, body: &ReplaceBody) -> Result<Replacement, ClientError> {
        self.post("/api/v1/devices/replace", body).await
    }

    pub async fn clear_replacement(&self, body: &DeviceRef) -> Result<ReplacementCleared, ClientError> {
        self.post("/api/v1/devices/replace/clear", body).await
    }

    pub async fn probe(&self, body: &ProbeBody) -> Result<DiskProbe, ClientError> {
        self.post("/api/v1/devices/probe", body).await
    }

    pub async fn probes(&self, q: &ProbeQuery) -> Result<Vec<DiskProbe>, ClientError> {
        self.get("/api/v1/devices/probes", q).await
    }

    pub async fn disk_probe(&self, id: i64) -> Result<DiskProbe, ClientError> {
        self.get(&format!("/api/v1/devices/probes/{id}"), &()).await
    }

    /// Posts a spec file (YAML) for a dry-run or an apply.
    pub async fn apply(&self, q: &ApplyQuery, yaml: String) -> Result<ApplyResponse, ClientError> {
        let req =
            self.http.post(self.url("/api/v1/specs")).query(q).header("content-type", "application/yaml").body(yaml);
        self.read_within(req, if q.refresh { SCAN_TIMEOUT_S } else { REQUEST_TIMEOUT_S }).await
    }

    pub async fn specs(&self) -> Result<Vec<SpecListing>, ClientError> {
        self.get("/api/v1/specs", &()).await
    }

    pub async fn spec(&self, service_name: &str) -> Result<SpecDetail, ClientError> {
        self.get(&format!("/api/v1/specs/{}", encode(service_name)), &()).await
    }

    pub async fn remove_spec(&self, service_name: &str) -> Result<SpecRecord, ClientError> {
        self.read(self.http.delete(self.url(&format!("/api/v1/specs/{}", encode(service_name))))).await
    }

    pub async fn osds(&self, q: &OsdQuery) -> Result<Vec<OsdRow>, ClientError> {
        self.get("/api/v1/osds", q).await
    }

    pub async fn schedule_removals(&self, body: &RemoveBody) -> Result<Vec<RemovalStatus>, ClientError> {
        self.post("/api/v1/osds/removals", body).await
    }

    pub async fn schedule_swap(&self, body: &SwapBody) -> Result<SwapStatus, ClientError> {
        self.post("/api/v1/swaps", body).await
    }

    pub async fn preview_swap(&self, body: &SwapBody) -> Result<SwapPreview, ClientError> {
        self.post("/api/v1/swaps/preview", body).await
    }

    pub async fn swaps(&self, q: &SwapQuery) -> Result<Vec<SwapStatus>, ClientError> {
        self.get("/api/v1/swaps", q).await
    }

    pub async fn swap(&self, id: i64) -> Result<SwapDetail, ClientError> {
        self.get(&format!("/api/v1/swaps/{id}"), &()).await
    }

    pub async fn stop_swap(&self, id: i64) -> Result<SwapStatus, ClientError> {
        self.post_empty(&format!("/api/v1/swaps/{id}/stop")).await
    }

    pub async fn preview_removals(&self, ids: &[u32], zap: bool) -> Result<RemovalPreview, ClientError> {
        self.post("/api/v1/osds/removals/preview", &PreviewBody { ids: ids.to_vec(), zap }).await
    }

    pub async fn removals(&self, q: &StatusQuery) -> Result<Vec<RemovalStatus>, ClientError> {
        self.get("/api/v1/osds/removals", q).await
    }

    pub async fn stop_removals(&self, ids: &[u32]) -> Result<Vec<RemovalStatus>, ClientError> {
        self.post("/api/v1/osds/removals/stop", &IdsBody { ids: ids.to_vec() }).await
    }

    pub async fn bench_osds(&self, body: &OsdBenchBody) -> Result<Vec<OsdBench>, ClientError> {
        self.post("/api/v1/benchmarks/osds", body).await
    }

    pub async fn osd_benches(&self, q: &OsdBenchQuery) -> Result<Vec<OsdBench>, ClientError> {
        self.get("/api/v1/benchmarks/osds", q).await
    }

    pub async fn bench_cluster(&self, body: &ClusterBenchBody) -> Result<ClusterRun, ClientError> {
        self.post("/api/v1/benchmarks/cluster", body).await
    }

    pub async fn cluster_runs(&self, q: &ClusterRunQuery) -> Result<Vec<ClusterRun>, ClientError> {
        self.get("/api/v1/benchmarks/cluster", q).await
    }

    pub async fn cluster_run(&self, id: i64) -> Result<ClusterRun, ClientError> {
        self.get(&format!("/api/v1/benchmarks/cluster/{id}"), &()).await
    }

    pub async fn compare_runs(&self, a: i64, b: i64) -> Result<ClusterComparison, ClientError> {
        self.get("/api/v1/benchmarks/compare", &CompareQuery { a, b }).await
    }

    pub async fn deployments(&self, q: &DeploymentQuery) -> Result<Vec<DeploymentStatus>, ClientError> {
        self.get("/api/v1/deployments", q).await
    }

    pub async fn events(&self, q: &EventQuery) -> Result<Vec<Event>, ClientError> {
        self.get("/api/v1/events", q).await
    }

    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, ClientError> {
        self.get("/api/v1/tokens", &()).await
    }

    pub async fn backup(&self, body: &BackupRequest) -> Result<BackupDone, ClientError> {
        self.post("/api/v1/backup", body).await
    }

    pub async fn create_token(&self, body: &NewToken) -> Result<CreatedToken, ClientError> {
        self.post("/api/v1/tokens", body).await
    }

    pub async fn revoke_token(&self, name: &str) -> Result<(), ClientError> {
        self.send(self.http.delete(self.url(&format!("/api/v1/tokens/{}", encode(name))))).await.map(|_| ())
    }

    pub async fn whoami(&self) -> Result<WhoAmI, ClientError> {
        self.get("/api/v1/whoami", &()).await
    }

    pub async fn health(&self) -> Result<Health, ClientError> {
        self.get("/healthz", &()).await
    }
}

#[cfg(test)]
mod tests {
    use super::daemon_url;

    #[test]
    fn host_port_is_a_daemon_address() {
        for (arg, url) in [
            ("127.0.0.1:8740", "http://127.0.0.1:8740"),
            ("localhost:9000", "http://localhost:9000"),
            ("[::1]:8740", "http://[::1]:8740"),
            ("127.0.0.1", "http://127.0.0.1:8740"),
            ("osd-admin:8740", "https://osd-admin:8740"),
            ("10.0.0.5", "https://10.0.0.5:8740"),
            ("http://127.0.0.1:8740/", "http://127.0.0.1:8740/"),
            ("https://osd-admin", "https://osd-admin"),
        ] {
            assert_eq!(daemon_url(arg).unwrap(), url, "{arg}");
        }
        for bad in ["", "ftp://h:1", "h:port", "h:1/api", "http://"] {
            let e = daemon_url(bad).unwrap_err().to_string();
            assert!(e.contains("invalid daemon address"), "{bad}: {e}");
        }
    }
}
