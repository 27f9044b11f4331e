//! What the CLI's end-to-end tests share: running the `attrflow` binary on piped input and
//! reading what it printed.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `attrflow` with `args`, `stdin` piped in, and waits for it.
pub fn attrflow(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_attrflow"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the attrflow binary starts");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).expect("stdin written");
    drop(input);
    child.wait_with_output().expect("attrflow finishes")
}

/// What a run that succeeded printed on standard output (it fails the test otherwise).
pub fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
