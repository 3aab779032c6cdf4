//! cephadm's size formatting (`mgr_util.format_units`, 1024-based), so that
//! `device ls` prints sizes exactly as `ceph orch device ls` does.

use super::table::{pad, Align};

/// `format_bytes(n, width)`: fits `n` into `width` characters with a unit.
pub fn format_bytes(n: f64, width: usize) -> String {
    let units = [' ', 'k', 'M', 'G', 'T', 'P', 'E'];
    let digits = width.saturating_sub(1);
    let whole = n.max(0.0) as u128;
    let mut unit = 0usize;
    while unit + 1 < units.len() && (whole / 1024u128.pow(unit as u32)).to_string().len() > digits {
        unit += 1;
    }
    let body = if unit > 0 {
        let f = format!("{:.6}", n / 1024f64.powi(unit as i32));
        let mut t: String = f.chars().take(digits).collect();
        if t.ends_with('.') {
            t.pop();
            t = format!(" {t}");
        }
        t
    } else {
        pad(&whole.to_string(), digits, Align::Right)
    };
    format!("{body}{}", units[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_cephadm() {
        assert_eq!(super::format_bytes(4.00e12, 5), "3725G");
        assert_eq!(super::format_bytes(4000787030016.0, 5), "3726G");
        assert_eq!(super::format_bytes(2000398934016.0, 5), "1863G");
        assert_eq!(super::format_bytes(12e12, 5), "10.9T");
        assert_eq!(super::format_bytes(375e9, 5), " 349G");
        assert_eq!(super::format_bytes(500.0, 5), " 500 ");
    }
}
