//! The core's named values on the wire: a domain enum that has names
//! (`as_str`, `parse`, `ALL`) is written and read as its name, and the
//! OpenAPI document lists the names. The core's types derive nothing of
//! serde or utoipa; what their JSON is stays here, at the edge, so that a
//! variant renamed in the core keeps its name in the API as long as
//! `as_str` does.

/// Implements `Serialize`, `Deserialize` and `ToSchema` for a domain enum
/// by its names; `$what` is how a bad name is reported ("unknown removal
/// phase \"x\" (one of: ...)").
macro_rules! by_name {
    (@one $ty:ty, $name:ident, $what:literal) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.$name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                <$ty>::parse(&text).ok_or_else(|| {
                    let names: Vec<&str> = <$ty>::ALL.iter().map(|v| v.$name()).collect();
                    serde::de::Error::custom(format!(
                        "unknown {} {:?} (one of: {})",
                        $what,
                        text,
                        names.join(", ")
                    ))
                })
            }
        }

        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some(<$ty>::ALL.iter().map(|v| v.$name())))
                    .into()
            }
        }

        impl utoipa::ToSchema for $ty {}
    };
    ($($ty:ty => $what:literal),* $(,)?) => {$(by_name!(@one $ty, as_str, $what);)*};
}

by_name! {
    crate::domain::removal::Phase => "removal phase",
    crate::domain::deploy::DeployPhase => "deployment phase",
    crate::domain::deploy::OsdKind => "OSD kind",
    crate::domain::probe::ProbeMode => "probe mode",

    crate::domain::auth::Role => "role",
    crate::domain::drain_preview::EtaSource => "ETA source",
    crate::domain::event::Level => "event level",
    crate::domain::event::EventKind => "event kind",
    crate::domain::removal::boost::Scheduler => "OSD op queue",
    crate::domain::bench::cluster::Pass => "benchmark pass",
    crate::domain::bench::cluster::ClusterPhase => "benchmark phase",
    crate::domain::swap::Phase => "swap phase",
    crate::domain::swap::Way => "swap way",
    crate::domain::spec::Method => "OSD method",
}
// fio's job name is the name in the API.
by_name!(@one crate::domain::probe::ProbeJob, name, "probe job");

#[cfg(test)]
mod tests {
    use crate::domain::removal::Phase;

    #[test]
    fn a_named_value_is_its_name_both_ways_and_a_bad_name_says_which_are_good() {
        for p in Phase::ALL {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.as_str()));
            assert_eq!(serde_json::from_str::<Phase>(&json).unwrap(), p);
        }
        let e = serde_json::from_str::<Phase>("\"gone\"").unwrap_err().to_string();
        assert!(e.starts_with("unknown removal phase \"gone\" (one of: queued, draining, "), "{e}");
    }

    #[test]
    fn the_schema_lists_every_name() {
        let schema = serde_json::to_value(<Phase as utoipa::PartialSchema>::schema()).unwrap();
        let names: Vec<&str> = schema["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(names, Phase::ALL.map(Phase::as_str));
        assert_eq!(schema["type"], "string");
    }
}
