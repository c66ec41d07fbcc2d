//! Fuzz the JSON reader of shard files (`cli::json::parse`): arbitrary bytes must give a value
//! or an error, never a panic; a value read back renders to text that reads back to the same
//! value (objects only: the writer renders objects).
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound_cli::json::{parse, Value};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(Value::Obj(o)) = parse(&text) {
        let again = parse(&o.render()).expect("a rendered object reads back");
        // NaN renders as null, so compare renderings, not values.
        if let Value::Obj(p) = again {
            assert_eq!(p.render(), o.render());
        }
    }
});
