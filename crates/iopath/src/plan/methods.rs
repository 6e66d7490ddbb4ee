//! The methods a run compares when the job names none.

use iopath_io::Method;

use super::Pattern;
use crate::model::choice::MethodChoice;

/// The methods a run without `--methods` compares on `pattern`: the
/// default ones ([`Method::in_default_run`]); on random patterns `mmap`
/// with `MADV_RANDOM` beside plain `mmap` (read-ahead is what makes mapped
/// random reads slow, and the hint is the usual cure); for the copy
/// pattern the methods that copy.
pub(super) fn default_methods(pattern: Pattern) -> Vec<MethodChoice> {
    let mut out = Vec::new();
    for m in Method::ALL {
        if pattern == Pattern::Copy {
            if crate::model::copy_method(m).is_some() {
                out.push(m.into());
            }
            continue;
        }
        if !m.in_default_run() {
            continue;
        }
        out.push(m.into());
        if m == Method::Mmap && pattern.is_random() {
            out.push(MethodChoice {
                hint: Some(iopath_io::Hint::Random),
                ..m.into()
            });
        }
    }
    out
}

/// `--methods`'s default in words, made from the lists the plan uses
/// ([`default_methods`]), so that `run --help` and the README (whose
/// `--methods` row a test holds to it) cannot drift from the code.
pub fn default_methods_text() -> String {
    let names = |ms: Vec<MethodChoice>| {
        ms.iter()
            .map(MethodChoice::name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let read = default_methods(Pattern::Read);
    let random_too: Vec<MethodChoice> = default_methods(Pattern::RandRead)
        .into_iter()
        .filter(|m| !read.contains(m))
        .collect();
    let opt_in: Vec<MethodChoice> = Method::ALL
        .into_iter()
        .filter(|m| !m.in_default_run() && !m.copy_only())
        .map(MethodChoice::from)
        .collect();
    format!(
        "{}; on random patterns {} too; the copy pattern: {}. Opt-in (run only when named): {}",
        names(read),
        names(random_too),
        names(default_methods(Pattern::Copy)),
        names(opt_in)
    )
}
