//! `placement:` of an OSD spec: which hosts it applies to, parsed and
//! validated like cephadm's `PlacementSpec` and matched like
//! `filter_matching_hostspecs` (explicit hosts, else label, else pattern,
//! else every schedulable host).

use std::net::{IpAddr, Ipv4Addr};

use super::error::FieldError;
use crate::domain::fnmatch::Pattern;
use crate::domain::value::{excerpt, Value};

/// An entry of `placement.hosts` (`host[:network][=name]`).
#[derive(Debug, Clone, PartialEq)]
pub struct HostEntry {
    pub hostname: String,
    pub network: String,
    pub name: String,
}

/// A host the planner may place OSDs on.
#[derive(Debug, Clone, Copy)]
pub struct HostRef<'a> {
    pub name: &'a str,
    pub labels: &'a [String],
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Placement {
    pub hosts: Vec<HostEntry>,
    pub label: Option<String>,
    pub host_pattern: Option<String>,
    pub count: Option<i64>,
    pub count_per_host: Option<i64>,
    pattern: Option<Pattern>,
    /// 17.2 on, `host_pattern` narrows a `label` placement down; 16.2
    /// ignores the pattern when a label is given.
    pub pattern_narrows_label: bool,
}

impl Placement {
    /// cephadm's `PlacementSpec.is_empty()`.
    pub fn is_empty(&self) -> bool {
        self.label.is_none()
            && self.hosts.is_empty()
            && self.host_pattern.is_none()
            && self.count.is_none()
            && self.count_per_host.is_none()
    }

    /// The hosts this placement selects, in cephadm's order: spec order for
    /// explicit hosts (duplicates kept), inventory order otherwise.
    pub fn matching_hosts<'a>(&self, hosts: &[HostRef<'a>]) -> Vec<&'a str> {
        if !self.hosts.is_empty() {
            return self
                .hosts
                .iter()
                .filter_map(|e| hosts.iter().find(|h| h.name == e.hostname).map(|h| h.name))
                .collect();
        }
        if let Some(label) = &self.label {
            let pattern = self.pattern.as_ref().filter(|_| self.pattern_narrows_label);
            return hosts
                .iter()
                .filter(|h| h.labels.iter().any(|l| l == label))
                .filter(|h| pattern.is_none_or(|p| p.matches(h.name)))
                .map(|h| h.name)
                .collect();
        }
        if let Some(pattern) = &self.pattern {
            return hosts.iter().filter(|h| pattern.matches(h.name)).map(|h| h.name).collect();
        }
        hosts.iter().map(|h| h.name).collect()
    }

    /// Human description for tables and messages.
    pub fn describe(&self) -> String {
        if !self.hosts.is_empty() {
            let names: Vec<&str> = self.hosts.iter().map(|h| h.hostname.as_str()).collect();
            format!("hosts {}", names.join(","))
        } else if let Some(l) = &self.label {
            format!("label {l}")
        } else if let Some(p) = &self.host_pattern {
            format!("host_pattern {p}")
        } else {
            "all hosts".to_string()
        }
    }

    /// Reads `placement:`. `notes` collects things that are valid but
    /// probably not what the operator meant.
    pub fn parse(v: &Value, notes: &mut Vec<String>) -> Result<Placement, FieldError> {
        let Some(entries) = v.as_map() else {
            return Err(FieldError::cephadm(
                "placement",
                Some(v.display()),
                format!("placement must be a mapping (host_pattern, hosts or label), got {}", v.type_name()),
            ));
        };
        let mut p = Placement::default();
        for (k, val) in entries {
            let Some(key) = k.as_str() else {
                return Err(FieldError::cephadm("placement", Some(k.display()), "placement keys must be text"));
            };
            match key {
                "hosts" => {
                    if val.truthy() {
                        p.hosts = parse_hosts(val)?;
                    }
                }
                "label" => {
                    p.label = match val {
                        Value::Null => None,
                        Value::Str(s) if !s.is_empty() => Some(s.clone()),
                        other => {
                            return Err(FieldError::stricter(
                                "placement.label",
                                Some(other.display()),
                                "label must be a non-empty string: cephadm compares it with host labels as given, \
                                 so an empty label selects every host and a non-string label selects none",
                            ))
                        }
                    }
                }
                // A falsy pattern ('', 0, null) is no pattern, as in cephadm.
                "host_pattern" => {
                    if val.truthy() {
                        let Some(s) = val.as_str() else {
                            return Err(FieldError::cephadm(
                                "placement.host_pattern",
                                Some(val.display()),
                                "host_pattern must be of type string",
                            ));
                        };
                        p.host_pattern = Some(s.to_string());
                        p.pattern = Some(Pattern::new(s));
                    }
                }
                "count" => p.count = parse_count(val, "placement.count", "num/count")?,
                "count_per_host" => p.count_per_host = parse_count(val, "placement.count_per_host", "count-per-host")?,
                other => {
                    return Err(FieldError::cephadm(
                        format!("placement.{}", excerpt(other)),
                        None,
                        "unknown placement key (known: host_pattern, hosts, label, count, count_per_host)",
                    ))
                }
            }
        }
        p.validate(notes)?;
        Ok(p)
    }

    fn validate(&self, notes: &mut Vec<String>) -> Result<(), FieldError> {
        let err = |field: &str, msg: &str| Err(FieldError::cephadm(field, None, msg));
        if !self.hosts.is_empty() && self.label.is_some() {
            return err("placement", "Host and label are mutually exclusive");
        }
        if self.count_per_host.is_some() && self.label.is_none() && self.hosts.is_empty() && self.host_pattern.is_none()
        {
            return err(
                "placement.count_per_host",
                "count-per-host must be combined with label or hosts or host_pattern",
            );
        }
        if self.count.is_some() && self.count_per_host.is_some() {
            return err("placement", "cannot combine count and count-per-host");
        }
        if self.count_per_host.is_some() && self.hosts.iter().any(|h| !h.network.is_empty() || !h.name.is_empty()) {
            return err(
                "placement.count_per_host",
                "count-per-host cannot be combined explicit placement with names or networks",
            );
        }
        if self.host_pattern.is_some() && !self.hosts.is_empty() {
            return err("placement", "cannot combine host patterns and hosts");
        }
        if self.label.is_some() && self.host_pattern.is_some() {
            notes
                .push("placement: host_pattern is ignored because label is given (cephadm uses the label only)".into());
        }
        if self.count.is_some() || self.count_per_host.is_some() {
            notes.push(
                "placement: count and count_per_host are ignored for OSD specs (every matching host gets OSDs)".into(),
            );
        }
        Ok(())
    }
}

fn parse_count(v: &Value, field: &str, what: &str) -> Result<Option<i64>, FieldError> {
    let bad = |msg: String| Err(FieldError::cephadm(field, Some(v.display()), msg));
    let n = match v {
        Value::Null => return Ok(None),
        Value::Int(i) => *i as i64,
        Value::Bool(b) => i64::from(*b),
        Value::Float(f) if f.fract() == 0.0 && f.is_finite() => *f as i64,
        Value::Float(_) => return bad(format!("{what} must be an integer value")),
        Value::Str(s) if s.trim().parse::<i64>().is_ok() => return bad(format!("{what} must be an integer value")),
        _ => return bad(format!("{what} must be a numeric value")),
    };
    if n < 1 {
        return bad(format!("{what} must be >= 1"));
    }
    Ok(Some(n))
}

fn parse_hosts(v: &Value) -> Result<Vec<HostEntry>, FieldError> {
    let items = match v {
        Value::Seq(items) => items,
        Value::Str(_) | Value::Map(_) => {
            return Err(FieldError::stricter(
                "placement.hosts",
                Some(v.display()),
                "hosts must be a list of host names: cephadm iterates a bare string letter by letter \
                 (and a mapping by its keys), so it would look for hosts named after single characters",
            ))
        }
        other => {
            return Err(FieldError::cephadm(
                "placement.hosts",
                Some(other.display()),
                format!("hosts must be a list of host names, got {}", other.type_name()),
            ))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = format!("placement.hosts[{i}]");
            match item {
                Value::Str(s) => parse_host_entry(s).map_err(|m| FieldError::cephadm(&field, Some(item.display()), m)),
                Value::Map(_) => host_entry_from_map(item, &field),
                other => Err(FieldError::cephadm(
                    field,
                    Some(other.display()),
                    format!("a host entry must be 'host[:network][=name]', got {}", other.type_name()),
                )),
            }
        })
        .collect()
}

fn host_entry_from_map(v: &Value, field: &str) -> Result<HostEntry, FieldError> {
    let map = v.as_map().expect("checked by caller");
    let mut parts: [Option<&Value>; 3] = [None, None, None];
    for (k, val) in map {
        let idx = match k.as_str() {
            Some("hostname") => 0,
            Some("network") => 1,
            Some("name") => 2,
            _ => {
                return Err(FieldError::cephadm(
                    field,
                    Some(k.display()),
                    "a host mapping takes exactly hostname, network and name",
                ))
            }
        };
        parts[idx] = Some(val);
    }
    let [Some(h), Some(n), Some(m)] = parts else {
        return Err(FieldError::cephadm(field, None, "a host mapping takes exactly hostname, network and name"));
    };
    let Some(hostname) = h.as_str() else {
        return Err(FieldError::cephadm(field, Some(h.display()), "hostname must be a string"));
    };
    valid_host(hostname).map_err(|m| FieldError::cephadm(field, Some(h.display()), m))?;
    Ok(HostEntry { hostname: hostname.to_string(), network: n.python_str(), name: m.python_str() })
}

/// `HostPlacementSpec.parse(host, require_network=True)`.
fn parse_host_entry(text: &str) -> Result<HostEntry, String> {
    let host_end = text.find([':', '=']).unwrap_or(text.len());
    let hostname = text[..host_end].to_string();
    let name = text.find('=').map(|i| text[i + 1..].to_string()).unwrap_or_default();
    let network = match text.find(':') {
        Some(i) => {
            let rest = &text[i + 1..];
            rest[..rest.find('=').unwrap_or(rest.len())].to_string()
        }
        None => String::new(),
    };
    let networks: Vec<&str> = if network.contains(',') {
        network.split(',').collect()
    } else if network.is_empty() {
        Vec::new()
    } else {
        vec![network.as_str()]
    };
    for net in networks {
        let mut addr = net;
        if addr.starts_with('v') || addr.starts_with("[v") {
            let after = addr
                .split_once(':')
                .map(|(_, r)| r)
                .ok_or_else(|| format!("cannot read network {:?}", excerpt(net)))?;
            addr = after.rsplit_once(':').map(|(l, _)| l).unwrap_or(after);
        }
        let ok = if addr.contains('/') { valid_ip_network(addr) } else { valid_ip_address(addr) };
        if !ok {
            return Err(format!("'{}' does not appear to be an IPv4 or IPv6 address or network", excerpt(addr)));
        }
    }
    valid_host(&hostname)?;
    Ok(HostEntry { hostname, network, name })
}

fn valid_ip_address(addr: &str) -> bool {
    let unwrapped = addr.strip_prefix('[').and_then(|a| a.strip_suffix(']')).unwrap_or(addr);
    unwrapped.parse::<IpAddr>().is_ok()
}

/// Python's `ip_network(s)` in strict mode: host bits must be zero.
fn valid_ip_network(net: &str) -> bool {
    let Some((addr, prefix)) = net.split_once('/') else {
        return false;
    };
    let Ok(ip) = addr.parse::<IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let bits: u32 = match prefix.parse::<u32>() {
        Ok(b) if b <= max => b,
        Ok(_) => return false,
        Err(_) => match (ip, prefix.parse::<Ipv4Addr>()) {
            (IpAddr::V4(_), Ok(mask)) => {
                let m = u32::from(mask);
                if m.leading_ones() + m.trailing_zeros() != 32 {
                    return false;
                }
                m.leading_ones()
            }
            _ => return false,
        },
    };
    match ip {
        IpAddr::V4(v4) => bits == 32 || u32::from(v4) & (u32::MAX >> bits) == 0,
        IpAddr::V6(v6) => bits == 128 || u128::from(v6) & (u128::MAX >> bits) == 0,
    }
}

/// cephadm's `assert_valid_host`: dot-separated labels of `[a-zA-Z0-9-]`.
pub fn valid_host(name: &str) -> Result<(), String> {
    if name.chars().count() > 250 {
        return Err("name is too long (max 250 chars)".into());
    }
    for part in name.split('.') {
        if part.is_empty() {
            return Err(".-delimited name component must not be empty".into());
        }
        if part.chars().count() > 63 {
            return Err(".-delimited name component must not be more than 63 chars".into());
        }
        if !part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err("name component must include only a-z, 0-9, and -".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &'static str, labels: &'static [String]) -> HostRef<'static> {
        HostRef { name, labels }
    }

    #[test]
    fn host_entries_follow_cephadm() {
        let e = parse_host_entry("node1:10.0.0.0/24=mon-a").unwrap();
        assert_eq!((e.hostname.as_str(), e.network.as_str(), e.name.as_str()), ("node1", "10.0.0.0/24", "mon-a"));
        assert!(parse_host_entry("node1:10.0.0.1/24").is_err(), "host bits set");
        assert!(parse_host_entry("node_1").is_err());
        assert!(parse_host_entry("node1:[v2:1.2.3.4:3300,v1:1.2.3.4:6789]").is_ok());
        assert!(valid_ip_network("10.0.0.0/255.255.255.0"));
    }

    #[test]
    fn matching_order() {
        let mut notes = vec![];
        let p =
            Placement::parse(&crate::domain::yaml11::load_all("hosts: [b, a, zz, a]").unwrap()[0].value, &mut notes)
                .unwrap();
        let hosts = [host("a", &[]), host("b", &[])];
        assert_eq!(p.matching_hosts(&hosts), vec!["b", "a", "a"]);
    }
}
