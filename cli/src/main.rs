//! The `attrflow` command: see [`attrflow_cli`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(attrflow_cli::main_with(std::env::args_os()))
}
