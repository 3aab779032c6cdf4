//! What is wrong with one document of a spec file, said so that the operator
//! can fix it without reading cephadm's source: which document, which service,
//! which key, which value, and why.

use std::fmt;

use crate::domain::value::excerpt;

/// One invalid document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// Index of the YAML document in its file (0-based, like cephadm).
    pub doc: usize,
    /// Line where the document starts (1-based).
    pub line: usize,
    pub service_id: Option<String>,
    /// Dotted path of the offending key, e.g. `data_devices.size`; empty when
    /// the document as a whole is wrong.
    pub field: String,
    /// The offending value as written, when there is one (an excerpt if long).
    pub value: Option<String>,
    pub message: String,
    /// True where cephadm 16.2 would accept the value and then misbehave and
    /// osdkeeper refuses it on purpose (listed in docs/differences-from-cephadm.md).
    pub stricter_than_cephadm: bool,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "document {} (line {}", self.doc, self.line)?;
        if let Some(id) = &self.service_id {
            write!(f, ", service_id '{}'", excerpt(id))?;
        }
        f.write_str("): ")?;
        if !self.field.is_empty() {
            f.write_str(&self.field)?;
            if let Some(v) = &self.value {
                write!(f, " = {v}")?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SpecError {}

/// An error before the document index and service id are attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub value: Option<String>,
    pub message: String,
    pub stricter: bool,
}

impl FieldError {
    /// An error cephadm raises too (with its own wording, kept in `message`).
    pub fn cephadm(field: impl Into<String>, value: Option<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), value: value.map(|v| excerpt(&v)), message: message.into(), stricter: false }
    }

    /// A value cephadm would accept and then misuse.
    pub fn stricter(field: impl Into<String>, value: Option<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), value: value.map(|v| excerpt(&v)), message: message.into(), stricter: true }
    }

    /// A value of osdkeeper's own section (`osdkeeper:`), which cephadm
    /// does not read at all.
    pub fn own(field: impl Into<String>, value: Option<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), value: value.map(|v| excerpt(&v)), message: message.into(), stricter: false }
    }

    pub fn locate(self, doc: usize, line: usize, service_id: Option<String>) -> SpecError {
        SpecError {
            doc,
            line,
            service_id,
            field: self.field,
            value: self.value,
            message: self.message,
            stricter_than_cephadm: self.stricter,
        }
    }
}
