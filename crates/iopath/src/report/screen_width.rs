//! How wide the terminal report may be: the terminal's width when stdout
//! is one, else `COLUMNS`, else [`DEFAULT`].

use std::io::IsTerminal;

/// The width when neither stdout nor `COLUMNS` says one.
pub const DEFAULT: usize = 120;

/// Narrower than this, a table cannot keep its figures on one line: the
/// report is laid out for this width and the terminal wraps it.
pub const NARROWEST: usize = 60;

/// The width the report keeps to, read from this process's stdout and
/// environment ([`choose`]).
pub fn detect() -> usize {
    let out = std::io::stdout();
    let tty = out
        .is_terminal()
        .then(|| rustix::termios::tcgetwinsize(&out).ok())
        .flatten()
        .map(|w| usize::from(w.ws_col));
    choose(tty, std::env::var("COLUMNS").ok().as_deref())
}

/// The width from what was found: the terminal's (`tty`, 0 when it does
/// not know), else `columns` (the `COLUMNS` variable) when it is a number,
/// else [`DEFAULT`]; never below [`NARROWEST`].
pub fn choose(tty: Option<usize>, columns: Option<&str>) -> usize {
    tty.filter(|&w| w > 0)
        .or_else(|| columns.and_then(|c| c.trim().parse::<usize>().ok()))
        .filter(|&w| w > 0)
        .unwrap_or(DEFAULT)
        .max(NARROWEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_comes_first_then_columns_then_the_default() {
        assert_eq!(choose(Some(80), Some("200")), 80);
        assert_eq!(choose(None, Some("80")), 80);
        assert_eq!(choose(Some(0), Some(" 100 ")), 100);
        assert_eq!(choose(None, Some("wide")), DEFAULT);
        assert_eq!(choose(None, Some("0")), DEFAULT);
        assert_eq!(choose(None, None), DEFAULT);
        assert_eq!(choose(None, Some("20")), NARROWEST);
    }
}
