//! A fio job's `size=` against an existing file the run uses (the job's
//! `filename=`, or `--file`). fio lays a smaller regular file out again
//! at `size=` before it runs, reads included, replacing its contents
//! (`filesetup.c`: `extend_file` unlinks it and writes it anew), and uses
//! the first `size=` bytes of a larger one. iopath never rewrites a file it
//! did not create: a smaller file is refused with what to do, where it was
//! once used whole without a word; a larger one gives the job its first
//! `size=` bytes, as fio does.

use std::path::Path;

use crate::model::units::fmt_bytes;
use crate::model::UsageError;

/// The size the run uses of `file` for the job file `job` whose `size=`
/// (the largest job's bytes) is `size`: `size` for an existing regular file
/// at least that large; `None` (the file's own) without `size=`, for a
/// file that does not exist yet (iopath makes it `size`: the caller keeps
/// that) or for a device. A regular file smaller than `size` is refused.
pub fn size_of_existing(
    job: &Path,
    size: Option<u64>,
    file: Option<&Path>,
) -> Result<Option<u64>, UsageError> {
    let (Some(size), Some(file)) = (size, file) else {
        return Ok(None);
    };
    let Some(len) = std::fs::metadata(file)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
    else {
        return Ok(None);
    };
    if len < size {
        return Err(UsageError(format!(
            "{}: size= asks for {} but {} holds {}: fio would lay the file out again at {} (replacing its contents, even to read it), and iopath never rewrites a file it did not create. Make the file at least {}, leave size= out (or give --size {}) to use what it holds, or name a file that does not exist (iopath makes it and removes it after)",
            job.display(),
            fmt_bytes(size),
            file.display(),
            fmt_bytes(len),
            fmt_bytes(size),
            fmt_bytes(size),
            len
        )));
    }
    Ok(Some(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_smaller_than_the_jobs_size_is_refused_a_larger_one_gives_its_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("small.dat");
        std::fs::write(&f, vec![7u8; 4096]).unwrap();
        let job = Path::new("j.fio");
        let e = size_of_existing(job, Some(8192), Some(&f)).unwrap_err();
        assert!(e.0.contains("small.dat") && e.0.contains("size="), "{e:?}");
        assert_eq!(
            size_of_existing(job, Some(4096), Some(&f)).unwrap(),
            Some(4096)
        );
        assert_eq!(
            size_of_existing(job, Some(1024), Some(&f)).unwrap(),
            Some(1024)
        );
        // No size=, or no file yet: nothing to say here.
        assert_eq!(size_of_existing(job, None, Some(&f)).unwrap(), None);
        let new = dir.path().join("new.dat");
        assert_eq!(size_of_existing(job, Some(8192), Some(&new)).unwrap(), None);
        // The file is as it was.
        assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 4096]);
    }
}
