//! Reading numbers from text exactly (command-line flags and schedule files share it).

use alloc::vec::Vec;

/// The non-negative integer a decimal string denotes exactly (`12`, `+12`, `1.2e1`, `1e6`,
/// `120e-1`), `None` for anything else: a fraction, a sign, an exponent that leaves non-zero
/// digits after the point (`1e-400`), or a value beyond `u64::MAX`.
pub fn exact_u64(s: &str) -> Option<u64> {
    let s = s.strip_prefix('+').unwrap_or(s);
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(k) => (&s[..k], s[k + 1..].parse::<i64>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() == 0 || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    // digits d_0 d_1 … with the decimal point after position `point` (may lie outside).
    let digits: Vec<u8> = int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
    let point = (int.len() as i64).checked_add(exp)?;
    let mut value: u64 = 0;
    for (k, &d) in digits.iter().enumerate() {
        if (k as i64) < point {
            value = value.checked_mul(10)?.checked_add(u64::from(d))?;
        } else if d != 0 {
            return None;
        }
    }
    // trailing zeros implied by a point beyond the digits (1.5e3 = 1500)
    let mut missing = point.saturating_sub(digits.len() as i64);
    while missing > 0 && value != 0 {
        value = value.checked_mul(10)?;
        missing -= 1;
    }
    Some(value)
}
