//! A method as `--methods` names it: the method and, after a `+`, an access
//! hint (`mmap+random`, `buffered+noreuse`). The hint is an option of the
//! method, not a method of its own ([`iopath_io::Hint`]): `--methods
//! mmap,mmap+random` runs mmap with and without `MADV_RANDOM` side by side,
//! and results name the second `mmap+random`.

use iopath_io::{Hint, Method};

use super::words::Word;

/// A method, with an access hint or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MethodChoice {
    pub method: Method,
    pub hint: Option<Hint>,
}

impl MethodChoice {
    /// `mmap`, or `mmap+random` with a hint.
    pub fn name(&self) -> String {
        match self.hint {
            Some(h) => format!("{}+{h}", self.method),
            None => self.method.name().to_string(),
        }
    }
}

/// A method name as a result records it (`mmap+random`, `direct`; the
/// `#2` of an A/A arm, if any, is ignored), read back into the method and
/// its hint, so that what classifies a result's method (cached, O_DIRECT,
/// fio's engine) looks at the [`Method`] and never at the spelling. None
/// for a name this version does not know. No check of the command line
/// here: a result may come from a build with other methods compiled in.
pub fn parse_result_method(name: &str) -> Option<MethodChoice> {
    let name = name.split_once('#').map_or(name, |(m, _)| m).trim();
    let (m, h) = match name.split_once('+') {
        Some((m, h)) => (m, Some(h)),
        None => (name, None),
    };
    let method = Method::from_name(m.trim())?;
    let hint = match h {
        Some(h) => Some(Hint::from_name(h.trim())?),
        None => None,
    };
    Some(MethodChoice { method, hint })
}

/// The method of a result's method name, its hint left aside
/// ([`parse_result_method`]).
pub fn result_base_method(name: &str) -> Option<Method> {
    parse_result_method(name).map(|c| c.method)
}

impl From<Method> for MethodChoice {
    fn from(method: Method) -> MethodChoice {
        MethodChoice { method, hint: None }
    }
}

impl Word for MethodChoice {
    fn parse_word(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (m, h) = match s.split_once('+') {
            Some((m, h)) => (m, Some(h)),
            None => (s, None),
        };
        let method = Method::parse_word(m)?;
        // A method this build leaves out is a mistake of the command, not
        // a method to skip: say how to build it in.
        if let Some(how) = method.not_compiled_in() {
            return Err(format!("'{s}': {how}"));
        }
        let Some(h) = h else {
            return Ok(method.into());
        };
        let Some(hint) = Hint::from_name(h.trim()) else {
            return Err(format!(
                "unknown hint '{h}' in '{s}'; valid hints: {} (as in mmap+random)",
                Hint::ALL.map(|h| h.name()).join(", ")
            ));
        };
        hint.call_for(method)
            .map_err(|why| format!("'{s}': {why}"))?;
        Ok(MethodChoice {
            method,
            hint: Some(hint),
        })
    }

    fn word(&self) -> String {
        self.name()
    }

    fn names() -> Vec<String> {
        Method::names()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_follows_the_method_after_a_plus() {
        let c = MethodChoice::parse_word("mmap+random").unwrap();
        assert_eq!((c.method, c.hint), (Method::Mmap, Some(Hint::Random)));
        assert_eq!(c.word(), "mmap+random");
        let b = MethodChoice::parse_word("buffered+noreuse").unwrap();
        assert_eq!(b.hint, Some(Hint::Noreuse));
        assert_eq!(
            MethodChoice::parse_word("direct").unwrap(),
            Method::Direct.into()
        );
    }

    #[test]
    fn a_result_method_name_reads_back_into_method_and_hint() {
        let c = parse_result_method("mmap+random").unwrap();
        assert_eq!((c.method, c.hint), (Method::Mmap, Some(Hint::Random)));
        let c = parse_result_method("buffered+noreuse#2").unwrap();
        assert_eq!((c.method, c.hint), (Method::Buffered, Some(Hint::Noreuse)));
        assert_eq!(
            result_base_method("uring-dontcache"),
            Some(Method::UringDontcache)
        );
        // tokio reads back whether or not this build has it.
        assert_eq!(result_base_method("tokio+random"), Some(Method::Tokio));
        assert_eq!(parse_result_method("mmap+fast"), None);
        assert_eq!(parse_result_method("fast"), None);
    }

    #[test]
    fn a_method_left_out_of_the_build_says_how_to_get_it() {
        match MethodChoice::parse_word("tokio") {
            Ok(c) => assert!(Method::Tokio.compiled_in() && c.method == Method::Tokio),
            Err(e) => {
                assert!(!Method::Tokio.compiled_in());
                assert!(
                    e.contains(
                        "built without the tokio feature: cargo build --release --features tokio"
                    ),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn a_hint_that_means_nothing_for_the_method_is_refused_with_why() {
        let e = MethodChoice::parse_word("direct+random").unwrap_err();
        assert!(e.contains("O_DIRECT"), "{e}");
        let e = MethodChoice::parse_word("buffered+populate").unwrap_err();
        assert!(e.contains("mmap+populate"), "{e}");
        let e = MethodChoice::parse_word("mmap+noreuse").unwrap_err();
        assert!(e.contains("buffered+noreuse"), "{e}");
        // Review of issue 17: under DAX there is no page cache either.
        for h in ["random", "sequential", "willneed"] {
            let e = MethodChoice::parse_word(&format!("mmap-dax+{h}")).unwrap_err();
            assert!(e.contains("no page cache"), "{e}");
        }
        assert!(MethodChoice::parse_word("mmap-dax+populate").is_ok());
        let e = MethodChoice::parse_word("mmap+fast").unwrap_err();
        assert!(e.contains("unknown hint 'fast'"), "{e}");
        assert!(e.contains("willneed"), "{e}");
    }
}
