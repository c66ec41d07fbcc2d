//! Human-readable numbers that stay on the safe side: an upper bound is printed rounded up,
//! a lower bound rounded down, so the table never shows a bound the library did not certify.

use std::format;
use std::string::String;

/// Which way a printed value may be rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// An upper bound (ε, γ, success probability): round up.
    Up,
    /// A lower bound (MSE): round down.
    Down,
    /// A plain value (inputs): round to nearest.
    Nearest,
}

/// `x` with `digits` significant digits, rounded towards `side`.
pub fn sig(x: f64, digits: usize, side: Side) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return String::from("0");
    }
    let digits = digits.clamp(1, 17);
    let mut s = format!("{:.*e}", digits - 1, x);
    for _ in 0..4 {
        let Ok(shown) = s.parse::<f64>() else { break };
        let bad = match side {
            Side::Up => shown < x,
            Side::Down => shown > x,
            Side::Nearest => false,
        };
        if !bad {
            break;
        }
        // Move one unit in the last shown digit towards the safe side and reformat.
        let exp = libm::floor(libm::log10(libm::fabs(shown).max(f64::MIN_POSITIVE)));
        let unit = libm::pow(10.0, exp - (digits as f64 - 1.0));
        let next = if side == Side::Up {
            shown + unit
        } else {
            shown - unit
        };
        s = format!("{:.*e}", digits - 1, next);
    }
    pretty(&s)
}

/// Turn `1.23450e-1` into `0.12345`, keeping scientific notation for very large or small values.
fn pretty(s: &str) -> String {
    let Some((mantissa, exp)) = s.split_once('e') else {
        return String::from(s);
    };
    let Ok(e) = exp.parse::<i32>() else {
        return String::from(s);
    };
    if !(-4..=6).contains(&e) {
        return String::from(s);
    }
    let value: f64 = s.parse().unwrap_or(0.0);
    let decimals = mantissa.trim_start_matches('-').len().saturating_sub(2) as i32 - e;
    format!("{:.*}", decimals.max(0) as usize, value)
}

/// A decimal without its trailing zeros (`0.0102400` → `0.01024`; in scientific notation
/// the mantissa's: `3.90000e-6` → `3.9e-6`).
pub fn trimmed(x: &str) -> String {
    let (mantissa, exp) = match x.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (x, None),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    match exp {
        Some(e) => format!("{mantissa}e{e}"),
        None => String::from(mantissa),
    }
}

/// A plain value (an input, a calibrated σ, a rate) as every table and page shows it:
/// `digits` significant digits, rounded to nearest, without trailing zeros (issue 43).
pub fn plain(x: f64, digits: usize) -> String {
    trimmed(&sig(x, digits, Side::Nearest))
}

/// A false-positive rate as a label, the same in every command: a percentage from 0.1 %
/// up ("0.1 %", "12.5 %": 100·x to 6 significant digits, trailing zeros dropped, so that
/// 100·1e-3 never shows as 0.10000000000000001), the plain rate below ("1e-6", "1e-300":
/// no percentage of a percentage).
pub fn fpr_label(x: f64) -> String {
    if x >= 1e-3 {
        format!("{} %", plain(100.0 * x, 6))
    } else {
        reconbound::error::Shown(x).to_string()
    }
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stands on
/// a line of its own), the first starting with `first`, the others with as many spaces: the
/// answer lines of `bound` and `tradeoff` (issue 43).
pub fn wrap(first: &str, text: &str, width: usize) -> std::string::String {
    let indent = first.chars().count();
    let mut out = std::string::String::from(first);
    let mut col = indent;
    for (i, word) in text.split_whitespace().enumerate() {
        let n = word.chars().count();
        if i > 0 && col + 1 + n > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            col = indent;
        } else if i > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += n;
    }
    out.push('\n');
    out
}

/// (min, lower median, max) of the values of `v` that are not NaN (NaN if there are none):
/// the summary line of the per-example tables.
pub fn min_median_max(mut v: std::vec::Vec<f64>) -> (f64, f64, f64) {
    v.retain(|x| !x.is_nan());
    v.sort_by(f64::total_cmp);
    let min = v.first().copied().unwrap_or(f64::NAN);
    let max = v.last().copied().unwrap_or(f64::NAN);
    let median = v
        .get(v.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(f64::NAN);
    (min, median, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain value drops its trailing zeros, in scientific notation too (the pages' and the
    /// terminal's one helper); a bound keeps them.
    #[test]
    fn plain_values_drop_trailing_zeros_and_bounds_keep_them() {
        assert_eq!(plain(2.8517480817685996, 6), "2.85175");
        assert_eq!(plain(1.1, 6), "1.1");
        assert_eq!(plain(256.0 / 60000.0, 6), "0.00426667");
        assert_eq!(trimmed("3.90000e-6"), "3.9e-6");
        assert_eq!(trimmed("1.00000e-6"), "1e-6");
        assert_eq!(trimmed("120"), "120");
        assert_eq!(sig(1.0, 6, Side::Up), "1.00000");
    }

    #[test]
    fn fpr_labels_are_short_percentages_from_a_thousandth_and_plain_rates_below() {
        // issue 43: "1.0000000000000001e-298 %", "9.999999999999999e-5 %"
        assert_eq!(fpr_label(1e-3), "0.1 %");
        assert_eq!(fpr_label(0.01), "1 %");
        assert_eq!(fpr_label(0.125), "12.5 %");
        assert_eq!(fpr_label(1e-6), "1e-6");
        assert_eq!(fpr_label(1e-300), "1e-300");
    }

    #[test]
    fn rounding_respects_the_side() {
        assert_eq!(sig(0.123451, 5, Side::Up), "0.12346");
        assert_eq!(sig(0.123459, 5, Side::Down), "0.12345");
        assert_eq!(sig(0.12345, 5, Side::Up), "0.12345");
        assert_eq!(sig(7.329111, 6, Side::Nearest), "7.32911");
        assert_eq!(sig(1e-12, 3, Side::Up), "1.00e-12");
        assert_eq!(sig(0.0225, 3, Side::Down), "0.0225");
        let v = 0.02253456;
        assert!(sig(v, 3, Side::Down).parse::<f64>().unwrap() <= v);
        assert!(sig(v, 3, Side::Up).parse::<f64>().unwrap() >= v);
    }
}
