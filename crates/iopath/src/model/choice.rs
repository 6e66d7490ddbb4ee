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
        let e = MethodChoice::parse_word("mmap+fast").unwrap_err();
        assert!(e.contains("unknown hint 'fast'"), "{e}");
        assert!(e.contains("willneed"), "{e}");
    }
}
