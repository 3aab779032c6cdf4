//! The daemon's agent secrets as the config names them: the agent key,
//! and what agents not yet on their own token take (the shared token of
//! before, or the previous key while the key is rotated).

use std::path::Path;

use super::{read_secret, ConfigError};
use crate::agent_client::Fallback;
use crate::wire::agent_token::AgentKey;

fn read_key(path: &Path) -> Result<AgentKey, ConfigError> {
    AgentKey::parse(&read_secret(path)?).map_err(|message| ConfigError::Invalid { path: path.into(), message })
}

/// The agent key, and what agents that do not take their own token yet
/// take: the shared token of before, or the previous key's tokens.
pub(super) fn agent_secrets(
    key_file: Option<&Path>,
    previous_key_file: Option<&Path>,
    shared_token: Option<String>,
) -> Result<(Option<AgentKey>, Option<Fallback>), ConfigError> {
    let key = key_file.map(read_key).transpose()?;
    let fallback = match (previous_key_file, shared_token) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::Unsafe(
                "give either agents.previous_key_file (a key being rotated) or the shared agent token \
                 (agent_token_file, OSDKEEPER_AGENT_TOKEN: agents moving to their own tokens), not both"
                    .into(),
            ))
        }
        (Some(_), None) if key.is_none() => {
            return Err(ConfigError::Unsafe("agents.previous_key_file needs agents.key_file, the key now".into()))
        }
        (Some(p), None) => Some(Fallback::PreviousKey(read_key(p)?)),
        (None, Some(t)) => Some(Fallback::SharedToken(t)),
        (None, None) => None,
    };
    Ok((key, fallback))
}

#[cfg(test)]
mod tests {
    use super::super::{Config, FileConfig, Overrides};
    use super::*;

    #[test]
    fn the_agent_key_and_what_agents_not_yet_moved_take() {
        let dir = tempfile::tempdir().unwrap();
        let (key, old) = (dir.path().join("key"), dir.path().join("old"));
        std::fs::write(&key, "osdkeeper-agent-key-v1:0123456789abcdef0123456789abcdef\n").unwrap();
        std::fs::write(&old, "fedcba9876543210fedcba9876543210").unwrap();
        let with = |yaml: String, o: Overrides| Config::resolve(FileConfig::parse(&yaml).unwrap(), o);
        let keyed = format!("agents: {{key_file: {}}}\n", key.display());
        let c = with(keyed.clone(), Overrides::default()).unwrap();
        assert!(c.agent_key.is_some() && c.agent_fallback.is_none() && c.sends_agent_secrets());
        let moving = Overrides { agent_token: Some("shared".into()), ..Default::default() };
        let c = with(keyed.clone(), moving.clone()).unwrap();
        assert!(matches!(c.agent_fallback, Some(Fallback::SharedToken(ref t)) if t == "shared"));
        let rotating = format!("agents: {{key_file: {}, previous_key_file: {}}}\n", key.display(), old.display());
        let c = with(rotating.clone(), Overrides::default()).unwrap();
        assert!(matches!(c.agent_fallback, Some(Fallback::PreviousKey(_))));
        let e = with(rotating, moving.clone()).unwrap_err().to_string();
        assert!(e.contains("not both"), "{e}");
        let alone = format!("agents: {{previous_key_file: {}}}\n", old.display());
        assert!(with(alone, Overrides::default()).unwrap_err().to_string().contains("needs agents.key_file"));
        // The flag wins over the file; a short key is refused, naming its file.
        std::fs::write(&old, "short").unwrap();
        let flag = Overrides { agent_key_file: Some(old.clone()), ..Default::default() };
        let e = with(keyed, flag).unwrap_err().to_string();
        assert!(e.contains(&old.display().to_string()) && e.contains("at least 32 characters"), "{e}");
        // Only the shared token, as before per-host tokens.
        let c = with(String::new(), moving).unwrap();
        assert!(c.agent_key.is_none() && c.sends_agent_secrets());
    }
}
