//! The test file changed by another process under the run
//! ([`crate::run::target::watch`]): checked before and after every repetition,
//! whatever its outcome, so that a truncation is never measured as a
//! normal case. Write engines do not notice one (their writes grow the
//! file back, with holes, and exit 0 follows); a read sees a short
//! transfer or SIGBUS, whose error this names the cause of. The case then
//! fails (exit 1) keeping its earlier repetitions, the changed one not
//! booked.

use std::thread::ScopedJoinHandle;
use std::time::Duration;

use super::RepError;
use crate::plan::Case;
use crate::run::target::watch::{Change, Sees};
use crate::run::target::Target;

/// When the change was seen, relative to the repetition of `case`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Before,
    During,
}

/// The error of a repetition of `case` (`name`, as the progress line says
/// it) that `change` spoils: the file, what it was and is, who did it, and
/// (`failed`) the error the repetition met because of it, if any.
pub fn message(
    target: &Target,
    change: Change,
    seen: Seen,
    name: &str,
    failed: Option<&str>,
) -> String {
    let f = target.info.path.display();
    let when = match seen {
        Seen::Before => "before a repetition of",
        Seen::During => "during",
    };
    let what = match change {
        Change::Length { was, now } if now < was => {
            format!("truncated {f} from {was} to {now} bytes")
        }
        Change::Length { was, now } => format!("extended {f} from {was} to {now} bytes"),
        Change::Replaced => format!(
            "replaced {f} (its name leads to another file now; iopath went on with the one it opened)"
        ),
        Change::Removed => format!("removed {f} (iopath went on with the file it opened)"),
        Change::Holes { len, allocated } => format!(
            "cut {f} and grew it back (fully allocated before, it has {allocated} of its {len} bytes allocated now: holes where its data was)"
        ),
        Change::Status => format!(
            "changed {f} (its ctime moved while iopath did not write it: truncated and grown back, written, or its attributes changed)"
        ),
    };
    let detail = match failed {
        Some(e) => format!("the repetition failed: {e}"),
        None if seen == Seen::During => "its results are not kept and the case stops".into(),
        None => "the case stops here".into(),
    };
    format!("another process {what} {when} {name}: {detail}; run on a file nothing else changes")
}

/// The repetition's outcome `rep`, or the error naming the change when
/// another process changed the target during it: the first `seen` while it
/// ran (writes may have grown the file back since), else what the file
/// shows now. A failure's own error is kept in it, as its consequence; a
/// refusal stays a refusal.
pub fn after<T>(
    target: Option<&Target>,
    seen: Option<Change>,
    name: &str,
    sees: Sees,
    rep: Result<T, RepError>,
) -> Result<T, RepError> {
    let Some(t) = target else { return rep };
    let Some(change) = seen.or_else(|| t.changed(sees)) else {
        return rep;
    };
    match rep {
        Ok(_) => Err(RepError::Fail(message(t, change, Seen::During, name, None))),
        Err(RepError::Fail(e)) => Err(RepError::Fail(message(
            t,
            change,
            Seen::During,
            name,
            Some(&e),
        ))),
        skipped @ Err(RepError::Skip(_)) => skipped,
    }
}

/// The error for a repetition of `name` not to start, when another process
/// changed the target since the last check.
pub fn before(target: Option<&Target>, name: &str) -> Option<RepError> {
    let t = target?;
    let change = t.changed(Sees::ALL)?;
    Some(RepError::Fail(message(t, change, Seen::Before, name, None)))
}

/// What [`watch`] looks for while the engines run: a file cut, replaced or
/// removed. Not a longer one: an engine may extend the file for a moment
/// (ucache writes its short last page back rounded up, then cuts the file
/// back), so growth is only judged before and after a repetition.
pub fn while_running(target: Option<&Target>, sees: Sees) -> Option<Change> {
    target
        .and_then(|t| t.changed(sees))
        .filter(|c| !matches!(c, Change::Length { was, now } if now > was))
}

/// What a check during or after a repetition of `case` may compare: not
/// the ctime when it writes the file (its own writes move it), not the
/// allocation when it writes compressible `data`. A copy only reads the
/// test file.
pub fn sees(case: &Case, data: iopath_io::data::DataMode) -> Sees {
    let writes = case.writes();
    Sees {
        ctime: !writes,
        blocks: !writes || data == iopath_io::data::DataMode::Random,
    }
}

/// How often the runner checks the file while a repetition runs: an
/// `fstat` and a `stat` 100 times a second, on the runner's own thread
/// (whose CPU is no case's), nothing in the workers' loop.
const WATCH_EVERY: Duration = Duration::from_millis(10);

/// Held by a worker thread: wakes the runner's thread when it ends, by
/// whatever way, so that [`watch`] returns without waiting out a period.
#[derive(Debug)]
pub struct Wake<'a>(pub &'a std::thread::Thread);

impl Drop for Wake<'_> {
    fn drop(&mut self) {
        self.0.unpark();
    }
}

/// Until every thread of `handles` has ended, `check` the file every
/// [`WATCH_EVERY`] (and when a worker ends): the first change it saw. A
/// truncation that the writes after it undo (they grow the file back to
/// its length) is seen when it lasts a period, or until the end.
pub fn watch<T>(
    handles: &[ScopedJoinHandle<'_, T>],
    mut check: impl FnMut() -> Option<Change>,
) -> Option<Change> {
    let mut seen = None;
    loop {
        if seen.is_none() {
            seen = check();
        }
        if handles.iter().all(ScopedJoinHandle::is_finished) {
            return seen;
        }
        std::thread::park_timeout(WATCH_EVERY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// The first change seen while the workers run is kept, though the
    /// file may show nothing by the time they end (writes grew it back):
    /// the third check sees a truncation, and the workers end only after
    /// it; the checks before it saw nothing.
    #[test]
    fn a_change_seen_while_the_workers_run_is_kept_when_undone() {
        let checks = AtomicU32::new(0);
        let runner = std::thread::current();
        let cut = Change::Length { was: 4096, now: 0 };
        let seen = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let (checks, runner) = (&checks, &runner);
                    s.spawn(move || {
                        let _wake = Wake(runner);
                        while checks.load(Ordering::SeqCst) < 3 {
                            std::thread::yield_now();
                        }
                    })
                })
                .collect();
            let seen = watch(&handles, || {
                let n = checks.fetch_add(1, Ordering::SeqCst) + 1;
                (n == 3).then_some(cut)
            });
            assert!(handles.iter().all(ScopedJoinHandle::is_finished));
            seen
        });
        assert_eq!(seen, Some(cut));
        assert_eq!(checks.load(Ordering::SeqCst), 3, "no check once one saw it");
    }
}
