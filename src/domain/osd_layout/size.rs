//! Sizes as ceph-volume 16.2 reads and prints them (`util/disk.py Size`):
//! `--block-db-size 30G` is 30 GiB, and a report says "116.44 GB" for
//! 116.44 GiB. Both directions are kept byte-exact with Python's floats,
//! because the report strings are compared with ceph-volume's own.

/// ceph-volume's `Size.parse`: a number with an optional unit letter
/// (`b k m g t p`, any case, optionally followed by `b`), 1024-based. `None`
/// where Python's `float()` of the number part would raise.
pub fn parse(text: &str) -> Option<f64> {
    let chars: Vec<char> = text.chars().collect();
    let lower = |i: usize| chars[i].to_ascii_lowercase();
    let unit_power = |c: char| "bkmgtp".find(c).map(|p| p as i32);
    let n = chars.len();
    let (number, power) = if n > 2 && lower(n - 1) == 'b' && "kmgtp".contains(lower(n - 2)) {
        (&chars[..n - 2], unit_power(lower(n - 2))?)
    } else if n > 0 && unit_power(lower(n - 1)).is_some() {
        (&chars[..n - 1], unit_power(lower(n - 1))?)
    } else {
        (&chars[..], 0)
    };
    let value = python_float(&number.iter().collect::<String>())?;
    Some(value * 1024f64.powi(power))
}

/// Python's `float(str)`: surrounding whitespace and `_` between digits are
/// allowed; `inf` and `nan` are numbers.
pub(super) fn python_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let chars: Vec<char> = t.chars().collect();
    let digit = |i: Option<usize>| i.and_then(|i| chars.get(i)).is_some_and(char::is_ascii_digit);
    for (i, c) in chars.iter().enumerate() {
        if *c == '_' && !(digit(i.checked_sub(1)) && digit(Some(i + 1))) {
            return None;
        }
    }
    t.replace('_', "").parse().ok()
}

/// ceph-volume's `str(Size)`: the first unit (B, KB, ... PB) in which the
/// value is at most 1024, with two decimals. Above 1024 PB Python finds no
/// unit and prints `None`.
pub fn display(bytes: f64) -> String {
    for (i, unit) in ["B", "KB", "MB", "GB", "TB", "PB"].iter().enumerate() {
        let v = if i == 0 { bytes } else { bytes / 1024f64.powi(i as i32) };
        if v > 1024.0 {
            continue;
        }
        if v.is_nan() {
            return format!("nan {unit}");
        }
        return format!("{v:.2} {unit}");
    }
    "None".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_size_parse() {
        let gib = 1024f64.powi(3);
        assert_eq!(parse("30G"), Some(30.0 * gib));
        assert_eq!(parse("30GB"), Some(30.0 * gib));
        assert_eq!(parse("30gb"), Some(30.0 * gib));
        assert_eq!(parse("1.5T"), Some(1.5 * 1024f64.powi(4)));
        assert_eq!(parse("64424509440"), Some(64424509440.0));
        assert_eq!(parse("10b"), Some(10.0));
        assert_eq!(parse("10 GB"), Some(10.0 * gib), "float() strips the space before the unit");
        assert_eq!(parse("1_000"), Some(1000.0));
        assert_eq!(parse("-1"), Some(-1.0));
        assert!(parse("inf").is_some_and(f64::is_infinite));
        for bad in ["x", "true", "xor", "2tb:", "10TiB", "gb", "b", "", "10G ", "1__0", "_1"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn displays_like_str_of_size() {
        assert_eq!(display(4000787030016.0 - 4194304.0 + 1.0), "3.64 TB");
        assert_eq!(display(1024.0), "1024.00 B", "a unit is used up to and including 1024");
        assert_eq!(display(1025.0), "1.00 KB");
        assert_eq!(display(0.0), "0.00 B");
        assert_eq!(display(-1.0), "-1.00 B");
        assert_eq!(display(30.0 * 1024f64.powi(3)), "30.00 GB");
        assert_eq!(display(f64::INFINITY), "None");
        assert_eq!(display(f64::NAN), "nan B");
        assert_eq!(display(1.125 * 1024f64.powi(3)), "1.12 GB", "ties go to even, as in Python");
    }
}
