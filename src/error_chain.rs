//! An error with its causes, for messages: reqwest's own message stops at
//! "error sending request"; the causes say why (refused, timed out, ...).

pub fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut s = e.source();
    while let Some(x) = s {
        msg = format!("{msg}: {x}");
        s = x.source();
    }
    msg
}
