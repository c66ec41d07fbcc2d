//! Fuzz the command-line flag parser: arbitrary argument vectors must give flags or a usage
//! error naming a flag, never a panic. Heavy computations are not run: only parsing and the
//! typed accessors, plus `--help` of every command through `cli::run`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound_cli::args::{parse, Spec};

const SPECS: &[Spec] = &[
    Spec { name: "noise-multiplier", takes_value: true },
    Spec { name: "sampling-rate", takes_value: true },
    Spec { name: "steps", takes_value: true },
    Spec { name: "orders", takes_value: true },
    Spec { name: "delta", takes_value: true },
    Spec { name: "kappa", takes_value: true },
    Spec { name: "json", takes_value: false },
];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let args: Vec<String> = text.split('\u{0}').map(String::from).collect();
    if let Ok(flags) = parse(&args, SPECS) {
        let _ = flags.f64("noise-multiplier");
        let _ = flags.f64_required("delta");
        let _ = flags.u64("steps");
        let _ = flags.f64_list("orders");
        let _ = flags.exclusive("kappa", "delta");
    }
    if let Some(cmd) = args.first() {
        let help = vec![cmd.clone(), String::from("--help")];
        let out = reconbound_cli::run(&help);
        assert!(out.code == 0 || out.code == 2);
    }
});
