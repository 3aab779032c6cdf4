//! The recovery boost of fast drains: at most one, stored before its first
//! `config set` and removed once its values are back (`domain::removal::boost`).
//!
//! Stored as JSON with a version (`"v"`); rows written before it carried
//! one are version 1, the same form.

use serde::{Deserialize, Serialize};

use super::operations::version_of;
use super::{Result, Store, StoreError};
use crate::domain::removal::boost::{Boost, Saved, Scheduler};

#[derive(Serialize, Deserialize)]
struct BoostV1 {
    #[serde(default = "one")]
    v: u64,
    scheduler: String,
    saved: Vec<SavedV1>,
    set: Vec<(String, String)>,
    applied: bool,
}

#[derive(Serialize, Deserialize)]
struct SavedV1 {
    name: String,
    value: Option<String>,
}

fn one() -> u64 {
    1
}

fn encode(b: &Boost) -> String {
    let v1 = BoostV1 {
        v: 1,
        scheduler: b.scheduler.as_str().into(),
        saved: b.saved.iter().map(|s| SavedV1 { name: s.name.clone(), value: s.value.clone() }).collect(),
        set: b.set.clone(),
        applied: b.applied,
    };
    serde_json::to_string(&v1).expect("a boost serializes")
}

fn decode(json: &str) -> std::result::Result<Boost, String> {
    match version_of(json)? {
        1 => {}
        v => return Err(format!("version {v} is newer than this osdkeeper reads")),
    }
    let s: BoostV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let scheduler = Scheduler::parse(&s.scheduler).ok_or_else(|| format!("scheduler {:?}", s.scheduler))?;
    Ok(Boost {
        scheduler,
        saved: s.saved.into_iter().map(|s| Saved { name: s.name, value: s.value }).collect(),
        set: s.set,
        applied: s.applied,
    })
}

impl Store {
    pub async fn boost(&self) -> Result<Option<Boost>> {
        let state = self.backend.boost().await?;
        state.map(|s| decode(&s).map_err(|e| StoreError::Corrupt(format!("recovery boost: {e}")))).transpose()
    }

    pub async fn save_boost(&self, boost: &Boost, now: i64) -> Result<()> {
        self.backend.save_boost(&encode(boost), now).await
    }

    pub async fn forget_boost(&self) -> Result<()> {
        self.backend.forget_boost().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boost_row_written_before_versions_still_reads() {
        let old = r#"{"scheduler":"wpq","saved":[{"name":"osd_max_backfills","value":null},
            {"name":"osd_recovery_max_active","value":"3"}],
            "set":[["osd_max_backfills","4"],["osd_recovery_max_active","8"]],"applied":true}"#;
        let b = decode(old).unwrap();
        assert_eq!(
            b,
            Boost {
                scheduler: Scheduler::Wpq,
                saved: vec![
                    Saved { name: "osd_max_backfills".into(), value: None },
                    Saved { name: "osd_recovery_max_active".into(), value: Some("3".into()) },
                ],
                set: vec![("osd_max_backfills".into(), "4".into()), ("osd_recovery_max_active".into(), "8".into()),],
                applied: true,
            }
        );
        let again = encode(&b);
        assert!(again.starts_with(r#"{"v":1,"scheduler":"wpq","#), "{again}");
        assert_eq!(decode(&again).unwrap(), b);
    }

    #[test]
    fn a_boost_of_a_later_version_or_an_unknown_scheduler_is_refused() {
        let later = r#"{"v":2,"queue":"wpq"}"#;
        assert!(decode(later).unwrap_err().contains("version 2"));
        let odd = r#"{"scheduler":"fifo","saved":[],"set":[],"applied":false}"#;
        assert!(decode(odd).unwrap_err().contains("fifo"));
    }
}
