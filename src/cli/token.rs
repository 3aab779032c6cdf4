//! `osdkeeper token create|ls|revoke|whoami`: named API tokens, through the
//! daemon's API (creating, listing and revoking needs an admin token).
//!
//! There is no offline `token create` against the database file: the
//! daemon reads its tokens once and after each change it makes itself, so
//! a token written behind its back would not work until a restart, and a
//! second writer on a live database is one more way to lose a write. The
//! first admin comes from `OSDKEEPER_TOKEN` (the bootstrap token), or, on a
//! loopback daemon without any token, from the first `token create`.

use std::process::ExitCode;

use super::out;
use super::remote::Remote;
use crate::client::ClientError;
use crate::render::tokens::token_table;
use crate::wire::api::tokens::{NewToken, Role};

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| format!("{s:?} is not a role: read, operate or admin"))
}

#[derive(clap::Subcommand, Debug)]
pub enum TokenCmd {
    /// Create a token; its secret is printed once, on stdout, and never again.
    Create {
        name: String,
        /// read: sees everything; operate: also specs and OSD removals; admin: also zap, release, hosts, tokens.
        #[arg(long, value_parser = parse_role)]
        role: Role,
    },
    /// List the tokens in force (names and roles, never secrets).
    Ls,
    /// Revoke a token: refused from the moment this returns. Its name is not reused.
    Revoke { name: String },
    /// The name and role of the token in OSDKEEPER_TOKEN.
    Whoami,
}

pub async fn run(r: &Remote, cmd: TokenCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        TokenCmd::Create { name, role } => {
            let created = c.create_token(&NewToken { name, role }).await?;
            if !out::structured(r.format, &created) {
                // Only the secret on stdout, so that `$(osdkeeper token create ...)` is the secret.
                eprintln!(
                    "Created token {} ({}); its secret follows, shown this once:",
                    created.token.name, created.token.role
                );
                out::line(&created.secret);
            }
        }
        TokenCmd::Ls => out::answer(r.format, &c.tokens().await?, |t| token_table(t)),
        TokenCmd::Revoke { name } => {
            c.revoke_token(&name).await?;
            out::line(format!("Revoked token {name}"));
        }
        TokenCmd::Whoami => {
            let me = c.whoami().await?;
            let open = if me.open { " (this daemon has no tokens: loopback only, no token needed)" } else { "" };
            if !out::structured(r.format, &me) {
                out::line(format!("{} ({}){open}", me.name, me.role));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
