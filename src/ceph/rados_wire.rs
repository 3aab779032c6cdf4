//! `rados bench ... -f json` as Ceph 16.2 prints it (read on the sandbox):
//! a `hints = 1` line, then one JSON object whose numbers are strings
//! (`"bandwidth":"169.050153"`), some of them garbage (`stddev_iops` was
//! `"-1486445648"` in a 3 s run). Only the fields used, each read as a
//! number from a string or a number; the line before the JSON is skipped.

use serde::Deserialize;

use crate::domain::bench::cluster::{Pass, PassResult};

#[derive(Debug, Deserialize)]
struct Summary {
    total_time_run: Num,
    #[serde(default)]
    total_writes_made: Option<Num>,
    #[serde(default)]
    total_reads_made: Option<Num>,
    #[serde(default)]
    write_size: Option<Num>,
    #[serde(default)]
    read_size: Option<Num>,
    bandwidth: Num,
    average_iops: Num,
    average_latency: Num,
    max_latency: Num,
    min_latency: Num,
}

/// A number Ceph may print as a JSON string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Num {
    Number(f64),
    Text(String),
}

impl Num {
    fn value(&self, field: &str) -> Result<f64, String> {
        match self {
            Num::Number(n) => Ok(*n),
            Num::Text(t) => t.trim().parse().map_err(|_| format!("{field} is {t:?}, not a number")),
        }
    }
}

/// One pass's numbers from `rados bench`'s stdout.
pub fn parse_pass(pass: Pass, stdout: &str) -> Result<PassResult, String> {
    let start = stdout.find('{').ok_or("no JSON object in the output")?;
    let s: Summary = serde_json::from_str(stdout[start..].trim()).map_err(|e| e.to_string())?;
    let (ops, size) = match pass {
        Pass::Write => (s.total_writes_made, s.write_size),
        Pass::Seq | Pass::Rand => (s.total_reads_made, s.read_size),
    };
    let count = |n: Option<Num>, field: &str| -> Result<u64, String> {
        let v = n.ok_or(format!("no {field}"))?.value(field)?;
        if v < 0.0 {
            return Err(format!("{field} is negative ({v})"));
        }
        Ok(v as u64)
    };
    Ok(PassResult {
        pass,
        seconds: s.total_time_run.value("total_time_run")?,
        ops: count(ops, "operations made")?,
        op_size: count(size, "operation size")?,
        bandwidth_mb_s: s.bandwidth.value("bandwidth")?,
        iops: s.average_iops.value("average_iops")?,
        avg_latency_s: s.average_latency.value("average_latency")?,
        max_latency_s: s.max_latency.value("max_latency")?,
        min_latency_s: s.min_latency.value("min_latency")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured on the sandbox (16.2.15): `rados -p P bench 3 write --no-cleanup -f json` and `bench 3 seq`.
    const WRITE: &str = r#"hints = 1
{"concurrent_ios":"16","object_size":"4194304","op_size":"4194304","seconds_to_run":"3","max_objects":"0","object_prefix":"benchmark_data_vm_23462","datas":[{"sec":"0","cur_ops":"0","started":"0","finished":"0","avg_bw":"0.000000","cur_bw":"0.000000","last_lat":"0.000000","avg_lat":"0.000000"}],"total_time_run":"3.170657","total_writes_made":"134","write_size":"4194304","object_size":"4194304","bandwidth":"169.050153","stddev_bandwidth":"34.019602","max_bandwidth":"184.000000","min_bandwidth":"120.000000","average_iops":"42","stddev_iops":"-1486445648","max_iops":"46","min_iops":"30","average_latency":"0.371916","stddev_latency":"0.177738","max_latency":"0.864683","min_latency":"0.051246"}
"#;
    const SEQ: &str = r#"hints = 1
{"datas":[],"total_time_run":"0.711293","total_reads_made":"134","read_size":"4194304","object_size":"4194304","bandwidth":"753.557775","average_iops":"188","stddev_iops":"0.000000","max_iops":"133","min_iops":"133","average_latency":"0.080093","max_latency":"0.196799","min_latency":"0.013949"}"#;

    #[test]
    fn reads_the_write_and_read_summaries_of_16_2() {
        let w = parse_pass(Pass::Write, WRITE).unwrap();
        assert_eq!((w.seconds, w.ops, w.op_size, w.bandwidth_mb_s, w.iops), (3.170657, 134, 4194304, 169.050153, 42.0));
        assert_eq!((w.avg_latency_s, w.max_latency_s, w.min_latency_s), (0.371916, 0.864683, 0.051246));
        let s = parse_pass(Pass::Seq, SEQ).unwrap();
        assert_eq!((s.ops, s.bandwidth_mb_s, s.iops), (134, 753.557775, 188.0));
    }

    #[test]
    fn says_what_is_wrong_with_other_output() {
        assert_eq!(parse_pass(Pass::Write, "hints = 1\n").unwrap_err(), "no JSON object in the output");
        assert!(parse_pass(Pass::Seq, WRITE).unwrap_err().contains("no operations made"));
        let bad = SEQ.replace("\"753.557775\"", "\"fast\"");
        assert_eq!(parse_pass(Pass::Seq, &bad).unwrap_err(), "bandwidth is \"fast\", not a number");
        // Numbers as numbers are read too.
        let plain = SEQ.replace("\"188\"", "188");
        assert_eq!(parse_pass(Pass::Seq, &plain).unwrap().iops, 188.0);
    }
}
