//! The HTTP agents' answers read by their code, and their secrets kept
//! from plain HTTP.

use super::*;

fn host(addr: &str) -> ManagedHost {
    ManagedHost::unpolled("f5-422-01", addr)
}

#[test]
fn answers_are_judged_by_their_code_never_their_words() {
    let busy = br#"{"error": "another command ... is still running on this host", "code": "busy"}"#;
    assert!(AgentError::answered("a", 409, busy).is_busy());
    // The same words without the code, from an agent before the codes: a refusal.
    let old = br#"{"error": "another command ... is still running on this host"}"#;
    let e = AgentError::answered("a", 409, old);
    assert!(!e.is_busy() && matches!(e, AgentError::Refused { status: 409, .. }), "{e}");
    // A busy code is busy whatever the words.
    assert!(AgentError::answered("a", 409, br#"{"error": "", "code": "busy"}"#).is_busy());
    let refused = br#"{"error": "/dev/sdb is busy", "code": "conflict"}"#;
    assert!(!AgentError::answered("a", 409, refused).is_busy());
    let other = AgentError::answered("a", 409, br#"{"error": "not that disk", "code": "identity_mismatch"}"#);
    assert!(matches!(other, AgentError::Mismatch { message, .. } if message == "not that disk"));
    let e = AgentError::answered("a", 502, b"<html>bad gateway</html>");
    assert_eq!(e.to_string(), "the agent at a refused: <html>bad gateway</html> (HTTP 502)");
    let e = AgentError::answered("a", 409, busy);
    assert_eq!(e.to_string(), "the agent at a refused: another command ... is still running on this host (HTTP 409)");
}

// A host row from before agents spoke TLS: the token is kept back, and
// nothing is sent (the port here is closed: a sent request would say so).
#[tokio::test]
async fn the_token_is_not_sent_in_clear_off_loopback() {
    let shared = Some(Fallback::SharedToken("s3cret".into()));
    let creds = AgentCredentials::new(None, shared);
    let agents = HttpAgents::new(creds, Duration::from_secs(1), Duration::from_secs(1), None).unwrap();
    let e = agents.inventory(&host("10.255.255.1:9"), None).await.unwrap_err();
    assert!(matches!(e, AgentError::InClear { .. }), "{e}");
    let e = agents.inventory(&host("127.0.0.1:9"), None).await.unwrap_err();
    assert!(matches!(e, AgentError::Unreachable { .. }), "loopback is tried: {e}");
}
