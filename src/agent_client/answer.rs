//! An agent's answer, read within its route's cap. The daemon holds what it
//! reads, and whatever answers at an agent's address could send without
//! end; each cap sits far above what a real answer of its route takes, and
//! an answer past it is refused (`AgentError::TooLarge`) once the cap is
//! reached, or at once when its `content-length` says so.

use super::AgentError;
use crate::error_chain::with_causes;

/// The kinds of answer, by how large a real one can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerCap {
    /// `/v1/inventory`: the agent's own bound on ceph-volume's inventory
    /// (`INVENTORY_OUTPUT_LIMIT`, 64 MiB), plus 1 MiB for the report's
    /// other fields.
    Inventory,
    /// `/v1/osds`: one short entry per OSD from ceph-volume's listings,
    /// each output held to 4 MiB by the agent.
    Listing,
    /// `/v1/ceph-volume`, `/v1/osd/N/activate`: a command's stdout and
    /// stderr, 4 MiB each at most, four times over for JSON's escapes.
    Command,
    /// `/v1/probe`: fio's JSON report, 4 MiB at most, escaped once more.
    Probe,
    /// Everything else (identity, an OSD's status, stop, start, zaps, the
    /// being-replaced header): a few short lines.
    Small,
}

impl AnswerCap {
    /// The cap of an answer from `path` (the agent's address may carry a
    /// prefix before its routes).
    pub fn of_route(path: &str) -> AnswerCap {
        let path = path.trim_end_matches('/');
        let route = path.rfind("/v1/").map_or(path, |at| &path[at..]);
        match route {
            "/v1/inventory" => AnswerCap::Inventory,
            "/v1/osds" => AnswerCap::Listing,
            "/v1/ceph-volume" => AnswerCap::Command,
            "/v1/probe" => AnswerCap::Probe,
            r if r.starts_with("/v1/osd/") && r.ends_with("/activate") => AnswerCap::Command,
            _ => AnswerCap::Small,
        }
    }

    pub const fn bytes(self) -> usize {
        match self {
            AnswerCap::Inventory => 65 << 20,
            AnswerCap::Listing => 16 << 20,
            AnswerCap::Command => 32 << 20,
            AnswerCap::Probe => 16 << 20,
            AnswerCap::Small => 1 << 20,
        }
    }
}

/// The body of a successful answer, `None` for `304 Not Modified`, else
/// the agent's refusal; `TooLarge` past the route's cap.
pub async fn read(addr: &str, resp: reqwest::Response) -> Result<Option<Vec<u8>>, AgentError> {
    let status = resp.status();
    let body = read_capped(addr, resp).await?;
    if status.as_u16() == 304 {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(AgentError::answered(addr, status.as_u16(), &body));
    }
    Ok(Some(body))
}

/// The body of `resp`, or `TooLarge` past its route's cap: never more than
/// the cap is held.
async fn read_capped(addr: &str, mut resp: reqwest::Response) -> Result<Vec<u8>, AgentError> {
    let limit = AnswerCap::of_route(resp.url().path()).bytes();
    let too_large = |resp: &reqwest::Response| AgentError::TooLarge {
        addr: addr.into(),
        route: resp.url().path().to_string(),
        cap: limit,
    };
    let declared = resp.content_length().unwrap_or(0);
    if declared > limit as u64 {
        return Err(too_large(&resp));
    }
    let mut body = Vec::with_capacity(declared as usize);
    loop {
        let chunk =
            resp.chunk().await.map_err(|e| AgentError::Unreachable { addr: addr.into(), message: with_causes(&e) })?;
        let Some(chunk) = chunk else { return Ok(body) };
        if body.len() + chunk.len() > limit {
            return Err(too_large(&resp));
        }
        body.extend_from_slice(&chunk);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::agent_client::{AgentCredentials, HostAgents, HttpAgents};
    use crate::agent_server::ceph_volume::{COMMAND_OUTPUT_LIMIT, INVENTORY_OUTPUT_LIMIT};
    use crate::store::ManagedHost;
    use crate::wire::agent::StopRequest;

    #[test]
    fn each_route_has_its_cap() {
        for (path, cap) in [
            ("/v1/inventory", AnswerCap::Inventory),
            ("/agents/h1/v1/inventory", AnswerCap::Inventory),
            ("/v1/osds", AnswerCap::Listing),
            ("/v1/ceph-volume", AnswerCap::Command),
            ("/v1/osd/12/activate", AnswerCap::Command),
            ("/v1/probe", AnswerCap::Probe),
            ("/v1/osd/12/stop", AnswerCap::Small),
            ("/v1/osd/12", AnswerCap::Small),
            ("/v1/zap-osd", AnswerCap::Small),
            ("/v1/identity", AnswerCap::Small),
        ] {
            assert_eq!(AnswerCap::of_route(path), cap, "{path}");
        }
    }

    #[test]
    fn caps_are_above_what_the_agent_itself_bounds() {
        assert!(AnswerCap::Inventory.bytes() > INVENTORY_OUTPUT_LIMIT);
        assert!(AnswerCap::Command.bytes() >= 4 * 2 * COMMAND_OUTPUT_LIMIT);
        assert!(AnswerCap::Small.bytes() < AnswerCap::Listing.bytes());
    }

    /// A fake agent (unit tests may fake; tests/agent_answers.rs has the
    /// daemon's side): answers one request with `head`, then `chunks`
    /// chunks of 64 KiB of `x` in chunked encoding; returns its address and
    /// how many bytes of body it managed to send.
    async fn endless_agent(head: &'static str, chunks: usize) -> (String, tokio::task::JoinHandle<usize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let sent = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = conn.read(&mut request).await;
            conn.write_all(head.as_bytes()).await.unwrap();
            let chunk = format!("10000\r\n{}\r\n", "x".repeat(0x10000));
            let mut sent = 0;
            for _ in 0..chunks {
                if conn.write_all(chunk.as_bytes()).await.is_err() {
                    break;
                }
                sent += 0x10000;
            }
            sent
        });
        (addr, sent)
    }

    fn agents() -> HttpAgents {
        HttpAgents::new(AgentCredentials::new(None, None), Duration::from_secs(10), Duration::from_secs(10), None)
            .unwrap()
    }

    #[tokio::test]
    async fn an_answer_past_its_routes_cap_is_refused_naming_route_and_cap() {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
        // 160 MiB offered; the stop's cap is 1 MiB.
        let (addr, sent) = endless_agent(head, 2560).await;
        let e = agents().stop_osd(&ManagedHost::unpolled("h", &addr), 3, &StopRequest::default()).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "the agent at {addr} answered /v1/osd/3/stop with more than 1048576 bytes, \
                 the most the daemon reads from that route"
            )
        );
        assert!(e.outcome_unknown(), "the stop may have happened: {e:?}");
        let sent = sent.await.unwrap();
        assert!(sent < 16 << 20, "the rest was not read: {sent} bytes sent");
    }

    #[tokio::test]
    async fn a_declared_length_past_the_cap_is_refused_before_reading() {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2000000\r\n\r\n";
        let (addr, _sent) = endless_agent(head, 0).await;
        let e = agents().identity(&ManagedHost::unpolled("h", &addr)).await.unwrap_err();
        assert!(matches!(&e, AgentError::TooLarge { route, cap: 1_048_576, .. } if route == "/v1/identity"), "{e:?}");
    }
}
