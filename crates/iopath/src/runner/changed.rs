//! The test file changed by another process under the run
//! ([`crate::target::watch`]): checked before and after every repetition,
//! whatever its outcome, so that a truncation is never measured as a
//! normal case. Write engines do not notice one (their writes grow the
//! file back, with holes, and exit 0 follows); a read sees a short
//! transfer or SIGBUS, whose error this names the cause of. The case then
//! fails (exit 1) keeping its earlier repetitions, the changed one not
//! booked.

use super::RepError;
use crate::target::watch::Change;
use crate::target::Target;

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
    };
    let detail = match failed {
        Some(e) => format!("the repetition failed: {e}"),
        None if seen == Seen::During => "its results are not kept and the case stops".into(),
        None => "the case stops here".into(),
    };
    format!("another process {what} {when} {name}: {detail}; run on a file nothing else changes")
}

/// The repetition's outcome `rep`, or the error naming the change when
/// another process changed the target during it (a failure's own error
/// kept in it, as its consequence). A refusal stays a refusal.
pub fn after<T>(
    target: Option<&Target>,
    name: &str,
    rep: Result<T, RepError>,
) -> Result<T, RepError> {
    let Some((t, change)) = target.and_then(|t| t.changed().map(|c| (t, c))) else {
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
    let change = t.changed()?;
    Some(RepError::Fail(message(t, change, Seen::Before, name, None)))
}
