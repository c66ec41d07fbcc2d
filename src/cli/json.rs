//! A minimal JSON object writer for the command line's `--json` output: one object per
//! command, keys in insertion order, numbers in Rust's shortest round-trip form. Non-finite
//! numbers (which the library never returns as results) are written as `null`.

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
}
