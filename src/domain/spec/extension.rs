//! `osdkeeper:`, the one top-level key of an OSD spec that cephadm does not
//! know: osdkeeper's own options. It is taken out of the document before
//! cephadm's reading starts, so that everything else is read exactly as
//! cephadm 16.2 reads it, and a document without it is the same document
//! for both. cephadm refuses the key (`Feature 'osdkeeper' is not
//! supported`): a spec that uses it is osdkeeper's
//! (docs/differences-from-cephadm.md).
//!
//! ```yaml
//! osdkeeper:
//!   probe:                      # or `probe: true`: wait for any probe
//!     mode: full                # a quick probe is not enough
//!     min_sync_write_iops: 2000 # refuse disks below (also min_seq_write_mb_s,
//!     min_seq_write_mb_s: 100   #   min_seq_read_mb_s, min_rand_read_iops)
//!     refuse_outliers: true     # refuse disks far below comparable ones
//! ```

use super::error::FieldError;
use crate::domain::probe::gate::ProbeGate;
use crate::domain::probe::{ProbeJob, ProbeMode};
use crate::domain::value::{excerpt, Value};

/// The key, at the top level of a document.
pub const KEY: &str = "osdkeeper";

const OPTIONS: &[&str] = &["probe"];
const PROBE_OPTIONS: &[&str] = &[
    "mode",
    "min_seq_write_mb_s",
    "min_seq_read_mb_s",
    "min_rand_read_iops",
    "min_sync_write_iops",
    "refuse_outliers",
];

/// What `osdkeeper:` asks for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extensions {
    /// New disks wait for a probe and are judged by it.
    pub probe: Option<ProbeGate>,
}

fn key_name(k: &Value) -> String {
    excerpt(&k.python_str())
}

/// Reads the value of `osdkeeper:`.
pub fn read(v: &Value) -> Result<Extensions, FieldError> {
    let mut out = Extensions::default();
    let entries = match v {
        Value::Null => return Ok(out),
        Value::Map(entries) => entries,
        other => {
            return Err(FieldError::own(
                KEY,
                Some(other.display()),
                format!(
                    "osdkeeper must be a mapping of osdkeeper's own options, such as \
                     {{probe: {{min_sync_write_iops: 2000}}}}, got {}",
                    other.type_name()
                ),
            ))
        }
    };
    for (k, v) in entries {
        match k.as_str() {
            Some("probe") => out.probe = probe(v)?,
            _ => {
                return Err(FieldError::own(
                    format!("{KEY}.{}", key_name(k)),
                    None,
                    format!("unknown osdkeeper option (known: {})", OPTIONS.join(", ")),
                ))
            }
        }
    }
    Ok(out)
}

fn probe(v: &Value) -> Result<Option<ProbeGate>, FieldError> {
    let field = format!("{KEY}.probe");
    let entries = match v {
        Value::Null | Value::Bool(false) => return Ok(None),
        Value::Bool(true) => return Ok(Some(ProbeGate::default())),
        Value::Map(entries) => entries,
        other => {
            return Err(FieldError::own(
                field,
                Some(other.display()),
                "probe must be true, false, or a mapping of its options such as {min_sync_write_iops: 2000}",
            ))
        }
    };
    let mut gate = ProbeGate::default();
    for (k, v) in entries {
        let name = key_name(k);
        let at = format!("{field}.{name}");
        match k.as_str() {
            Some("mode") => {
                gate.mode = match v {
                    Value::Str(s) => ProbeMode::parse(s),
                    _ => None,
                };
                if gate.mode.is_none() {
                    return Err(FieldError::own(at, Some(v.display()), "mode must be quick or full"));
                }
            }
            Some("refuse_outliers") => match v {
                Value::Bool(b) => gate.refuse_outliers = *b,
                other => {
                    return Err(FieldError::own(
                        at,
                        Some(other.display()),
                        "refuse_outliers must be true or false without quotes",
                    ))
                }
            },
            Some(key) if ProbeJob::ALL.iter().any(|j| j.threshold_key() == key) => {
                let job = ProbeJob::ALL.into_iter().find(|j| j.threshold_key() == key).expect("found above");
                let unit = if key.ends_with("_mb_s") { "MB/s" } else { "IOPS" };
                let least = match v {
                    Value::Int(n) => Some(*n as f64),
                    Value::Float(f) => Some(*f),
                    _ => None,
                }
                .filter(|n| n.is_finite() && *n > 0.0)
                .ok_or_else(|| {
                    FieldError::own(
                        &at,
                        Some(v.display()),
                        format!("{key} must be a number above 0 ({unit}), written without quotes"),
                    )
                })?;
                gate.set_min(job, least);
            }
            _ => {
                return Err(FieldError::own(
                    at,
                    None,
                    format!("unknown probe option (known: {})", PROBE_OPTIONS.join(", ")),
                ))
            }
        }
    }
    Ok(Some(gate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::yaml11::load_all;

    fn ext(yaml: &str) -> Result<Extensions, FieldError> {
        let docs = load_all(yaml).unwrap();
        read(&docs[0].value)
    }

    #[test]
    fn a_probe_gate_with_its_thresholds() {
        let e = ext(
            "probe:\n  mode: full\n  min_sync_write_iops: 2000\n  min_seq_write_mb_s: 95.5\n  refuse_outliers: true\n",
        )
        .unwrap();
        let g = e.probe.unwrap();
        assert_eq!(g.mode, Some(ProbeMode::Full));
        assert_eq!(g.min_of(ProbeJob::SyncWrite4k), Some(2000.0));
        assert_eq!(g.min_of(ProbeJob::SeqWrite), Some(95.5));
        assert_eq!(g.min_of(ProbeJob::SeqRead), None);
        assert!(g.refuse_outliers);
        assert_eq!(ext("probe: true\n").unwrap().probe, Some(ProbeGate::default()));
        assert_eq!(ext("probe: {}\n").unwrap().probe, Some(ProbeGate::default()));
        assert_eq!(ext("probe: false\n").unwrap().probe, None);
        assert_eq!(ext("~\n").unwrap(), Extensions::default());
    }

    #[test]
    fn bad_options_name_the_field_and_value() {
        let cases = [
            ("probe: yes please\n", "osdkeeper.probe", "probe must be true, false, or a mapping"),
            ("probe:\n  mode: slow\n", "osdkeeper.probe.mode", "mode must be quick or full"),
            (
                "probe:\n  min_sync_write_iops: '2000'\n",
                "osdkeeper.probe.min_sync_write_iops",
                "must be a number above 0 (IOPS), written without quotes",
            ),
            (
                "probe:\n  min_seq_read_mb_s: 0\n",
                "osdkeeper.probe.min_seq_read_mb_s",
                "must be a number above 0 (MB/s)",
            ),
            ("probe:\n  min_seq_read_mb_s: .nan\n", "osdkeeper.probe.min_seq_read_mb_s", "must be a number above 0"),
            ("probe:\n  refuse_outliers: 'true'\n", "osdkeeper.probe.refuse_outliers", "without quotes"),
            (
                "probe:\n  min_iops: 3\n",
                "osdkeeper.probe.min_iops",
                "unknown probe option (known: mode, min_seq_write_mb_s,",
            ),
            ("deploy_faster: true\n", "osdkeeper.deploy_faster", "unknown osdkeeper option (known: probe)"),
            ("[probe]\n", "osdkeeper", "osdkeeper must be a mapping of osdkeeper's own options"),
        ];
        for (yaml, field, words) in cases {
            let e = ext(yaml).unwrap_err();
            assert_eq!(e.field, field, "{yaml}");
            assert!(e.message.contains(words), "{yaml}: {}", e.message);
            assert!(!e.stricter, "not a cephadm value osdkeeper reads more strictly");
        }
    }
}
