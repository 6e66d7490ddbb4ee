//! A method as `--methods` names it: the method and, after a `+`, an access
//! hint (`mmap+random`, `buffered+noreuse`). The hint is an option of the
//! method, not a method of its own ([`iopath_io::Hint`]): `--methods
//! mmap,mmap+random` runs mmap with and without `MADV_RANDOM` side by side,
//! and results name the second `mmap+random`.
//!
//! The buffers' backing is an option of the same kind: `direct+hugebuf` is
//! `direct` with transparent huge-page buffers ([`BufferBacking::Huge`],
//! `--buffers huge`), beside plain `direct` with base pages, the default.

use iopath_io::{BufferBacking, Hint, Method};

use super::words::Word;

/// A method, with an access hint or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MethodChoice {
    pub method: Method,
    pub hint: Option<Hint>,
    /// What its I/O buffers are made of (base pages unless asked).
    pub buffers: BufferBacking,
}

/// The suffix that names huge-page buffers: `direct+hugebuf`.
pub const HUGE_BUFFERS: &str = "hugebuf";

impl MethodChoice {
    /// `mmap`, or `mmap+random` with a hint, `direct+hugebuf` with
    /// huge-page buffers.
    pub fn name(&self) -> String {
        let mut name = self.method.name().to_string();
        if let Some(h) = self.hint {
            name = format!("{name}+{h}");
        }
        if self.buffers == BufferBacking::Huge {
            name = format!("{name}+{HUGE_BUFFERS}");
        }
        name
    }

    /// The same choice with `buffers`.
    pub fn with_buffers(self, buffers: BufferBacking) -> MethodChoice {
        MethodChoice { buffers, ..self }
    }
}

/// The options after a method's name (`random`, `hugebuf`, each after a
/// `+`): its hint (the first unknown word is the `Err`) and its buffers.
fn options(words: Option<&str>) -> Result<(Option<Hint>, BufferBacking), String> {
    let mut hint = None;
    let mut buffers = BufferBacking::Pages;
    for w in words.into_iter().flat_map(|w| w.split('+')).map(str::trim) {
        if w == HUGE_BUFFERS && buffers == BufferBacking::Pages {
            buffers = BufferBacking::Huge;
        } else if let Some(h) = Hint::from_name(w).filter(|_| hint.is_none()) {
            hint = Some(h);
        } else {
            return Err(w.to_string());
        }
    }
    Ok((hint, buffers))
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
    let (hint, buffers) = options(h).ok()?;
    Some(MethodChoice {
        method,
        hint,
        buffers,
    })
}

/// The method of a result's method name, its hint left aside
/// ([`parse_result_method`]).
pub fn result_base_method(name: &str) -> Option<Method> {
    parse_result_method(name).map(|c| c.method)
}

impl From<Method> for MethodChoice {
    fn from(method: Method) -> MethodChoice {
        MethodChoice {
            method,
            hint: None,
            buffers: BufferBacking::Pages,
        }
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
        let (hint, buffers) = options(h).map_err(|h| {
            format!(
                "unknown hint '{h}' in '{s}'; valid hints: {} (as in mmap+random), or {HUGE_BUFFERS} (huge-page buffers, as --buffers huge), each once",
                Hint::ALL.map(|h| h.name()).join(", ")
            )
        })?;
        if let Some(hint) = hint {
            hint.call_for(method)
                .map_err(|why| format!("'{s}': {why}"))?;
        }
        Ok(MethodChoice {
            method,
            hint,
            buffers,
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

    /// Issue 28 item 4: huge-page buffers are a variant of a method, named
    /// after it, hinted or not, and read back from a result's name.
    #[test]
    fn huge_buffers_are_an_option_after_a_plus() {
        let c = MethodChoice::parse_word("direct+hugebuf").unwrap();
        assert_eq!((c.method, c.hint), (Method::Direct, None));
        assert_eq!(c.buffers, BufferBacking::Huge);
        assert_eq!(c.name(), "direct+hugebuf");
        let m = MethodChoice::parse_word("mmap+random+hugebuf").unwrap();
        assert_eq!(m.hint, Some(Hint::Random));
        assert_eq!(parse_result_method("mmap+random+hugebuf#2"), Some(m));
        assert_eq!(
            MethodChoice::from(Method::Uring).with_buffers(BufferBacking::Huge),
            parse_result_method("uring+hugebuf").unwrap()
        );
        assert!(MethodChoice::parse_word("direct+hugebuf+hugebuf").is_err());
        assert!(MethodChoice::parse_word("mmap+random+random").is_err());
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
