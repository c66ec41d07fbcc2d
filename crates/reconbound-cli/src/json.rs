//! A minimal JSON object writer for the command line's `--json` output: one object per
//! command, keys in insertion order, numbers in Rust's shortest round-trip form. Non-finite
//! numbers (which the library never returns as results) are written as `null`. [`parse`]
//! reads it back (the shard files of `attack` and `merge`).

use std::format;
use std::string::String;
use std::vec::Vec;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number.
    Num(f64),
    /// An integer.
    Int(u64),
    /// A string.
    Str(String),
    /// A boolean.
    Bool(bool),
    /// `null`.
    Null,
    /// An array.
    Arr(Vec<Value>),
    /// A nested object.
    Obj(Object),
}

/// A JSON object with keys in insertion order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object(Vec<(String, Value)>);

impl Object {
    /// An empty object.
    pub fn new() -> Self {
        Object(Vec::new())
    }

    /// Append `key: value`.
    pub fn put(&mut self, key: &str, value: Value) -> &mut Self {
        self.0.push((String::from(key), value));
        self
    }

    /// Append a number.
    pub fn num(&mut self, key: &str, x: f64) -> &mut Self {
        self.put(key, Value::Num(x))
    }

    /// Append an integer.
    pub fn int(&mut self, key: &str, n: u64) -> &mut Self {
        self.put(key, Value::Int(n))
    }

    /// Append a string.
    pub fn str(&mut self, key: &str, s: &str) -> &mut Self {
        self.put(key, Value::Str(String::from(s)))
    }

    /// Serialise on one line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        write_object(self, &mut out);
        out
    }
}

fn write_object(o: &Object, out: &mut String) {
    out.push('{');
    for (i, (k, v)) in o.0.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_string(k, out);
        out.push_str(": ");
        write_value(v, out);
    }
    out.push('}');
}

fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Num(x) if x.is_finite() => out.push_str(&number(*x)),
        Value::Num(_) | Value::Null => out.push_str("null"),
        Value::Int(n) => out.push_str(&format!("{n}")),
        Value::Str(s) => write_string(s, out),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Obj(o) => write_object(o, out),
    }
}

/// Shortest representation that parses back to the same f64, in JSON syntax.
pub fn number(x: f64) -> String {
    let s = format!("{x:?}");
    // Rust prints e.g. `1e-300`, `1.5`, `3.0`: all valid JSON numbers.
    s
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

impl Object {
    /// The value of `key` (the first, if repeated: [`parse`] refuses repeated keys).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[(String, Value)] {
        &self.0
    }

    /// The number at `key` (an `Int` too).
    ///
    /// # Errors
    /// A message naming `key` if it is missing or not a number.
    pub fn get_f64(&self, key: &str) -> Result<f64, String> {
        self.get(key)
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("missing or non-numeric '{key}'"))
    }

    /// The non-negative integer at `key` (as [`Value::as_u64`]).
    ///
    /// # Errors
    /// A message naming `key` if it is missing or not such an integer.
    pub fn get_u64(&self, key: &str) -> Result<u64, String> {
        self.get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("missing or non-integer '{key}'"))
    }

    /// The string at `key`.
    ///
    /// # Errors
    /// A message naming `key` if it is missing or not a string.
    pub fn get_str(&self, key: &str) -> Result<&str, String> {
        match self.get(key) {
            Some(Value::Str(s)) => Ok(s),
            _ => Err(format!("missing or non-string '{key}'")),
        }
    }

    /// The non-empty array of numbers at `key`.
    ///
    /// # Errors
    /// A message naming `key` if it is missing, empty or holds a non-number.
    pub fn get_f64s(&self, key: &str) -> Result<Vec<f64>, String> {
        match self.get(key) {
            Some(Value::Arr(items)) if !items.is_empty() => items
                .iter()
                .map(|x| {
                    x.as_f64()
                        .ok_or_else(|| format!("non-numeric entry in '{key}'"))
                })
                .collect(),
            _ => Err(format!("missing or empty '{key}'")),
        }
    }
}

impl Value {
    /// A number (`Num`, or an `Int` converted to the nearest f64).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Num(x) => Some(x),
            Value::Int(n) => Some(n as f64),
            _ => None,
        }
    }

    /// A non-negative integer (`Int`, or a `Num` that is an integer below 2⁵³).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Int(n) => Some(n),
            Value::Num(x) if (0.0..9_007_199_254_740_992.0).contains(&x) && x == libm::floor(x) => {
                Some(x as u64)
            }
            _ => None,
        }
    }
}

/// `k` for a message: control characters dropped, at most 40 characters.
fn shown_key(k: &str) -> String {
    k.chars().filter(|c| !c.is_control()).take(40).collect()
}

/// The largest nesting depth [`parse`] accepts.
const MAX_DEPTH: usize = 32;

/// Parses one JSON value (the whole of `text`, surrounding white space allowed): objects,
/// arrays, strings (with the escapes [`Object::render`] writes, and `\uXXXX` of the basic
/// plane), numbers (non-negative integers below 2⁶⁴ as `Int`, others as `Num`, parsed to the
/// nearest f64, so that rendered numbers read back bit for bit), `true`, `false`, `null`.
/// Strict, as shard files need it: numbers follow JSON's grammar exactly (`006`, `6.`, `.5`,
/// `+1`, `1e` are errors) and a key repeated in one object is an error (not "the first
/// wins").
///
/// # Errors
///
/// A one-line description with the byte offset of the first problem.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text at byte {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "nesting deeper than {MAX_DEPTH} at byte {}",
                self.i
            ));
        }
        self.ws();
        match self.s.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut o = Object::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::Obj(o));
                }
                loop {
                    self.ws();
                    let at = self.i;
                    let k = self.string()?;
                    if o.get(&k).is_some() {
                        return Err(format!("repeated key '{}' at byte {at}", shown_key(&k)));
                    }
                    self.eat(b':')?;
                    let v = self.value(depth + 1)?;
                    o.put(&k, v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Obj(o));
                        }
                        _ => return Err(format!("expected ',' or '}}' at byte {}", self.i)),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Arr(items));
                        }
                        _ => return Err(format!("expected ',' or ']' at byte {}", self.i)),
                    }
                }
            }
            Some(b'"') => self.string().map(Value::Str),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(format!("expected a value at byte {}", self.i)),
        }
    }

    fn word(&mut self, w: &str, v: Value) -> Result<Value, String> {
        if self.s.get(self.i..self.i + w.len()) == Some(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(format!("expected '{w}' at byte {}", self.i))
        }
    }

    /// A number in JSON's grammar exactly: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    /// (no leading zeros, no `+`, no bare or trailing `.`).
    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while matches!(p.s.get(p.i), Some(b'0'..=b'9')) {
                p.i += 1;
            }
            p.i - from
        };
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        let int_digits = digits(self);
        let bad = |p: &Self, why: &str| {
            let end = (p.i + 1).min(p.s.len());
            let text: String = String::from_utf8_lossy(p.s.get(start..end).unwrap_or_default())
                .chars()
                .filter(|c| !c.is_control())
                .take(40)
                .collect();
            Err(format!("bad number '{text}' at byte {start}: {why}"))
        };
        if int_digits == 0 {
            return bad(self, "no digits");
        }
        if int_digits > 1 && self.s.get(int_start) == Some(&b'0') {
            return bad(self, "leading zero");
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return bad(self, "no digits after '.'");
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return bad(self, "no digits in the exponent");
            }
        }
        if matches!(
            self.s.get(self.i),
            Some(b'0'..=b'9' | b'.' | b'+' | b'-' | b'e' | b'E')
        ) {
            return bad(self, "unexpected character");
        }
        let text = core::str::from_utf8(self.s.get(start..self.i).unwrap_or_default())
            .map_err(|_| format!("bad number at byte {start}"))?;
        if text.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = text.parse::<u64>() {
                return Ok(Value::Int(n));
            }
        }
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Value::Num(x)),
            _ => Err(format!("bad number '{text}' at byte {start}: out of range")),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        if self.s.get(self.i) != Some(&b'"') {
            return Err(format!("expected a string at byte {}", self.i));
        }
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            match self.s.get(self.i) {
                None => return Err(String::from("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return String::from_utf8(out)
                        .map_err(|_| format!("invalid UTF-8 in a string before byte {}", self.i));
                }
                Some(b'\\') => {
                    let esc = self.s.get(self.i + 1).copied();
                    self.i += 2;
                    let c = match esc {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let hex = self
                                .s
                                .get(self.i..self.i + 4)
                                .and_then(|h| core::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .and_then(char::from_u32)
                                .ok_or_else(|| format!("bad \\u escape at byte {}", self.i))?;
                            self.i += 4;
                            hex
                        }
                        _ => return Err(format!("bad escape at byte {}", self.i - 1)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(&b) if b < 0x20 => {
                    return Err(format!("control character in a string at byte {}", self.i))
                }
                Some(&b) => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_valid_json_with_round_trip_numbers() {
        let mut o = Object::new();
        o.num("a", 0.1)
            .num("b", 1e-300)
            .num("c", f64::NAN)
            .int("n", 7)
            .str("s", "x\"y");
        o.put("arr", Value::Arr(vec![Value::Num(3.0), Value::Num(2.5)]));
        assert_eq!(
            o.render(),
            r#"{"a": 0.1, "b": 1e-300, "c": null, "n": 7, "s": "x\"y", "arr": [3.0, 2.5]}"#
        );
        assert_eq!(number(7.329111).parse::<f64>().unwrap(), 7.329111);
    }

    #[test]
    fn parses_what_it_renders_bit_for_bit() {
        let mut o = Object::new();
        o.num("a", 0.1)
            .num("b", -1e-300)
            .num("tiny", 5e-324)
            .int("n", u64::MAX)
            .str("s", "x\"y\\z\n\u{1}é");
        o.put(
            "arr",
            Value::Arr(vec![Value::Num(3.0), Value::Bool(true), Value::Null]),
        );
        let mut inner = Object::new();
        inner.put("e", Value::Arr(vec![]));
        o.put("o", Value::Obj(inner));
        let text = o.render();
        assert_eq!(parse(&text).unwrap(), Value::Obj(o.clone()));
        assert_eq!(
            parse(&text).unwrap(),
            parse(&format!("  {text}\n")).unwrap()
        );
        for bad in [
            "",
            "{",
            "{\"a\" 1}",
            "[1,]",
            "[1 2]",
            "\"abc",
            "nul",
            "1.2.3",
            "{} x",
            "\"\\q\"",
            "-",
            "1e999",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn numbers_outside_json_grammar_and_repeated_keys_are_refused() {
        for bad in [
            "006",
            "-01",
            "00",
            "6.",
            "-6.",
            ".5",
            "+1",
            "1e",
            "1e+",
            "1.e5",
            "1ee5",
            "--1",
            "1-2",
            "0x10",
            "1.5.",
            "[6.]",
            "{\"a\": 006}",
            "{\"a\": 1, \"a\": 1}",
            "{\"a\": {\"b\": 1, \"b\": 2}}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
        for good in [
            "0",
            "-0",
            "6",
            "0.5",
            "-0.5e-3",
            "1E+2",
            "10",
            "{\"a\": 1, \"b\": 1}",
        ] {
            assert!(parse(good).is_ok(), "{good:?} refused");
        }
        assert_eq!(parse("6.0").unwrap(), Value::Num(6.0));
        assert_eq!(parse("6").unwrap(), Value::Int(6));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = "[".repeat(40) + &"]".repeat(40);
        assert!(parse(&deep).is_err());
        assert_eq!(parse("12").unwrap().as_u64(), Some(12));
        assert_eq!(parse("1.5").unwrap().as_u64(), None);
    }
}
