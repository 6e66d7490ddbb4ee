//! `iopath compare`: compare the files, print the comparison (text kept to
//! the terminal's width, or `--json`), explain the exit code on stderr.

use std::io::Write;
use std::process::ExitCode;

use crate::analysis::compare::{compare_files, gate, Options};
use crate::model::untrusted;
use crate::report::{compare, text, width};

/// Write `s` on stdout; a reader that went away (`| head`) is not an error.
fn print_stdout(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `iopath compare`: 0, or 1 when `--fail-above` finds a regression, or 3
/// when it finds a slowdown beyond the limit that the data cannot
/// confirm; bad input is a `UsageError` (exit 2).
pub fn run(args: &Options) -> anyhow::Result<ExitCode> {
    let report = compare_files(args)?;
    if args.json {
        print_stdout(&untrusted::json_escaped(compare::to_json(&report)?))?;
    } else {
        let shown = untrusted::one_line(&report);
        let text = compare::render(&shown, width::stdout_width());
        print_stdout(&untrusted::visible(&text))?;
    }
    let gate = gate(&report);
    // The names and labels these lines quote come from the results and
    // paths compared, so their control characters are shown, not sent.
    for line in text::compare::gate_lines(&report, &gate) {
        crate::say!("{}", untrusted::visible(&line));
    }
    Ok(ExitCode::from(gate.exit_code()))
}
