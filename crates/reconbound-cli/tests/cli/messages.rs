//! Messages a user reads: a missing value names its flag, integers are decided on their
//! digits, and no value is printed as hundreds of digits or as Rust's `inf`.

use crate::common::run_cli as run;

#[test]
fn a_flag_followed_by_another_flag_names_the_missing_value() {
    let (code, _, err) = run(&["rdp", "--noise-multiplier", "--sampling-rate", "0.01"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("'--noise-multiplier' needs a value"),
        "the message must name the flag whose value is missing: {err}"
    );
}

#[test]
fn steps_that_round_to_an_integer_are_refused_like_fractions() {
    let base = [
        "epsilon",
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "0.01",
        "--delta",
        "1e-5",
        "--steps",
    ];
    for steps in ["1.5", "1e-400", "1.0000000000000000001"] {
        let mut args = base.to_vec();
        args.push(steps);
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "--steps {steps}: {err}");
        assert!(
            err.contains("--steps") && err.contains("is not a non-negative integer"),
            "--steps {steps}: {err}"
        );
    }
    let mut args = base.to_vec();
    args.push("1e2");
    assert_eq!(run(&args).0, 0, "1e2 is the integer 100");
}

/// No printed number is a run of 20 or more digits, and no value reads `inf`.
fn assert_readable(text: &str) {
    let mut run_len = 0;
    for c in text.chars() {
        run_len = if c.is_ascii_digit() { run_len + 1 } else { 0 };
        assert!(run_len < 20, "a number of 20+ digits in:\n{text}");
    }
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        assert!(
            !word.eq_ignore_ascii_case("inf"),
            "'inf' printed as a value in:\n{text}"
        );
    }
}

#[test]
fn extreme_values_print_in_scientific_notation_and_never_as_inf() {
    let cases: [&[&str]; 5] = [
        &[
            "epsilon",
            "--noise-multiplier",
            "1e300",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1",
            "--delta",
            "1e-5",
        ],
        &[
            "epsilon",
            "--noise-multiplier",
            "1e300",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1",
            "--delta",
            "1e-5",
            "--json",
        ],
        &["bound", "--delta", "1e-300"],
        &["bound", "--delta", "1e-300", "--json"],
        &[
            "epsilon",
            "--noise-multiplier",
            "inf",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1",
            "--delta",
            "1e-5",
        ],
    ];
    for args in cases {
        let (code, out, err) = run(args);
        assert!(code <= 2, "{args:?}: exit {code}");
        assert_readable(&out);
        assert_readable(&err);
    }
}
