//! Each host's agent token, derived from the daemon's agent key: the
//! token of host H is HMAC-SHA256(key, `LABEL` + H) as 64 hex digits. The
//! daemon holds the key and derives the token of the host it is about to
//! ask; an agent holds its own host's token only and compares. A host's
//! token therefore opens that host's agent and no other, and no token
//! tells anything of the key (`docs/threat-model.md`).
//!
//! The key is text: what `osdkeeper certs` and `deploy/install.sh` write
//! (`KEY_PREFIX` and 64 hex digits), or any other secret of at least
//! `MIN_KEY_CHARS` characters. The prefix lets an agent and the installer
//! tell the key from a token and refuse to put it on a storage host.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What each derivation is bound to besides the host's name: a token made
/// for another purpose from the same key never equals an agent token.
const LABEL: &str = "osdkeeper agent token v1\n";

/// How a key made by osdkeeper begins.
pub const KEY_PREFIX: &str = "osdkeeper-agent-key-v1:";

/// The shortest key accepted: 32 characters (128 bits of hex) and more.
pub const MIN_KEY_CHARS: usize = 32;

/// The daemon's key, from which every host's token is derived. Its debug
/// form hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct AgentKey(String);

impl std::fmt::Debug for AgentKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentKey(<hidden>)")
    }
}

impl AgentKey {
    /// A key from its text (surrounding white space is not part of it).
    pub fn parse(text: &str) -> Result<AgentKey, String> {
        let text = text.trim();
        if text.chars().count() < MIN_KEY_CHARS {
            return Err(format!(
                "an agent key has at least {MIN_KEY_CHARS} characters (this one has {}); \
                 `osdkeeper certs` and deploy/install.sh make one",
                text.chars().count()
            ));
        }
        Ok(AgentKey(text.to_string()))
    }

    /// A key made of `random` bytes, in the form osdkeeper writes.
    pub fn from_random(random: &[u8; 32]) -> AgentKey {
        AgentKey(format!("{KEY_PREFIX}{}", hex(random)))
    }

    /// The key as it is written to its file.
    pub fn text(&self) -> &str {
        &self.0
    }

    /// The agent token of `host` (the name the daemon knows it by).
    pub fn token_for(&self, host: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(self.0.as_bytes()).expect("HMAC takes a key of any length");
        mac.update(LABEL.as_bytes());
        mac.update(host.as_bytes());
        hex(&mac.finalize().into_bytes())
    }
}

/// Whether a secret is an agent key in osdkeeper's form (which belongs on
/// the daemon's machine only).
pub fn looks_like_key(secret: &str) -> bool {
    secret.trim().starts_with(KEY_PREFIX)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_has_its_own_token_and_the_same_key_gives_the_same_one() {
        let key = AgentKey::from_random(&[7; 32]);
        let a = key.token_for("f5-422-01");
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{a}");
        assert_eq!(a, key.token_for("f5-422-01"));
        assert_ne!(a, key.token_for("f5-422-02"));
        assert_ne!(a, key.token_for("f5-422-01.example"), "the name as the daemon knows it, exactly");
        assert_ne!(a, AgentKey::from_random(&[8; 32]).token_for("f5-422-01"), "another key, other tokens");
    }

    // RFC 4231 test case 2 pins the construction (HMAC-SHA256, key then
    // message), the label pins what is hashed.
    #[test]
    fn the_derivation_is_hmac_sha256_of_the_label_and_the_name() {
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let key = AgentKey::parse("0123456789abcdef0123456789abcdef").unwrap();
        let mut mac = Hmac::<Sha256>::new_from_slice(b"0123456789abcdef0123456789abcdef").unwrap();
        mac.update(b"osdkeeper agent token v1\nosd-host-1");
        assert_eq!(key.token_for("osd-host-1"), hex(&mac.finalize().into_bytes()));
    }

    #[test]
    fn keys_are_long_enough_and_tell_themselves_from_tokens() {
        let e = AgentKey::parse(" short\n").unwrap_err();
        assert!(e.contains("at least 32 characters (this one has 5)"), "{e}");
        assert_eq!(AgentKey::parse("  0123456789abcdef0123456789abcdef\n").unwrap().text().len(), 32);
        let made = AgentKey::from_random(&[0xab; 32]);
        assert!(made.text().starts_with("osdkeeper-agent-key-v1:abab"), "{}", made.text());
        assert_eq!(AgentKey::parse(made.text()).unwrap(), made);
        assert!(looks_like_key(&format!("{}\n", made.text())));
        assert!(!looks_like_key(&made.token_for("h")));
        assert_eq!(format!("{made:?}"), "AgentKey(<hidden>)");
    }
}
