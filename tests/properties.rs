//! Property tests of the readers that take untrusted input: the YAML reader,
//! the spec parser (and the planner behind it), the inventory reader, and
//! the daemon's API (`api`: bodies, queries, paths).
//! Whatever the input, each answers with a value or an error: no panic, no
//! hang, no more memory than its budgets allow.
//!
//! 256 cases per property by default, so the suite stays quick; for a
//! longer hunt: `PROPTEST_CASES=20000 cargo test --test properties`.
//! bench/fuzz_inputs.py does the same through the release binary.

use osdkeeper::domain::plan::preview;
use osdkeeper::domain::spec::{parse_spec_bytes, parse_spec_file};
use osdkeeper::domain::value::{dict_from_pairs, Value};
use osdkeeper::domain::yaml11::load_all;
use osdkeeper::domain::yaml_limits::{Limit, MAX_ALIAS_BYTES, MAX_ALIAS_NODES, MAX_DEPTH, MAX_NODES, MAX_SPEC_BYTES};
use osdkeeper::render::preview::preview_table;
use osdkeeper::wire::inventory_file::read_inventory;
use osdkeeper::wire::preview_json::PreviewReport;
use proptest::prelude::*;

#[path = "properties/api.rs"]
mod api;

fn nodes(v: &Value) -> usize {
    1 + match v {
        Value::Seq(items) => items.iter().map(nodes).sum(),
        Value::Map(entries) => entries.iter().map(|(k, v)| nodes(k) + nodes(v)).sum(),
        _ => 0,
    }
}

/// The bytes of every string in `v`.
fn text_bytes(v: &Value) -> usize {
    match v {
        Value::Str(s) | Value::Timestamp(s) => s.len(),
        Value::Seq(items) => items.iter().map(text_bytes).sum(),
        Value::Map(entries) => entries.iter().map(|(k, v)| text_bytes(k) + text_bytes(v)).sum(),
        _ => 0,
    }
}

/// Pieces of YAML syntax, so that random documents reach the parser's
/// corners (anchors, merges, tags, block scalars, flow collections).
const YAML_PIECES: &[&str] = &[
    "a",
    "b",
    ": ",
    "- ",
    "\n",
    "  ",
    "    ",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "<<: ",
    "'x'",
    "\"y\\n\"",
    "!!int ",
    "!!str ",
    "!!map ",
    "!x ",
    "? ",
    "|\n",
    ">-\n",
    "---\n",
    "...\n",
    "# c",
    "1",
    "010",
    "1.5",
    "1:30",
    "yes",
    "~",
    "\t",
    "é",
    "\u{feff}",
    "2023-03-17",
    ".nan",
    "%YAML 1.1\n",
    "''",
    "\"",
];

fn yaml_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(YAML_PIECES), 0..120).prop_map(|pieces| pieces.concat())
}

/// `levels` anchored lists, each of `fanout` aliases of the one before.
fn aliases(levels: usize, fanout: usize) -> String {
    let mut text = format!("a0: &a0 [{}]\n", vec!["x"; fanout].join(","));
    for i in 1..levels {
        text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); fanout].join(",")));
    }
    text
}

/// One scalar of `size` bytes, anchored, and `count` aliases of it.
fn scalar_aliases(size: usize, count: usize) -> String {
    format!("big: &a '{}'\nmany: [{}]\n", "x".repeat(size), vec!["*a"; count].join(","))
}

fn check_yaml(text: &str) {
    if let Ok(docs) = load_all(text) {
        let total: usize = docs.iter().map(|d| nodes(&d.value)).sum();
        assert!(total <= MAX_NODES + MAX_ALIAS_NODES, "{total} nodes");
        let bytes: usize = docs.iter().map(|d| text_bytes(&d.value)).sum();
        assert!(bytes <= MAX_SPEC_BYTES + MAX_ALIAS_BYTES, "{bytes} bytes");
    }
}

proptest! {
    #[test]
    fn yaml_soup_is_read_or_refused(text in yaml_soup()) {
        check_yaml(&text);
    }

    #[test]
    fn random_bytes_are_read_or_refused(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        if let Ok(text) = std::str::from_utf8(&bytes) {
            check_yaml(text);
        }
        let _ = parse_spec_bytes(&bytes);
    }

    #[test]
    fn nesting_is_refused_exactly_past_the_limit(depth in 1usize..200) {
        let result = load_all(&("- ".repeat(depth) + "x\n"));
        if depth <= MAX_DEPTH {
            prop_assert!(result.is_ok(), "{:?}", result);
        } else {
            prop_assert_eq!(result.unwrap_err().limit, Some(Limit::Depth));
        }
    }

    #[test]
    fn quoted_strings_round_trip(s in "[a-zA-Z0-9 _./:*?!@#%&=+'é€😀-]{0,40}") {
        let doc = load_all(&format!("v: '{}'\n", s.replace('\'', "''"))).unwrap();
        prop_assert_eq!(doc[0].value.get("v"), Some(&Value::Str(s)));
    }

    #[test]
    fn plain_words_and_numbers_round_trip(w in "[a-z][a-z0-9_]{0,10}", i in any::<i64>(), f in -1e6f64..1e6) {
        prop_assume!(!matches!(w.as_str(), "yes" | "no" | "on" | "off" | "true" | "false" | "null"));
        let f = format!("{f:.3}");
        let doc = load_all(&format!("w: {w}\ni: {i}\nf: {f}\n")).unwrap();
        prop_assert_eq!(doc[0].value.get("w"), Some(&Value::Str(w)));
        prop_assert_eq!(doc[0].value.get("i"), Some(&Value::Int(i128::from(i))));
        prop_assert_eq!(doc[0].value.get("f"), Some(&Value::Float(f.parse().unwrap())));
    }
}

proptest! {
    // Each case near the budget copies 100 000 nodes: few cases suffice.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn aliases_stay_within_their_budget(levels in 1usize..12, fanout in 1usize..12) {
        match load_all(&aliases(levels, fanout)) {
            Ok(docs) => prop_assert!(nodes(&docs[0].value) <= MAX_NODES + MAX_ALIAS_NODES),
            Err(e) => prop_assert_eq!(e.limit, Some(Limit::AliasNodes), "{}", e),
        }
    }

    #[test]
    fn scalar_aliases_stay_within_their_byte_budget(size in 1usize..700_000, count in 1usize..100) {
        match load_all(&scalar_aliases(size, count)) {
            Ok(docs) => prop_assert!(text_bytes(&docs[0].value) <= MAX_SPEC_BYTES + MAX_ALIAS_BYTES),
            Err(e) => {
                prop_assert_eq!(e.limit, Some(Limit::AliasBytes), "{}", e);
                prop_assert!(size * (count + 1) > MAX_ALIAS_BYTES, "refused within the budget: {}", e);
            }
        }
    }
}

/// Keys and values that make valid and almost valid OSD specs.
const SPEC_KEYS: &[&str] = &[
    "service_type",
    "service_id",
    "service_name",
    "placement",
    "spec",
    "data_devices",
    "db_devices",
    "wal_devices",
    "journal_devices",
    "encrypted",
    "osds_per_device",
    "objectstore",
    "filter_logic",
    "method",
    "block_db_size",
    "block_wal_size",
    "crush_device_class",
    "unmanaged",
    "data_allocate_fraction",
    "db_slots",
    "preview_only",
    "extra_container_args",
    "host_pattern",
    "status",
    "unknown",
];

const SPEC_VALUES: &[&str] = &[
    "osd",
    "fast",
    "'a b'",
    "12",
    "true",
    "'false'",
    "yes",
    "0",
    "1",
    "2",
    "-1",
    "64",
    "65",
    "2147483647",
    "18446744073709551617",
    "2.5",
    "''",
    "~",
    "[]",
    "{}",
    "bluestore",
    "blue",
    "lvm",
    "raw",
    "OR",
    "xor",
    "'2tb:'",
    "'1TB:2TB'",
    "10:20",
    "[/dev/sdb, /dev/sdc]",
    "/dev/sdb",
    "{rotational: 1}",
    "{rotational: '0'}",
    "{all: true}",
    "{all: true, limit: 2}",
    "{size: '500G:', limit: 18446744073709551617}",
    "{paths: [/dev/sdb]}",
    "{paths: [5]}",
    "{model: ST, vendor: ''}",
    "{bogus: 1}",
    "{host_pattern: '*'}",
    "{host_pattern: '[[['}",
    "{hosts: [h1, 'h2:10.0.0.0/8']}",
    "{hosts: h1}",
    "{label: osd}",
    "{label: ''}",
    "{count: 2}",
    "{data_devices: {all: true}}",
    "[--cpus=2]",
    "&x {rotational: 0}",
    "*x",
    "{<<: {rotational: 1}}",
];

fn spec_text() -> impl Strategy<Value = String> {
    let line =
        (prop::sample::select(SPEC_KEYS), prop::sample::select(SPEC_VALUES)).prop_map(|(k, v)| format!("{k}: {v}\n"));
    let doc = prop::collection::vec(line, 0..12).prop_map(|lines| {
        "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\ndata_devices: {rotational: 1}\n".to_string()
            + &lines.concat()
    });
    prop::collection::vec(doc, 1..4).prop_map(|docs| docs.join("---\n"))
}

fn device_json(i: usize, rotational: bool, fields: &[(String, serde_json::Value)]) -> serde_json::Value {
    let mut d = serde_json::json!({
        "path": format!("/dev/sd{}", (b'b' + i as u8) as char),
        "available": !i.is_multiple_of(3),
        "ceph_device": i.is_multiple_of(4),
        "rejected_reasons": if i.is_multiple_of(3) { vec!["locked"] } else { vec![] },
        "sys_api": {"rotational": if rotational { "1" } else { "0" }, "size": 4.0e12, "human_readable_size": "3.64 TB",
                    "model": "ST4000", "vendor": "ATA"},
        "lvs": if i.is_multiple_of(4) { serde_json::json!([{"osdspec_affinity": "s", "osd_id": "3"}]) } else { serde_json::json!([]) },
    });
    for (k, v) in fields {
        d[k.as_str()] = v.clone();
    }
    d
}

/// Any JSON value, small.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_filter("JSON numbers are finite", |f| f.is_finite()).prop_map(serde_json::Value::from),
        "[a-z0-9./ ]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::vec((prop::sample::select(DEVICE_KEYS), inner), 0..4)
                .prop_map(|kv| serde_json::Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

const DEVICE_KEYS: &[&str] = &[
    "path",
    "available",
    "ceph_device",
    "rejected_reasons",
    "sys_api",
    "lvs",
    "lsm_data",
    "created",
    "device_id",
    "model",
    "vendor",
    "rotational",
    "size",
    "human_readable_size",
    "osdspec_affinity",
    "osd_id",
    "type",
    "partitions",
];

fn inventory() -> impl Strategy<Value = serde_json::Value> {
    let host =
        (1usize..6, any::<bool>(), prop::collection::vec((prop::sample::select(DEVICE_KEYS), json_value()), 0..3))
            .prop_map(|(n, rot, fields)| {
                let fields: Vec<(String, serde_json::Value)> =
                    fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                serde_json::Value::from(
                    (0..n).map(|i| device_json(i, rot, if i == 0 { &fields } else { &[] })).collect::<Vec<_>>(),
                )
            });
    (prop::collection::vec(host, 1..4), json_value(), 0u64..u64::MAX).prop_map(|(hosts, labels, existing)| {
        let mut inv = serde_json::json!({"hosts": {}, "existing_daemons": {"s": {"h0": existing}}});
        for (i, h) in hosts.into_iter().enumerate() {
            inv["hosts"][format!("h{i}")] = h;
        }
        if labels.is_object() {
            inv["labels"] = labels;
        }
        inv
    })
}

proptest! {
    #[test]
    fn specs_are_valid_or_refused_and_planned_without_panic(text in spec_text()) {
        let inv = r#"{"hosts": {"h1": [{"path": "/dev/sdb", "available": true, "sys_api": {"rotational": "1",
            "size": 4.0e12, "human_readable_size": "3.64 TB", "model": "M", "vendor": "V"}}]}}"#;
        let view = read_inventory(inv.as_bytes()).unwrap();
        if let Ok(docs) = parse_spec_file(&text) {
            for d in &docs {
                if let Err(e) = &d.spec {
                    prop_assert!(e.to_string().len() < 2000, "{}", e);
                }
            }
            let _ = preview(&docs, &view);
        }
    }

    #[test]
    fn inventories_are_read_or_refused(inv in inventory(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&inv) } else { serde_json::to_string(&inv) }.unwrap();
        if let Ok(view) = read_inventory(text.as_bytes()) {
            let docs = parse_spec_file("service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
                data_devices: {rotational: 1, limit: 2}\ndb_devices: {rotational: 0}\n").unwrap();
            let _ = preview(&docs, &view);
        }
    }

    #[test]
    fn damaged_inventories_are_refused_without_panic(inv in inventory(), cuts in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut bytes = serde_json::to_vec(&inv).unwrap();
        for (at, b) in cuts {
            let i = at.index(bytes.len());
            match b % 3 {
                0 => bytes[i] = b,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, b),
            }
        }
        let _ = read_inventory(&bytes[..]);
    }

    #[test]
    fn inventory_errors_point_at_the_line_in_the_file(
        sizes in prop::collection::vec(1usize..6, 1..5),
        pick in any::<prop::sample::Index>(),
    ) {
        let mut inv = serde_json::json!({"hosts": {}});
        for (h, n) in sizes.into_iter().enumerate() {
            inv["hosts"][format!("h{h}")] = (0..n).map(|i| device_json(i, h % 2 == 0, &[])).collect();
        }
        let text = serde_json::to_string_pretty(&inv).unwrap();
        let paths: Vec<usize> = text.match_indices("\"path\": \"/dev/").map(|(i, _)| i).collect();
        prop_assume!(!paths.is_empty());
        let at = paths[pick.index(paths.len())] + "\"path\": ".len();
        let end = at + text[at + 1..].find('"').unwrap() + 2;
        let broken = format!("{}5{}", &text[..at], &text[end..]);
        let line = text[..at].matches('\n').count() + 1;
        let err = read_inventory(broken.as_bytes()).unwrap_err().to_string();
        prop_assert!(err.contains(&format!("line {line}, column")), "line {}: {}", line, err);
    }
}

#[test]
fn dicts_of_many_keys_keep_python_order_and_last_values() {
    let n = 200_000;
    let pairs =
        (0..n).map(|i| (Value::Str(format!("k{i}")), Value::Int(i))).chain([(Value::Str("k7".into()), Value::Int(-1))]);
    // Not timed (speed is a benchmark's business, docs/fuzzing.md): a
    // linear search per key, the reader before, takes minutes at this size.
    let d = dict_from_pairs(pairs);
    assert_eq!(d.len() as i128, n);
    assert_eq!(d[7], (Value::Str("k7".into()), Value::Int(-1)));
}

#[test]
fn device_paths_of_any_length_render() {
    // `format!("{:w$}")` panics for widths past 65535.
    let big = format!("/dev/{}", "x".repeat(70_000));
    let inv = format!(
        r#"{{"hosts": {{"h1": [{{"path": "{big}", "available": false, "rejected_reasons": ["locked"]}},
            {{"path": "/dev/sdb", "available": true, "sys_api": {{"rotational": "1"}}}}]}}}}"#
    );
    let view = read_inventory(inv.as_bytes()).unwrap();
    let spec = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\ndata_devices: {all: true}\n";
    let docs = parse_spec_file(spec).unwrap();
    let planned = preview(&docs, &view);
    let out = preview_table(&PreviewReport::new(&planned, &docs, &view).doc());
    assert!(out.lines().any(|l| l.starts_with(&format!("    {big}  "))), "{}", &out[..300.min(out.len())]);
}
