//! Which secret the daemon sends to each agent: the host's own token,
//! derived from the agent key by the name the daemon knows the host by
//! (`wire::agent_token`). While agents move from one shared token, or from
//! a previous key, a second secret is tried when an agent refuses the
//! first with 401 (its token check answers before anything runs, so the
//! request is sent again unchanged); the daemon remembers per host which
//! one the agent took, tries that one first next time, and warns, naming
//! the host, each time a host is found still on the old secret.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Mutex;

use super::AgentError;
use crate::wire::agent_token::AgentKey;

/// What agents that have not moved to their own token yet take. Its
/// debug form hides the secret.
#[derive(Clone)]
pub enum Fallback {
    /// The one token every agent took before each host had its own.
    SharedToken(String),
    /// The key before the current one, whose tokens the agents still hold.
    PreviousKey(AgentKey),
}

impl std::fmt::Debug for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fallback::SharedToken(_) => f.write_str("SharedToken(<hidden>)"),
            Fallback::PreviousKey(_) => f.write_str("PreviousKey(<hidden>)"),
        }
    }
}

/// Which of the daemon's secrets an attempt sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Own,
    Fallback,
}

/// The daemon's agent secrets and, per host, which one its agent took.
#[derive(Debug, Default)]
pub struct AgentCredentials {
    key: Option<AgentKey>,
    fallback: Option<Fallback>,
    /// Hosts whose agent took the fallback the last time it was tried.
    on_fallback: Mutex<BTreeSet<String>>,
}

impl AgentCredentials {
    pub fn new(key: Option<AgentKey>, fallback: Option<Fallback>) -> AgentCredentials {
        AgentCredentials { key, fallback, on_fallback: Mutex::new(BTreeSet::new()) }
    }

    /// Whether any secret is sent (then never in clear off loopback).
    pub fn any(&self) -> bool {
        self.key.is_some() || self.fallback.is_some()
    }

    fn secret(&self, which: Which, host: &str) -> Option<String> {
        match which {
            Which::Own => self.key.as_ref().map(|k| k.token_for(host)),
            Which::Fallback => match self.fallback.as_ref()? {
                Fallback::SharedToken(t) => Some(t.clone()),
                Fallback::PreviousKey(k) => Some(k.token_for(host)),
            },
        }
    }

    fn remembered_on_fallback(&self, host: &str) -> bool {
        self.on_fallback.lock().unwrap_or_else(|p| p.into_inner()).contains(host)
    }

    /// The secrets to send to `host`'s agent, in order: the one it took
    /// last first. No secret at all: one attempt without.
    pub fn attempts(&self, host: &str) -> Vec<(Which, Option<String>)> {
        let order = if self.remembered_on_fallback(host) {
            [Which::Fallback, Which::Own]
        } else {
            [Which::Own, Which::Fallback]
        };
        let tries: Vec<_> = order.into_iter().filter_map(|w| self.secret(w, host).map(|s| (w, Some(s)))).collect();
        if tries.is_empty() {
            return vec![(Which::Own, None)];
        }
        tries
    }

    /// Notes which secret `host`'s agent took; a host found on the
    /// fallback is named in a warning, once each time it is found so.
    pub fn took(&self, host: &str, which: Which) {
        let mut on_fallback = self.on_fallback.lock().unwrap_or_else(|p| p.into_inner());
        let newly = match which {
            // Without a key the shared token is all there is: said once, at start.
            Which::Fallback if self.key.is_none() => false,
            Which::Fallback => on_fallback.insert(host.to_string()),
            Which::Own => {
                if on_fallback.remove(host) {
                    tracing::info!(host, "the agent of {host} takes its own token now");
                }
                false
            }
        };
        if newly {
            let old = match self.fallback {
                Some(Fallback::PreviousKey(_)) => "the token of the previous agent key",
                _ => "the shared agent token",
            };
            tracing::warn!(
                host,
                "the agent of {host} refused its own token and took {old}: install its own \
                 (`osdkeeper agent-token {host}` on the daemon's machine, docs/operations.md)"
            );
        }
    }

    /// Sends with each secret in turn (`send` makes and sends the request
    /// with it) while the agent answers 401; the first other answer is the
    /// answer. Any error but a 401 is final: the request may have run.
    pub async fn send<T, F, Fut>(&self, host: &str, mut send: F) -> Result<T, AgentError>
    where
        F: FnMut(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, AgentError>>,
    {
        let attempts = self.attempts(host);
        let last = attempts.len() - 1;
        for (n, (which, secret)) in attempts.into_iter().enumerate() {
            match send(secret).await {
                Err(AgentError::Refused { status: 401, .. }) if n < last => continue,
                Ok(answer) => {
                    self.took(host, which);
                    return Ok(answer);
                }
                Err(e) => return Err(e),
            }
        }
        unreachable!("the last attempt returns")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn key(byte: u8) -> AgentKey {
        AgentKey::from_random(&[byte; 32])
    }

    fn refused() -> AgentError {
        AgentError::Refused { addr: "a".into(), status: 401, message: "wrong token".into() }
    }

    /// An agent that takes `accepted` only; every secret sent is recorded.
    fn agent(
        accepted: String,
        sent: Arc<Mutex<Vec<Option<String>>>>,
    ) -> impl FnMut(Option<String>) -> std::future::Ready<Result<u32, AgentError>> {
        move |secret| {
            sent.lock().unwrap().push(secret.clone());
            std::future::ready(if secret.as_deref() == Some(accepted.as_str()) { Ok(7) } else { Err(refused()) })
        }
    }

    #[tokio::test]
    async fn each_host_gets_its_own_token_and_nothing_else_when_there_is_no_fallback() {
        let creds = AgentCredentials::new(Some(key(1)), None);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let own = key(1).token_for("h1");
        assert_eq!(creds.send("h1", agent(own.clone(), sent.clone())).await.unwrap(), 7);
        // Another host's agent refuses h1's token: h2's is sent to it, and only that.
        let e = creds.send("h2", agent(own.clone(), sent.clone())).await.unwrap_err();
        assert!(matches!(e, AgentError::Refused { status: 401, .. }), "{e}");
        assert_eq!(*sent.lock().unwrap(), [Some(own), Some(key(1).token_for("h2"))]);
    }

    #[tokio::test]
    async fn an_agent_not_moved_yet_takes_the_shared_token_which_is_then_tried_first_until_it_moved() {
        let shared = "the-old-shared-token".to_string();
        let creds = AgentCredentials::new(Some(key(1)), Some(Fallback::SharedToken(shared.clone())));
        let own = key(1).token_for("h1");
        let sent = Arc::new(Mutex::new(Vec::new()));
        assert_eq!(creds.send("h1", agent(shared.clone(), sent.clone())).await.unwrap(), 7);
        assert_eq!(*sent.lock().unwrap(), [Some(own.clone()), Some(shared.clone())], "its own first");
        sent.lock().unwrap().clear();
        creds.send("h1", agent(shared.clone(), sent.clone())).await.unwrap();
        assert_eq!(*sent.lock().unwrap(), [Some(shared.clone())], "then the one it took");
        // The host got its own token: the shared one is refused, its own taken and kept.
        sent.lock().unwrap().clear();
        creds.send("h1", agent(own.clone(), sent.clone())).await.unwrap();
        creds.send("h1", agent(own.clone(), sent.clone())).await.unwrap();
        assert_eq!(*sent.lock().unwrap(), [Some(shared), Some(own.clone()), Some(own)]);
        // Other hosts are not affected by h1's state.
        assert_eq!(creds.attempts("h2")[0], (Which::Own, Some(key(1).token_for("h2"))));
    }

    #[tokio::test]
    async fn only_a_401_is_tried_again() {
        let creds = AgentCredentials::new(Some(key(1)), Some(Fallback::SharedToken("s".into())));
        let mut calls = 0;
        let e = creds
            .send("h1", |_| {
                calls += 1;
                std::future::ready(Err::<u32, _>(AgentError::Timeout { addr: "a".into(), seconds: 1 }))
            })
            .await
            .unwrap_err();
        assert!(matches!(e, AgentError::Timeout { .. }));
        assert_eq!(calls, 1, "a request that may have run is never sent again");
        let e = creds
            .send("h1", |_| {
                std::future::ready(Err::<u32, _>(AgentError::Busy { addr: "a".into(), message: "".into() }))
            })
            .await
            .unwrap_err();
        assert!(e.is_busy());
    }

    #[test]
    fn a_previous_key_gives_each_host_its_old_token_and_no_secret_means_one_bare_attempt() {
        let creds = AgentCredentials::new(Some(key(2)), Some(Fallback::PreviousKey(key(1))));
        let tries = creds.attempts("h1");
        assert_eq!(tries[1], (Which::Fallback, Some(key(1).token_for("h1"))));
        let legacy = AgentCredentials::new(None, Some(Fallback::SharedToken("s3cret".into())));
        assert!(!format!("{legacy:?}").contains("s3cret"), "{legacy:?}");
        assert_eq!(legacy.attempts("h1"), [(Which::Fallback, Some("s3cret".to_string()))]);
        assert!(legacy.any());
        let none = AgentCredentials::default();
        assert_eq!(none.attempts("h1"), [(Which::Own, None)]);
        assert!(!none.any());
    }
}
