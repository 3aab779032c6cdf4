//! The CLI's client for the daemon's API. The CLI never touches the
//! database: everything goes through `/api/v1/`.

use std::time::Duration;

use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the osdkeeper daemon at {url}: {message} (is `osdkeeper serve` running? set --url or OSDKEEPER_URL)")]
    Unreachable { url: String, message: String },
    /// The daemon answered with an error; `body` is its JSON.
    #[error("{message}")]
    Api { status: u16, message: String, body: Value },
    #[error("the daemon sent something unreadable: {0}")]
    Decode(String),
}

impl ClientError {
    /// 4xx: the request was wrong (exit 1); otherwise the daemon or the
    /// network failed (exit 2).
    pub fn is_client_error(&self) -> bool {
        matches!(self, ClientError::Api { status, .. } if (400..500).contains(status))
    }
}

pub struct Client {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Client {
    pub fn new(base: &str, token: Option<String>) -> Client {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(120)).build().expect("http client");
        Client { base: base.trim_end_matches('/').to_string(), token: token.filter(|t| !t.is_empty()), http }
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<Value, ClientError> {
        let req = match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let resp = req
            .send()
            .await
            .map_err(|e| ClientError::Unreachable { url: self.base.clone(), message: with_causes(&e) })?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| ClientError::Decode(e.to_string()))?;
        let body: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::Decode(format!("{e}: {}", String::from_utf8_lossy(&bytes))))?
        };
        if status.is_success() {
            Ok(body)
        } else {
            let message =
                body.get("error").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| status.to_string());
            Err(ClientError::Api { status: status.as_u16(), message, body })
        }
    }

    pub async fn get(&self, path: &str) -> Result<Value, ClientError> {
        self.send(self.http.get(format!("{}{path}", self.base))).await
    }

    pub async fn delete(&self, path: &str) -> Result<Value, ClientError> {
        self.send(self.http.delete(format!("{}{path}", self.base))).await
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        self.send(self.http.post(format!("{}{path}", self.base)).json(body)).await
    }

    pub async fn post_text(&self, path: &str, body: String, content_type: &str) -> Result<Value, ClientError> {
        self.send(self.http.post(format!("{}{path}", self.base)).header("content-type", content_type).body(body)).await
    }
}

/// An error with its causes: reqwest's own message stops at "error
/// sending request", the cause says why (refused, timed out, ...).
pub fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut s = e.source();
    while let Some(x) = s {
        msg = format!("{msg}: {x}");
        s = x.source();
    }
    msg
}

/// Percent-encodes a path segment or query value.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
