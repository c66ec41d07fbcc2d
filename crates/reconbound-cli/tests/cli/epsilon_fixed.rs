//! `reconbound epsilon --sampling fixed|poisson|shuffle`.

use crate::common::{json_num, json_raw, run_cli as run};
use reconbound::accounting::rdp::Conversion;
use reconbound::accounting::rdp_without_replacement::epsilon_replace_one;

/// `--sampling fixed` halves S (replace-one sensitivity 2C) and prints the library's ε bit
/// for bit, with the adjacency named; the MNIST setting B = 256 of 60,000, S = 2.2,
/// 14,063 steps is dp_accounting's σ = 1.1, whose ε is 5.243466908809535 (1e-9 relative).
#[test]
fn epsilon_fixed_sampling_is_the_replace_one_rdp_bound() {
    let args = [
        "epsilon",
        "--sampling",
        "fixed",
        "--batch-size",
        "256",
        "--dataset-size",
        "60000",
        "--noise-multiplier",
        "2.2",
        "--steps",
        "14063",
        "--delta",
        "1e-5",
        "--json",
    ];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let lib = epsilon_replace_one(256, 60000, 1.1, 14063, 1e-5, Conversion::Improved).unwrap();
    assert_eq!(json_num(&out, "epsilon_rdp"), lib.epsilon, "{out}");
    assert!((lib.epsilon - 5.243466908809535).abs() < 1e-9 * 5.25);
    assert_eq!(json_num(&out, "noise_multiplier_replace_one"), 1.1);
    assert_eq!(json_raw(&out, "adjacency"), "\"replace-one\"");
    let mir = epsilon_replace_one(256, 60000, 1.1, 14063, 1e-5, Conversion::Mironov).unwrap();
    assert_eq!(json_num(&out, "epsilon_rdp_mironov"), mir.epsilon);
    let (code, text, _) = run(&args[..13]);
    assert_eq!(code, 0);
    assert!(
        text.contains("replace-one adjacency") && text.contains("5.243467"),
        "{text}"
    );
}

/// `--sampling poisson` is the plain command; `shuffle` and bad values exit 2 naming the flag.
#[test]
fn epsilon_sampling_poisson_forwards_and_bad_values_exit_2() {
    let common = [
        "--noise-multiplier",
        "1.5",
        "--steps",
        "2250",
        "--delta",
        "1e-5",
    ];
    let mut a = std::vec![
        "epsilon",
        "--sampling-rate",
        "0.04",
        "--accountant",
        "rdp",
        "--json"
    ];
    a.extend(common);
    let (_, plain, _) = run(&a);
    let mut b = a.clone();
    b.extend(["--sampling", "poisson"]);
    let (code, fwd, err) = run(&b);
    assert_eq!(code, 0, "{err}");
    assert_eq!(plain, fwd);
    let fixed = [
        "epsilon",
        "--sampling",
        "fixed",
        "--batch-size",
        "5",
        "--dataset-size",
        "50",
    ];
    for (extra, flag) in [
        (&["--sampling", "shuffle"][..], "--sampling"),
        (&["--sampling", "bogus"][..], "--sampling"),
    ] {
        let mut v = std::vec!["epsilon"];
        v.extend(extra);
        v.extend(common);
        let (code, _, err) = run(&v);
        assert_eq!(code, 2, "{v:?}");
        assert!(err.contains(flag), "{err}");
    }
    let (code, _, err) = run(&[&fixed[..], &common[..], &["--sampling-rate", "0.1"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("--sampling-rate"), "{err}");
    let bad = [
        "epsilon",
        "--sampling",
        "fixed",
        "--batch-size",
        "51",
        "--dataset-size",
        "50",
    ];
    let (code, _, err) = run(&[&bad[..], &common[..]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("--batch-size"), "{err}");
    let (code, _, err) = run(&fixed);
    assert_eq!(code, 2);
    assert!(err.contains("--noise-multiplier"), "{err}");
}
