//! A disk's `device_id` as ceph-volume of each release writes it, and when
//! two ids name the same disk.
//!
//! Holds and disk probes are keyed by the id a host's inventory gave when
//! they were made, and a ceph-volume upgrade on the host changes it:
//! * 16.2 joins vendor, model and serial with `_` and keeps the spaces
//!   (its `dev_id.replace(' ', '_')` discards the result): `Samsung SSD
//!   860_S3Z`; for an LVM PV it takes the model from udev's database;
//! * 17.2 and 18.2 replace the spaces and collapse `__`: `Samsung_SSD_860_S3Z`;
//!   an LVM PV's model from `ID_MODEL_ENC`;
//! * 19.2 and 20.2 read udev's database directly and no longer need a model
//!   for the vendor+SCSI-serial and short-serial forms (`_S3Z` without one);
//!   a disk without udev data gets `""`.
//!
//! An exact comparison would silently drop a hold (the disk offered to
//! specs again) or orphan a disk's probes after such an upgrade. Two ids
//! name the same disk when they are equal once spaces and runs of `_` are
//! made one `_`, or when their serials (the last part, present in every
//! form) are equal.

/// The id as 18.2 would write it: spaces as `_`, runs of `_` as one, none
/// at either end.
pub fn canonical(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in id.trim().chars() {
        let c = if c.is_whitespace() { '_' } else { c };
        if !(c == '_' && (out.is_empty() || out.ends_with('_'))) {
            out.push(c);
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// The serial: the last `_`-separated part of the canonical id; `None`
/// for an empty id.
pub fn serial(id: &str) -> Option<String> {
    let c = canonical(id);
    let last = c.rsplit('_').next().unwrap_or_default();
    (!last.is_empty()).then(|| last.to_string())
}

/// Whether `a` and `b`, written by ceph-volume of the same or different
/// releases, name the same disk. An empty id names no disk in particular
/// and matches nothing.
pub fn same_disk(a: &str, b: &str) -> bool {
    let (ca, cb) = (canonical(a), canonical(b));
    if ca.is_empty() || cb.is_empty() {
        return false;
    }
    ca == cb || serial(a) == serial(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One SATA SSD's udev properties (`ID_MODEL=Samsung_SSD_860_EVO_500GB`
    /// with spaces in `ID_MODEL_ENC`, `ID_SERIAL_SHORT=S3Z9NB0K123456X`)
    /// through each release's `Device._get_device_id`.
    const PACIFIC_16_2_15: &str = "Samsung SSD 860 EVO 500GB_S3Z9NB0K123456X";
    const REEF_18_2_7: &str = "Samsung_SSD_860_EVO_500GB_S3Z9NB0K123456X";

    #[test]
    fn one_disk_under_the_ids_of_16_2_18_2_and_20_2_built_from_each_releases_code() {
        // 20.2 with the model: as 18.2 (its `re.sub('_+', '_')`).
        let tentacle_20_2_4 = REEF_18_2_7;
        // 20.2 when udev has no ID_MODEL: `'_'.join(['', serial])`.
        let tentacle_20_2_4_no_model = "_S3Z9NB0K123456X";
        for (a, b) in [
            (PACIFIC_16_2_15, REEF_18_2_7),
            (REEF_18_2_7, tentacle_20_2_4),
            (PACIFIC_16_2_15, tentacle_20_2_4_no_model),
        ] {
            assert!(same_disk(a, b), "{a} / {b}");
            assert!(same_disk(b, a), "{b} / {a}");
        }
        assert_eq!(canonical(PACIFIC_16_2_15), REEF_18_2_7);
        assert_eq!(serial(tentacle_20_2_4_no_model).as_deref(), Some("S3Z9NB0K123456X"));
        // 16.2's LVM PV: the model from udev's database, another text.
        assert!(same_disk("Samsung SSD 860 EVO 500GB (LVM PV)_S3Z9NB0K123456X", REEF_18_2_7));
    }

    #[test]
    fn other_disks_and_unknown_ids_do_not_match() {
        assert!(!same_disk(REEF_18_2_7, "Samsung_SSD_860_EVO_500GB_S3Z9NB0K999999X"));
        assert!(!same_disk("", ""), "no id names no disk in particular");
        assert!(!same_disk(REEF_18_2_7, ""), "20.2 without udev data gives no id");
        assert!(!same_disk("__", "_"));
        assert_eq!(canonical("  a  b__c_ "), "a_b_c");
        assert_eq!(serial(""), None);
    }
}
