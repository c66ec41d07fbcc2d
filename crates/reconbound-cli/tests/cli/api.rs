//! The typed entry points (`reconbound_cli::api`, which the Python package calls) give the
//! bytes the command line prints for the same request, and keep the core's typed error.

use crate::common::{run_cli, temp_dir, write_in};
use reconbound::accounting::run::Run;
use reconbound::accounting::schedule::{Phase, Schedule};
use reconbound::Error;
use reconbound_cli::api::{self, CommandError};

fn cli_json(args: &[&str]) -> String {
    let (code, out, err) = run_cli(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn epsilon_json_is_the_epsilon_commands_json() {
    let run = Run::poisson(0.01, 1.1, 1000).unwrap();
    for accountant in ["all", "rdp", "pld"] {
        let want = cli_json(&[
            "epsilon",
            "--noise-multiplier",
            "1.1",
            "--sampling-rate",
            "0.01",
            "--steps",
            "1000",
            "--delta",
            "1e-5",
            "--accountant",
            accountant,
            "--json",
        ]);
        assert_eq!(
            api::epsilon_json(&run, 1e-5, accountant, false).unwrap(),
            want
        );
    }
    let phases = [
        Phase {
            sampling_rate: 0.01,
            noise_multiplier: 2.0,
            steps: 100,
        },
        Phase {
            sampling_rate: 0.01,
            noise_multiplier: 1.0,
            steps: 900,
        },
    ];
    let run = Run::schedule(Schedule::new(&phases).unwrap());
    let want = cli_json(&[
        "epsilon",
        "--phase",
        "0.01,2,100",
        "--phase",
        "0.01,1,900",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(api::epsilon_json(&run, 1e-5, "all", true).unwrap(), want);
    let run = Run::fixed_size(100, 10_000, 1.0, 100).unwrap();
    let want = cli_json(&[
        "epsilon",
        "--sampling",
        "fixed",
        "--batch-size",
        "100",
        "--dataset-size",
        "10000",
        "--noise-multiplier",
        "1",
        "--steps",
        "100",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(api::epsilon_json(&run, 1e-5, "all", false).unwrap(), want);
}

#[test]
fn epsilon_json_keeps_the_cores_error_and_refuses_what_has_no_epsilon() {
    let run = Run::poisson(0.01, 1.1, 1000).unwrap();
    match api::epsilon_json(&run, 2.0, "all", false) {
        Err(CommandError::Invalid(Error::InvalidParameter { name, value, .. })) => {
            assert_eq!((name, value), ("delta", 2.0));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        api::epsilon_json(&run, 1e-5, "moments", false),
        Err(CommandError::Usage(_))
    ));
    let shuffled = Run::shuffled(100, 10_000, 1.0, 100).unwrap();
    assert!(matches!(
        api::epsilon_json(&shuffled, 1e-5, "all", false),
        Err(CommandError::Usage(m)) if m.contains("Chua")
    ));
    let fixed = Run::fixed_size(100, 10_000, 1.0, 100).unwrap();
    assert!(matches!(
        api::epsilon_json(&fixed, 1e-5, "pld", false),
        Err(CommandError::Usage(_))
    ));
}

#[test]
fn estimators_on_values_are_estimate_on_the_file_of_those_values() {
    let dir = temp_dir("api", "estimate");
    let out: Vec<f64> = (0..30)
        .map(|i| f64::from((i * 37 + 11) % 101) / 101.0)
        .collect();
    let inn: Vec<f64> = (0..30)
        .map(|i| 0.7 + f64::from((i * 53 + 7) % 97) / 97.0)
        .collect();
    let mut csv = String::from("world,score\n");
    for x in &out {
        csv.push_str(&format!("0,{x:?}\n"));
    }
    for x in &inn {
        csv.push_str(&format!("1,{x:?}\n"));
    }
    let path = write_in(&dir, "scores.csv", &csv);
    for (estimator, threshold) in [("cp", "held-out"), ("gdp", "bonferroni"), ("cp", "0.9")] {
        let want = cli_json(&[
            "estimate",
            "--scores",
            &path,
            "--delta",
            "1e-5",
            "--estimator",
            estimator,
            "--threshold",
            threshold,
            "--json",
        ]);
        let got = api::estimate_scores_json(
            &out, &inn, None, 1e-5, estimator, threshold, None, "random", None, 0.05,
        )
        .unwrap();
        assert_eq!(got, want, "{estimator} {threshold}");
    }
    // the held-out rows in file order, and another seed's permutation
    for (rows, seed) in [("first", None), ("random", Some(7))] {
        let mut args = vec![
            "estimate",
            "--scores",
            &path,
            "--delta",
            "1e-5",
            "--json",
            "--calibration-rows",
            rows,
        ];
        let s = seed.map(|x: u64| x.to_string());
        if let Some(s) = &s {
            args.extend(["--seed", s.as_str()]);
        }
        let want = cli_json(&args);
        let got = api::estimate_scores_json(
            &out, &inn, None, 1e-5, "cp", "held-out", None, rows, seed, 0.05,
        )
        .unwrap();
        assert_eq!(got, want, "{rows} {seed:?}");
    }
    // a split column: calibration rows chosen per score
    let s0: Vec<bool> = (0..30).map(|i| i % 3 == 0).collect();
    let s1: Vec<bool> = (0..30).map(|i| i % 2 == 0).collect();
    let mut csv = String::from("world,score,split\n");
    for (x, c) in out.iter().zip(&s0) {
        let split = if *c { "calibration" } else { "test" };
        csv.push_str(&format!("0,{x:?},{split}\n"));
    }
    for (x, c) in inn.iter().zip(&s1) {
        let split = if *c { "calibration" } else { "test" };
        csv.push_str(&format!("1,{x:?},{split}\n"));
    }
    let path = write_in(&dir, "split.csv", &csv);
    let want = cli_json(&["estimate", "--scores", &path, "--delta", "1e-5", "--json"]);
    let got = api::estimate_scores_json(
        &out,
        &inn,
        Some((&s0, &s1)),
        1e-5,
        "cp",
        "held-out",
        None,
        "random",
        None,
        0.05,
    )
    .unwrap();
    assert_eq!(got, want);
    // guesses
    let guesses: Vec<i64> = (0..60).map(|i| [1, -1, 0][i % 3]).collect();
    let truths: Vec<i64> = (0..60)
        .map(|i| i64::from(i % 3 == 0 || i % 5 == 1))
        .collect();
    let mut csv = String::from("guess,truth\n");
    for (g, t) in guesses.iter().zip(&truths) {
        csv.push_str(&format!("{g},{t}\n"));
    }
    let path = write_in(&dir, "guesses.csv", &csv);
    let want = cli_json(&["estimate", "--guesses", &path, "--delta", "1e-5", "--json"]);
    assert_eq!(
        api::estimate_guesses_json(&guesses, &truths, 1e-5, 0.05, &[]).unwrap(),
        want
    );
    // with the run the guesses are tested against: the command's flags, the same bytes
    let run = [
        "--sampling-rate",
        "0.1",
        "--noise-multiplier",
        "1",
        "--steps",
        "20",
    ];
    let mut argv = vec!["estimate", "--guesses", &path, "--delta", "1e-5", "--json"];
    argv.extend_from_slice(&run);
    let run: Vec<String> = run.iter().map(|a| a.to_string()).collect();
    assert_eq!(
        api::estimate_guesses_json(&guesses, &truths, 1e-5, 0.05, &run).unwrap(),
        cli_json(&argv)
    );
    // bad values are refused, naming them
    let bad = api::estimate_scores_json(
        &[f64::NAN],
        &inn,
        None,
        1e-5,
        "cp",
        "held-out",
        None,
        "random",
        None,
        0.05,
    );
    assert!(matches!(bad, Err(CommandError::Usage(m)) if m.starts_with("scores_out[0]")));
    let bad = api::estimate_guesses_json(&[2], &[1], 1e-5, 0.05, &[]);
    assert!(matches!(bad, Err(CommandError::Usage(m)) if m.starts_with("guesses[0]")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bound_json_is_the_bound_commands_json() {
    use reconbound::accounting::guarantees::Prior;
    let run = Run::poisson(256.0 / 60000.0, 1.1, 14063).unwrap();
    let want = cli_json(&["bound", "--json"]);
    let got = api::bound_json(&run, 1e-5, Prior::uniform(10).unwrap(), 1.0, false).unwrap();
    assert_eq!(got, want);
    let run = Run::schedule(
        Schedule::new(&[
            Phase {
                sampling_rate: 0.01,
                noise_multiplier: 1.5,
                steps: 100,
            },
            Phase {
                sampling_rate: 0.02,
                noise_multiplier: 1.0,
                steps: 50,
            },
        ])
        .unwrap(),
    );
    let want = cli_json(&[
        "bound",
        "--phase",
        "0.01,1.5,100",
        "--phase",
        "0.02,1.0,50",
        "--delta",
        "1e-6",
        "--kappa",
        "0.05",
        "--diameter",
        "2.5",
        "--json",
    ]);
    let got = api::bound_json(&run, 1e-6, Prior::baseline(0.05).unwrap(), 2.5, true).unwrap();
    assert_eq!(got, want);
    let fixed = Run::fixed_size(100, 10_000, 1.0, 100).unwrap();
    assert!(matches!(
        api::bound_json(&fixed, 1e-5, Prior::uniform(10).unwrap(), 1.0, false),
        Err(CommandError::Usage(_))
    ));
}

#[test]
fn tradeoff_json_is_the_tradeoff_commands_json_and_names_bad_options() {
    let run = Run::poisson(0.01, 1.1, 1000).unwrap();
    let mut o = api::TradeoffOptions::new();
    o.fpr = vec![0.01, 0.05];
    o.kappa = Some(0.1);
    o.points = Some(7);
    let want = cli_json(&[
        "tradeoff",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--fpr",
        "0.01,0.05",
        "--kappa",
        "0.1",
        "--points",
        "7",
        "--json",
    ]);
    assert_eq!(api::tradeoff_json(&run, false, &o).unwrap(), want);
    // fixed-size batches: the RDP conversion, with its own config keys
    let fixed = Run::fixed_size(64, 1600, 4.0, 300).unwrap();
    let j = api::tradeoff_json(&fixed, false, &api::TradeoffOptions::new()).unwrap();
    assert!(
        j.contains("\"source\": \"rdp\"") && j.contains("\"sampling\": \"fixed\""),
        "{j}"
    );
    let want = cli_json(&[
        "tradeoff",
        "--sampling",
        "fixed",
        "--batch-size",
        "64",
        "--dataset-size",
        "1600",
        "--noise-multiplier",
        "4",
        "--steps",
        "300",
        "--json",
    ]);
    assert_eq!(j, want);
    // an option out of range keeps the core's error, naming it
    o.fpr = vec![0.01, 1.0];
    match api::tradeoff_json(&run, false, &o) {
        Err(CommandError::Invalid(Error::InvalidParameter { name, value, .. })) => {
            assert_eq!((name, value), ("fpr", 1.0));
        }
        other => panic!("{other:?}"),
    }
    o.fpr = vec![0.01];
    o.points = Some(1);
    assert!(matches!(
        api::tradeoff_json(&run, false, &o),
        Err(CommandError::Invalid(Error::InvalidCount {
            name: "points",
            ..
        }))
    ));
    let shuffled = Run::shuffled(64, 1600, 4.0, 300).unwrap();
    assert!(matches!(
        api::tradeoff_json(&shuffled, false, &api::TradeoffOptions::new()),
        Err(CommandError::Usage(_))
    ));
}
