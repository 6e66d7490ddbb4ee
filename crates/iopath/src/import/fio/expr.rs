//! Integer arithmetic in values: fio's `(...)` expressions and the `bc`
//! step fio runs on values that used a keyword. Integers only, with
//! `+ - * /` (truncating) and parentheses; what fio's parsers add beyond
//! that (`%`, `^`, fractions) is refused with a message saying so.

use super::{value, ValueError};

/// Deepest parenthesis nesting accepted (no input can exhaust the stack).
const MAX_DEPTH: usize = 64;

/// What a number in the expression may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Units {
    /// Plain integers, as `bc` reads them.
    None,
    /// Sizes: a unit as in fio's sizes, in bytes.
    Size { kb_base: u32 },
    /// Times: a unit as in fio's times, a plain number is seconds; the
    /// result is in microseconds.
    Time,
}

/// Evaluate `text` entirely.
///
/// As in fio, a time expression with no unit anywhere is in seconds
/// (`(2*30)` is a minute); otherwise each number counts in its own unit and
/// a number without one in microseconds (`(2*500ms)` is a second).
pub(crate) fn eval(text: &str, units: Units) -> Result<i128, ValueError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        units,
        depth: 0,
        unit_seen: false,
    };
    let v = p.sum()?;
    p.blanks();
    if p.i < p.s.len() {
        return Err(p.unexpected());
    }
    if units == Units::Time && !p.unit_seen {
        return v.checked_mul(1_000_000).ok_or(ValueError::Overflow);
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    units: Units,
    depth: usize,
    /// A number carried a unit.
    unit_seen: bool,
}

impl Parser<'_> {
    fn blanks(&mut self) {
        while self.s.get(self.i).is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.blanks();
        self.s.get(self.i).copied()
    }

    fn unexpected(&self) -> ValueError {
        match self.s.get(self.i) {
            None => ValueError::EndsEarly,
            Some(b'%' | b'^') => ValueError::Operator,
            Some(b'.') => ValueError::ExpressionFraction,
            Some(_) => ValueError::Unexpected {
                rest: String::from_utf8_lossy(&self.s[self.i..]).into_owned(),
            },
        }
    }

    fn sum(&mut self) -> Result<i128, ValueError> {
        let mut v = self.product()?;
        loop {
            match self.peek() {
                Some(b'+') => {
                    self.i += 1;
                    v = v.checked_add(self.product()?).ok_or(ValueError::Overflow)?;
                }
                Some(b'-') => {
                    self.i += 1;
                    v = v.checked_sub(self.product()?).ok_or(ValueError::Overflow)?;
                }
                _ => return Ok(v),
            }
        }
    }

    fn product(&mut self) -> Result<i128, ValueError> {
        let mut v = self.unary()?;
        loop {
            match self.peek() {
                Some(b'*') => {
                    self.i += 1;
                    v = v.checked_mul(self.unary()?).ok_or(ValueError::Overflow)?;
                }
                Some(b'/') => {
                    self.i += 1;
                    let d = self.unary()?;
                    if d == 0 {
                        return Err(ValueError::DivisionByZero);
                    }
                    v = v.checked_div(d).ok_or(ValueError::Overflow)?;
                }
                _ => return Ok(v),
            }
        }
    }

    fn unary(&mut self) -> Result<i128, ValueError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ValueError::TooDeep { most: MAX_DEPTH });
        }
        let v = match self.peek() {
            Some(b'-') => {
                self.i += 1;
                self.unary()?.checked_neg().ok_or(ValueError::Overflow)
            }
            Some(b'(') => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err(match self.s.get(self.i) {
                        None => ValueError::Unclosed,
                        Some(_) => self.unexpected(),
                    });
                }
                self.i += 1;
                Ok(v)
            }
            Some(b) if b.is_ascii_digit() => self.number(),
            _ => Err(self.unexpected()),
        };
        self.depth -= 1;
        v
    }

    /// An integer and, where the units allow, the unit right after it.
    fn number(&mut self) -> Result<i128, ValueError> {
        let start = self.i;
        let hex = self.s[self.i..].starts_with(b"0x") || self.s[self.i..].starts_with(b"0X");
        if hex {
            self.i += 2;
        }
        while self
            .s
            .get(self.i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.')
        {
            self.i += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| self.unexpected())?;
        let n = match self.units {
            Units::None => {
                if !word.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(ValueError::NotInteger {
                        word: word.to_string(),
                    });
                }
                word.parse::<i128>().map_err(|_| ValueError::Overflow)?
            }
            Units::Size { kb_base } => i128::from(value::size_number(word, kb_base)?),
            Units::Time => {
                let unit = word.trim_start_matches(|c: char| c.is_ascii_digit());
                if unit.is_empty() {
                    i128::from(value::time_number(word)?) / 1_000_000
                } else {
                    self.unit_seen = true;
                    i128::from(value::time_number(word)?)
                }
            }
        };
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_with_bc_precedence_and_truncation() {
        assert_eq!(eval("2+3*4", Units::None), Ok(14));
        assert_eq!(eval(" (2+3) * 4 ", Units::None), Ok(20));
        assert_eq!(eval("7/2", Units::None), Ok(3));
        assert_eq!(eval("-7/2", Units::None), Ok(-3));
        assert_eq!(eval("10-2-3", Units::None), Ok(5));
        assert_eq!(eval("24105/4", Units::None), Ok(6026));
    }

    #[test]
    fn units_follow_the_kind() {
        let size = Units::Size { kb_base: 1024 };
        assert_eq!(eval("(4k*2)", size), Ok(8192));
        assert_eq!(eval("(1m+4k)", size), Ok(1_052_672));
        assert_eq!(eval("(1m)", Units::Size { kb_base: 1000 }), Ok(1_000_000));
        assert_eq!(eval("(1m+30s)", Units::Time), Ok(90_000_000));
        assert_eq!(eval("(2*500ms)", Units::Time), Ok(1_000_000));
        assert_eq!(
            eval("(2*30)", Units::Time),
            Ok(60_000_000),
            "no unit: seconds"
        );
        assert_eq!(
            eval("(1+30s)", Units::Time),
            Ok(30_000_001),
            "fio: 1 is 1 us here"
        );
        assert_eq!(
            eval("4k", Units::None),
            Err(ValueError::NotInteger { word: "4k".into() })
        );
    }

    #[test]
    fn refusals_say_why() {
        let e = |s| eval(s, Units::None).unwrap_err();
        let rest = |s: &str| ValueError::Unexpected { rest: s.into() };
        assert_eq!(e("1/0"), ValueError::DivisionByZero);
        assert_eq!(e("5%2"), ValueError::Operator);
        assert_eq!(e("2^3"), ValueError::Operator);
        assert_eq!(e("(1+2"), ValueError::Unclosed);
        assert_eq!(e("1+"), ValueError::EndsEarly);
        assert_eq!(e("1 2"), rest("2"));
        assert_eq!(e("/tmp/2"), rest("/tmp/2"));
        assert_eq!(e("1.5*2"), ValueError::NotInteger { word: "1.5".into() });
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(e(&deep), ValueError::TooDeep { most: MAX_DEPTH });
        let big = "99999999999999999999*99999999999999999999*99999999999999999999";
        assert_eq!(e(big), ValueError::Overflow);
    }
}
