//! Who may do what through the API: the roles a token can have, the one
//! table of the role each route needs (`RULES`), and the decision for a
//! request. The API finds the caller and the route and obeys the answer;
//! it decides nothing itself.
//!
//! Roles are ordered, `read` < `operate` < `admin`; a route missing from
//! `RULES` needs `admin`. A refusal is 401 (no known caller) or 403 naming
//! the role needed. A token is stored as the SHA-256 digest of its secret,
//! and every check compares digests in constant time.

use sha2::{Digest, Sha256};

/// What a token may do; each role may also do everything of the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Sees everything, changes nothing.
    Read,
    /// Also applies and removes specs, schedules and stops OSD removals.
    Operate,
    /// Also zaps and releases devices, adds, removes and labels hosts, and manages tokens.
    Admin,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Read, Role::Operate, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Operate => "operate",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a route asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// No token: liveness, metrics and the dashboard's page, which holds no data.
    Nothing,
    Role(Role),
}

/// One route of the API (method and axum's path pattern) and what it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub method: &'static str,
    pub path: &'static str,
    pub need: Need,
}

const fn rule(method: &'static str, path: &'static str, need: Need) -> Rule {
    Rule { method, path, need }
}

const ANYONE: Need = Need::Nothing;
const READ: Need = Need::Role(Role::Read);
const OPERATE: Need = Need::Role(Role::Operate);
const ADMIN: Need = Need::Role(Role::Admin);

/// Every route of the API and the role it needs: the only place that says
/// so. The API's router is checked against it route by route (a route
/// missing here would need `admin`, see `need`). A dry-run is asked on the
/// apply route and needs `operate` like the apply, as `ceph orch apply
/// --dry-run` needs the caps of the apply. The removal preview
/// (`osd rm --dry-run`) changes nothing either, and needs `operate` like
/// `osd rm`: it makes the daemon fetch the osdmap and run osdmaptool on
/// every PG, work a read-only token should not be able to start at will.
pub const RULES: &[Rule] = &[
    rule("GET", "/healthz", ANYONE),
    rule("GET", "/metrics", ANYONE),
    rule("GET", "/", ANYONE),
    rule("GET", "/assets/{name}", ANYONE),
    rule("GET", "/api/v1/openapi.json", READ),
    rule("GET", "/api/v1/whoami", READ),
    rule("GET", "/api/v1/hosts", READ),
    rule("GET", "/api/v1/devices", READ),
    rule("GET", "/api/v1/devices/held", READ),
    rule("GET", "/api/v1/devices/probes", READ),
    rule("GET", "/api/v1/devices/probes/{probe_id}", READ),
    rule("GET", "/api/v1/specs", READ),
    rule("GET", "/api/v1/specs/{service_name}", READ),
    rule("GET", "/api/v1/events", READ),
    rule("GET", "/api/v1/osds", READ),
    rule("GET", "/api/v1/osds/removals", READ),
    rule("GET", "/api/v1/hosts/{name}/drain", READ),
    rule("GET", "/api/v1/osds/removals/{removal_id}", READ),
    rule("GET", "/api/v1/workers", READ),
    rule("GET", "/api/v1/deployments", READ),
    rule("GET", "/api/v1/deployments/{deployment_id}", READ),
    rule("GET", "/api/v1/swaps", READ),
    rule("GET", "/api/v1/swaps/{swap_id}", READ),
    rule("GET", "/api/v1/stream", READ),
    rule("GET", "/api/v1/summary", READ),
    rule("GET", "/api/v1/cluster/status", READ),
    rule("GET", "/api/v1/benchmarks/osds", READ),
    rule("GET", "/api/v1/benchmarks/cluster", READ),
    rule("GET", "/api/v1/benchmarks/cluster/{bench_id}", READ),
    rule("GET", "/api/v1/benchmarks/compare", READ),
    rule("POST", "/api/v1/specs", OPERATE),
    rule("DELETE", "/api/v1/specs/{service_name}", OPERATE),
    rule("POST", "/api/v1/osds/removals", OPERATE),
    rule("POST", "/api/v1/osds/removals/stop", OPERATE),
    rule("POST", "/api/v1/osds/removals/preview", OPERATE),
    // A swap moves data and retires OSDs as a removal does; its in-place
    // way needs its risks accepted by name in the request.
    rule("POST", "/api/v1/swaps", OPERATE),
    // `osd rm --replace --zap` of a disk's OSDs; the clear lifts only its own holds.
    rule("POST", "/api/v1/devices/replace", OPERATE),
    rule("POST", "/api/v1/devices/replace/clear", OPERATE),
    rule("POST", "/api/v1/swaps/preview", OPERATE),
    rule("POST", "/api/v1/swaps/{swap_id}/stop", OPERATE),
    // A drain marks its host _no_schedule itself: part of the removal, not a label edit.
    rule("POST", "/api/v1/hosts/{name}/drain", OPERATE),
    rule("POST", "/api/v1/hosts/{name}/drain/preview", OPERATE),
    rule("POST", "/api/v1/hosts/{name}/drain/stop", OPERATE),
    // A benchmark loads the disks clients use, but changes nothing.
    rule("POST", "/api/v1/benchmarks/osds", OPERATE),
    rule("POST", "/api/v1/benchmarks/cluster", OPERATE),
    rule("POST", "/api/v1/hosts", ADMIN),
    rule("DELETE", "/api/v1/hosts/{name}", ADMIN),
    rule("POST", "/api/v1/hosts/{name}/labels", ADMIN),
    rule("DELETE", "/api/v1/hosts/{name}/labels/{label}", ADMIN),
    rule("POST", "/api/v1/devices/release", ADMIN),
    rule("POST", "/api/v1/devices/zap", ADMIN),
    // fio overwrites the disk it probes: as destructive as a zap.
    rule("POST", "/api/v1/devices/probe", ADMIN),
    rule("GET", "/api/v1/tokens", ADMIN),
    rule("POST", "/api/v1/tokens", ADMIN),
    rule("DELETE", "/api/v1/tokens/{name}", ADMIN),
    rule("POST", "/api/v1/backup", ADMIN),
];

/// A method that changes something (everything but reading).
pub fn is_mutating(method: &str) -> bool {
    !matches!(method, "GET" | "HEAD" | "OPTIONS")
}

/// What a request needs, by its method and the route pattern it matched.
/// HEAD is read like GET. A route without a rule needs `admin`: a route
/// added to the router but forgotten here is closed, not open.
pub fn need(method: &str, route: &str) -> Need {
    let method = if method == "HEAD" { "GET" } else { method };
    RULES.iter().find(|r| r.method == method && r.path == route).map_or(ADMIN, |r| r.need)
}

/// Who is asking, as the API found out from the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller<'a> {
    /// No token exists at all (none configured, none created): a daemon on
    /// loopback only, as before tokens had names. Anyone there is an admin.
    Open,
    /// Tokens exist and the request has none.
    Missing,
    /// A token that matches none (wrong, or revoked).
    Unknown,
    Token {
        name: &'a str,
        role: Role,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// 401: who is asking is not known.
    Unauthenticated(&'static str),
    /// 403: known, but the role is too small.
    Forbidden {
        needed: Role,
        has: Role,
    },
}

pub fn decide(need: Need, caller: Caller<'_>) -> Decision {
    let needed = match need {
        Need::Nothing => return Decision::Allow,
        Need::Role(r) => r,
    };
    match caller {
        Caller::Open => Decision::Allow,
        Caller::Missing => Decision::Unauthenticated(
            "this daemon needs a token: send Authorization: Bearer <token> (the CLI reads OSDKEEPER_TOKEN)",
        ),
        Caller::Unknown => Decision::Unauthenticated("unknown or revoked API token"),
        Caller::Token { role, .. } if role >= needed => Decision::Allow,
        Caller::Token { role, .. } => Decision::Forbidden { needed, has: role },
    }
}

/// The name the configured `OSDKEEPER_TOKEN` goes by in the event log.
pub const BOOTSTRAP: &str = "bootstrap";
/// The name changes made on an open daemon (no token at all) go by.
pub const ANONYMOUS: &str = "anonymous";

/// A token's name: what the event log shows, so short and plain.
pub fn check_name(name: &str) -> Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty()
        || name.len() > 64
        || !name.chars().all(plain)
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Err(format!(
            "invalid token name {:?}: 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
            excerpt(name)
        ));
    }
    if name == BOOTSTRAP || name == ANONYMOUS {
        return Err(format!(
            "the token name {name:?} is reserved (the event log uses it for callers without a stored token)"
        ));
    }
    Ok(())
}

/// At most 40 characters of what a client sent, for an error message.
fn excerpt(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The prefix of every secret osdkeeper makes, so that secret scanners and
/// operators recognise one in a file or a paste.
pub const SECRET_PREFIX: &str = "osdk_";

/// A secret from 32 random bytes (the caller draws them from the OS).
pub fn secret_from(random: &[u8; 32]) -> String {
    let mut s = String::with_capacity(SECRET_PREFIX.len() + 64);
    s.push_str(SECRET_PREFIX);
    for b in random {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// What is stored of a secret. A plain SHA-256 is enough: the secret is 256
/// random bits, so there is nothing to guess that a slow hash would protect.
pub fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Compares without returning early, also when the lengths differ (the
/// time taken says nothing about how much of a guess was right).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..n {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    std::hint::black_box(diff) == 0
}

/// The entry whose digest equals `presented`'s, comparing with every entry
/// in full (no early exit: the time does not say which entry, or whether
/// one, matched).
pub fn find_by_digest<'a, T>(
    entries: &'a [T],
    digest_of: impl Fn(&T) -> &[u8; 32],
    presented: &[u8; 32],
) -> Option<&'a T> {
    let mut found = None;
    for e in entries {
        if constant_time_eq(digest_of(e), presented) {
            found = Some(e);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_and_named() {
        assert!(Role::Read < Role::Operate && Role::Operate < Role::Admin);
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{r}\""));
        }
        assert_eq!(Role::parse("root"), None);
    }

    #[test]
    fn every_rule_is_listed_once_and_every_change_needs_a_role_above_read() {
        for (i, r) in RULES.iter().enumerate() {
            assert!(!RULES[..i].iter().any(|o| o.method == r.method && o.path == r.path), "{r:?} twice");
            if is_mutating(r.method) {
                assert!(matches!(r.need, Need::Role(Role::Operate | Role::Admin)), "{r:?} changes something");
            }
        }
    }

    #[test]
    fn unlisted_routes_need_admin_and_head_reads_like_get() {
        assert_eq!(need("POST", "/api/v1/new-thing"), Need::Role(Role::Admin));
        assert_eq!(need("HEAD", "/healthz"), Need::Nothing);
        assert_eq!(need("GET", "/api/v1/hosts"), Need::Role(Role::Read));
    }

    #[test]
    fn decisions() {
        let zap = need("POST", "/api/v1/devices/zap");
        let stop = need("POST", "/api/v1/osds/removals/stop");
        let read = Caller::Token { name: "ro", role: Role::Read };
        let operate = Caller::Token { name: "ops", role: Role::Operate };
        let admin = Caller::Token { name: "root", role: Role::Admin };
        assert_eq!(decide(zap, read), Decision::Forbidden { needed: Role::Admin, has: Role::Read });
        assert_eq!(decide(zap, operate), Decision::Forbidden { needed: Role::Admin, has: Role::Operate });
        assert_eq!(decide(zap, admin), Decision::Allow);
        assert_eq!(decide(stop, operate), Decision::Allow);
        assert_eq!(decide(stop, read), Decision::Forbidden { needed: Role::Operate, has: Role::Read });
        assert_eq!(decide(zap, Caller::Open), Decision::Allow);
        assert!(matches!(decide(zap, Caller::Missing), Decision::Unauthenticated(_)));
        assert!(matches!(decide(need("GET", "/api/v1/hosts"), Caller::Unknown), Decision::Unauthenticated(_)));
        assert_eq!(decide(need("GET", "/healthz"), Caller::Missing), Decision::Allow);
    }

    #[test]
    fn names() {
        assert!(check_name("ops-team_1.a").is_ok());
        for bad in ["", "-x", "a b", "a/b", "bootstrap", "anonymous", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"ü".repeat(1000)).unwrap_err().len() < 300, "the error quotes an excerpt");
    }

    #[test]
    fn secrets_and_digests() {
        let s = secret_from(&[0xab; 32]);
        assert_eq!(s.len(), SECRET_PREFIX.len() + 64);
        assert!(s.starts_with("osdk_abab"));
        assert_eq!(digest("abc")[..4], [0xba, 0x78, 0x16, 0xbf], "SHA-256");
        let entries = [digest("one"), digest("two")];
        assert_eq!(find_by_digest(&entries, |d| d, &digest("two")), Some(&entries[1]));
        assert_eq!(find_by_digest(&entries, |d| d, &digest("three")), None);
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(
            !constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"abc", b"abcd") && !constant_time_eq(b"", b"a")
        );
    }
}
