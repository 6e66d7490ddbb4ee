//! Reading the inputs of `iopath compare`: result files (any schema this
//! build reads: 1, 2, 3), and which of the files are A's and which B's.

use std::path::{Path, PathBuf};

use crate::plan::UsageError;
use crate::result::{RunResult, SCHEMA_VERSION};

/// What to do with a file that cannot be compared.
const GIVE_A_RESULT: &str = "give a file written by `iopath run --json FILE`";

/// Read and check one result file; every failure is a [`UsageError`] that
/// names the file and says what to do.
pub fn load(path: &Path) -> Result<RunResult, UsageError> {
    let what = format!("{} is", path.display());
    let bytes = crate::model::limits::RESULT_FILE
        .read(path, &what, "report or compare a smaller run")
        .map_err(|e| {
            UsageError(format!(
                "cannot read {}: {e}; {GIVE_A_RESULT}",
                path.display()
            ))
        })??;
    parse(&bytes, &path.display().to_string())
}

/// What a result says of itself before the rest is read.
#[derive(serde::Deserialize)]
struct Header {
    tool: Option<HeaderTool>,
    schema_version: Option<u64>,
}

#[derive(serde::Deserialize)]
struct HeaderTool {
    name: Option<String>,
    version: Option<String>,
}

/// [`load`] on bytes already read; `shown` names the file in messages.
/// Read twice (the header, then the whole), never into a tree of
/// `serde_json::Value`s: the result alone is held beside the bytes.
pub fn parse(bytes: &[u8], shown: &str) -> Result<RunResult, UsageError> {
    let h: Header = serde_json::from_slice(bytes).map_err(|e| {
        UsageError(if e.is_data() {
            format!(
                "{shown} is not an iopath result (no \"tool\": {{\"name\": \"iopath\"}} and \"schema_version\"); {GIVE_A_RESULT}"
            )
        } else {
            format!("{shown} is not JSON ({e}); {GIVE_A_RESULT}")
        })
    })?;
    let tool = h.tool.as_ref().and_then(|t| t.name.as_deref());
    let (Some("iopath"), Some(version)) = (tool, h.schema_version) else {
        return Err(UsageError(format!(
            "{shown} is not an iopath result (no \"tool\": {{\"name\": \"iopath\"}} and \"schema_version\"); {GIVE_A_RESULT}"
        )));
    };
    if version > u64::from(SCHEMA_VERSION) {
        return Err(UsageError(format!(
            "{shown} has result schema version {version}, newer than this iopath reads ({SCHEMA_VERSION}): read it with the iopath version that wrote it ({}) or a newer one",
            h.tool.as_ref().and_then(|t| t.version.as_deref()).unwrap_or("unknown")
        )));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        UsageError(format!(
            "{shown} is not a complete iopath result of schema version {version} ({e}); {GIVE_A_RESULT}"
        ))
    })
}

/// A's files and B's: `A.json B.json`, or `A1.json A2.json -- B1.json
/// B2.json` (`before` the `--`, `after` it).
pub fn sides(
    before: &[PathBuf],
    after: &[PathBuf],
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), UsageError> {
    if let Some(opt) = after
        .iter()
        .find(|p| p.to_str().is_some_and(|s| s.starts_with("--")))
    {
        return Err(UsageError(format!(
            "{} comes after `--`, where every argument is one of B's files: put the options before the `--` (`iopath compare --fail-above 5 A1.json A2.json -- B1.json B2.json`)",
            opt.display()
        )));
    }
    if !after.is_empty() {
        return Ok((before.to_vec(), after.to_vec()));
    }
    match before {
        [a, b] => Ok((vec![a.clone()], vec![b.clone()])),
        [_] => Err(UsageError(
            "compare needs a result for each side: `iopath compare A.json B.json`, or several runs a side separated by `--` (`iopath compare A1.json A2.json -- B1.json B2.json`)".into(),
        )),
        _ => Err(UsageError(format!(
            "{} files and no `--`: put `--` between A's runs and B's runs (`iopath compare A1.json A2.json -- B1.json B2.json`)",
            before.len()
        ))),
    }
}

/// The display names of the two sides: the file name, or the path as given
/// when the two first file names are the same; with several runs, `+ N
/// more`.
pub(super) fn default_names(a: &[PathBuf], b: &[PathBuf]) -> (String, String) {
    let file = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        )
    };
    let (fa, fb) = (file(&a[0]), file(&b[0]));
    let (fa, fb) = if fa == fb {
        (a[0].display().to_string(), b[0].display().to_string())
    } else {
        (fa, fb)
    };
    let more = |s: String, n: usize| {
        if n > 1 {
            format!("{s} + {} more", n - 1)
        } else {
            s
        }
    };
    (more(fa, a.len()), more(fb, b.len()))
}
