//! The test client for the daemon's API: named helpers per endpoint over
//! reqwest, each returning the status, headers and body of the answer
//! (`Answer::typed` reads the body as the API's own type), plus a raw
//! `request` for the malformed ones.

use std::collections::HashMap;
use std::io::Read;
use std::thread::JoinHandle;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub struct Answer {
    pub status: u16,
    /// Lower-case names.
    pub headers: HashMap<String, String>,
    pub body: Value,
}

impl Answer {
    /// `x-total-count`, the list's length before paging.
    pub fn total(&self) -> usize {
        self.headers
            .get("x-total-count")
            .unwrap_or_else(|| panic!("no x-total-count in {:?}", self.headers))
            .parse()
            .unwrap()
    }

    pub fn list(&self) -> &Vec<Value> {
        self.body.as_array().unwrap_or_else(|| panic!("not a list: {}", self.body))
    }

    /// The body as the API type it is documented as (fails the test if it is not).
    pub fn typed<T: DeserializeOwned>(&self) -> T {
        assert!((200..300).contains(&self.status), "HTTP {}: {}", self.status, self.body);
        serde_json::from_value(self.body.clone())
            .unwrap_or_else(|e| panic!("not the documented shape ({e}): {}", self.body))
    }

    pub fn error(&self) -> &str {
        self.body["error"].as_str().unwrap_or_else(|| panic!("no error message in {}", self.body))
    }
}

pub struct Api {
    base: String,
    token: Option<String>,
    http: reqwest::blocking::Client,
}

impl Api {
    pub fn new(base: &str, token: Option<&str>) -> Api {
        let http = reqwest::blocking::Client::builder().timeout(Duration::from_secs(120)).build().unwrap();
        Api { base: base.trim_end_matches('/').to_string(), token: token.map(str::to_string), http }
    }

    /// The same daemon with another token (or none).
    pub fn with_token(&self, token: Option<&str>) -> Api {
        Api::new(&self.base, token)
    }

    /// Any request: `body` is (content type, text).
    pub fn request(&self, method: &str, path: &str, body: Option<(&str, &str)>) -> Answer {
        self.request_with(method, path, body, &[])
    }

    /// Any request with extra headers (e.g. a browser's `Origin`).
    pub fn request_with(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &str)>,
        headers: &[(&str, &str)],
    ) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some((ctype, text)) = body {
            req = req.header("content-type", ctype).body(text.to_string());
        }
        let resp = req.send().unwrap_or_else(|e| panic!("{path}: {e}"));
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_lowercase(), v.to_str().unwrap_or_default().to_string()))
            .collect();
        let text = resp.text().unwrap_or_default();
        let body = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Answer { status, headers, body }
    }

    pub fn get(&self, path: &str) -> Answer {
        self.request("GET", path, None)
    }

    fn post_json(&self, path: &str, body: &str) -> Answer {
        self.request("POST", path, Some(("application/json", body)))
    }

    /// `query` as it goes after `?`, e.g. `"q=osd.8&limit=3"` (may be empty).
    fn with_query(path: &str, query: &str) -> String {
        if query.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{query}")
        }
    }

    pub fn healthz(&self) -> Answer {
        self.get("/healthz")
    }

    pub fn openapi(&self) -> Answer {
        self.get("/api/v1/openapi.json")
    }

    pub fn hosts(&self, query: &str) -> Answer {
        self.get(&Self::with_query("/api/v1/hosts", query))
    }

    pub fn add_host(&self, body: &str) -> Answer {
        self.post_json("/api/v1/hosts", body)
    }

    pub fn add_label(&self, host: &str, body: &str) -> Answer {
        self.post_json(&format!("/api/v1/hosts/{host}/labels"), body)
    }

    pub fn devices(&self, query: &str) -> Answer {
        self.get(&Self::with_query("/api/v1/devices", query))
    }

    pub fn held(&self) -> Answer {
        self.get("/api/v1/devices/held")
    }

    pub fn zap(&self, body: &str) -> Answer {
        self.post_json("/api/v1/devices/zap", body)
    }

    /// Posts a spec file (YAML): a dry-run with `query` "dry_run=true".
    pub fn apply(&self, yaml: &str, query: &str) -> Answer {
        self.request("POST", &Self::with_query("/api/v1/specs", query), Some(("application/yaml", yaml)))
    }

    pub fn specs(&self) -> Answer {
        self.get("/api/v1/specs")
    }

    pub fn osds(&self, query: &str) -> Answer {
        self.get(&Self::with_query("/api/v1/osds", query))
    }

    pub fn schedule_removals(&self, body: &str) -> Answer {
        self.post_json("/api/v1/osds/removals", body)
    }

    pub fn removal(&self, id: impl std::fmt::Display, query: &str) -> Answer {
        self.get(&Self::with_query(&format!("/api/v1/osds/removals/{id}"), query))
    }

    pub fn summary(&self) -> Answer {
        self.get("/api/v1/summary")
    }

    pub fn workers(&self) -> Answer {
        self.get("/api/v1/workers")
    }

    pub fn events(&self, query: &str) -> Answer {
        self.get(&Self::with_query("/api/v1/events", query))
    }

    pub fn whoami(&self) -> Answer {
        self.get("/api/v1/whoami")
    }

    pub fn tokens(&self) -> Answer {
        self.get("/api/v1/tokens")
    }

    /// Creates a token; the answer carries its `secret`.
    pub fn create_token(&self, name: &str, role: &str) -> Answer {
        self.post_json("/api/v1/tokens", &serde_json::json!({"name": name, "role": role}).to_string())
    }

    pub fn revoke_token(&self, name: &str) -> Answer {
        self.request("DELETE", &format!("/api/v1/tokens/{name}"), None)
    }

    pub fn stop_removals(&self, body: &str) -> Answer {
        self.post_json("/api/v1/osds/removals/stop", body)
    }

    /// Reads `/api/v1/stream` for `secs` seconds in the background: (event
    /// type, JSON data) per message.
    pub fn stream(&self, secs: u64) -> JoinHandle<Vec<(String, Value)>> {
        let mut req = self.http.get(format!("{}/api/v1/stream", self.base)).timeout(Duration::from_secs(secs));
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        std::thread::spawn(move || {
            let mut resp = req.send().expect("the stream answers");
            let mut bytes = Vec::new();
            // Read until the timeout ends the stream; what arrived by then counts.
            let mut chunk = [0u8; 4096];
            while let Ok(n) = resp.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                bytes.extend_from_slice(&chunk[..n]);
            }
            parse_stream(&String::from_utf8_lossy(&bytes))
        })
    }
}

fn parse_stream(text: &str) -> Vec<(String, Value)> {
    let mut messages = Vec::new();
    for block in text.split("\n\n") {
        let mut kind = None;
        let mut data = String::new();
        for line in block.lines() {
            if let Some(k) = line.strip_prefix("event:") {
                kind = Some(k.trim().to_string());
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.trim());
            }
        }
        if let Some(kind) = kind {
            let data = serde_json::from_str(&data).unwrap_or_else(|e| panic!("{kind} carries no JSON ({e}): {data}"));
            messages.push((kind, data));
        }
    }
    messages
}
