//! The reads the cluster session may send, and each as the JSON command
//! the `ceph` CLI itself sends for that command line (`ceph --verbose`
//! prints it: `{"prefix": "osd safe-to-destroy", "ids": ["4"], "target":
//! ["mon-mgr", ""], "format": "json"}` for `ceph osd safe-to-destroy 4
//! --format json`; the target says the manager answers it). A command line
//! not in this list, every action among them, goes to the CLI: a read
//! repeated every round is what costs, an action is issued once per step.

use serde_json::{json, Map, Value};

/// Who answers a command: the monitors, or the manager (`mon-mgr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    Mon,
    Mgr,
}

/// An argument as the command's signature types it.
#[derive(Debug, Clone, Copy)]
enum Param {
    Int(&'static str),
    Str(&'static str),
    /// Every word left (`ids`).
    Strs(&'static str),
}

struct Read {
    prefix: &'static str,
    target: Target,
    params: &'static [Param],
}

use Param::{Int, Str, Strs};
use Target::{Mgr, Mon};

const READS: &[Read] = &[
    Read { prefix: "osd dump", target: Mon, params: &[] },
    Read { prefix: "osd tree", target: Mon, params: &[] },
    Read { prefix: "osd metadata", target: Mon, params: &[Int("id")] },
    Read { prefix: "osd crush rule dump", target: Mon, params: &[] },
    Read { prefix: "status", target: Mon, params: &[] },
    Read { prefix: "config dump", target: Mon, params: &[] },
    Read { prefix: "osd df", target: Mgr, params: &[] },
    Read { prefix: "pg stat", target: Mgr, params: &[] },
    Read { prefix: "pg dump", target: Mgr, params: &[Strs("dumpcontents")] },
    Read { prefix: "pg ls-by-osd", target: Mgr, params: &[Int("osd")] },
    Read { prefix: "osd ok-to-stop", target: Mgr, params: &[Strs("ids")] },
    Read { prefix: "osd safe-to-destroy", target: Mgr, params: &[Strs("ids")] },
    Read { prefix: "config show", target: Mgr, params: &[Str("who"), Str("key")] },
    Read { prefix: "config show-with-defaults", target: Mgr, params: &[Str("who")] },
];

/// A command line's JSON command and who answers it, if it is one of the
/// reads above with arguments of the right kind; `None` sends it to the CLI.
pub(super) fn read_command(args: &[&str]) -> Option<(Target, Value)> {
    let mut words: Vec<&str> = Vec::with_capacity(args.len());
    let mut format = None;
    let mut rest = args.iter();
    while let Some(&w) = rest.next() {
        if w == "--format" || w == "-f" {
            format = Some(*rest.next()?);
        } else if w.starts_with('-') {
            return None;
        } else {
            words.push(w);
        }
    }
    let read = READS
        .iter()
        .filter(|r| r.prefix.split(' ').eq(words.iter().copied().take(r.prefix.split(' ').count())))
        .max_by_key(|r| r.prefix.len())?;
    let mut left = &words[read.prefix.split(' ').count()..];
    let mut cmd = Map::new();
    cmd.insert("prefix".into(), read.prefix.into());
    for param in read.params {
        let Some((&first, after)) = left.split_first() else { break };
        match *param {
            Int(name) => {
                cmd.insert(name.into(), first.parse::<i64>().ok()?.into());
                left = after;
            }
            Str(name) => {
                cmd.insert(name.into(), first.into());
                left = after;
            }
            Strs(name) => {
                cmd.insert(name.into(), left.iter().map(|w| Value::from(*w)).collect());
                left = &[];
            }
        }
    }
    if !left.is_empty() {
        return None;
    }
    if read.target == Mgr {
        cmd.insert("target".into(), json!(["mon-mgr", ""]));
    }
    if let Some(f) = format {
        cmd.insert("format".into(), f.into());
    }
    Some((read.target, Value::Object(cmd)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each as `ceph --verbose ARGS` printed what it submits (16.2.15).
    #[test]
    fn reads_are_sent_as_the_cli_sends_them() {
        let cases: &[(&[&str], Target, &str)] = &[
            (&["osd", "dump", "--format", "json"], Mon, r#"{"prefix": "osd dump", "format": "json"}"#),
            (
                &["osd", "df", "--format", "json"],
                Mgr,
                r#"{"prefix": "osd df", "target": ["mon-mgr", ""], "format": "json"}"#,
            ),
            (
                &["osd", "safe-to-destroy", "4"],
                Mgr,
                r#"{"prefix": "osd safe-to-destroy", "ids": ["4"], "target": ["mon-mgr", ""]}"#,
            ),
            (
                &["osd", "ok-to-stop", "4", "5"],
                Mgr,
                r#"{"prefix": "osd ok-to-stop", "ids": ["4", "5"], "target": ["mon-mgr", ""]}"#,
            ),
            (
                &["pg", "ls-by-osd", "4", "--format", "json"],
                Mgr,
                r#"{"prefix": "pg ls-by-osd", "osd": 4, "target": ["mon-mgr", ""], "format": "json"}"#,
            ),
            (
                &["pg", "dump", "pgs", "--format", "json"],
                Mgr,
                r#"{"prefix": "pg dump", "dumpcontents": ["pgs"], "target": ["mon-mgr", ""], "format": "json"}"#,
            ),
            (
                &["osd", "metadata", "99", "--format", "json"],
                Mon,
                r#"{"prefix": "osd metadata", "id": 99, "format": "json"}"#,
            ),
            (&["osd", "metadata", "--format", "json"], Mon, r#"{"prefix": "osd metadata", "format": "json"}"#),
            (
                &["config", "show", "osd.1", "osd_max_backfills"],
                Mgr,
                r#"{"prefix": "config show", "who": "osd.1", "key": "osd_max_backfills", "target": ["mon-mgr", ""]}"#,
            ),
            (
                &["config", "show-with-defaults", "osd.1", "--format", "json"],
                Mgr,
                r#"{"prefix": "config show-with-defaults", "who": "osd.1", "target": ["mon-mgr", ""], "format": "json"}"#,
            ),
            (
                &["osd", "crush", "rule", "dump", "--format", "json"],
                Mon,
                r#"{"prefix": "osd crush rule dump", "format": "json"}"#,
            ),
        ];
        for (args, target, sent) in cases {
            let want: Value = serde_json::from_str(sent).unwrap();
            assert_eq!(read_command(args), Some((*target, want)), "{args:?}");
        }
    }

    #[test]
    fn actions_and_unknown_shapes_go_to_the_cli() {
        for args in [
            &["osd", "purge", "4"][..],
            &["osd", "destroy", "1"],
            &["osd", "crush", "reweight", "osd.4", "0"],
            &["osd", "out", "4"],
            &["osd", "down", "4"],
            &["config", "set", "osd", "osd_max_backfills", "8"],
            &["config", "rm", "osd", "osd_max_backfills"],
            &["osd", "getmap", "-o", "/tmp/map"],
            // Not an integer where the signature wants one: the CLI says why.
            &["osd", "metadata", "osd.x"],
            &["osd", "dump", "12", "13"],
            &["osd"],
        ] {
            assert_eq!(read_command(args), None, "{args:?}");
        }
    }
}
