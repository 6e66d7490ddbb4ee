//! How wide the text written on stdout may be: the terminal's width when
//! stdout is a terminal, else `COLUMNS`, else [`DEFAULT`]. Every renderer
//! that keeps to the terminal (`compare`, the run's one-screen answer)
//! asks [`stdout_width`] once and lays its text out for that many columns;
//! the estimate on stderr keeps to [`stderr_width`].

/// The width when stdout is no terminal and `COLUMNS` is not set: a
/// file, a pipe, a CI log.
pub const DEFAULT: usize = 120;

/// The narrowest width honoured: below it, text is laid out for this many
/// columns (a table of a few columns needs about this much).
pub const MIN: usize = 60;

/// The columns stdout's text should keep to: the terminal's width when
/// stdout is a terminal, else `COLUMNS` when it holds a positive number,
/// else [`DEFAULT`]; never below [`MIN`].
pub fn stdout_width() -> usize {
    let terminal =
        terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0));
    width_from(terminal, std::env::var("COLUMNS").ok().as_deref())
}

/// The columns iopath's wrapped stderr lines (the estimate) keep to: the
/// terminal's width when stderr is a terminal, else `COLUMNS`, else
/// [`DEFAULT`], as [`stdout_width`] does for stdout.
pub fn stderr_width() -> usize {
    let terminal =
        terminal_size::terminal_size_of(std::io::stderr()).map(|(w, _)| usize::from(w.0));
    width_from(terminal, std::env::var("COLUMNS").ok().as_deref())
}

/// [`stdout_width`] from what it reads: the terminal's width (`None`
/// when stdout is not a terminal) and the value of `COLUMNS`.
pub fn width_from(terminal: Option<usize>, columns: Option<&str>) -> usize {
    let columns = columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    terminal
        .filter(|&w| w > 0)
        .or(columns)
        .unwrap_or(DEFAULT)
        .max(MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_comes_first_then_columns_then_the_default() {
        assert_eq!(width_from(Some(80), Some("200")), 80);
        assert_eq!(width_from(None, Some("80")), 80);
        assert_eq!(width_from(None, Some(" 100 ")), 100);
        assert_eq!(width_from(None, None), DEFAULT);
        for bad in ["", "0", "-5", "wide", "80x"] {
            assert_eq!(width_from(None, Some(bad)), DEFAULT, "{bad:?}");
        }
        assert_eq!(width_from(Some(0), None), DEFAULT);
        assert_eq!(width_from(Some(20), None), MIN);
    }
}
