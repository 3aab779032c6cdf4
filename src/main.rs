use std::process::ExitCode;

fn main() -> ExitCode {
    osdkeeper::cli::run()
}
