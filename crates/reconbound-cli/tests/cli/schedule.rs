//! `--phase Q,S,T` / `--schedule FILE.csv` of epsilon, bound, rero and calibrate.

use crate::common::{json_num, json_raw, run_cli as run, temp_dir, write_in};

/// `json` without the `"key": [ ... ], ` of a one-level array of flat objects.
fn without_array(json: &str, key: &str) -> String {
    let pat = format!("\"{key}\": [");
    let start = json
        .find(&pat)
        .unwrap_or_else(|| panic!("{key} missing in {json}"));
    let end = start + json[start..].find("], ").unwrap() + 3;
    format!("{}{}", &json[..start], &json[end..])
}

/// `json` without the `"key": value, ` of a flat key.
fn without_key(json: &str, key: &str) -> String {
    let raw = json_raw(json, key);
    json.replacen(&format!("\"{key}\": {raw}, "), "", 1)
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn one_phase_schedule_gives_the_plain_json_bit_for_bit() {
    // The same phase split in two (merged: the same composition) must print exactly the
    // plain command's JSON once `phases` replaces noise_multiplier and sampling_rate: every
    // number, in Rust's shortest round-trip form, hence bit for bit.
    let split = ["--phase", "0.01,1.1,600", "--phase", "0.01,1.1,400"];
    let plain = [
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "1.1",
        "--steps",
        "1000",
    ];
    let cases: &[(&[&str], &[&str])] = &[
        (&["epsilon", "--delta", "1e-5", "--json"], &[]),
        (&["bound", "--json"], &[]),
        (&["rero", "--kappa", "0.1", "--json"], &[]),
    ];
    for (cmd, _) in cases {
        let a: Vec<&str> = cmd.iter().chain(split.iter()).copied().collect();
        let b: Vec<&str> = cmd.iter().chain(plain.iter()).copied().collect();
        let (sa, sb) = (ok(&a), ok(&b));
        let sa = without_array(&sa, "phases");
        let sb = without_key(&without_key(&sb, "noise_multiplier"), "sampling_rate");
        assert_eq!(sa, sb, "{cmd:?}");
        assert!(sa.contains("\"steps\": 1000"), "{sa}");
    }
    // full batch: the closed-form γ
    let a = ok(&[
        "rero", "--kappa", "0.1", "--phase", "1,3,4", "--phase", "1,3,5", "--json",
    ]);
    let b = ok(&[
        "rero",
        "--kappa",
        "0.1",
        "--sampling-rate",
        "1",
        "--noise-multiplier",
        "3",
        "--steps",
        "9",
        "--json",
    ]);
    assert_eq!(json_raw(&a, "gamma"), json_raw(&b, "gamma"));
    assert_eq!(json_raw(&a, "gamma_lower"), json_raw(&b, "gamma_lower"));
}

#[test]
fn three_phase_schedule_from_file_equals_the_phase_flags() {
    let dir = temp_dir("schedule", "file");
    let csv = write_in(
        &dir,
        "s.csv",
        "sampling_rate,noise_multiplier,steps\n# warm-up\n0.01,2,100\n\n0.01,1,1000\r\n0.02,0.8,500\n",
    );
    let a = ok(&["epsilon", "--delta", "1e-5", "--schedule", &csv, "--json"]);
    let b = ok(&[
        "epsilon",
        "--delta",
        "1e-5",
        "--phase",
        "0.01,2,100",
        "--phase",
        "0.01,1,1000",
        "--phase",
        "0.02,0.8,500",
        "--json",
    ]);
    assert_eq!(a, b);
    assert!(a.contains("\"steps\": 1600"), "{a}");
    // dp_accounting 0.6.0 on this schedule (see tests/reproductions/peers_schedule.rs):
    // PLD 5.020109 (grid 1e-5) inside the certified bracket.
    assert!(json_num(&a, "epsilon_pld_lower") <= 5.020109, "{a}");
    assert!(json_num(&a, "epsilon_pld") >= 5.020109, "{a}");
    let t = ok(&["epsilon", "--delta", "1e-5", "--schedule", &csv]);
    assert!(t.contains("phase 3: q = 0.02, σ = 0.8, T = 500"), "{t}");
    for cmd in [
        &["bound", "--schedule", csv.as_str()][..],
        &["rero", "--kappa", "0.1", "--schedule", csv.as_str()][..],
    ] {
        let t = ok(cmd);
        assert!(
            t.contains("schedule of 3 phase(s), 1600 steps in all"),
            "{t}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_schedules_exit_2_with_one_line_naming_the_flag_or_line() {
    let dir = temp_dir("schedule", "bad");
    let empty = write_in(
        &dir,
        "empty.csv",
        "sampling_rate,noise_multiplier,steps\n# none\n\n",
    );
    let q_big = write_in(&dir, "q.csv", "0.1,1,10\n\n1.5,1,10\n");
    let malformed = write_in(&dir, "m.csv", "0.1,1,10\n0.1;1;10\n");
    let huge = write_in(&dir, "h.csv", "0.1,1,6000000\n0.2,1,4000001\n");
    let missing = dir.join("absent.csv").to_string_lossy().into_owned();
    let eps = ["epsilon", "--delta", "1e-5"];
    let cases: &[(&[&str], &[&str])] = &[
        (&["--schedule", &empty], &["--schedule", "empty"]),
        (
            &["--schedule", &q_big],
            &["--schedule", "line 3", "sampling_rate = 1.5", "(0, 1]"],
        ),
        (
            &["--schedule", &malformed],
            &["--schedule", "line 2", "3 comma-separated"],
        ),
        (
            &["--schedule", &huge],
            &["--schedule", "10000001", "at most 10000000"],
        ),
        (&["--schedule", &missing], &["--schedule", "cannot read"]),
        (
            &["--phase", "1.5,1,10"],
            &["--phase' #1", "sampling_rate = 1.5"],
        ),
        (
            &["--phase", "0.1,1,10", "--phase", "0.1,0,10"],
            &["--phase' #2", "noise_multiplier = 0"],
        ),
        (&["--phase", "0.1,1,0"], &["--phase' #1", "steps = 0"]),
        (&["--phase", "0.1,1"], &["--phase' #1", "3 comma-separated"]),
        (
            &["--phase", "0.1,x,5"],
            &["--phase' #1", "noise_multiplier is not a number"],
        ),
        (
            &["--phase", "0.1,1,6000000", "--phase", "0.2,1,4000001"],
            &["--phase", "at most 10000000"],
        ),
        (
            &["--phase", "0.1,1,10", "--schedule", &q_big],
            &["--phase", "--schedule"],
        ),
        (
            &["--phase", "0.1,1,10", "--steps", "10"],
            &["--phase", "--steps"],
        ),
        (
            &["--schedule", &q_big, "--sampling-rate", "0.1"],
            &["--schedule", "--sampling-rate"],
        ),
    ];
    let others: &[(&[&str], &[&str])] = &[
        (
            &["bound", "--phase", "0.1,1,10", "--epochs", "3"],
            &["--phase", "--epochs"],
        ),
        (
            &[
                "rero",
                "--kappa",
                "0.1",
                "--phase",
                "0.1,1,10",
                "--phase",
                "0.2,1,10",
                "--method",
                "monte-carlo",
            ],
            &["--method"],
        ),
        (
            &[
                "rero",
                "--kappa",
                "0.1",
                "--phase",
                "0.1,1,10",
                "--noise-multiplier",
                "2",
            ],
            &["--phase", "--noise-multiplier"],
        ),
        (
            &[
                "calibrate",
                "--target-epsilon",
                "1",
                "--delta",
                "1e-5",
                "--phase",
                "0.1,1,10",
                "--steps",
                "5",
            ],
            &["--phase", "--steps"],
        ),
        (
            &[
                "calibrate",
                "--target-gamma",
                "0.2",
                "--kappa",
                "0.1",
                "--schedule",
                &empty,
            ],
            &["--schedule", "empty"],
        ),
    ];
    let all = cases
        .iter()
        .map(|(extra, needles)| {
            (
                eps.iter().chain(extra.iter()).copied().collect::<Vec<_>>(),
                *needles,
            )
        })
        .chain(others.iter().map(|(a, n)| (a.to_vec(), *n)));
    for (args, needles) in all {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: missing {n:?} in {err}");
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn calibrate_scales_every_sigma_by_one_factor() {
    // The scaled schedule meets the target (the reported ε/γ is ≤ it) and the σ's keep their
    // ratios (2 : 1 : 0.8) up to rounding of c·σ_i.
    let base = [
        "--phase",
        "0.01,2,100",
        "--phase",
        "0.01,1,1000",
        "--phase",
        "0.02,0.8,500",
    ];
    let mut a = vec![
        "calibrate",
        "--target-epsilon",
        "3",
        "--delta",
        "1e-5",
        "--json",
    ];
    a.extend_from_slice(&base);
    let out = ok(&a);
    let c = json_num(&out, "noise_scale");
    assert!(json_num(&out, "epsilon_rdp") <= 3.0, "{out}");
    assert!(c > 1.0, "ε at c = 1 is 5.72 > 3: {out}");
    assert!(
        out.contains(&format!("\"noise_multiplier\": {}", 0.8 * c)),
        "{out}"
    );
    let mut g = vec![
        "calibrate",
        "--target-gamma",
        "0.3",
        "--kappa",
        "0.1",
        "--json",
    ];
    g.extend_from_slice(&base);
    let out = ok(&g);
    assert!(json_num(&out, "gamma") <= 0.3, "{out}");
    assert!(out.contains(&format!(
        "\"noise_multiplier\": {}",
        2.0 * json_num(&out, "noise_scale")
    )));
    let mut t = vec!["calibrate", "--target-epsilon", "3", "--delta", "1e-5"];
    t.extend_from_slice(&base);
    let text = ok(&t);
    assert!(
        text.contains("noise scale c = ") && text.contains("phase 3:"),
        "{text}"
    );
}

#[test]
fn help_of_schedule_commands_documents_phase_and_schedule() {
    for cmd in ["epsilon", "bound", "rero", "calibrate"] {
        let out = ok(&[cmd, "--help-all"]);
        assert!(
            out.contains("--phase Q,S,T") && out.contains("--schedule FILE.csv"),
            "{cmd}"
        );
        assert!(
            out.contains("phases: [{sampling_rate, noise_multiplier, steps}]"),
            "{cmd}"
        );
    }
}

/// Issue 20 item 3: PLD schedules cost their *distinct* (q, σ) phases — 2,000 one-step phases
/// alternating q = 0.02/0.01 are two phases (exactly the two-phase schedule's ε) — and more
/// than 64 distinct phases are refused at once (exit 2, one line naming the flag and the
/// limit) by every command that composes by PLD, while RDP-only commands still take them.
#[test]
fn pld_schedules_cost_their_distinct_phases_and_more_than_64_are_refused() {
    let dir = temp_dir("schedule", "distinct");
    let alt: String = (0..2000)
        .map(|i| {
            if i % 2 == 0 {
                "0.02,1,1\n"
            } else {
                "0.01,1,1\n"
            }
        })
        .collect();
    let alt = write_in(&dir, "alt.csv", &alt);
    let two = write_in(&dir, "two.csv", "0.02,1,1000\n0.01,1,1000\n");
    let eps = |csv: &str| {
        let out = ok(&[
            "epsilon",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--schedule",
            csv,
            "--json",
        ]);
        (
            json_num(&out, "epsilon_pld"),
            json_num(&out, "epsilon_pld_lower"),
        )
    };
    // Exact equality: the same composition, the same operations.
    assert_eq!(eps(&alt), eps(&two));
    let many: String = (0..65)
        .map(|i| format!("{},1,1\n", 0.01 + f64::from(i) * 1e-4))
        .collect();
    let many = write_in(&dir, "many.csv", &many);
    for cmd in [
        &["epsilon", "--delta", "1e-5"][..],
        &["epsilon", "--delta", "1e-5", "--accountant", "pld"][..],
        &["bound"][..],
        &["rero", "--kappa", "0.1"][..],
        &["calibrate", "--target-gamma", "0.5", "--kappa", "0.1"][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--schedule", many.as_str()]);
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        for needle in ["'--schedule'", "65 distinct", "at most 64"] {
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }
    let mut args = vec![
        "epsilon",
        "--delta",
        "1e-5",
        "--accountant",
        "rdp",
        "--schedule",
    ];
    args.push(&many);
    ok(&args);
    let _ = std::fs::remove_dir_all(&dir);
}
