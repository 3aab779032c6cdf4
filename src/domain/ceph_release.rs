//! Which Ceph release wrote something: the release (its major version and
//! name) and the version as Ceph printed it, read from the version line
//! every Ceph program prints (`ceph --version`, `ceph-osd --version`, the
//! keys of `ceph versions`, `ceph_version` in `ceph osd metadata`) or from a
//! bare version (`ceph_version_short`). ceph-volume itself has no
//! `--version` (its options are `--cluster`, `--log-level`, `--log-path`):
//! the agent asks the `ceph` beside it.
//!
//! Device reports differ between releases (`ceph_device` is named
//! `ceph_device_lvm` from Squid on, `sys_api.device_nodes` became a list in
//! Tentacle, ...): the reader of a report takes the release that wrote it,
//! where it is known, and release-specific reading goes there.

use std::fmt;

use crate::domain::value::excerpt;

/// The releases osdkeeper knows, by major version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Release {
    Pacific,
    Quincy,
    Reef,
    Squid,
    Tentacle,
}

impl Release {
    pub const ALL: [Release; 5] = [Release::Pacific, Release::Quincy, Release::Reef, Release::Squid, Release::Tentacle];

    /// The major version: 16 for Pacific ... 20 for Tentacle.
    pub fn major(self) -> u32 {
        match self {
            Release::Pacific => 16,
            Release::Quincy => 17,
            Release::Reef => 18,
            Release::Squid => 19,
            Release::Tentacle => 20,
        }
    }

    /// Its name as Ceph prints it in a version line.
    pub fn name(self) -> &'static str {
        match self {
            Release::Pacific => "pacific",
            Release::Quincy => "quincy",
            Release::Reef => "reef",
            Release::Squid => "squid",
            Release::Tentacle => "tentacle",
        }
    }

    pub fn of_major(major: u32) -> Option<Release> {
        Release::ALL.into_iter().find(|r| r.major() == major)
    }

    pub fn of_name(name: &str) -> Option<Release> {
        Release::ALL.into_iter().find(|r| r.name() == name)
    }

    /// A release as an operator names it (`--ceph-release`): its name
    /// (`tentacle`), its major version (`20`), a stable series (`20.2`) or
    /// any version Ceph prints (`20.2.4`).
    pub fn named(text: &str) -> Result<Release, ReleaseError> {
        let t = text.trim();
        if let Some(r) = Release::of_name(&t.to_ascii_lowercase()) {
            return Ok(r);
        }
        let mut parts = t.split('.');
        let major = parts.next().and_then(|m| m.parse::<u32>().ok());
        let rest: Vec<&str> = parts.collect();
        if let (Some(major), true) = (major, rest.len() <= 1 && rest.iter().all(|p| p.parse::<u32>().is_ok())) {
            return Release::of_major(major).ok_or(ReleaseError::Unknown { version: excerpt(t), major });
        }
        CephRelease::parse(t).map(|r| r.release)
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.major(), self.name())
    }
}

/// A release and the version that names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CephRelease {
    pub release: Release,
    /// As Ceph printed it: `18.2.7`, `19.3.0-1234-gabcdef12`, or
    /// `Development` for a build without a version.
    pub version: String,
}

impl fmt::Display for CephRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.version, self.release.name())
    }
}

/// Why a text names no release osdkeeper knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseError {
    #[error(
        "cannot tell the Ceph release from {0:?}: expected a version line such as \
         `ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)` or a version such as 18.2.7"
    )]
    Unreadable(String),
    #[error("Ceph {version} is release {major}, which osdkeeper does not know (it knows 16 pacific to 20 tentacle)")]
    Unknown { version: String, major: u32 },
    #[error("the version line names Ceph {version} but the release {name:?} (expected {expected})")]
    Mismatch { version: String, name: String, expected: &'static str },
}

impl CephRelease {
    /// Reads a version line (`ceph version 16.2.15 (618f...) pacific
    /// (stable)`; Tentacle adds the build type: `(stable - RelWithDebInfo)`)
    /// or a bare version (`16.2.15`). Surrounding white space is ignored.
    pub fn parse(text: &str) -> Result<CephRelease, ReleaseError> {
        let line = text.trim();
        let unreadable = || ReleaseError::Unreadable(excerpt(line));
        let Some(rest) = line.strip_prefix("ceph version ") else {
            // A bare version, or this type's own text: `18.2.7 (reef)`.
            let (version, name) = match line.strip_suffix(')').and_then(|l| l.split_once(" (")) {
                Some((version, name)) => (version, Some(name)),
                None => (line, None),
            };
            if version == "Development" {
                let release = name.and_then(Release::of_name).ok_or_else(unreadable)?;
                return Ok(CephRelease { release, version: version.to_string() });
            }
            return Self::of_version(version, name).ok_or_else(unreadable)?;
        };
        let mut words = rest.split_whitespace();
        let version = words.next().ok_or_else(unreadable)?;
        // The commit in parentheses, then the release's name.
        let commit = words.next().ok_or_else(unreadable)?;
        if !(commit.starts_with('(') && commit.ends_with(')')) {
            return Err(unreadable());
        }
        let name = words.next();
        if version == "Development" {
            // A build without a version: only its name says which release it is.
            let release = name.and_then(Release::of_name).ok_or_else(unreadable)?;
            return Ok(CephRelease { release, version: version.to_string() });
        }
        Self::of_version(version, name).ok_or_else(unreadable)?
    }

    /// A release from a version (`MAJOR.MINOR.PATCH`, maybe with a build
    /// suffix), checked against the name beside it; `None` when the text
    /// is no version at all.
    fn of_version(version: &str, name: Option<&str>) -> Option<Result<CephRelease, ReleaseError>> {
        let numbers = version.split('-').next()?;
        let mut parts = numbers.split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor_patch: Vec<&str> = parts.collect();
        let digits = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if minor_patch.len() != 2 || !minor_patch.iter().all(digits) {
            return None;
        }
        let Some(release) = Release::of_major(major) else {
            return Some(Err(ReleaseError::Unknown { version: excerpt(version), major }));
        };
        if let Some(name) = name.filter(|n| *n != release.name()) {
            return Some(Err(ReleaseError::Mismatch {
                version: excerpt(version),
                name: excerpt(name),
                expected: release.name(),
            }));
        }
        Some(Ok(CephRelease { release, version: version.to_string() }))
    }

    /// `MAJOR.MINOR.PATCH` of the version (a build suffix dropped); none
    /// for a `Development` build.
    pub fn numbers(&self) -> Option<(u32, u32, u32)> {
        let mut parts = self.version.split('-').next()?.split('.').map(|p| p.parse::<u32>().ok());
        Some((parts.next()??, parts.next()??, parts.next()??))
    }

    /// Whether this ceph-volume reads the "being replaced" header
    /// (`being_replaced`, from 19.2.1 on). A development build counts from
    /// the release after Squid, whose every build has it.
    pub fn reads_replace_header(&self) -> bool {
        match self.numbers() {
            Some(v) => v >= (19, 2, 1),
            None => self.release > Release::Squid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replace_header_is_read_from_19_2_1_on() {
        let reads = |t: &str| CephRelease::parse(t).unwrap().reads_replace_header();
        assert!(!reads("16.2.15") && !reads("18.2.7 (reef)") && !reads("19.2.0"));
        assert!(reads("19.2.1") && reads("19.2.3 (squid)") && reads("20.2.4 (tentacle)"));
        assert!(reads("ceph version 19.3.0-1234-gabcdef12 (abcdef12) squid (dev)"));
        assert!(reads("Development (tentacle)") && !reads("Development (squid)"));
    }

    #[test]
    fn an_operator_names_a_release_by_name_major_series_or_version() {
        for text in ["tentacle", "Tentacle", "20", "20.2", "20.2.4", " 20.2 "] {
            assert_eq!(Release::named(text), Ok(Release::Tentacle), "{text}");
        }
        assert_eq!(Release::named("18.2.7"), Ok(Release::Reef));
        assert_eq!(Release::named("15.2"), Err(ReleaseError::Unknown { version: "15.2".into(), major: 15 }));
        assert!(matches!(Release::named("newest"), Err(ReleaseError::Unreadable(_))));
    }

    /// The lines the sandbox recorded (`../shared/ceph-sandbox/examples`:
    /// `versions.json` of each release, `ceph_version_short`).
    #[test]
    fn reads_what_each_release_prints() {
        let cases = [
            (
                "ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)\n",
                Release::Pacific,
                "16.2.15",
            ),
            ("ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)", Release::Reef, "18.2.7"),
            (
                "ceph version 20.2.4 (7f793731f1b39eb4f465e960113d2363c311b964) tentacle (stable - RelWithDebInfo)",
                Release::Tentacle,
                "20.2.4",
            ),
            (
                "ceph version 17.2.8 (f817ceb7f187defb1d021d6328fa833eb8e943b3) quincy (stable)",
                Release::Quincy,
                "17.2.8",
            ),
            (
                "ceph version 19.3.0-6109-g2dd6f7e3 (2dd6f7e3aa0b1e2cde6e9b9e8e5e0e1a9f2b3c4d) squid (dev)",
                Release::Squid,
                "19.3.0-6109-g2dd6f7e3",
            ),
            ("ceph version Development (no_version) reef (rc)", Release::Reef, "Development"),
            ("18.2.7", Release::Reef, "18.2.7"),
            ("  20.2.4\n", Release::Tentacle, "20.2.4"),
        ];
        for (text, release, version) in cases {
            let r = CephRelease::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!((r.release, r.version.as_str()), (release, version), "{text:?}");
        }
        assert_eq!(CephRelease::parse("18.2.7").unwrap().to_string(), "18.2.7 (reef)");
        // Its own text reads back as itself (the agent sends it so).
        for (text, _, _) in cases {
            let r = CephRelease::parse(text).unwrap();
            assert_eq!(CephRelease::parse(&r.to_string()), Ok(r), "{text:?}");
        }
        assert!(CephRelease::parse("18.2.7 (squid)").is_err());
        assert_eq!(Release::Squid.to_string(), "19 squid");
        assert!(Release::Pacific < Release::Squid, "releases compare by age");
    }

    #[test]
    fn unknown_text_is_refused_with_what_was_expected() {
        for text in [
            "",
            "ceph",
            "ceph version",
            "ceph version 18.2.7",
            "reef",
            "18.2",
            "18.2.x",
            "v18.2.7",
            "ceph version 18.2.7 reef (stable)",
        ] {
            let e = CephRelease::parse(text).unwrap_err();
            assert!(matches!(e, ReleaseError::Unreadable(_)), "{text:?}: {e}");
            assert!(e.to_string().contains("expected a version line such as `ceph version 18.2.7"), "{e}");
        }
        let e = CephRelease::parse("ceph version 15.2.17 (8a82819d84cf884bd39c17e3236e0632ac146dc4) octopus (stable)")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Ceph 15.2.17 is release 15, which osdkeeper does not know (it knows 16 pacific to 20 tentacle)"
        );
        assert!(matches!(CephRelease::parse("21.0.0"), Err(ReleaseError::Unknown { major: 21, .. })));
        let e = CephRelease::parse("ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) squid (stable)")
            .unwrap_err();
        assert_eq!(e.to_string(), "the version line names Ceph 18.2.7 but the release \"squid\" (expected reef)");
        assert!(matches!(
            CephRelease::parse("ceph version Development (no_version) umbrella (rc)"),
            Err(ReleaseError::Unreadable(_))
        ));
    }
}
