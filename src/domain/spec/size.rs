//! The `size:` device filter, with cephadm's arithmetic.
//!
//! cephadm compares the disk's `human_readable_size` (ceph-volume prints it
//! with 1024-based steps: a 4 TB disk is "3.64 TB") against the filter read
//! with 1000-based units ("4TB" is 4e12). We reproduce that comparison bit for
//! bit, and separately compare the disk's true byte size so that the planner
//! can warn when the quirk, not the operator's intent, decided the outcome.

use std::sync::OnceLock;

use regex::Regex;

use crate::domain::value::excerpt;

/// A unit cephadm understands, with its decimal multiplier.
const UNITS: [(&str, f64); 8] =
    [("K", 1e3), ("KB", 1e3), ("M", 1e6), ("MB", 1e6), ("G", 1e9), ("GB", 1e9), ("T", 1e12), ("TB", 1e12)];

fn multiplier(unit: &str) -> Option<f64> {
    UNITS.iter().find(|(u, _)| *u == unit).map(|(_, m)| *m)
}

/// A number with a unit, as written in the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    pub text: String,
    /// `float(number) * multiplier`, exactly as cephadm computes it.
    pub bytes: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SizeBounds {
    Range { low: Quantity, high: Quantity },
    AtLeast(Quantity),
    AtMost(Quantity),
    Exact(Quantity),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SizeFilter {
    pub text: String,
    pub bounds: SizeBounds,
}

struct Forms {
    range: Regex,
    low: Regex,
    high: Regex,
    exact: Regex,
}

fn forms() -> &'static Forms {
    static F: OnceLock<Forms> = OnceLock::new();
    F.get_or_init(|| Forms {
        range: Regex::new(r"^([0-9]+)([A-Z]{1,2}):([0-9]+)([A-Z]{1,2})$").expect("range"),
        low: Regex::new(r"^([0-9]+)([A-Z]{1,2}):$").expect("low"),
        high: Regex::new(r"^:([0-9]+)([A-Z]{1,2})$").expect("high"),
        exact: Regex::new(r"^([0-9]+\.?[0-9]*)([A-Z]{1,2})$").expect("exact"),
    })
}

fn quantity(number: &str, unit: &str) -> Option<Quantity> {
    let m = multiplier(unit)?;
    let value: f64 = number.parse().ok()?;
    Some(Quantity { text: format!("{number}{unit}"), bytes: value * m })
}

impl SizeFilter {
    /// Reads a filter that cephadm would read the same way. Anything cephadm
    /// would only choke on later (when it compares a disk) is refused here,
    /// with a corrected spelling where one can be guessed.
    pub fn parse(text: &str) -> Result<SizeFilter, String> {
        match Self::parse_strict(text) {
            Some(f) => Ok(f),
            None => Err(explain_unreadable(text)),
        }
    }

    fn parse_strict(text: &str) -> Option<SizeFilter> {
        let f = forms();
        let bounds = if let Some(c) = f.range.captures(text) {
            SizeBounds::Range { low: quantity(&c[1], &c[2])?, high: quantity(&c[3], &c[4])? }
        } else if let Some(c) = f.low.captures(text) {
            SizeBounds::AtLeast(quantity(&c[1], &c[2])?)
        } else if let Some(c) = f.high.captures(text) {
            SizeBounds::AtMost(quantity(&c[1], &c[2])?)
        } else if let Some(c) = f.exact.captures(text) {
            SizeBounds::Exact(quantity(&c[1], &c[2])?)
        } else {
            return None;
        };
        Some(SizeFilter { text: text.to_string(), bounds })
    }

    /// True when `bytes` lies within the bounds (both ends inclusive, exact
    /// means float equality, as in cephadm).
    pub fn contains(&self, bytes: f64) -> bool {
        match &self.bounds {
            SizeBounds::Range { low, high } => bytes <= high.bytes && bytes >= low.bytes,
            SizeBounds::AtLeast(low) => bytes >= low.bytes,
            SizeBounds::AtMost(high) => bytes <= high.bytes,
            SizeBounds::Exact(q) => bytes == q.bytes,
        }
    }

    /// A range whose lower end is above its upper end matches nothing.
    pub fn is_empty_range(&self) -> bool {
        matches!(&self.bounds, SizeBounds::Range { low, high } if low.bytes > high.bytes)
    }
}

/// How cephadm reads a disk's `human_readable_size` ("3.64 TB"): the first
/// `digits.digits`, times the decimal value of the first run of letters
/// (upper-cased). Written out by hand: it runs for every disk of every host.
pub fn cephadm_disk_bytes(human: &str) -> Result<f64, String> {
    let b = human.as_bytes();
    let number = (0..b.len())
        .filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()))
        .find_map(|i| {
            let int_end = i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            let frac = b.get(int_end + 1..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
            (b.get(int_end) == Some(&b'.') && frac > 0).then(|| &human[i..int_end + 1 + frac])
        })
        .ok_or_else(|| {
            format!("the size {:?} has no decimal number for cephadm's size filter to read", excerpt(human))
        })?;
    let start = b
        .iter()
        .position(u8::is_ascii_alphabetic)
        .ok_or_else(|| format!("the size {:?} has no unit for cephadm's size filter to read", excerpt(human)))?;
    let len = b[start..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
    let unit = &human[start..start + len];
    // Upper-cased only for the message: this runs for every disk.
    let m = UNITS
        .iter()
        .find(|(u, _)| u.eq_ignore_ascii_case(unit))
        .map(|(_, m)| *m)
        .ok_or_else(|| format!("Unit '{}' not supported", excerpt(&unit.to_ascii_uppercase())))?;
    let value: f64 = number.parse().map_err(|_| format!("cannot read {:?}", excerpt(human)))?;
    Ok(value * m)
}

fn explain_unreadable(text: &str) -> String {
    if let Some(read) = cephadm_prefix_reading(text) {
        return format!(
            "cephadm 16.2 reads only the start of this value, '{read}', and silently ignores '{}'; \
             write '{read}' if that is what you mean",
            excerpt(&text[read.len()..]),
            read = excerpt(&read)
        );
    }
    let base = "cephadm 16.2 cannot read this size: it understands 'A:B', 'A:' and ':B' with whole numbers, \
                or an exact 'N' (decimals allowed), each followed by an upper-case K, KB, M, MB, G, GB, T or TB. \
                It accepts the spec and then fails with \"No filters applied\" as soon as a disk is compared";
    match suggest(text) {
        Some(s) if s != text => format!("{base}; write '{}' instead", excerpt(&s)),
        _ => base.to_string(),
    }
}

/// cephadm matches ranges and upper bounds with `re.match`, which only
/// anchors at the start, so trailing text is dropped without a word.
fn cephadm_prefix_reading(text: &str) -> Option<String> {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    let re = PREFIX
        .get_or_init(|| Regex::new(r"^(?:[0-9]+([A-Z]{1,2}):[0-9]+([A-Z]{1,2})|:[0-9]+([A-Z]{1,2}))").expect("prefix"));
    let c = re.captures(text)?;
    let units_ok = (1..=3).filter_map(|i| c.get(i)).all(|u| multiplier(u.as_str()).is_some());
    units_ok.then(|| c[0].to_string())
}

/// Best-effort correction: no spaces, upper-case units, `TiB` read as `TB`,
/// and decimals in bounds turned into a smaller whole unit.
fn suggest(text: &str) -> Option<String> {
    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_uppercase();
    let cleaned = cleaned.replace("IB", "B");
    let fixed: Vec<String> = if let Some((a, b)) = cleaned.split_once(':') {
        let fix = |part: &str| -> Option<String> {
            if part.is_empty() {
                Some(String::new())
            } else {
                whole_bound(part)
            }
        };
        vec![fix(a)?, fix(b)?]
    } else {
        vec![cleaned.clone()]
    };
    let candidate = fixed.join(":");
    SizeFilter::parse_strict(&candidate).map(|_| candidate)
}

/// "1.5TB" -> "1500GB": bounds of a range must be whole numbers.
fn whole_bound(part: &str) -> Option<String> {
    let split = part.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = part.split_at(split);
    let mut value: f64 = number.parse().ok()?;
    let order = ["K", "M", "G", "T"];
    let mut idx = order.iter().position(|u| unit.starts_with(u))?;
    let suffix = if unit.ends_with('B') { "B" } else { "" };
    while value.fract() != 0.0 && idx > 0 {
        value *= 1000.0;
        idx -= 1;
    }
    if value.fract() != 0.0 {
        return None;
    }
    Some(format!("{}{}{}", value as u64, order[idx], suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cephadm_forms() {
        let f = SizeFilter::parse("2TB:9TB").unwrap();
        assert!(f.contains(3.64e12));
        assert!(!f.contains(1.82e12), "a 2 TB disk reads as 1.82 TB");
        let f = SizeFilter::parse("10G:").unwrap();
        assert!(f.contains(10e9));
        let f = SizeFilter::parse(":500GB").unwrap();
        assert!(f.contains(447.13e9));
        let f = SizeFilter::parse("3.64TB").unwrap();
        assert!(f.contains(cephadm_disk_bytes("3.64 TB").unwrap()));
        assert!(SizeFilter::parse("4000.79GB").is_ok());
    }

    #[test]
    fn refuses_what_cephadm_cannot_compare_with_a_fix() {
        for (bad, fix) in [
            ("2tb:", Some("2TB:")),
            ("1.5TB:", Some("1500GB:")),
            ("10TiB:", Some("10TB:")),
            ("2 TB", Some("2TB")),
            ("100B", None),
            ("5PB:", None),
            ("", None),
        ] {
            let err = SizeFilter::parse(bad).unwrap_err();
            assert!(err.contains("No filters applied"), "{bad}: {err}");
            match fix {
                Some(fix) => assert!(err.contains(&format!("write '{fix}'")), "{bad}: {err}"),
                None => assert!(!err.contains("write '"), "{bad}: {err}"),
            }
        }
    }

    #[test]
    fn trailing_text_that_cephadm_ignores_is_refused() {
        let err = SizeFilter::parse("1TB:2TBjunk").unwrap_err();
        assert!(err.contains("'1TB:2TB'") && err.contains("'junk'"), "{err}");
        let err = SizeFilter::parse(":2TB ").unwrap_err();
        assert!(err.contains("':2TB'"), "{err}");
    }

    #[test]
    fn disk_side_reading() {
        assert_eq!(cephadm_disk_bytes("3.64 TB").unwrap(), 3.64 * 1e12);
        assert_eq!(cephadm_disk_bytes("894.25 GB").unwrap(), 894.25 * 1e9);
        assert!(cephadm_disk_bytes("1.00 PB").unwrap_err().contains("Unit 'PB' not supported"));
        assert!(cephadm_disk_bytes("512.00 B").unwrap_err().contains("Unit 'B' not supported"));
        assert!(cephadm_disk_bytes("5 GB").is_err());
        // The first digits.digits anywhere, not necessarily at the start.
        assert_eq!(cephadm_disk_bytes("1 2.50 GB").unwrap(), 2.5e9);
        assert!(cephadm_disk_bytes("x1 2.50 GB").unwrap_err().contains("Unit 'X'"));
        assert_eq!(cephadm_disk_bytes("12.5.3 KB").unwrap(), 12.5e3);
    }
}
