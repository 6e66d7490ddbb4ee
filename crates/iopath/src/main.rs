//! Thin entry point: parse, run, map errors to exit codes
//! (0 ok, 1 failed run or a `compare --fail-above` regression, 2 usage,
//! 130 interrupted).

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Result;
use iopath::cli::commands;
use iopath::cli::{Command, RunArgs};
use iopath::model::untrusted::Visible;
use iopath::plan::{Plan, UsageError};
use iopath::report::json;
use iopath::result::mpi::FileLayout;
use iopath::run::progress::Progress;
use iopath::run::ranks::Ranks;
use iopath::run::Runner;
use iopath::{shell_quote_os, Interrupted};

fn main() -> ExitCode {
    let cli = iopath::cli::parse();
    // Only the commands that do I/O catch signals; `compare` and `methods`
    // keep the default actions, so Ctrl-C stops them at once (even while
    // `compare` waits on a pipe).
    let res = match cli.command {
        Some(Command::Compare(a)) => iopath::cli::compare::run(&a.options()),
        Some(Command::Report(a)) => commands::report(&a),
        Some(Command::Presets(a)) => commands::presets(&a),
        Some(Command::Completions { shell }) => write_stdout(&iopath::cli::completions(shell)),
        Some(Command::ImportFio(a)) => {
            commands::import_fio(&a).and_then(|t| write_stdout(t.as_bytes()))
        }
        Some(Command::Man) => iopath::cli::man_page()
            .map_err(anyhow::Error::from)
            .and_then(|b| write_stdout(&b)),
        Some(Command::Record(a)) => iopath::cli::record::record(&a, &stop_on_signals()),
        Some(Command::Trace(a)) => iopath::cli::record::trace(&a),
        Some(Command::Methods) => write_stdout(commands::methods().as_bytes()),
        None => run(&default_run_args(), &stop_on_signals()),
        Some(Command::Run(a)) => run(&a, &stop_on_signals()),
        Some(Command::Probe(a)) => {
            commands::probe(&a, &stop_on_signals()).map(|()| ExitCode::SUCCESS)
        }
    };
    match res {
        Ok(code) => code,
        Err(e) => say(&e),
    }
}

/// Print a failed command's reason on stderr; its exit code.
fn say(e: &anyhow::Error) -> ExitCode {
    if e.is::<Interrupted>() {
        iopath::say!(
            "iopath: interrupted by {}; temporary files removed",
            iopath::stop_cause()
        );
    } else {
        iopath::say!("error: {}", Visible(format_args!("{e:#}")));
    }
    exit_of(e)
}

/// Bytes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(bytes: &[u8]) -> Result<ExitCode> {
    commands::write_stdout(bytes).map(|()| ExitCode::SUCCESS)
}

/// A flag that Ctrl-C, kill, a closed terminal (SIGHUP) and Ctrl-\ all
/// set: workers finish their requests, results so far are kept, the test
/// file is removed.
fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let which = iopath::stop_signal_slot();
    for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
        // Which signal it was, for the messages (set before the flag).
        let said = signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize);
        if let Err(e) = said.and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop))) {
            iopath::say!("warning: cannot handle signal {sig}: {e}");
        }
    }
    stop
}

/// `iopath` alone means `iopath run` with every default, as clap sets them.
fn default_run_args() -> RunArgs {
    match iopath::cli::parse_from(["iopath", "run"]).map(|c| c.command) {
        Ok(Some(Command::Run(a))) => *a,
        _ => unreachable!("`iopath run` parses to the run command"),
    }
}

fn run(args: &RunArgs, stop: &AtomicBool) -> Result<ExitCode> {
    let plan = commands::plan_of(args);
    // Under mpirun: this rank's part of the job (docs/mpi.md).
    let session = match iopath::run::mpi::start(args.layout) {
        Ok(s) => s,
        // The same refusal on every rank (it reads the launcher's
        // environment): the launcher's rank 0 says it.
        Err(e) => return first_says(e.into(), iopath::run::mpi::launcher_rank().unwrap_or(0)),
    };
    let Some(session) = session else {
        let plan = plan?;
        check_outputs(args, &plan)?;
        return run_ranks(args, plan, stop, &Ranks::alone());
    };
    let layout = args.layout.unwrap_or(FileLayout::PerRank);
    // Checked before the ranks talk: every rank finds the same error.
    let plan = plan.and_then(|p| {
        iopath::run::mpi::check_plan(&p, Some(layout))?;
        Ok(p)
    });
    let agreed = AtomicBool::new(false);
    let host = iopath::run::mpi::host_name();
    let ranks = Ranks::new(session.peers(), layout, &host, stop, &agreed);
    // One outcome of the set-up on every rank, said once (by rank 0).
    let ready = ranks
        .agree(plan.map_err(anyhow::Error::from))
        .and_then(|mut plan| {
            ranks.agree_plan(&mut plan)?;
            // Only rank 0 writes outputs: only its paths are checked.
            let checked = if ranks.rank() == 0 {
                check_outputs(args, &plan)
            } else {
                Ok(())
            };
            ranks.agree(checked).map(|()| plan)
        });
    let plan = match ready {
        Ok(p) => p,
        Err(e) => return Ok(said_together(Err(e), &ranks)),
    };
    let res = run_ranks(args, plan, &agreed, &ranks);
    if let (Err(e), false) = (&res, ranks.failed_together()) {
        // Failed here alone (its files are removed by now): the other
        // ranks would wait for this one forever.
        iopath::say!(
            "error: rank {} ({}): {}",
            ranks.rank(),
            Visible(&host),
            Visible(format_args!("{e:#}"))
        );
        session.abort(i32::from(exit_byte(e)));
    }
    Ok(said_together(res, &ranks))
}

/// The end of a rank's run, every rank together: rank 0 speaks for all (a
/// failure agreed by all ranks is said there, naming the rank it came
/// from and its reason), and no rank exits before it has: mpirun ends the
/// job at the first rank that exits with a failure, which could kill rank
/// 0 before it printed why (or its tables).
fn said_together(res: Result<ExitCode>, ranks: &Ranks) -> ExitCode {
    let code = match res {
        Ok(code) => code,
        Err(e) if ranks.rank() == 0 => say(&e),
        Err(e) => exit_of(&e),
    };
    ranks.barrier();
    code
}

/// An error every rank has alike: rank 0 says it, the others only exit
/// with its code.
fn first_says(e: anyhow::Error, rank: usize) -> Result<ExitCode> {
    if rank == 0 {
        Err(e)
    } else {
        Ok(exit_of(&e))
    }
}

/// No report may replace the test file the run reads (or writes), nor the
/// job file it was read from.
fn check_outputs(args: &RunArgs, plan: &Plan) -> Result<()> {
    let file = match &plan.target {
        iopath::plan::TargetSpec::File { path, .. } => Some(path.as_path()),
        iopath::plan::TargetSpec::TempIn(_) => None,
    };
    args.reports.check(args.json.as_deref(), file)?;
    if let Some(job) = &plan.job_file {
        args.reports.check(args.json.as_deref(), Some(job))?;
    }
    Ok(())
}

/// The exit code of a failed run (as `main` maps it).
fn exit_of(e: &anyhow::Error) -> ExitCode {
    ExitCode::from(exit_byte(e))
}

fn exit_byte(e: &anyhow::Error) -> u8 {
    if e.is::<Interrupted>() {
        130
    } else if e.is::<UsageError>() {
        2
    } else {
        1
    }
}

/// Run the plan as this rank (alone: the only one). Ranks other than 0
/// write no file and print nothing; rank 0 writes the one result.
fn run_ranks(args: &RunArgs, plan: Plan, stop: &AtomicBool, ranks: &Ranks) -> Result<ExitCode> {
    let rank0 = ranks.rank() == 0;
    let command = std::env::args_os()
        .map(|a| shell_quote_os(&a))
        .collect::<Vec<_>>()
        .join(" ");
    // The runner's events, in words on stderr (none under --quiet, none
    // from ranks other than 0, but for what it removed of killed runs).
    let quiet = args.quiet || !rank0;
    let say = move |e: &iopath::run::Event<'_>| {
        if !quiet || e.said_when_quiet() {
            iopath::report::text::events::to_stderr(e);
        }
    };
    let runner = Runner {
        plan: &plan,
        command,
        stop,
        progress: Progress::new(quiet, iopath::report::text::progress::WORDS),
        ranks,
        events: iopath::run::Events(&say),
    };
    // `-` and `/dev/stdout` alike: the JSON alone on stdout, the tables on
    // stderr.
    let json_stdout = args
        .json
        .as_ref()
        .is_some_and(|p| iopath::report::is_stdout(p));
    let json_file = args.json.as_ref().filter(|_| !json_stdout && rank0);
    // The runner hands over the result after every round and case; its
    // verdicts and warnings are computed here, above it, before each write.
    let result = runner.run(&mut |r| {
        iopath::report::text::events::word_notes(r);
        iopath::analysis::analyse(r);
        iopath::report::text::word(r);
        match json_file {
            Some(p) => json::write_file(p, r, args.json_format),
            None => Ok(()),
        }
    })?;
    if !rank0 {
        return Ok(rank_exit(&result));
    }
    let mut text = args.reports.terminal().text(&result);
    text.push_str(&iopath::report::mpi::render(&result));
    if json_stdout || args.reports.uses_stdout() {
        if !args.quiet {
            iopath::model::untrusted::to_stderr(Visible(&text));
        }
        if json_stdout {
            json::write_stdout(&result, args.json_format)?;
        }
    } else {
        commands::write_stdout(&text)?;
    }
    // After the table, so a report that cannot be written does not hide
    // the results (the JSON, if asked for, is already saved); an
    // interrupted run still exits 130.
    let reports = args.reports.write(&result);
    if let Err(e) = &reports {
        iopath::say!("error: {}", Visible(format_args!("{e:#}")));
    }
    if result.interrupted {
        say_interrupted(json_file, json_stdout);
        return Ok(ExitCode::from(130));
    }
    Ok(finished_exit(&result, reports.is_ok()))
}

/// Where what an interrupted run measured went: a --json file, stdout,
/// or only the tables printed above.
fn say_interrupted(json_file: Option<&std::path::PathBuf>, json_stdout: bool) {
    let kept = match (json_file, json_stdout) {
        (Some(p), _) => format!("the results so far are in {}", p.display()),
        (None, true) => "the results so far went to stdout (--json)".to_string(),
        (None, false) => {
            "the results so far are printed above (only there: --json FILE keeps them)".to_string()
        }
    };
    iopath::say!(
        "iopath: interrupted by {}; {}; temporary files removed",
        iopath::stop_cause(),
        Visible(kept)
    );
}

/// The exit code of a run that finished: 1 when a case failed, nothing
/// was measured or a report could not be written (`reports_written`
/// false), else 0.
fn finished_exit(result: &iopath::result::RunResult, reports_written: bool) -> ExitCode {
    if result.cases.iter().any(|c| c.error.is_some()) {
        iopath::say!("iopath: some cases failed (see the table)");
        return ExitCode::from(1);
    }
    if let Some(why) = commands::nothing_measured(result) {
        iopath::say!("iopath: {why}");
        return ExitCode::from(1);
    }
    if !reports_written {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The exit code of a rank other than 0: the same as rank 0's, which saw
/// the same agreed result.
fn rank_exit(result: &iopath::result::RunResult) -> ExitCode {
    if result.interrupted {
        ExitCode::from(130)
    } else if result.cases.iter().any(|c| c.error.is_some())
        || commands::nothing_measured(result).is_some()
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
