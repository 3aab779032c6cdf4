//! A YAML document as cephadm sees it after `yaml.safe_load`: Python's data
//! model (None, bool, int, float, str, list, dict with insertion order).
//!
//! Spec validation imitates cephadm's Python code step by step, and that code
//! relies on Python truthiness, `str()` and `==`; keeping those rules in one
//! type keeps the imitation honest.

use std::collections::HashMap;
use std::fmt;

/// One YAML 1.1 node, resolved the way PyYAML's safe loader resolves it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    /// A date or timestamp (PyYAML builds `datetime.date` objects); kept as
    /// text because cephadm only ever stringifies them.
    Timestamp(String),
    Seq(Vec<Value>),
    /// Insertion-ordered like a Python dict; a repeated key keeps its first
    /// position and takes the last value, as PyYAML does.
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) | Value::Timestamp(s) => !s.is_empty(),
            Value::Seq(v) => !v.is_empty(),
            Value::Map(m) => !m.is_empty(),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Looks a string key up in a mapping.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map()?.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
    }

    /// The Python type name, for error messages that say what was found.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Timestamp(_) => "date",
            Value::Seq(_) => "list",
            Value::Map(_) => "mapping",
        }
    }

    /// Python's `str(value)`: what cephadm pastes into a ceph-volume command.
    pub fn python_str(&self) -> String {
        match self {
            Value::Null => "None".into(),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => python_float_repr(*f),
            Value::Str(s) | Value::Timestamp(s) => s.clone(),
            Value::Seq(_) | Value::Map(_) => self.python_repr(),
        }
    }

    /// Python's `repr(value)`, close enough for messages.
    pub fn python_repr(&self) -> String {
        match self {
            Value::Str(s) | Value::Timestamp(s) => format!("'{s}'"),
            Value::Seq(items) => {
                let inner: Vec<String> = items.iter().map(Value::python_repr).collect();
                format!("[{}]", inner.join(", "))
            }
            Value::Map(entries) => {
                let inner: Vec<String> =
                    entries.iter().map(|(k, v)| format!("{}: {}", k.python_repr(), v.python_repr())).collect();
                format!("{{{}}}", inner.join(", "))
            }
            other => other.python_str(),
        }
    }

    /// JSON with the same meaning (mapping keys become strings); used to
    /// store specs canonically and to read config files.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => i64::try_from(*i).map(J::from).unwrap_or_else(|_| J::String(i.to_string())),
            Value::Float(f) => {
                serde_json::Number::from_f64(*f).map(J::Number).unwrap_or_else(|| J::String(python_float_repr(*f)))
            }
            Value::Str(s) | Value::Timestamp(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Value::to_json).collect()),
            Value::Map(entries) => J::Object(entries.iter().map(|(k, v)| (k.python_str(), v.to_json())).collect()),
        }
    }

    /// The inverse of `to_json` for what `to_json` produces.
    pub fn from_json(j: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match j {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i128::from(i)),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Value::Str(s.clone()),
            J::Array(items) => Value::Seq(items.iter().map(Value::from_json).collect()),
            J::Object(m) => Value::Map(m.iter().map(|(k, v)| (Value::Str(k.clone()), Value::from_json(v))).collect()),
        }
    }

    /// The value as the operator wrote it, for messages ("`size: 2tb:`").
    pub fn display(&self) -> String {
        match self {
            Value::Str(s) => format!("'{s}'"),
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            other => other.python_str(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

/// How many characters of a value a message quotes: enough to recognise it,
/// short enough that a 100 KB value cannot flood a log line or an answer.
pub const EXCERPT_CHARS: usize = 60;

/// `text` as an error message should quote it: whole when short, otherwise
/// its first `EXCERPT_CHARS` characters and its full length in bytes.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
    }
}

/// A mapping key as a Python dict hashes it: `1`, `1.0` and `True` are one
/// key (numbers compare by value), a string never equals a number, and
/// every NaN is a key of its own (each `.nan` is a new float, and NaN != NaN).
#[derive(Debug, PartialEq, Eq, Hash)]
enum DictKey {
    Null,
    Number(i128),
    Float(u64),
    Str(String),
    Timestamp(String),
    Unequal(usize),
}

impl DictKey {
    fn of(v: &Value, position: usize) -> DictKey {
        match v {
            Value::Null => DictKey::Null,
            Value::Bool(b) => DictKey::Number(i128::from(*b)),
            Value::Int(i) => DictKey::Number(*i),
            Value::Float(f) if f.is_nan() => DictKey::Unequal(position),
            // i128 holds every integral f64 below 2^127 exactly, so this is
            // Python's exact int/float comparison.
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 1.7e38 => DictKey::Number(*f as i128),
            Value::Float(f) => DictKey::Float(f.to_bits()),
            Value::Str(s) => DictKey::Str(s.clone()),
            Value::Timestamp(s) => DictKey::Timestamp(s.clone()),
            // Unhashable in Python; the YAML reader refuses them as keys.
            Value::Seq(_) | Value::Map(_) => DictKey::Unequal(position),
        }
    }
}

/// Builds a mapping the way assigning `d[k] = v` in order builds a Python
/// dict: a repeated key keeps its first position and takes the last value.
/// Hashed, so that a mapping of many keys costs linear time, not quadratic.
pub fn dict_from_pairs(pairs: impl IntoIterator<Item = (Value, Value)>) -> Vec<(Value, Value)> {
    let pairs = pairs.into_iter();
    let mut out: Vec<(Value, Value)> = Vec::with_capacity(pairs.size_hint().0);
    let mut index: HashMap<DictKey, usize> = HashMap::with_capacity(pairs.size_hint().0);
    for (i, (k, v)) in pairs.enumerate() {
        match index.entry(DictKey::of(&k, i)) {
            std::collections::hash_map::Entry::Occupied(at) => out[*at.get()].1 = v,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(out.len());
                out.push((k, v));
            }
        }
    }
    out
}

/// Python's `repr(float)`: the shortest string that round-trips, with
/// Python's choice between positional and exponent notation.
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, like Python's repr.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent digits");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            let (a, b) = digits.split_at(point as usize);
            format!("{a}.{b}")
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{frac}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        for (f, want) in [
            (0.5, "0.5"),
            (0.9, "0.9"),
            (1.0, "1.0"),
            (100.0, "100.0"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456789012345.6, "123456789012345.6"),
            (-2.25, "-2.25"),
        ] {
            assert_eq!(python_float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn excerpts_keep_short_text_and_cut_long_text() {
        assert_eq!(excerpt("/dev/sdb"), "/dev/sdb");
        let long = "é".repeat(100);
        assert_eq!(excerpt(&long), format!("{}… (200 bytes)", "é".repeat(EXCERPT_CHARS)));
    }

    #[test]
    fn dicts_keep_the_first_position_and_the_last_value() {
        let d = dict_from_pairs([
            (Value::Str("a".into()), Value::Int(1)),
            (Value::Float(3.0), Value::Null),
            (Value::Str("b".into()), Value::Int(2)),
            (Value::Int(3), Value::Bool(true)),
            (Value::Str("a".into()), Value::Int(3)),
            (Value::Float(f64::NAN), Value::Null),
            (Value::Float(f64::NAN), Value::Null),
        ]);
        assert_eq!(d.len(), 5);
        assert_eq!(d[0], (Value::Str("a".into()), Value::Int(3)));
        assert_eq!(d[1], (Value::Float(3.0), Value::Bool(true)));
        // Python compares int and float exactly: 2**53 + 1 != 2.0**53.
        let big = 1i128 << 53;
        assert_eq!(
            dict_from_pairs([(Value::Int(big + 1), Value::Null), (Value::Float(big as f64), Value::Null)]).len(),
            2
        );
    }

    #[test]
    fn truthiness_follows_python() {
        assert!(!Value::Str(String::new()).truthy());
        assert!(Value::Str("false".into()).truthy());
        assert!(!Value::Int(0).truthy());
        assert!(!Value::Map(vec![]).truthy());
        assert!(Value::Seq(vec![Value::Null]).truthy());
    }
}
