//! `--format yaml`: an answer (as JSON values) written as block YAML.
//!
//! Writing, not reading: the crate reads YAML in one module
//! (`domain::yaml11`), and this writer needs no YAML library. Every string
//! is written double-quoted with JSON's escapes (a subset of YAML's), so no
//! string can be read back as a boolean, a number or null by any YAML 1.1
//! or 1.2 reader (`"no"`, `"1e3"`, `"~"` stay strings); keys are quoted
//! unless they are plain words. The tests read the output back with the
//! crate's reader.

use serde_json::Value;

pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => block(v, 0, &mut out),
        Value::Array(a) if !a.is_empty() => block(v, 0, &mut out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn is_nested(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// A non-empty mapping or sequence, each entry on its own line at `indent`.
fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, item) in m {
                out.push_str(&pad);
                out.push_str(&key(k));
                out.push(':');
                nested_or_inline(item, indent + 2, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                if let Value::Object(m) = item {
                    if !m.is_empty() {
                        // `- first: 1` then the other keys under `first`.
                        let mut inner = String::new();
                        block(item, indent + 2, &mut inner);
                        out.push_str(&pad);
                        out.push_str("- ");
                        out.push_str(&inner[indent + 2..]);
                        continue;
                    }
                }
                out.push_str(&pad);
                out.push('-');
                nested_or_inline(item, indent + 2, out);
            }
        }
        _ => unreachable!("block() is called with containers only"),
    }
}

fn nested_or_inline(item: &Value, indent: usize, out: &mut String) {
    if is_nested(item) {
        out.push('\n');
        block(item, indent, out);
    } else {
        out.push(' ');
        out.push_str(&scalar(item));
        out.push('\n');
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_f64() => float(&n.to_string()),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quoted(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// YAML 1.1 reads a float only with a dot and a signed exponent (`1.0e+300`);
/// JSON writes `1e300`, which such a reader takes for a string.
fn float(json: &str) -> String {
    match json.split_once('e') {
        Some((mantissa, exp)) => {
            let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
            let exp = if exp.starts_with(['-', '+']) { exp.to_string() } else { format!("+{exp}") };
            format!("{mantissa}e{exp}")
        }
        None => json.to_string(),
    }
}

fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Plain for words like `osd_id` or `in`, quoted for anything a reader
/// could take for something else (`on`, `yes`, `null`, `8`, `a: b`).
fn key(k: &str) -> String {
    let word = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let special =
        ["y", "n", "yes", "no", "on", "off", "true", "false", "null"].contains(&k.to_ascii_lowercase().as_str());
    if word && !special {
        k.to_string()
    } else {
        quoted(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::yaml11::load_all;
    use serde_json::json;

    fn read_back(text: &str) -> Value {
        let docs = load_all(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(docs.len(), 1, "{text}");
        docs[0].value.to_json()
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let v = json!([
            {"osd_id": 8, "host": "f5-422-03", "in": true, "on": "yes", "state": "no", "note": null,
             "weight": 1.86299, "tiny": 1e-7, "huge": 1e300, "devices": ["/dev/sdb", "1e3", "~", "- x", "a: b"],
             "empty": [], "none": {}, "nested": {"8": [1, [2, 3]], "quote \"it\"": "line\nbreak"}},
            [],
            "plain",
        ]);
        let text = to_yaml(&v);
        assert_eq!(read_back(&text), v, "{text}");
    }

    #[test]
    fn scalars_and_empty_documents() {
        for v in [json!(null), json!([]), json!({}), json!("no"), json!(2.5)] {
            assert_eq!(read_back(&to_yaml(&v)), v);
        }
    }

    #[test]
    fn a_list_of_records_looks_like_ceph_s() {
        let text = to_yaml(&json!([{"id": 1, "host": "h1"}, {"id": 2, "host": "h2"}]));
        assert_eq!(text, "- host: \"h1\"\n  id: 1\n- host: \"h2\"\n  id: 2\n");
    }
}
