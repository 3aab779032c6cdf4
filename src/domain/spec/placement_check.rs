//! A placement held against the hosts the daemon knows, at apply time.
//!
//! cephadm refuses a spec whose `hosts:` names a host it does not manage
//! ("Unknown hosts"), while the selection itself drops such names silently;
//! a typo (`f5-442-01` for `f5-422-01`) would otherwise be stored and make
//! nothing. A `label:` or `host_pattern:` that matches no host is valid (the
//! host may come later) but is almost always a mistake, so it is said loudly
//! and the apply must confirm it.

use super::placement::{HostRef, Placement};
use super::FieldError;
use crate::domain::value::excerpt;

/// Known hosts named in a message at most; the rest are counted.
const NAMES_SHOWN: usize = 8;

/// A name this close to a known one (edits per character) is called a typo.
const TYPO_DISTANCE: f64 = 0.25;

/// What is wrong with a placement on the current hosts.
#[derive(Debug, Clone, PartialEq)]
pub enum PlacementProblem {
    /// `hosts:` entries that are no known host: refused.
    UnknownHosts(Vec<UnknownHost>),
    /// A label or pattern no known schedulable host matches: warned about.
    MatchesNoHost(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct UnknownHost {
    pub name: String,
    /// The known host it most likely meant.
    pub nearest: Option<String>,
}

/// Holds `placement` against `known` (every host the daemon manages, with
/// its labels, `_no_schedule` included).
pub fn check_placement(placement: &Placement, known: &[HostRef<'_>]) -> Option<PlacementProblem> {
    if !placement.hosts.is_empty() {
        let unknown: Vec<UnknownHost> = placement
            .hosts
            .iter()
            .filter(|e| !known.iter().any(|h| h.name == e.hostname))
            .map(|e| UnknownHost { name: e.hostname.clone(), nearest: nearest(&e.hostname, known) })
            .collect();
        return (!unknown.is_empty()).then_some(PlacementProblem::UnknownHosts(unknown));
    }
    if placement.label.is_none() && placement.host_pattern.is_none() {
        return None;
    }
    let schedulable: Vec<HostRef<'_>> =
        known.iter().copied().filter(|h| !h.labels.iter().any(|l| l == NO_SCHEDULE)).collect();
    if !placement.matching_hosts(&schedulable).is_empty() {
        return None;
    }
    let selector = match (&placement.label, &placement.host_pattern) {
        (Some(label), _) => format!("label '{}'", excerpt(label)),
        (None, Some(pattern)) => format!("host_pattern '{}'", excerpt(pattern)),
        (None, None) => unreachable!("checked above"),
    };
    let held = if schedulable.len() < known.len() {
        format!(" ({} more carry _no_schedule)", known.len() - schedulable.len())
    } else {
        String::new()
    };
    Some(PlacementProblem::MatchesNoHost(format!(
        "placement {selector} matches none of the {} schedulable hosts{held} ({}); if stored, this spec creates no OSDs until a host matches",
        schedulable.len(),
        names(&schedulable),
    )))
}

/// The label that keeps specs off a host (cephadm's).
/// The label cephadm gives a host that no new daemon may be placed on.
pub const NO_SCHEDULE: &str = "_no_schedule";

impl PlacementProblem {
    /// The refusal, as a spec error on `placement.hosts`; `None` for a warning.
    pub fn refusal(&self, known: &[HostRef<'_>]) -> Option<FieldError> {
        let PlacementProblem::UnknownHosts(unknown) = self else { return None };
        let each: Vec<String> = unknown
            .iter()
            .map(|u| match &u.nearest {
                Some(n) => format!("{} (did you mean {n}?)", excerpt(&u.name)),
                None => excerpt(&u.name),
            })
            .collect();
        let value = unknown.iter().map(|u| u.name.as_str()).collect::<Vec<_>>().join(",");
        let knows = if known.is_empty() {
            "osdkeeper knows no host yet (add them with `osdkeeper host add`)".to_string()
        } else {
            format!("the {} known hosts are {}", known.len(), names(known))
        };
        Some(FieldError::cephadm(
            "placement.hosts",
            Some(value),
            format!("Unknown hosts: {}; {knows}", each.join(", ")),
        ))
    }

    /// The warning for the dry-run; `None` for a refusal.
    pub fn warning(&self) -> Option<&str> {
        match self {
            PlacementProblem::MatchesNoHost(w) => Some(w),
            PlacementProblem::UnknownHosts(_) => None,
        }
    }
}

fn names(hosts: &[HostRef<'_>]) -> String {
    let shown: Vec<&str> = hosts.iter().take(NAMES_SHOWN).map(|h| h.name).collect();
    match hosts.len().saturating_sub(NAMES_SHOWN) {
        _ if shown.is_empty() => "none".to_string(),
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}

/// Longer than any DNS name: not worth comparing with every host.
const LONGEST_NAME: usize = 253;

/// The known host with the fewest edits from `name`, if few enough to be a typo.
fn nearest(name: &str, known: &[HostRef<'_>]) -> Option<String> {
    if name.len() > LONGEST_NAME {
        return None;
    }
    let budget = ((name.chars().count() as f64) * TYPO_DISTANCE).ceil() as usize;
    known
        .iter()
        .map(|h| (strsim::levenshtein(name, h.name), h.name))
        .filter(|(d, _)| *d <= budget)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::spec::HostEntry;
    use crate::domain::value::Value;

    fn placement(yaml_like: &[(&str, Value)]) -> Placement {
        let map = Value::Map(yaml_like.iter().map(|(k, v)| (Value::Str(k.to_string()), v.clone())).collect());
        let mut notes = Vec::new();
        Placement::parse(&map, &mut notes).expect("valid placement")
    }

    fn hosts(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn list(items: &[&str]) -> Value {
        Value::Seq(items.iter().map(|s| Value::Str(s.to_string())).collect())
    }

    #[test]
    fn a_typo_in_hosts_is_refused_with_the_host_it_meant() {
        let names = hosts(&["f5-422-01", "f5-422-02", "f5-422-03"]);
        let none: Vec<String> = vec![];
        let known: Vec<HostRef> = names.iter().map(|n| HostRef { name: n, labels: &none }).collect();
        let p = placement(&[("hosts", list(&["f5-442-01", "f5-422-02"]))]);
        let problem = check_placement(&p, &known).expect("unknown host found");
        let err = problem.refusal(&known).expect("a refusal");
        assert_eq!(err.field, "placement.hosts");
        assert_eq!(err.value.as_deref(), Some("f5-442-01"));
        assert!(err.message.contains("f5-442-01 (did you mean f5-422-01?)"), "{}", err.message);
        assert!(err.message.contains("the 3 known hosts are f5-422-01, f5-422-02, f5-422-03"), "{}", err.message);
        assert_eq!(problem.warning(), None);
    }

    #[test]
    fn a_name_far_from_every_host_gets_no_guess() {
        let names = hosts(&["f5-422-01"]);
        let none: Vec<String> = vec![];
        let known: Vec<HostRef> = names.iter().map(|n| HostRef { name: n, labels: &none }).collect();
        let p = placement(&[("hosts", list(&["storage-9"]))]);
        let Some(PlacementProblem::UnknownHosts(u)) = check_placement(&p, &known) else { panic!("refused") };
        assert_eq!(u, vec![UnknownHost { name: "storage-9".into(), nearest: None }]);
    }

    #[test]
    fn known_hosts_pass_even_when_held_by_no_schedule() {
        let names = hosts(&["a", "b"]);
        let held = vec!["_no_schedule".to_string()];
        let known = vec![HostRef { name: &names[0], labels: &held }, HostRef { name: &names[1], labels: &held }];
        let p = placement(&[("hosts", list(&["a", "b"]))]);
        assert_eq!(check_placement(&p, &known), None);
    }

    #[test]
    fn a_label_on_no_schedulable_host_is_a_warning_that_counts_the_held_ones() {
        let names = hosts(&["a", "b"]);
        let ssd = vec!["ssd".to_string(), "_no_schedule".to_string()];
        let none: Vec<String> = vec![];
        let known = vec![HostRef { name: &names[0], labels: &ssd }, HostRef { name: &names[1], labels: &none }];
        let p = placement(&[("label", Value::Str("ssd".into()))]);
        let problem = check_placement(&p, &known).expect("warned");
        assert_eq!(problem.refusal(&known), None);
        let w = problem.warning().expect("a warning");
        assert!(
            w.starts_with(
                "placement label 'ssd' matches none of the 1 schedulable hosts (1 more carry _no_schedule) (b)"
            ),
            "{w}"
        );
    }

    #[test]
    fn a_pattern_matching_a_host_is_fine_and_one_matching_none_is_warned() {
        let names: Vec<String> = (1..=10).map(|i| format!("f5-422-{i:02}")).collect();
        let none: Vec<String> = vec![];
        let known: Vec<HostRef> = names.iter().map(|n| HostRef { name: n, labels: &none }).collect();
        let good = placement(&[("host_pattern", Value::Str("f5-422-*".into()))]);
        assert_eq!(check_placement(&good, &known), None);
        let typo = placement(&[("host_pattern", Value::Str("f5-442-*".into()))]);
        let w = check_placement(&typo, &known).expect("warned");
        let w = w.warning().expect("a warning");
        assert!(w.contains("host_pattern 'f5-442-*' matches none of the 10 schedulable hosts"), "{w}");
        assert!(w.contains("f5-422-08, and 2 more"), "{w}");
    }

    #[test]
    fn a_huge_unknown_name_is_quoted_short_and_not_compared() {
        let names: Vec<String> = (0..2000).map(|i| format!("node-{i}")).collect();
        let none: Vec<String> = vec![];
        let known: Vec<HostRef> = names.iter().map(|n| HostRef { name: n, labels: &none }).collect();
        // The parser refuses such a name; the check must not rely on it.
        let entry = HostEntry { hostname: "n".repeat(100_000), network: String::new(), name: String::new() };
        let mut p = Placement::default();
        p.hosts.push(entry);
        let problem = check_placement(&p, &known).expect("refused");
        let err = problem.refusal(&known).expect("a refusal");
        assert!(err.message.len() < 1_000, "{} bytes", err.message.len());
        assert!(err.message.contains("and 1992 more"), "{}", err.message);
    }

    #[test]
    fn a_huge_pattern_matching_nothing_is_quoted_short() {
        let names: Vec<String> = (0..2000).map(|i| format!("node-{i}")).collect();
        let none: Vec<String> = vec![];
        let known: Vec<HostRef> = names.iter().map(|n| HostRef { name: n, labels: &none }).collect();
        for key in ["host_pattern", "label"] {
            let p = placement(&[(key, Value::Str("[".repeat(300_000)))]);
            let w = check_placement(&p, &known).expect("warned");
            let w = w.warning().expect("a warning");
            assert!(w.len() < 1_000, "{key}: {} bytes", w.len());
            assert!(w.contains("(300000 bytes)"), "{w}");
        }
    }

    #[test]
    fn all_hosts_placement_is_never_a_problem() {
        let p = placement(&[("count", Value::Int(3))]);
        assert_eq!(check_placement(&p, &[]), None);
    }
}
