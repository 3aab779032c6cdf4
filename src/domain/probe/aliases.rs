//! A disk's probes found again after ceph-volume renamed it: the probes of
//! a disk are kept by its stored key (`DiskKey`), which holds the
//! `device_id` of the ceph-volume that reported it when it was probed; a
//! ceph-volume of another release names the disk differently
//! (`domain::device_id`), so the map also names each disk by its serial.

use std::collections::HashMap;

use super::DiskKey;

/// Adds to a map by stored key each disk's alias, where no other disk has
/// the same one (two disks of one serial would be told apart by nothing).
pub fn with_aliases<T: Clone>(by_key: &mut HashMap<String, T>) {
    let mut aliases: HashMap<String, Option<T>> = HashMap::new();
    for (key, value) in by_key.iter() {
        let Some(alias) = DiskKey::parse(key).and_then(|k| k.alias()) else { continue };
        aliases.entry(alias).and_modify(|v| *v = None).or_insert_with(|| Some(value.clone()));
    }
    by_key.extend(aliases.into_iter().filter_map(|(a, v)| Some((a, v?))));
}

/// What a map made `with_aliases` holds for a disk: under its key, else
/// under its alias.
pub fn find<'a, T>(by_key: &'a HashMap<String, T>, key: &DiskKey) -> Option<&'a T> {
    by_key.get(&key.stored()).or_else(|| by_key.get(&key.alias()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probed under 16.2's id, looked up under 18.2's and 20.2's
    /// (`domain::device_id`'s ids, built from each release's code).
    #[test]
    fn a_disks_probes_are_found_after_a_ceph_volume_upgrade() {
        let mut by_key: HashMap<String, u32> = HashMap::new();
        by_key.insert(DiskKey::of("h1", "/dev/sdb", "Samsung SSD 860 EVO 500GB_S3Z9NB0K123456X").stored(), 1);
        by_key.insert(DiskKey::of("h1", "/dev/loop3", "").stored(), 2);
        with_aliases(&mut by_key);
        let found = |by_key: &HashMap<String, u32>, id: &str| find(by_key, &DiskKey::of("h1", "/dev/sdb", id)).copied();
        assert_eq!(found(&by_key, "Samsung_SSD_860_EVO_500GB_S3Z9NB0K123456X"), Some(1));
        assert_eq!(found(&by_key, "_S3Z9NB0K123456X"), Some(1));
        assert_eq!(found(&by_key, "Samsung_SSD_860_EVO_500GB_S3Z9NB0K999999X"), None);
        assert_eq!(find(&by_key, &DiskKey::of("h1", "/dev/loop3", "")), Some(&2));
        // Two disks of one serial: neither is found by it.
        by_key.insert(DiskKey::Id("Other_Vendor_S3Z9NB0K123456X".into()).stored(), 3);
        by_key.retain(|k, _| !k.starts_with("serial:"));
        with_aliases(&mut by_key);
        assert_eq!(found(&by_key, "_S3Z9NB0K123456X"), None);
        assert_eq!(found(&by_key, "Samsung SSD 860 EVO 500GB_S3Z9NB0K123456X"), Some(1), "its own id still");
    }
}
