//! A small, strict command-line flag parser: `--flag value`, `--flag=value`, boolean
//! switches, no abbreviations, no repeats. Every problem is a [`UsageError`] whose one-line
//! message names the flag.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// A usage error: the message is one line and names the offending flag; exit status 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl core::fmt::Display for UsageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Flags of one subcommand, parsed: values by flag name (without the leading `--`).
#[derive(Debug, Default, Clone)]
pub struct Flags {
    values: Vec<(String, String)>,
    switches: Vec<String>,
    /// `--help` or `--help-all` was given.
    pub help: bool,
    /// `--help-all` was given: the full text (every flag, the formulas, the JSON keys).
    pub help_all: bool,
}

/// How a subcommand declares a flag.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Flag name without `--`.
    pub name: &'static str,
    /// `true` if the flag takes a value; `false` for a switch such as `--json`.
    pub takes_value: bool,
    /// `true` if the flag may be given several times (values kept in order, see
    /// [`Flags::all`]); only with `takes_value`.
    pub repeatable: bool,
}

/// A flag that takes a value (`--name VALUE` or `--name=VALUE`).
pub const fn value(name: &'static str) -> Spec {
    Spec {
        name,
        takes_value: true,
        repeatable: false,
    }
}

/// A flag that takes a value and may be repeated (`--phase A --phase B`).
pub const fn repeated(name: &'static str) -> Spec {
    Spec {
        name,
        takes_value: true,
        repeatable: true,
    }
}

/// A switch (`--name`, no value).
pub const fn switch(name: &'static str) -> Spec {
    Spec {
        name,
        takes_value: false,
        repeatable: false,
    }
}

/// Parse `args` (everything after the subcommand) against `specs`.
///
/// # Errors
/// Unknown flags, missing values, repeated flags, stray positional arguments.
pub fn parse(args: &[String], specs: &[Spec]) -> Result<Flags, UsageError> {
    let mut flags = Flags::default();
    // Help wins wherever it stands (issue 43): `bound --run run.json --help` prints the help,
    // not a complaint about a flag that the help explains. `--help-all`: the full text.
    if args
        .iter()
        .any(|a| a == "--help" || a == "-h" || a == "--help-all")
    {
        flags.help = true;
        flags.help_all = args.iter().any(|a| a == "--help-all");
        return Ok(flags);
    }
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(body) = arg.strip_prefix("--") else {
            return Err(UsageError(format!(
                "unexpected argument '{}'",
                printable(arg)
            )));
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(spec) = specs.iter().find(|s| s.name == name) else {
            return Err(UsageError(unknown_flag(name, specs)));
        };
        if flags.has(name) && !spec.repeatable {
            return Err(UsageError(format!("flag '--{name}' given more than once")));
        }
        if spec.takes_value {
            let value = match inline {
                Some(v) => v,
                None => {
                    // A following flag is never a value: `--noise-multiplier --steps 3`
                    // names the flag whose value is missing, not a stray '3'.
                    let Some(v) = args.get(i).filter(|v| !v.starts_with("--")) else {
                        return Err(UsageError(format!("flag '--{name}' needs a value")));
                    };
                    i += 1;
                    v.clone()
                }
            };
            flags.values.push((name.to_string(), value));
        } else {
            if inline.is_some() {
                return Err(UsageError(format!("flag '--{name}' takes no value")));
            }
            flags.switches.push(name.to_string());
        }
    }
    Ok(flags)
}

/// The message for a flag the command does not take: the flag, the closest it takes (by
/// edit distance ≤ 2, or a flag it begins) and every flag it takes, in declaration order
/// (issue 43: the parser is the one source the synopsis and the help are tested against).
fn unknown_flag(name: &str, specs: &[Spec]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for s in specs {
        if !names.contains(&s.name) {
            names.push(s.name);
        }
    }
    let close = names
        .iter()
        .map(|n| (edit_distance(name, n), *n))
        .filter(|&(d, n)| d <= 2 || (name.len() >= 3 && n.starts_with(name)))
        .min_by_key(|&(d, _)| d);
    let hint = match close {
        Some((_, n)) => format!(" (did you mean '--{n}'?)"),
        None => String::new(),
    };
    let list = names
        .iter()
        .map(|n| format!("--{n}"))
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "unknown flag '--{}'{hint}; this command takes: {list}",
        printable(name)
    )
}

/// Levenshtein distance, capped work: names are short, and a name longer than 64 bytes is
/// never close.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, &y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Keep error messages on one line and bounded in length.
pub(crate) fn printable(s: &str) -> String {
    let mut out = shown_chars(s, 64);
    if s.chars().count() > 64 {
        out.push('…');
    }
    out
}

/// The first `n` characters of `s` as a message shows them: a control character escaped
/// (`\u{0}`), never dropped — a score "0.<NUL>9" is shown as `0.\u{0}9`, not as the
/// finite-looking `0.9` (issue 43) — nor written raw to a terminal.
pub(crate) fn shown_chars(s: &str, n: usize) -> String {
    let mut out = String::new();
    for c in s.chars().take(n) {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// The last line of every short `--help` (issue 43): where the rest is.
pub fn help_all_line(command: &str) -> String {
    format!("reconbound {command} --help-all: every flag, the formulas, the JSON keys\n")
}

/// The help of `command` (issue 43: help in two lengths): `full` with `--help-all`; with
/// `--help`, `short` — at most 40 lines, the common flags and one example — then a blank
/// line and [`help_all_line`].
pub fn help_text(help_all: bool, command: &str, short: &str, full: String) -> String {
    if help_all {
        full
    } else {
        format!("{short}\n{}", help_all_line(command))
    }
}

impl Flags {
    /// The text `--help` / `--help-all` prints: see [`help_text`].
    pub fn help_text(&self, command: &str, short: &str, full: String) -> String {
        help_text(self.help_all, command, short, full)
    }

    /// Was `name` given (as a value flag or a switch)?
    pub fn has(&self, name: &str) -> bool {
        self.values.iter().any(|(n, _)| n == name) || self.switches.iter().any(|n| n == name)
    }

    /// Every value of a repeatable flag `name`, in the order given (empty if absent).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.values
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The raw value of `name`, if given.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `name` as a real number, if given. `inf`/`nan` parse, so the library's validation
    /// produces the range message.
    ///
    /// # Errors
    /// The value is not a number.
    pub fn f64(&self, name: &str) -> Result<Option<f64>, UsageError> {
        match self.raw(name) {
            None => Ok(None),
            Some(v) => v.trim().parse::<f64>().map(Some).map_err(|_| {
                UsageError(format!(
                    "flag '--{name}': '{}' is not a number",
                    printable(v)
                ))
            }),
        }
    }

    /// `name` as a real number, required.
    ///
    /// # Errors
    /// Missing or not a number.
    pub fn f64_required(&self, name: &str) -> Result<f64, UsageError> {
        self.f64(name)?
            .ok_or_else(|| UsageError(format!("flag '--{name}' is required")))
    }

    /// `name` as a non-negative integer, if given. Accepts `1e6`-style values when they
    /// denote an integer exactly (decided on the decimal digits, not on a rounded `f64`:
    /// `1e-400` and `1.0000000000000000001` are not integers).
    ///
    /// # Errors
    /// Not a non-negative integer that fits in u64.
    pub fn u64(&self, name: &str) -> Result<Option<u64>, UsageError> {
        let Some(v) = self.raw(name) else {
            return Ok(None);
        };
        let v = v.trim();
        reconbound::text::exact_u64(v).map(Some).ok_or_else(|| {
            // 2^64: a number at or above it is an integer too large for any count
            let too_large = v.parse::<f64>().is_ok_and(|x| x >= 18_446_744_073_709_551_616.0);
            UsageError(if too_large {
                format!(
                    "flag '--{name}': '{}' is too large (integers here are at most 2^64 − 1; see --help for this flag's range)",
                    printable(v)
                )
            } else {
                format!(
                    "flag '--{name}': '{}' is not a non-negative integer",
                    printable(v)
                )
            })
        })
    }

    /// `name` as a comma-separated list of reals, if given.
    ///
    /// # Errors
    /// Empty list or an entry that is not a number.
    pub fn f64_list(&self, name: &str) -> Result<Option<Vec<f64>>, UsageError> {
        let Some(v) = self.raw(name) else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for part in v.split(',') {
            let p = part.trim();
            let x = p.parse::<f64>().map_err(|_| {
                UsageError(format!(
                    "flag '--{name}': '{}' is not a number",
                    printable(p)
                ))
            })?;
            out.push(x);
        }
        if out.is_empty() {
            return Err(UsageError(format!(
                "flag '--{name}' needs at least one value"
            )));
        }
        Ok(Some(out))
    }

    /// Error unless exactly one of the groups is given (each group: flags that go together).
    ///
    /// # Errors
    /// Two alternatives given at once.
    pub fn exclusive(&self, a: &str, b: &str) -> Result<(), UsageError> {
        if self.has(a) && self.has(b) {
            return Err(UsageError(format!(
                "flags '--{a}' and '--{b}' exclude each other"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 43: an unknown flag's message names the closest flag taken (edit distance ≤ 2
    /// or a flag it begins) and lists every flag the command takes, in order, on one line.
    #[test]
    fn unknown_flag_names_the_closest_and_lists_every_flag() {
        let e = parse(&["--step".to_string(), "3".to_string()], SPECS).unwrap_err();
        assert!(
            e.0.starts_with("unknown flag '--step' (did you mean '--steps'?)"),
            "{e}"
        );
        assert!(
            e.0.ends_with("this command takes: --steps --orders --json"),
            "{e}"
        );
        let e = parse(&["--zzz".to_string()], SPECS).unwrap_err();
        assert!(
            e.0.starts_with("unknown flag '--zzz'; this command takes: --steps"),
            "{e}"
        );
        assert!(!e.0.contains('\n'), "{e}");
        assert_eq!(edit_distance("orders", "odrers"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance(&"x".repeat(65), "x"), usize::MAX);
    }

    const SPECS: &[Spec] = &[
        Spec {
            name: "steps",
            takes_value: true,
            repeatable: false,
        },
        Spec {
            name: "orders",
            takes_value: true,
            repeatable: false,
        },
        Spec {
            name: "json",
            takes_value: false,
            repeatable: false,
        },
    ];

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_values_switches_and_equals_form() {
        let f = parse(
            &strings(&["--steps", "10", "--json", "--orders=2,3.5"]),
            SPECS,
        )
        .unwrap();
        assert_eq!(f.u64("steps").unwrap(), Some(10));
        assert!(f.has("json"));
        assert_eq!(f.f64_list("orders").unwrap(), Some(vec![2.0, 3.5]));
    }

    #[test]
    fn usage_errors_name_the_flag() {
        let e = parse(&strings(&["--stepz", "1"]), SPECS).unwrap_err();
        assert!(e.0.contains("--stepz"), "{e}");
        let e = parse(&strings(&["--steps"]), SPECS).unwrap_err();
        assert!(e.0.contains("--steps"), "{e}");
        let e = parse(&strings(&["--steps", "1", "--steps", "2"]), SPECS).unwrap_err();
        assert!(e.0.contains("more than once"), "{e}");
        let f = parse(&strings(&["--steps", "-3"]), SPECS).unwrap();
        assert!(f.u64("steps").unwrap_err().0.contains("--steps"));
        let f = parse(&strings(&["--steps", "1e3"]), SPECS).unwrap();
        assert_eq!(f.u64("steps").unwrap(), Some(1000));
        let f = parse(&strings(&["--orders", "2,,3"]), SPECS).unwrap();
        assert!(f.f64_list("orders").is_err());
        assert!(parse(&strings(&["stray"]), SPECS).is_err());
        // a following flag is not a value: the message names the flag whose value is missing
        let e = parse(&strings(&["--steps", "--orders", "2"]), SPECS).unwrap_err();
        assert!(e.0.contains("'--steps' needs a value"), "{e}");
        assert!(parse(&strings(&["--json=1"]), SPECS).is_err());
    }

    #[test]
    fn integers_are_decided_on_the_decimal_digits() {
        use reconbound::text::exact_u64;
        for (text, want) in [
            ("0", Some(0)),
            ("+7", Some(7)),
            ("1e3", Some(1000)),
            ("1.5e3", Some(1500)),
            ("120e-1", Some(12)),
            ("0.0e5", Some(0)),
            ("18446744073709551615", Some(u64::MAX)),
            ("18446744073709551616", None),
            ("1e20", None),
            ("1.5", None),
            ("1e-400", None),
            ("1.0000000000000000001", None),
            ("-3", None),
            ("1e", None),
            ("e3", None),
            (".", None),
            ("inf", None),
            ("nan", None),
            ("1e99999999999999999999", None),
            ("0.0e-9223372036854775808", Some(0)),
            ("1e-9223372036854775808", None),
            ("1e9223372036854775807", None),
        ] {
            assert_eq!(exact_u64(text), want, "{text}");
        }
    }

    #[test]
    fn repeatable_flags_keep_every_value_in_order() {
        let specs = [repeated("phase"), value("steps")];
        let f = parse(
            &strings(&["--phase", "a", "--steps", "3", "--phase=b", "--phase", "c"]),
            &specs,
        )
        .unwrap();
        assert_eq!(f.all("phase"), vec!["a", "b", "c"]);
        assert_eq!(f.all("steps"), vec!["3"]);
        assert!(f.all("other").is_empty());
        let e = parse(&strings(&["--steps", "1", "--steps", "2"]), &specs).unwrap_err();
        assert!(e.0.contains("more than once"), "{e}");
    }
}
