//! `token ls`: each token's name, role, when it was made and by whom, and
//! when it was last used; never a secret (the API does not have them).

use super::table::Table;
use crate::clock::format_ms;
use crate::wire::api::tokens::TokenInfo;

pub fn token_table(tokens: &[TokenInfo]) -> String {
    let mut t = Table::new(["NAME", "ROLE", "CREATED", "BY", "LAST USED"]);
    for k in tokens {
        let created = match (k.configured, k.created_at) {
            (true, _) => "configured (OSDKEEPER_TOKEN)".to_string(),
            (false, Some(at)) => format_ms(at),
            (false, None) => String::new(),
        };
        let used = k.last_used_at.map(format_ms).unwrap_or_else(|| "-".into());
        t.row([k.name.clone(), k.role.to_string(), created, k.created_by.clone().unwrap_or_default(), used]);
    }
    t.plain()
}
