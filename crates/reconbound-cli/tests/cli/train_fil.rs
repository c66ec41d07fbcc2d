//! `reconbound train --fil`: Fisher information leakage of a DP-SGD run (Guo et al. 2022
//! Alg. 1) — JSON keys, the per-example CSV, the SVG histogram and image grid, bad flags.
//! Small runs (64 training examples, 3 steps, K = 4 coordinates): well under a second each.

use crate::common::{json_num, json_raw, run_cli as run};
use std::path::PathBuf;

/// A fresh folder for one test's output files.
fn out_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("train_fil_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The arguments of a small, fast run: mlp on 64 embedded images, Poisson q = 1/4, 3 steps.
fn small(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "train",
        "--model",
        "mlp",
        "--train-size",
        "64",
        "--test-size",
        "100",
        "--steps",
        "3",
        "--batch-size",
        "16",
        "--quiet",
        "--fil",
        "--fil-coords",
        "4",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run_args(args: &[String]) -> (i32, String, String) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&refs)
}

fn without_seconds(json: &str) -> String {
    let i = json.find(", \"seconds\": ").expect("seconds key");
    let rest = &json[i + 2..];
    let end = rest.find([',', '}']).unwrap();
    format!("{}{}", &json[..i], &rest[end..])
}

/// Minimal XML well-formedness: the declaration, then balanced, properly nested tags under
/// one `svg` root, quoted attributes, and every `&` starting a predefined entity.
fn well_formed(svg: &str) -> Result<usize, String> {
    let mut rest = svg
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .ok_or("no XML declaration")?;
    let entity_ok = |t: &str| {
        t.match_indices('&').all(|(i, _)| {
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| t[i..].starts_with(e))
        }) && !t.contains('>')
    };
    let mut stack: Vec<String> = Vec::new();
    let mut elements = 0;
    let mut done = false;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        if !entity_ok(text) || (done && !text.trim().is_empty()) {
            return Err(format!("bad text {text:?}"));
        }
        let close = rest[open..].find('>').ok_or("unterminated tag")? + open;
        let tag = &rest[open + 1..close];
        rest = &rest[close + 1..];
        if done {
            return Err(format!("content after the root: <{tag}>"));
        }
        if tag.matches('"').count() % 2 != 0 || tag.contains('<') {
            return Err(format!("bad attributes in <{tag}>"));
        }
        if let Some(name) = tag.strip_prefix('/') {
            if stack.pop().as_deref() != Some(name) {
                return Err(format!("mismatched </{name}>"));
            }
            done = stack.is_empty();
            continue;
        }
        let name = tag
            .trim_end_matches('/')
            .split_whitespace()
            .next()
            .ok_or("empty tag")?;
        if stack.is_empty() && name != "svg" {
            return Err(format!("root <{name}>"));
        }
        for (i, _) in tag.match_indices('"').step_by(2) {
            let end = tag[i + 1..].find('"').unwrap() + i + 1;
            if !entity_ok(&tag[i + 1..end]) {
                return Err(format!("bad attribute value in <{tag}>"));
            }
        }
        elements += 1;
        if !tag.ends_with('/') {
            stack.push(name.to_string());
        }
    }
    if !stack.is_empty() || !done || !rest.trim().is_empty() {
        return Err(format!("unclosed {stack:?}"));
    }
    Ok(elements)
}

/// CSV rows as fields (header checked separately).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

#[test]
fn checker_detects_malformed_svg() {
    // The checker below must be able to fail.
    let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    for bad in [
        "<svg><g></svg>",
        "<svg><text>a & b</text></svg>",
        "<svg a=\"1></svg>",
        "<svg></svg><g/>",
        "<g></g>",
    ] {
        assert!(well_formed(&format!("{head}{bad}")).is_err(), "{bad}");
    }
    assert_eq!(
        well_formed(&format!("{head}<svg><g a=\"&amp;\"><rect/></g></svg>\n")),
        Ok(3)
    );
}

#[test]
fn train_fil_json_csv_and_svgs_are_consistent() {
    let dir = out_dir("consistent");
    let csv = dir.join("fil.csv");
    let plot = dir.join("hist.svg");
    let images = dir.join("images.svg");
    let args = small(&[
        "--json",
        "--fil-out",
        csv.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
        "--fil-images",
        images.to_str().unwrap(),
    ]);
    let (code, out, err) = run_args(&args);
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(out.lines().count(), 1, "one JSON object");
    for key in [
        "fil_kappa",
        "fil_step_epsilon",
        "fil_step_delta",
        "fil_coords",
        "fil_runs",
        "fil_examples_sampled",
        "fil_mse_bound_min",
        "fil_mse_bound_median",
        "fil_mse_bound_max",
        "fil_dfil_max",
        "mse_lower_bound_rdp",
    ] {
        let _ = json_num(&out, key);
    }
    assert!(
        out.find("\"mse_lower_bound_rdp\"").unwrap() < out.find("\"seconds\"").unwrap(),
        "FIL keys come before seconds: {out}"
    );
    assert_eq!(json_num(&out, "fil_coords"), 4.0);
    assert_eq!(json_num(&out, "fil_runs"), 1.0);
    // Poisson at q = 16/64: Eq. 3 gives κ in (0, 1); the default δ is 1/(n·T) = 1/192.
    let kappa = json_num(&out, "fil_kappa");
    assert!(kappa > 0.0 && kappa < 1.0, "{out}");
    assert!(json_num(&out, "fil_step_epsilon") > 0.0, "{out}");
    let delta = json_num(&out, "fil_step_delta");
    assert!((delta * 192.0 - 1.0).abs() < 1e-12, "{out}");
    let (lo, mid, hi) = (
        json_num(&out, "fil_mse_bound_min"),
        json_num(&out, "fil_mse_bound_median"),
        json_num(&out, "fil_mse_bound_max"),
    );
    assert!(0.0 < lo && lo <= mid && mid <= hi, "{out}");
    // The smallest bound is d/max Tr = 1/max dFIL (d = 784), up to the bound's rounding down.
    let dfil_max = json_num(&out, "fil_dfil_max");
    assert!(
        lo <= 1.0 / dfil_max * (1.0 + 1e-12) && lo >= 1.0 / dfil_max * (1.0 - 1e-9),
        "{lo} vs 1/{dfil_max}"
    );
    // The RDP comparison is exactly what `bound` reports for the same configuration.
    let (c, b, e) = run(&[
        "bound",
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "0.25",
        "--steps",
        "3",
        "--json",
    ]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        json_raw(&out, "mse_lower_bound_rdp"),
        json_raw(&b, "mse_lower_bound")
    );

    // CSV: one row per training example, in index order.
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("index,label,steps_in_batch,trace,dfil,mse_bound")
    );
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 64);
    let mut bounds = Vec::new();
    let mut sampled = 0;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 6, "{r:?}");
        assert_eq!(r[0], i.to_string());
        assert!(r[1].parse::<u32>().unwrap() < 10);
        let steps: u64 = r[2].parse().unwrap();
        assert!(steps <= 3);
        let trace: f64 = r[3].parse().unwrap();
        let dfil: f64 = r[4].parse().unwrap();
        assert!(
            (dfil - trace / 784.0).abs() <= 1e-12 * dfil.max(1e-300),
            "{r:?}"
        );
        if steps > 0 {
            sampled += 1;
        } else {
            assert_eq!(trace, 0.0, "never sampled: no information, {r:?}");
        }
        if r[5].is_empty() {
            assert_eq!(trace, 0.0, "{r:?}");
        } else {
            let b: f64 = r[5].parse().unwrap();
            assert!(
                b <= 784.0 / trace && b >= 784.0 / trace * (1.0 - 1e-9),
                "{r:?}"
            );
            bounds.push(b);
        }
    }
    assert_eq!(json_num(&out, "fil_examples_sampled"), sampled as f64);
    bounds.sort_by(f64::total_cmp);
    assert_eq!(bounds[0], lo);
    assert_eq!(bounds[bounds.len() - 1], hi);
    assert_eq!(bounds[(bounds.len() - 1) / 2], mid);

    // The histogram: well formed, the two marker lines, bar counts summing to the bounds.
    let svg = std::fs::read_to_string(&plot).unwrap();
    well_formed(&svg).unwrap();
    assert_eq!(svg.matches("<line class=\"marker\"").count(), 2);
    assert!(svg.contains("RDP Thm 1 bound") && svg.contains("MSE = 1 (perfect privacy)"));
    let counted: usize = svg
        .match_indices("data-count=\"")
        .map(|(i, m)| {
            let v = &svg[i + m.len()..];
            v[..v.find('"').unwrap()].parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(counted, bounds.len());
    // The image grid: 8 highest and 8 lowest dFIL among the sampled examples.
    let svg = std::fs::read_to_string(&images).unwrap();
    well_formed(&svg).unwrap();
    assert_eq!(
        svg.matches("<g class=\"image\"").count(),
        2 * sampled.min(8)
    );
    assert!(svg.contains(">highest dFIL</text>") && svg.contains(">lowest dFIL</text>"));
    assert_eq!(svg.matches(">dFIL ").count(), 2 * sampled.min(8));

    // Deterministic: same bytes again; and the FIL observer does not change training.
    let first = (
        text,
        std::fs::read(&plot).unwrap(),
        std::fs::read(&images).unwrap(),
    );
    let (code, again, err) = run_args(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(without_seconds(&out), without_seconds(&again));
    assert_eq!(first.0, std::fs::read_to_string(&csv).unwrap());
    assert_eq!(first.1, std::fs::read(&plot).unwrap());
    assert_eq!(first.2, std::fs::read(&images).unwrap());
    let plain: Vec<String> = args
        .iter()
        .take(12)
        .cloned()
        .chain(["--json".to_string()])
        .collect();
    assert!(!plain.iter().any(|a| a.starts_with("--fil")));
    let (code, plain_out, err) = run_args(&plain);
    assert_eq!(code, 0, "{err}");
    for key in ["test_accuracy", "train_loss", "epsilon_rdp"] {
        assert_eq!(json_raw(&out, key), json_raw(&plain_out, key), "{key}");
    }
}

#[test]
fn train_fil_runs_average_the_seeds_x_to_x_plus_r_minus_1() {
    // Guo Eq. 4: --fil-runs 3 --seed 5 averages the runs with seeds 5, 6, 7 on one split.
    let dir = out_dir("runs");
    let avg = dir.join("avg.csv");
    let (code, out, err) = run_args(&small(&[
        "--seed",
        "5",
        "--fil-runs",
        "3",
        "--json",
        "--fil-out",
        avg.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_num(&out, "fil_runs"), 3.0);
    assert!(
        json_num(&out, "fil_trace_relative_sd_median") >= 0.0,
        "{out}"
    );
    let text = std::fs::read_to_string(&avg).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("index,label,steps_in_batch,trace,dfil,mse_bound,trace_sd,trace_min,trace_max")
    );
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 64);
    // Runs are deterministic and independent of R, so --fil-runs r (r = 1, 2, 3) averages
    // the first r of them: r × its mean is the sum of the traces of the runs with seeds
    // 5..5+r (a single run with --seed 6 would not do: the data split follows --seed).
    let mut sums = vec![vec![0.0f64; 64]; 3];
    for r in 1..=3u64 {
        let f = dir.join(format!("r{r}.csv"));
        let (code, _, err) = run_args(&small(&[
            "--seed",
            "5",
            "--fil-runs",
            &r.to_string(),
            "--fil-out",
            f.to_str().unwrap(),
        ]));
        assert_eq!(code, 0, "{err}");
        for (i, row) in csv_rows(&std::fs::read_to_string(&f).unwrap())
            .iter()
            .enumerate()
        {
            sums[(r - 1) as usize][i] = row[3].parse::<f64>().unwrap() * r as f64;
        }
    }
    for (i, row) in rows.iter().enumerate() {
        let mean: f64 = row[3].parse().unwrap();
        let (sd, lo, hi): (f64, f64, f64) = (
            row[6].parse().unwrap(),
            row[7].parse().unwrap(),
            row[8].parse().unwrap(),
        );
        assert!(
            lo <= mean * (1.0 + 1e-12) && mean <= hi * (1.0 + 1e-12),
            "{row:?}"
        );
        // A sample sd of three values in [lo, hi] is at most 0.58·(hi − lo).
        assert!(
            sd >= 0.0 && sd <= (hi - lo) * (1.0 + 1e-9) + 1e-300,
            "{row:?}"
        );
        // Traces of the individual runs: t1, t2 = 2·m2 − t1, t3 = 3·m3 − 2·m2.
        let t1 = sums[0][i];
        let t2 = sums[1][i] - t1;
        let t3 = sums[2][i] - sums[1][i];
        let scale = hi.max(1e-300);
        // Relative 1e-9: the runs' traces are recovered from means by subtraction.
        assert!(
            ((t1 + t2 + t3) / 3.0 - mean).abs() <= 1e-9 * scale,
            "{row:?}"
        );
        assert!(t1.min(t2).min(t3) >= lo - 1e-9 * scale, "{row:?}");
        assert!(t1.max(t2).max(t3) <= hi + 1e-9 * scale, "{row:?}");
        // Mean of the steps in the batch over the runs, as a number.
        let steps: f64 = row[2].parse().unwrap();
        assert!((0.0..=3.0).contains(&steps), "{row:?}");
    }
}

#[test]
fn train_fil_text_report_rounds_bounds_down_and_dfil_up() {
    let (code, json, err) = run_args(&small(&["--json"]));
    assert_eq!(code, 0, "{err}");
    let (code, text, err) = run_args(&small(&[]));
    assert_eq!(code, 0, "{err}");
    for needle in [
        "Fisher information leakage",
        "κ ",
        "examples ever sampled",
        "per-example MSE ≥ d/Tr(I)",
        "dFIL η̄² = Tr(I)/d",
        "MSE ≥ by RDP (Thm 1)",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let after = |key: &str| -> f64 {
        let i = text.find(key).unwrap() + key.len();
        let v = &text[i..];
        v[..v.find([',', ' ', '\n']).unwrap()].parse().unwrap()
    };
    assert!(after("min ") <= json_num(&json, "fil_mse_bound_min"));
    assert!(after("median ") <= json_num(&json, "fil_mse_bound_median"));
    assert!(after("max ") <= json_num(&json, "fil_mse_bound_max"));
    let line = text
        .lines()
        .find(|l| l.contains("dFIL η̄²"))
        .unwrap()
        .to_string();
    let i = line.find("max ").unwrap() + 4;
    let shown: f64 = line[i..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(shown >= json_num(&json, "fil_dfil_max"), "{line}");
}

#[test]
fn train_fil_on_the_convnet_and_other_sampling_schemes() {
    // The tanh ConvNet of Guo App. C; full batch (κ = 1: q = 1) and shuffled epochs
    // (κ = 1 by default, no RDP comparison).
    let (code, out, err) = run(&[
        "train",
        "--train-size",
        "64",
        "--test-size",
        "50",
        "--steps",
        "2",
        "--batch-size",
        "8",
        "--quiet",
        "--json",
        "--fil",
        "--fil-coords",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_raw(&out, "model"), "\"mnist-convnet\"");
    assert!(json_num(&out, "fil_mse_bound_min") > 0.0, "{out}");
    let mut full = small(&["--sampling", "full", "--json"]);
    let b = full.iter().position(|a| a == "--batch-size").unwrap();
    full.drain(b..b + 2);
    let (code, out, err) = run_args(&full);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_num(&out, "fil_kappa"), 1.0, "{out}");
    assert_eq!(json_num(&out, "fil_examples_sampled"), 64.0, "{out}");
    assert!(json_num(&out, "mse_lower_bound_rdp") > 0.0, "{out}");
    let (code, out, err) = run_args(&small(&["--sampling", "shuffle", "--json"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_num(&out, "fil_kappa"), 1.0, "{out}");
    assert_eq!(json_raw(&out, "fil_step_epsilon"), "null", "{out}");
    assert_eq!(json_raw(&out, "mse_lower_bound_rdp"), "null", "{out}");
    assert!(out.contains("\"mse_lower_bound_rdp_note\""), "{out}");
}

#[test]
fn train_fil_bad_values_exit_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--fil-coords", "0"], "--fil-coords"),
        (&["--fil-coords", "785"], "--fil-coords"),
        (&["--fil-coords", "x"], "--fil-coords"),
        (&["--noise-multiplier", "0"], "--noise-multiplier"),
        (&["--fil-kappa", "bogus"], "--fil-kappa"),
        (&["--fil-runs", "0"], "--fil-runs"),
        (&["--fil-delta", "0"], "--fil-delta"),
        (&["--fil-delta", "1"], "--fil-delta"),
        (&["--fil-kappa", "one", "--fil-delta", "0.1"], "--fil-delta"),
        (
            &["--sampling", "shuffle", "--fil-kappa", "subsampled"],
            "--fil-kappa",
        ),
        (&["--fil-out", "/nonexistent-dir/x.csv"], "--fil-out"),
        (&["--plot="], "--plot"),
    ];
    for (extra, flag) in cases {
        let args = small(extra);
        let (code, out, err) = run_args(&args);
        assert_eq!(code, 2, "{args:?}: stdout {out} stderr {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(out.is_empty());
    }
    for (args, flag) in [
        (&["train", "--model", "logreg", "--fil"][..], "--fil"),
        (&["train", "--fil-coords", "4"][..], "--fil-coords"),
        (&["train", "--plot", "x.svg"][..], "--plot"),
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: stdout {out} stderr {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(out.is_empty());
    }
}

#[test]
fn train_help_documents_the_fil_flags_and_keys() {
    let (code, out, _) = run(&["train", "--help-all"]);
    assert_eq!(code, 0);
    for needle in [
        "--fil ",
        "--fil-coords K",
        "--fil-runs R",
        "--fil-kappa one|subsampled",
        "--fil-delta P",
        "--fil-out FILE.csv",
        "--plot FILE.svg",
        "--fil-images FILE.svg",
        "index,label,steps_in_batch,trace,dfil,mse_bound",
        "trace_sd,trace_min,trace_max",
        "fil_kappa",
        "fil_step_epsilon",
        "fil_step_delta",
        "fil_coords",
        "fil_runs",
        "fil_examples_sampled",
        "fil_mse_bound_min",
        "fil_mse_bound_median",
        "fil_mse_bound_max",
        "fil_dfil_max",
        "mse_lower_bound_rdp",
    ] {
        assert!(out.contains(needle), "train --help lacks {needle:?}");
    }
}
