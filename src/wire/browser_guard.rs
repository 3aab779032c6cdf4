//! What a web page in the operator's browser can send to the daemon or an
//! agent without asking: a "simple" cross-site request (GET, or a POST with
//! a form or plain-text body, or none) carries no token, but reaches a
//! listener that needs none (loopback without a token), and DNS rebinding
//! makes any host name point at 127.0.0.1. Both servers refuse:
//!
//! * a request whose `Origin` is not the server itself (the browser names
//!   the page that sent it);
//! * on a listener without a token, a `Host` that is not this machine by
//!   address or as `localhost` (a rebound name);
//! * a POST without the content type its route reads (JSON, or YAML for a
//!   spec): the browser must then ask first (CORS preflight), which neither
//!   server ever grants.

/// The content types a route reads from a POST.
pub const JSON: &[&str] = &["application/json"];
pub const YAML_OR_JSON: &[&str] =
    &["application/json", "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];

/// The host part of a `Host` header or an origin's authority, without the port.
fn host_part(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    authority.rsplit_once(':').map(|(h, _)| h).unwrap_or(authority)
}

/// An address, or `localhost`: names that DNS could point elsewhere are not.
fn is_this_machine(host: &str) -> bool {
    let host = host_part(host);
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok()
}

/// Why a request is refused, or Ok. `token_less`: the listener takes
/// requests without a token (loopback only). `accepts`: the content types
/// the route reads from a POST body (empty for routes without POST).
pub fn check(
    method: &str,
    host: Option<&str>,
    origin: Option<&str>,
    content_type: Option<&str>,
    token_less: bool,
    accepts: &[&str],
) -> Result<(), String> {
    if let Some(origin) = origin {
        let authority = origin.split_once("://").map(|(_, a)| a).unwrap_or(origin);
        if host.is_none_or(|h| !h.eq_ignore_ascii_case(authority)) {
            return Err(format!("a request from the web page {origin:?} is refused (cross-site)"));
        }
    }
    if token_less {
        match host {
            Some(h) if is_this_machine(h) => {}
            other => {
                return Err(format!(
                "Host {:?} is not this machine; a listener without a token answers only to its address or localhost",
                other.unwrap_or("")
            ))
            }
        }
    }
    if method.eq_ignore_ascii_case("POST") {
        let given = content_type.map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
        match given {
            Some(t) if accepts.iter().any(|a| *a == t) => {}
            Some(t) => return Err(format!("content type {t:?} is not accepted here; send {}", accepts.join(" or "))),
            None => return Err(format!("a POST needs a content type: send {}", accepts.join(" or "))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_site_pages_are_refused() {
        let ok =
            check("POST", Some("127.0.0.1:8740"), Some("http://127.0.0.1:8740"), Some("application/json"), true, JSON);
        assert_eq!(ok, Ok(()), "the dashboard itself");
        let e = check("GET", Some("127.0.0.1:8740"), Some("https://evil.example"), None, true, JSON).unwrap_err();
        assert!(e.contains("cross-site"), "{e}");
        assert!(check("POST", Some("127.0.0.1:8740"), Some("null"), Some("application/json"), false, JSON).is_err());
    }

    #[test]
    fn rebound_names_are_refused_without_a_token() {
        assert!(check("GET", Some("localhost:8741"), None, None, true, JSON).is_ok());
        assert!(check("GET", Some("[::1]:8741"), None, None, true, JSON).is_ok());
        let e = check("GET", Some("evil.example:8741"), None, None, true, JSON).unwrap_err();
        assert!(e.contains("not this machine"), "{e}");
        assert!(check("GET", None, None, None, true, JSON).is_err());
        // With a token the name does not matter: the token is the check.
        assert!(check("GET", Some("osdkeeper.lab:8740"), None, None, false, JSON).is_ok());
    }

    #[test]
    fn posts_need_the_type_their_route_reads() {
        for simple in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            assert!(check("POST", Some("127.0.0.1:1"), None, Some(simple), true, JSON).is_err(), "{simple}");
        }
        assert!(check("POST", Some("127.0.0.1:1"), None, None, true, JSON).is_err(), "no type: a no-cors fetch");
        assert!(check("POST", Some("127.0.0.1:1"), None, Some("application/json; charset=utf-8"), true, JSON).is_ok());
        assert!(check("POST", Some("127.0.0.1:1"), None, Some("application/yaml"), true, YAML_OR_JSON).is_ok());
        assert!(check("DELETE", Some("127.0.0.1:1"), None, None, true, JSON).is_ok(), "not a simple method");
    }
}
