//! `reconbound report` as a user runs it, on a tiny configuration (|D⁻| = 49, T = 10, 12
//! attack trials, 10 audit trials per world, K = 4 FIL coordinates; about a second each), and
//! the page in a real browser (`render_in_chromium`, run by `.ci/run`, which installs
//! Debian's `chromium` when it is missing).

#[path = "../common/mod.rs"]
mod common;

use common::{args_with, assert_refused, merge_args, run_cli_strings as run_s, temp_dir, write_in};
use reconbound::accounting::{rdp, rero};
use reconbound_cli::format::{sig, Side};
use reconbound_cli::json::{number, parse, Object, Value};
use std::path::{Path, PathBuf};

/// A tiny report (the default m = 10, full batch, ε = 8 at δ = 1e-5).
const SMALL: [&str; 13] = [
    "report",
    "--train-size",
    "49",
    "--steps",
    "10",
    "--trials",
    "12",
    "--audit-trials",
    "10",
    "--fil-coords",
    "4",
    "--seed",
    "3",
];

fn dir(name: &str) -> PathBuf {
    temp_dir("report", name)
}

/// Runs SMALL with `extra`, writing the page to `dir/name`: (page, stdout).
fn report(dir: &Path, name: &str, extra: &[&str]) -> (String, String) {
    let out = dir.join(name);
    let out_s = out.to_string_lossy().into_owned();
    let mut e: Vec<&str> = std::vec!["--out", &out_s, "--quiet"];
    e.extend_from_slice(extra);
    let (code, stdout, err) = run_s(&args_with(&SMALL, &e));
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "--quiet: {err}");
    (std::fs::read_to_string(&out).unwrap(), stdout)
}

fn object(text: &str) -> Object {
    match parse(text.trim()) {
        Ok(Value::Obj(o)) => o,
        other => panic!("not a JSON object: {other:?} in {text}"),
    }
}

fn at<'a>(o: &'a Object, path: &str) -> &'a Value {
    let mut parts = path.split('.');
    let mut cur = o
        .get(parts.next().unwrap())
        .unwrap_or_else(|| panic!("{path}"));
    for p in parts {
        cur = match cur {
            Value::Obj(inner) => inner.get(p).unwrap_or_else(|| panic!("{path}")),
            Value::Arr(items) => &items[p.parse::<usize>().unwrap()],
            other => panic!("{path}: {other:?}"),
        };
    }
    cur
}

fn num(o: &Object, path: &str) -> f64 {
    at(o, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number"))
}

fn sub(o: &Object, key: &str) -> Object {
    match o.get(key) {
        Some(Value::Obj(inner)) => inner.clone(),
        other => panic!("{key}: {other:?}"),
    }
}

/// The page without its wall time (the one number that differs between runs).
fn without_wall_time(page: &str) -> String {
    let start = page
        .find("data-key=\"seconds\"")
        .expect("the page shows its wall time");
    let end = start + page[start..].find("</a>").unwrap();
    format!("{}{}", &page[..start], &page[end..])
}

/// The (key, data-value, shown text) of every number on a page (or a browser's DOM of it).
fn numbers(page: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("data-key=\"") {
        rest = &rest[i + 10..];
        let key = &rest[..rest.find('"').unwrap()];
        let j = rest.find("data-value=\"").unwrap() + 12;
        let value = &rest[j..j + rest[j..].find('"').unwrap()];
        let k = rest.find('>').unwrap() + 1;
        let shown = &rest[k..k + rest[k..].find('<').unwrap()];
        out.push((key.to_string(), value.to_string(), shown.to_string()));
    }
    out
}

/// `x` as the page may show it: `sig(x, d, side)` for some 3 ≤ d ≤ 6 and side, or (a plain
/// value) that without trailing zeros.
fn shows(x: f64, shown: &str) -> bool {
    let trim = |s: &str| -> String {
        let (m, e) = match s.split_once('e') {
            Some((m, e)) => (m, Some(e)),
            None => (s, None),
        };
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        match e {
            Some(e) => format!("{m}e{e}"),
            None => m.to_string(),
        }
    };
    (3..=6).any(|d| {
        [Side::Up, Side::Down, Side::Nearest].iter().any(|&side| {
            let s = sig(x, d, side);
            s == shown || (side == Side::Nearest && trim(&s) == shown)
        })
    })
}

/// Which way the page must round the number at `key`: a lower bound down, an upper bound up
/// (issue 31: lower bounds were printed rounded up), a plain value (an input, a rate, a
/// count) either way.
fn safe_side(key: &str) -> Side {
    let last = key.rsplit('.').next().unwrap_or(key);
    let lower = last.ends_with("_lower")
        || last.starts_with("fil_mse_bound_")
        || matches!(
            last,
            "epsilon_empirical" | "gdp_mu" | "mse_lower_bound" | "mse_lower_bound_rdp"
        );
    let upper = last.ends_with("_upper")
        || matches!(
            last,
            "gamma"
                | "gamma_balle"
                | "epsilon_pld"
                | "epsilon_rdp"
                | "fano_success_bound"
                | "rdp_order2_substitution"
                | "membership_tpr"
                | "advantage"
                | "fil_dfil_max"
                | "fil_kappa"
                | "epsilon_empirical_max"
        );
    match (lower, upper) {
        (true, false) => Side::Down,
        (false, true) => Side::Up,
        _ => Side::Nearest,
    }
}

/// Every number of the page is the JSON's number at its key, exactly (data-value), and shown
/// as the page rounds it (3 to 6 significant digits; integers exactly): a lower bound never
/// above its value, an upper bound never below.
fn assert_page_numbers_are_the_json(page: &str, json: &Object) -> usize {
    let found = numbers(page);
    for (key, value, shown) in &found {
        match at(json, key) {
            Value::Num(x) => {
                assert_eq!(value, &number(*x), "{key}: the page's data-value");
                assert!(shows(*x, shown), "{key}: shows {shown} for {x}");
                let s: f64 = shown.parse().unwrap_or_else(|_| panic!("{key}: {shown}"));
                match safe_side(key) {
                    Side::Down => assert!(s <= *x, "{key}: lower bound {x} shown as {shown}"),
                    Side::Up => assert!(s >= *x, "{key}: upper bound {x} shown as {shown}"),
                    Side::Nearest => {}
                }
            }
            Value::Int(n) => {
                assert_eq!(value, &n.to_string(), "{key}: the page's data-value");
                assert_eq!(shown, &n.to_string(), "{key}");
            }
            other => panic!("{key}: {other:?}"),
        }
    }
    found.len()
}

#[test]
fn same_seed_gives_the_same_page_apart_from_the_wall_time_and_the_json_holds_its_numbers() {
    let d = dir("same");
    let (a, _) = report(&d, "a.html", &[]);
    let (b, json_text) = report(&d, "b.html", &["--json", "--threads", "1"]);
    assert_ne!(a, b, "the --out path and the wall time are on the page");
    assert_eq!(
        without_wall_time(&a).replace("a.html", "b.html"),
        without_wall_time(&b)
    );
    let json = object(&json_text);
    let n = assert_page_numbers_are_the_json(&b, &json);
    // Issue 31: the audit note said "the gap … is mostly the trial count's" also when the
    // audit showed nothing; this small audit shows ε ≥ 0, and the note says so.
    let shown = json
        .get("audit")
        .and_then(|a| match a {
            reconbound_cli::json::Value::Obj(o) => o.get("epsilon_empirical"),
            _ => None,
        })
        .and_then(reconbound_cli::json::Value::as_f64);
    assert_eq!(shown, Some(0.0), "this configuration's audit shows nothing");
    assert!(b.contains("The audit showed nothing (ε ≥ 0)"));
    assert!(
        b.contains("that is nothing: its trials could not tell"),
        "the summary says so too"
    );
    assert!(!b.contains("mostly the trial count"));
    assert!(n > 100, "only {n} numbers on the page");
    // Self-contained: no scripts, no images or styles fetched, inline SVG figures.
    for needle in [
        "<script", "<img", "src=", "<link", "url(", "http://", "https://",
    ] {
        let clean = b.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!clean.contains(needle), "the page contains {needle}");
    }
    assert_eq!(
        b.matches("<svg").count(),
        4,
        "four inline figures: ReRo, the trade-off curve, FIL histogram, images"
    );
    assert!(!b.contains("<?xml"), "SVG prologs stripped");
    // Issue 31: what "unbiased" means and why the MSE bounds do not contradict §2, in words.
    for needle in [
        "uses no prior knowledge",
        "Reading these numbers.",
        "a measured rate with sampling noise",
        "<tr><th>clipping norm C (hard clipping)</th>",
        "(≥ the lower end of its bracket)",
        "a blind guess has a true-positive rate of",
        "success rate at m = <a class=\"num\"",
    ] {
        assert!(b.contains(needle), "the page lacks {needle:?}");
    }
    // Another seed changes the numbers; an --out with a space is quoted in the command.
    let (c, _) = report(&d, "c d.html", &["--seed", "4"]);
    assert_ne!(
        without_wall_time(&c),
        without_wall_time(&b).replace("b.html", "c d.html")
    );
    let quoted = format!("--out &apos;{}&apos;", d.join("c d.html").display());
    assert!(c.contains(&quoted), "{quoted}");
}

/// The command for `args` (SMALL's configuration) with `--json --quiet`, as an object.
fn json_of(args: &[&str]) -> Object {
    let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    a.extend(["--json".to_string()]);
    let (code, out, err) = run_s(&a);
    assert_eq!(code, 0, "{args:?}: {err}");
    object(&out)
}

#[test]
fn the_report_s_numbers_are_those_of_the_commands_and_the_library() {
    let d = dir("library");
    let (_, text) = report(&d, "r.html", &["--json"]);
    let r = object(&text);
    let sigma = num(&r, "config.noise_multiplier");
    let sigma_s = number(sigma);
    // bound --json for the same (q, σ, T, δ, m): the same object.
    let b = json_of(&[
        "bound",
        "--noise-multiplier",
        &sigma_s,
        "--sampling-rate",
        "1",
        "--steps",
        "10",
        "--delta",
        "1e-5",
        "--prior-size",
        "10",
    ]);
    assert_eq!(sub(&r, "bound"), b);
    // σ is the RDP calibration to ε = 8 of the attack's default.
    let s = rdp::calibrate_noise_multiplier(8.0, 1e-5, 1.0, 10, rdp::Conversion::Improved).unwrap();
    assert_eq!(sigma.to_bits(), s.to_bits());
    // The attack and the audit: the commands' own JSON.
    let common = [
        "--train-size",
        "49",
        "--steps",
        "10",
        "--seed",
        "3",
        "--quiet",
    ];
    let mut a = std::vec!["attack", "prior-aware", "--trials", "12"];
    a.extend(common);
    assert_eq!(sub(&r, "attack"), json_of(&a));
    // the full batch: the Gaussian-DP estimate at the likelihood-ratio threshold 0
    let mut a = std::vec![
        "audit",
        "--trials",
        "10",
        "--crafter",
        "gradient-dirac",
        "--distinguisher",
        "3",
        "--estimator",
        "gdp",
        "--threshold",
        "0"
    ];
    a.extend(common);
    assert_eq!(sub(&r, "audit"), json_of(&a));
    // The FIL run: train --fil on N + 1 = 50 examples, same run, without its wall time.
    let t = json_of(&[
        "train",
        "--model",
        "mlp",
        "--train-size",
        "50",
        "--steps",
        "10",
        "--sampling",
        "full",
        "--clip",
        "0.1",
        "--lr",
        "10",
        "--momentum",
        "0",
        "--noise-multiplier",
        &sigma_s,
        "--seed",
        "3",
        "--fil",
        "--fil-coords",
        "4",
        "--quiet",
    ]);
    let mut t_no_time = Object::new();
    for (k, v) in t.entries() {
        if k != "seconds" {
            t_no_time.put(k, v.clone());
        }
    }
    assert_eq!(sub(&r, "train"), t_no_time);
    // The ReRo curve: the library's γ at κ = 1/m, bit for bit.
    let Value::Arr(curve) = at(&r, "rero_curve") else {
        panic!("rero_curve")
    };
    assert!(curve.len() >= 16);
    let orders = rdp::DEFAULT_ORDERS.to_vec();
    let rdp_curve = rdp::rdp_curve(1.0, sigma, 10, &orders).unwrap();
    for (i, _) in curve.iter().enumerate() {
        let m = num(&r, &format!("rero_curve.{i}.prior_size"));
        let h = rero::dpsgd::gamma(1.0 / m, 1.0, sigma, 10).unwrap();
        let bl = rero::balle::gamma_from_rdp(1.0 / m, &orders, &rdp_curve).unwrap();
        assert_eq!(
            num(&r, &format!("rero_curve.{i}.gamma")),
            h.gamma,
            "m = {m}"
        );
        assert_eq!(
            num(&r, &format!("rero_curve.{i}.gamma_lower")),
            h.lower,
            "m = {m}"
        );
        assert_eq!(
            num(&r, &format!("rero_curve.{i}.gamma_balle")),
            bl.gamma,
            "m = {m}"
        );
    }
    // The summary: copies of the sections' numbers (the best score's rate).
    let score = match at(&r, "summary.attack_score") {
        Value::Str(s) => s.clone(),
        other => panic!("{other:?}"),
    };
    for (key, from) in [
        ("summary.gamma", "bound.gamma".to_string()),
        ("summary.epsilon_pld", "bound.epsilon_pld".into()),
        (
            "summary.epsilon_empirical",
            "audit.epsilon_empirical".into(),
        ),
        ("summary.mse_lower_bound", "bound.mse_lower_bound".into()),
        (
            "summary.fil_mse_bound_median",
            "train.fil_mse_bound_median".into(),
        ),
        (
            "summary.attack_success_rate",
            format!("attack.scores.{score}.success_rate"),
        ),
        (
            "summary.attack_success_upper",
            format!("attack.scores.{score}.success_upper"),
        ),
    ] {
        assert_eq!(num(&r, key), num(&r, &from), "{key}");
    }
    for other in ["sum", "top", "loglik"] {
        assert!(
            num(&r, &format!("attack.scores.{other}.success_rate"))
                <= num(&r, "summary.attack_success_rate")
        );
    }
}

#[test]
fn bad_input_exits_2_before_training_and_writes_nothing() {
    let d = dir("bad");
    let page = d.join("page.html");
    let page_s = page.to_string_lossy().into_owned();
    // An unwritable output path.
    let missing = d.join("no-such-folder").join("page.html");
    let missing_s = missing.to_string_lossy().into_owned();
    assert_refused(
        &args_with(&SMALL, &["--out", &missing_s]),
        "--out",
        &missing,
    );
    // A data directory that does not parse.
    let data = d.join("data");
    std::fs::create_dir_all(&data).unwrap();
    write_in(&data, "train-images-idx3-ubyte", "not an IDX file");
    let data_s = data.to_string_lossy().into_owned();
    assert_refused(
        &args_with(&SMALL, &["--out", &page_s, "--data", &data_s]),
        "--data",
        &page,
    );
    // A configuration the PLD cannot certify (δ far below its grid's resolution, with
    // subsampling: a full batch at δ = 1e-300 is certified by the Gaussian tail bound).
    assert_refused(
        &args_with(
            &SMALL,
            &[
                "--out",
                &page_s,
                "--delta",
                "1e-300",
                "--sampling-rate",
                "0.5",
            ],
        ),
        "PLD",
        &page,
    );
    // σ so small that the RDP overflows (issue 43: exit 1 where the help promises 2)
    assert_refused(
        &args_with(&SMALL, &["--out", &page_s, "--noise-multiplier", "1e-300"]),
        "cannot be certified",
        &page,
    );
    // Flags out of range.
    for (extra, needle) in [
        (&["--prior-size", "1"][..], "--prior-size"),
        (&["--fil-coords", "0"][..], "--fil-coords"),
        (&["--fil-coords", "785"][..], "--fil-coords"),
        (&["--trials", "0"][..], "--trials"),
        (&["--audit-trials", "0"][..], "--trials"),
        (&["--steps", "20000000"][..], "--steps"),
        (&["--shard", "2/2"][..], "--shard"),
        (&["--threads", "0"][..], "--threads"),
    ] {
        let mut e = std::vec!["--out", page_s.as_str()];
        e.extend_from_slice(extra);
        assert_refused(&args_with(&SMALL, &e), needle, &page);
    }
    // Nothing left behind in the folder (no temporary file either).
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn shard_files_merge_to_the_unsharded_page() {
    let d = dir("shards");
    let (whole, whole_json) = report(&d, "whole.html", &["--json"]);
    let mut files = Vec::new();
    for k in [1, 0] {
        let (code, lines, err) = run_s(&args_with(
            &SMALL,
            &["--shard", &format!("{k}/2"), "--quiet"],
        ));
        assert_eq!(code, 0, "{err}");
        files.push(write_in(&d, &format!("s{k}.jsonl"), &lines));
    }
    let merged = d.join("whole.html");
    std::fs::remove_file(&merged).unwrap();
    let merged_s = merged.to_string_lossy().into_owned();
    let (code, merged_json, err) = run_s(&merge_args(
        &files.iter().collect::<Vec<_>>(),
        &["--out", &merged_s, "--json"],
    ));
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&merged).unwrap();
    assert_eq!(without_wall_time(&page), without_wall_time(&whole));
    let strip = |text: &str| {
        let o = object(text);
        let mut r = Object::new();
        for (k, v) in o.entries() {
            if k != "seconds" {
                r.put(k, v.clone());
            }
        }
        r
    };
    assert_eq!(strip(&merged_json), strip(&whole_json));
    // A missing shard, a shard of another seed: refused, nothing written.
    std::fs::remove_file(&merged).unwrap();
    let (code, _, err) = run_s(&merge_args(&[&files[0]], &["--out", &merged_s]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing"), "{err}");
    let (_, other, _) = run_s(&args_with(&SMALL, &["--shard", "0/2", "--seed", "9"]));
    let other = write_in(&d, "other.jsonl", &other);
    let (code, _, err) = run_s(&merge_args(&[&files[0], &other], &["--out", &merged_s]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("configuration"), "{err}");
    let (code, _, err) = run_s(&merge_args(&[&files[0], &files[1]], &[]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--out"), "{err}");
    assert!(!merged.exists());
}

/// Chromium, if installed (Debian's `chromium`; `.ci/run` installs it).
fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(|b| b.to_string())
}

fn chromium_run(bin: &str, profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// The page in a real browser: Chromium loads it (offline, from a file), its DOM holds every
/// number of the page with the `--json` values, no image is broken (the page has none: its
/// figures are inline SVG, each laid out with a size), and it renders to a non-blank PNG.
/// Ignored by `cargo test` (it needs Chromium); `.ci/run` runs it with `--ignored`.
#[test]
#[ignore = "needs chromium; run by .ci/run"]
fn render_in_chromium() {
    let bin =
        chromium().expect("chromium is not installed (apt-get install chromium; .ci/run does)");
    let d = dir("chromium");
    let (_, json_text) = report(&d, "page.html", &["--json"]);
    let json = object(&json_text);
    let url = format!("file://{}", d.join("page.html").display());
    let profile = d.join("profile");
    let dom = chromium_run(&bin, &profile, &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    assert!(
        dom.contains("How well could someone reconstruct"),
        "no page: {dom:.300}"
    );
    // The summary's numbers as the browser has them, equal to --json's.
    let summary = &dom[dom.find("id=\"summary\"").unwrap()..dom.find("id=\"config\"").unwrap()];
    let n = assert_page_numbers_are_the_json(summary, &json);
    assert!(n >= 12, "{n} numbers in the summary");
    for key in [
        "summary.gamma",
        "summary.attack_success_rate",
        "summary.epsilon_pld",
    ] {
        assert!(summary.contains(&format!("data-key=\"{key}\"")), "{key}");
    }
    assert!(assert_page_numbers_are_the_json(&dom, &json) > 100);
    // No broken image: no <img> at all, four inline SVG figures with their sizes (ReRo, the
    // trade-off curve, the FIL histogram, the images).
    assert!(!dom.contains("<img"), "an <img> in the DOM");
    assert_eq!(dom.matches("<svg").count(), 4);
    for svg in dom.split("<svg").skip(1) {
        let head = &svg[..svg.find('>').unwrap()];
        assert!(
            head.contains("width=\"") && head.contains("viewBox"),
            "{head}"
        );
    }
    let png = d.join("page.png");
    let shot = chromium_run(
        &bin,
        &profile,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1200,4000",
            "--hide-scrollbars",
        ],
        &url,
    );
    assert!(
        png.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // A blank 1200×4000 page compresses to a few kB; text and figures do not.
    assert!(bytes.len() > 50_000, "screenshot of {} bytes", bytes.len());
    if let Ok(keep) = std::env::var("RECONBOUND_REPORT_PNG") {
        std::fs::copy(&png, keep).unwrap();
    }
}

/// The page check can fail: a shown number off by more than its rounding, a data-value
/// other than the JSON's, a key the JSON lacks.
#[test]
fn the_page_check_catches_a_number_that_is_not_the_json_s() {
    let json = object(r#"{"summary": {"gamma": 0.6128125570358315, "trials": 400}}"#);
    let good = r#"<a data-key="summary.gamma" data-value="0.6128125570358315">0.613</a> <a data-key="summary.trials" data-value="400">400</a>"#;
    assert_eq!(assert_page_numbers_are_the_json(good, &json), 2);
    for bad in [
        good.replace(">0.613<", ">0.615<"),
        // an upper bound rounded down
        good.replace(">0.613<", ">0.612<"),
        good.replace(">0.613<", ">0.6<"),
        good.replace("0.6128125570358315\"", "0.6128125570358316\""),
        good.replace(">400<", ">401<"),
        good.replace("summary.trials", "summary.other"),
    ] {
        let caught = std::panic::catch_unwind(|| assert_page_numbers_are_the_json(&bad, &json));
        assert!(caught.is_err(), "not caught: {bad}");
    }
}

/// The Opacus run of docs/your-library.md (σ 1.1, batch 256 of 60,000, 30 epochs, Opacus's
/// step count) as a run file in `d`, and the page of `report --run` with `extra`: (page, stdout).
fn run_page(d: &Path, page: &str, extra: &[&str]) -> (String, String) {
    let (code, file, err) = run_s(&args_with(
        &[
            "run",
            "--noise-multiplier",
            "1.1",
            "--batch-size",
            "256",
            "--dataset-size",
            "60000",
            "--epochs",
            "30",
            "--counting",
            "opacus",
            "--json",
        ],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    let path = write_in(d, "run.json", &file);
    let out = d.join(page).to_string_lossy().into_owned();
    let (code, stdout, err) = run_s(&args_with(
        &["report", "--run", &path, "--out", &out],
        extra,
    ));
    assert_eq!(code, 0, "{err}");
    (std::fs::read_to_string(&out).unwrap(), stdout)
}

/// Issue 40: the page of the user's run answers first, in one line, against a blind guess; its
/// numbers are the JSON's (bounds rounded to their safe side); the claim's verdict is on it;
/// the JSON's bound and check sections are `bound --run` and `check --run` themselves.
#[test]
fn run_page_answers_first_and_its_numbers_are_the_json() {
    let d = dir("run-page");
    let (page, stdout) = run_page(
        &d,
        "page.html",
        &[
            "--claimed-epsilon",
            "1.5",
            "--delta",
            "1e-5",
            "--library",
            "opacus-gdp",
            "--json",
        ],
    );
    let json = object(&stdout);
    let n = assert_page_numbers_are_the_json(&page, &json);
    assert!(n >= 15, "{n} numbers on the page");
    assert!(page.contains("<h1>Your run:"), "the title says whose run");
    let first = &page[page.find("<section").unwrap()..];
    assert!(first.starts_with("<section id=\"answer\">"), "{first:.200}");
    let answer = match json.get("answer") {
        Some(Value::Str(s)) => s.clone(),
        other => panic!("{other:?}"),
    };
    assert!(answer.starts_with("For this run, a membership attack's true-positive rate at 1 % false positives is at most "), "{answer}");
    assert!(
        answer.contains("(a blind guess: 1 %)") && answer.contains("(a blind guess: 0.1)"),
        "{answer}"
    );
    // 1.5 is below the certified ε of this run (1.634): optimistic, on the page too
    assert_eq!(
        at(&json, "check.verdict"),
        &Value::Str(String::from("optimistic"))
    );
    assert!(page.contains("checked (<a href=\"#claim\">§1</a>): OPTIMISTIC: the claimed ε = 1.5"));
    // the bound section is `bound --run`'s JSON, the check section `check --run`'s
    let path = d.join("run.json").to_string_lossy().into_owned();
    let (_, bound, _) = run_s(&args_with(&["bound", "--run", &path, "--json"], &[]));
    assert_eq!(&sub(&json, "bound"), &object(&bound));
    let (code, check, _) = run_s(&args_with(
        &[
            "check",
            "--run",
            &path,
            "--claimed-epsilon",
            "1.5",
            "--delta",
            "1e-5",
            "--library",
            "opacus-gdp",
            "--json",
        ],
        &[],
    ));
    assert_eq!(code, 3);
    assert_eq!(&sub(&json, "check"), &object(&check));
}

#[test]
fn run_page_refuses_what_it_cannot_account_and_writes_nothing() {
    let d = dir("run-page-refusals");
    let never = d.join("never.html");
    let never_s = never.to_string_lossy().into_owned();
    let fixed = write_in(
        &d,
        "fixed.json",
        "{\"noise_multiplier\": 1, \"batch_size\": 10, \"dataset_size\": 100, \"steps\": 5, \"sampling\": \"fixed-size\"}",
    );
    let poisson = write_in(
        &d,
        "poisson.json",
        "{\"noise_multiplier\": 1, \"sampling_rate\": \"1/100\", \"steps\": 5}",
    );
    for (args, needle) in [
        (
            vec!["report", "--run", &fixed, "--out", &never_s],
            "fixed-size batches have no trade-off curve",
        ),
        (
            vec![
                "report",
                "--run",
                &poisson,
                "--out",
                &never_s,
                "--library",
                "opacus-rdp",
            ],
            "'--library' applies to a claim",
        ),
        (
            vec!["report", "--run", &poisson, "--out", &poisson],
            "--out",
        ),
        (
            vec![
                "report",
                "--run",
                &poisson,
                "--out",
                &never_s,
                "--prior-size",
                "1",
            ],
            "--prior-size = 1",
        ),
    ] {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        assert_refused(&a, needle, &never);
    }
    // the run file was not replaced
    assert!(std::fs::read_to_string(&poisson)
        .unwrap()
        .starts_with("{\"noise_multiplier\""));
}

/// The page of a run in headless Chromium: it renders, its numbers are the JSON's as the
/// browser has them, its two figures are inline SVG with sizes, the screenshot is not blank.
#[test]
#[ignore = "needs chromium; run by .ci/run"]
fn run_page_render_in_chromium() {
    let bin =
        chromium().expect("chromium is not installed (apt-get install chromium; .ci/run does)");
    let d = dir("run-page-chromium");
    let (_, stdout) = run_page(
        &d,
        "page.html",
        &["--claimed-epsilon", "1.5", "--delta", "1e-5", "--json"],
    );
    let json = object(&stdout);
    let url = format!("file://{}", d.join("page.html").display());
    let profile = d.join("profile");
    let dom = chromium_run(&bin, &profile, &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    assert!(dom.contains("Your run:"), "no page: {dom:.300}");
    assert!(assert_page_numbers_are_the_json(&dom, &json) >= 15);
    assert!(!dom.contains("<img"), "an <img> in the DOM");
    assert_eq!(dom.matches("<svg").count(), 2);
    let png = d.join("page.png");
    let shot = chromium_run(
        &bin,
        &profile,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1100,2600",
            "--hide-scrollbars",
        ],
        &url,
    );
    assert!(
        png.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    assert!(bytes.len() > 30_000, "screenshot of {} bytes", bytes.len());
    if let Ok(keep) = std::env::var("RECONBOUND_RUN_PAGE_PNG") {
        std::fs::copy(&png, keep).unwrap();
    }
}

/// Issue 40: the user's own canary scores on the page of their run — the audit's ε and its
/// point beside the certified ones; an audit that beats the certified curve (the negative
/// control: perfectly separated scores, which no trainer of this run can produce) is flagged,
/// a weak one is not; one-run guesses show Steinke et al.'s ε.
#[test]
fn run_page_shows_the_users_audit_and_flags_one_that_beats_the_bound() {
    let d = dir("run-page-audit");
    let mut weak = String::from("world,score\n");
    let mut strong = String::from("world,score\n");
    for i in 0..400u32 {
        let (w, x) = (i % 2, f64::from(i / 2) / 200.0);
        // weak: world 1 shifted by 0.02 of the range; strong: every world-1 score above
        weak.push_str(&format!("{w},{}\n", x + 0.02 * f64::from(w)));
        strong.push_str(&format!("{w},{}\n", x + 2.0 * f64::from(w)));
    }
    let weak = write_in(&d, "weak.csv", &weak);
    let strong = write_in(&d, "strong.csv", &strong);
    let mut guesses = String::from("guess,truth\n");
    for i in 0..1000u32 {
        let truth = i % 2;
        let guess = match i % 10 {
            0..=2 => {
                if truth == 1 {
                    "1"
                } else {
                    "-1"
                }
            } // right
            3 => {
                if truth == 1 {
                    "-1"
                } else {
                    "1"
                }
            } // wrong
            _ => "0",
        };
        guesses.push_str(&format!("{guess},{truth}\n"));
    }
    let guesses = write_in(&d, "guesses.csv", &guesses);
    for (flag, file, above) in [
        ("--scores", &weak, false),
        ("--scores", &strong, true),
        ("--guesses", &guesses, false),
    ] {
        let (page, stdout) = run_page(&d, "page.html", &[flag, file, "--json"]);
        let json = object(&stdout);
        assert_page_numbers_are_the_json(&page, &json);
        assert!(
            page.contains("Your audit, beside the bound"),
            "{flag} {file}"
        );
        let e = num(&json, "audit.epsilon_empirical");
        let certified = num(&json, "bound.epsilon_pld");
        let flagged = page.contains("The audit shows more than the run certifies");
        assert_eq!(flagged, above, "{file}: audit ε {e}, certified {certified}");
        if flag == "--scores" {
            assert_eq!(
                at(&json, "audit_above_curve"),
                &Value::Bool(above),
                "{file}"
            );
        } else {
            assert!(e <= certified, "{e} > {certified}");
            assert_eq!(at(&json, "audit_above_curve"), &Value::Null);
        }
    }
    let never = d.join("never.html");
    let run_file = d.join("run.json").to_string_lossy().into_owned();
    let both: Vec<String> = [
        "report",
        "--run",
        &run_file,
        "--scores",
        &weak,
        "--guesses",
        &guesses,
        "--out",
        &never.to_string_lossy(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_refused(&both, "'--scores' and '--guesses'", &never);
    let onto: Vec<String> = [
        "report", "--run", &run_file, "--scores", &weak, "--out", &weak,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_refused(&onto, "--out", &never);
}

// Issue 43: the pages answer first, say what their numbers mean, and round each number once,
// as the terminal does.

/// The text a reader sees on a page: no style block, no tags (attributes such as data-value
/// hold full precision on purpose), the few entities the pages use decoded.
fn visible_text(page: &str) -> String {
    let mut rest = page;
    if let (Some(a), Some(b)) = (rest.find("<style>"), rest.find("</style>")) {
        let (head, tail) = (&rest[..a], &rest[b + 8..]);
        return visible_text(&format!("{head}{tail}"));
    }
    let mut out = String::new();
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        out.push(' ');
        rest = match rest[i..].find('>') {
            Some(j) => &rest[i + j + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    for (entity, c) in [
        ("&apos;", "'"),
        ("&quot;", "\""),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&amp;", "&"),
    ] {
        out = out.replace(entity, c);
    }
    out
}

/// The decimals of `text` (`12.345`, `0.004266666666666667`, the mantissa of `3.9e-6`) with
/// more than 6 significant digits (an arXiv identifier is not a decimal).
fn long_decimals(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit()
            || (i > 0 && (chars[i - 1].is_ascii_digit() || chars[i - 1] == '.'))
        {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let token: String = chars[start..i].iter().collect();
            let digits = token.replace('.', "");
            // an arXiv identifier is a name, not a number
            let before: String = chars[start.saturating_sub(6)..start].iter().collect();
            if before == "arXiv:" {
                continue;
            }
            if digits.trim_start_matches('0').len() > 6 {
                found.push(token);
            }
        }
    }
    found
}

/// The value `bound`'s table prints in the row labelled exactly `label`.
fn row_value(table: &str, label: &str) -> String {
    table
        .lines()
        .map(str::trim_start)
        .find_map(|l| {
            l.strip_prefix(label)
                .filter(|rest| rest.starts_with("  "))
                .and_then(|rest| rest.split_whitespace().next())
        })
        .unwrap_or_else(|| panic!("no row {label:?} in\n{table}"))
        .to_string()
}

/// The shown text of every number of `page` at `key`.
fn shown_at(page: &str, key: &str) -> Vec<String> {
    numbers(page)
        .into_iter()
        .filter(|(k, _, _)| k == key)
        .map(|(_, _, shown)| shown)
        .collect()
}

/// The part of `page` from `from` to `to`.
fn between<'a>(page: &'a str, from: &str, to: &str) -> &'a str {
    let a = page.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let b = a + page[a..]
        .find(to)
        .unwrap_or_else(|| panic!("no {to:?} after {from:?}"));
    &page[a..b]
}

/// The report's page answers its own question first, in one short paragraph under the title:
/// reconstruction (the tightest certified γ, why, and the blind guess), then membership and
/// the certified ε; the summary's first bullet is reconstruction too, as the title asks.
#[test]
fn the_report_page_answers_reconstruction_first_in_one_paragraph() {
    let d = dir("answer");
    let (page, _) = report(&d, "r.html", &[]);
    let after_sub = &page[page.find("<p class=\"sub\">").unwrap()..];
    let after_sub = &after_sub[after_sub.find("</p>\n").unwrap() + 5..];
    assert!(
        after_sub.starts_with("<section id=\"answer\">"),
        "{after_sub:.300}"
    );
    let answer = between(&page, "<section id=\"answer\">", "</section>");
    assert_eq!(answer.matches("<p>").count(), 1, "one paragraph: {answer}");
    let (r, m) = (
        answer.find("Reconstruction:").expect("reconstruction"),
        answer.find("Membership:").expect("membership"),
    );
    assert!(r < m, "reconstruction first: {answer}");
    for needle in [
        "data-key=\"bound.gamma\"",
        "the tightest certified bound here: the exact 1 − f(κ)",
        "(a blind guess: 1/<a",
        "data-key=\"summary.membership_tpr\"",
        "(a blind guess: 1 %)",
        "data-key=\"summary.epsilon_pld\"",
        "-differentially private by the certified PLD accountant",
    ] {
        assert!(
            answer.contains(needle),
            "the answer lacks {needle:?}: {answer}"
        );
    }
    let summary = between(&page, "id=\"summary\"", "id=\"config\"");
    let reconstruct = summary
        .find("<li>How well could someone reconstruct")
        .expect("a reconstruction bullet");
    let member = summary
        .find("<li>How well could someone tell whether")
        .expect("a membership bullet");
    assert!(reconstruct < member, "the title's question first");
    assert!(page.contains("<h1>How well could someone reconstruct"));
}

/// The run page's one line answers its title's two questions, each with the number to quote
/// (the tightest γ, and why) against the blind guess, then the certified ε; rounded as `bound`.
#[test]
fn the_run_page_answer_names_the_tightest_bound_and_the_certified_epsilon() {
    let d = dir("run-answer");
    let (_, stdout) = run_page(&d, "page.html", &["--json"]);
    let json = object(&stdout);
    let Value::Str(answer) = at(&json, "answer") else {
        panic!("answer")
    };
    let gamma = sig(num(&json, "bound.gamma"), 6, Side::Up);
    let eps = sig(num(&json, "bound.epsilon_pld"), 6, Side::Up);
    let tpr = sig(100.0 * num(&json, "bound.membership.1.tpr"), 4, Side::Up);
    for needle in [
        format!("is at most {tpr} % (a blind guess: 1 %)"),
        format!("succeeds with probability at most {gamma} (a blind guess: 0.1) — γ for DP-SGD (Hayes et al. 2023), the tightest certified bound"),
        format!("the run is ({eps}, 1e-5)-DP by the certified PLD accountant."),
    ] {
        assert!(answer.contains(&needle), "{needle:?} not in {answer}");
    }
}

/// Issue 43: "TPR above 0.225 at FPR 0.01" then "the audit reached FPR ≤ 0.259 with TPR ≥
/// 0.669" read as a contradiction. The audit's corner is read against the curve at its own
/// false-positive rate: the curve's TPR at the first grid point at or above the audit's FPR
/// (the curve rises, so it bounds the curve there), and the audit's TPR is under it.
#[test]
fn the_audit_corner_is_read_against_the_curve_at_its_own_fpr() {
    let d = dir("corner");
    let (page, text) = report(&d, "r.html", &["--json"]);
    let json = object(&text);
    let summary = between(&page, "id=\"summary\"", "id=\"config\"");
    assert!(
        !summary.contains("The audit's attack reached FPR"),
        "{summary}"
    );
    let bullet = between(summary, "<li>How well could someone tell whether", "</li>");
    assert!(
        bullet.contains("at a false-positive rate of its own: at its FPR ≤ "),
        "{bullet}"
    );
    let fpr = num(&json, "summary.audit_fpr_upper");
    let tpr = num(&json, "summary.audit_tpr_lower");
    let keys: Vec<String> = numbers(bullet)
        .into_iter()
        .map(|(k, _, _)| k)
        .filter(|k| k.starts_with("tradeoff_curve."))
        .collect();
    assert_eq!(keys.len(), 2, "the curve's point (TPR, FPR): {keys:?}");
    let i: usize = keys[0].split('.').nth(1).unwrap().parse().unwrap();
    assert_eq!(keys[0], format!("tradeoff_curve.{i}.tpr"));
    assert!(num(&json, &format!("tradeoff_curve.{i}.fpr")) >= fpr);
    assert!(i == 0 || num(&json, &format!("tradeoff_curve.{}.fpr", i - 1)) < fpr);
    assert!(num(&json, &format!("tradeoff_curve.{i}.tpr")) >= tpr);
    assert!(bullet.contains("lies under it, as it must."), "{bullet}");
    assert_page_numbers_are_the_json(&page, &json);
}

/// Issue 43: "the most its trials could show is 23.93" beside ε ≤ 7.438 read as if the audit
/// could beat the guarantee. It is said as a ceiling of the audit's statistics, and whether
/// the audit was large enough to reach the certified ε: SMALL's 10 trials cannot reach ε ≈ 7.4;
/// at σ = 20 (ε ≈ 0.56) they could.
#[test]
fn the_audit_s_ceiling_is_said_as_a_ceiling_of_its_statistics() {
    let d = dir("ceiling");
    for (extra, reach) in [(&[][..], false), (&["--noise-multiplier", "20"][..], true)] {
        let mut e = std::vec!["--json"];
        e.extend_from_slice(extra);
        let (page, text) = report(&d, "r.html", &e);
        let json = object(&text);
        let (max, eps) = (
            num(&json, "summary.epsilon_empirical_max"),
            num(&json, "summary.epsilon_pld"),
        );
        assert_eq!(max >= eps, reach, "{extra:?}: ceiling {max}, ε {eps}");
        assert!(!page.contains("the most its trials could show"));
        let summary = between(&page, "id=\"summary\"", "id=\"config\"");
        let audit = between(&page, "<section id=\"audit\">", "</section>");
        for part in [summary, audit] {
            assert!(
                part.contains("trials per world this audit's estimator cannot show more than ε = ")
                    && part.contains(
                        "(a ceiling of its statistics, reached only without a single error among the trials it scores)"
                    ),
                "{extra:?}: {part}"
            );
            assert_eq!(
                part.contains("so this audit could have reached the guarantee of"),
                reach,
                "{extra:?}"
            );
            assert_eq!(
                part.contains(
                    "this audit is too small to reach it, even if the training leaked everything"
                ),
                !reach,
                "{extra:?}"
            );
        }
        assert_page_numbers_are_the_json(&page, &json);
    }
}

/// Issue 43: `bound` prints γ from RDP by the optimal conversion (0.769 in the issue), the
/// page only Balle's (0.8471). It is beside Balle's wherever the page gives γ from RDP: the
/// summary, §2's text, the attack's table, the figure's caption; and on the run page.
#[test]
fn the_optimal_conversion_gamma_is_beside_balle_s() {
    let d = dir("gamma-rdp");
    let (page, text) = report(&d, "r.html", &["--json"]);
    let json = object(&text);
    let summary = between(&page, "id=\"summary\"", "id=\"config\"");
    let rero = between(&page, "<section id=\"rero\">", "</section>");
    for part in [summary, rero] {
        assert!(part.contains("data-key=\"bound.gamma_rdp\""), "{part}");
        assert!(
            part.contains("Riess et al. 2026 <a href=\"#ref-riess\">"),
            "{part}"
        );
    }
    let attack_row = between(rero, "<tr><td>Alg. 2 (sum)</td>", "</tr>");
    assert!(attack_row.contains("bound.gamma_rdp") && attack_row.contains("attack.gamma_balle"));
    assert!(page.contains("<li id=\"ref-riess\">"));
    let g = sig(num(&json, "bound.gamma_rdp"), 6, Side::Up);
    assert!(shown_at(&page, "bound.gamma_rdp").iter().all(|s| *s == g));
    assert!(num(&json, "bound.gamma_rdp") < num(&json, "bound.gamma_balle"));
    let (run, _) = run_page(&d, "run.html", &[]);
    assert!(run.contains("γ from RDP, optimal conversion, Riess et al. 2026"));
    assert!(run.contains("Riess, Gomez, du Pin Calmon, Schnabel"));
}

/// Issue 43: "full sampling" (train's name for the full batch) on the page's FIL figures; the
/// pages say "full batch", and the figures round σ as the page does.
#[test]
fn the_pages_say_full_batch() {
    let d = dir("full-batch");
    let (page, text) = report(&d, "r.html", &["--json"]);
    let json = object(&text);
    assert!(!page.contains("full sampling"));
    let sigma = num(&json, "config.noise_multiplier");
    let sigma_shown = shown_at(&page, "config.noise_multiplier")[0].clone();
    assert!(shows(sigma, &sigma_shown));
    for figure in page.split("<svg").skip(1) {
        let title_end = figure.find("</svg>").unwrap();
        let figure = &figure[..title_end];
        if figure.contains("σ = ") {
            assert!(
                figure.contains(&format!("σ = {sigma_shown}")),
                "{figure:.600}"
            );
            assert!(figure.contains("full batch"), "{figure:.600}");
        }
    }
    let (run, _) = run_page(&d, "run.html", &[]);
    assert!(!run.contains("full sampling"));
}

/// The x tick labels of the SVG figure `svg` (its `<text … text-anchor="middle">` under the
/// axis) that are numbers.
fn x_ticks(svg: &str) -> Vec<f64> {
    svg.split("text-anchor=\"middle\">")
        .skip(1)
        .filter_map(|t| t[..t.find('<').unwrap_or(0)].parse::<f64>().ok())
        .collect()
}

/// Issue 43: the γ plot's x-axis ran to 1024 (powers of two) for m ≤ 1000. It runs from one
/// power of ten to the next the prior sizes reach: 1 … 1000, on both pages.
#[test]
fn the_gamma_plot_s_axis_ends_at_the_data_s_decade() {
    let d = dir("axis");
    let (page, _) = report(&d, "r.html", &[]);
    let (run, _) = run_page(&d, "run.html", &[]);
    for (name, p) in [("report", &page), ("run", &run)] {
        let svg = p
            .split("<svg")
            .find(|s| s.contains("Reconstruction robustness against the prior size"))
            .unwrap_or_else(|| panic!("{name}: no γ figure"));
        let svg = &svg[..svg.find("</svg>").unwrap()];
        let ticks = x_ticks(svg);
        assert_eq!(ticks, [1.0, 10.0, 100.0, 1000.0], "{name}");
        assert!(!svg.contains(">1024<"), "{name}");
    }
    // with m = 1500 the axis reaches the next power of ten
    let (big, _) = report(&d, "big.html", &["--prior-size", "1500", "--trials", "2"]);
    let svg = big
        .split("<svg")
        .find(|s| s.contains("Reconstruction robustness against the prior size"))
        .unwrap();
    assert_eq!(
        x_ticks(&svg[..svg.find("</svg>").unwrap()]).last(),
        Some(&10_000.0)
    );
}

/// Issue 43: §4 cited Dong, Roth & Su 2022 and Nasr et al. 2023, which were not in the
/// references, and the summary credited the whole audit to Nasr 2021. Every `[n]` links to
/// the n-th reference; the GDP estimate (the full batch) is credited to Nasr et al. 2023, the
/// threat model to Nasr et al. 2021; Poisson sampling's Clopper–Pearson to Nasr et al. 2021.
#[test]
fn every_citation_is_a_listed_reference_and_the_audit_is_credited_for_what_ran() {
    let d = dir("refs");
    for (extra, gdp) in [(&[][..], true), (&["--sampling-rate", "0.5"][..], false)] {
        let mut e = std::vec!["--json"];
        e.extend_from_slice(extra);
        let (page, text) = report(&d, "r.html", &e);
        let json = object(&text);
        assert_eq!(
            at(&json, "audit.estimator"),
            &Value::Str(String::from(if gdp { "gdp" } else { "cp" }))
        );
        let list = between(&page, "<section id=\"refs\">", "</section>");
        let ids: Vec<&str> = list
            .split("<li id=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        for id in ["ref-dong", "ref-nasr2023", "ref-riess", "ref-nasr"] {
            assert!(ids.contains(&id), "{id} not listed: {ids:?}");
        }
        let mut cited = 0;
        for link in page.split("<a href=\"#ref-").skip(1) {
            let id = format!("ref-{}", &link[..link.find('"').unwrap()]);
            let shown = &link[link.find('>').unwrap() + 1..link.find("</a>").unwrap()];
            let n = ids
                .iter()
                .position(|i| *i == id)
                .unwrap_or_else(|| panic!("{id} cited, not listed"))
                + 1;
            assert_eq!(shown, format!("[{n}]"), "{id}");
            cited += 1;
        }
        assert!(cited >= 15, "{cited} citations");
        let audit = between(&page, "<section id=\"audit\">", "</section>");
        assert!(audit.contains("Dong, Roth &amp; Su 2022 <a href=\"#ref-dong\">"));
        let summary = between(&page, "id=\"summary\"", "id=\"config\"");
        assert!(
            summary.contains("Nasr et al. 2021's gradient canary"),
            "{summary}"
        );
        assert_eq!(
            summary.contains("<a href=\"#ref-nasr2023\">"),
            gdp,
            "{summary}"
        );
        assert_eq!(
            audit.contains("Nasr et al. 2023 <a href=\"#ref-nasr2023\">"),
            gdp
        );
        assert_eq!(summary.contains("Clopper–Pearson"), !gdp, "{summary}");
    }
}

/// Issue 43: "page and terminal round the same numbers differently" (γ 0.613 on the page,
/// 0.612813 in `bound`), and the run page printed q = 0.004266666666666667. Each number the
/// page shares with `bound`'s table is shown as the table shows it, wherever it appears; no
/// visible decimal on either page has more than 6 significant digits.
#[test]
fn numbers_are_rounded_once_as_the_terminal_rounds_them() {
    let d = dir("rounding");
    let (page, table) = report(&d, "r.html", &[]);
    for (label, keys) in [
        (
            "γ for DP-SGD",
            &[
                "summary.gamma",
                "bound.gamma",
                "attack.gamma",
                "rero_curve.5.gamma",
            ][..],
        ),
        ("γ from RDP, optimal conversion", &["bound.gamma_rdp"][..]),
        (
            "γ from RDP",
            &[
                "summary.gamma_balle",
                "bound.gamma_balle",
                "attack.gamma_balle",
            ][..],
        ),
        ("success bound by Fano", &["bound.fano_success_bound"][..]),
        (
            "ε(δ) by PLD, certified",
            &[
                "summary.epsilon_pld",
                "bound.epsilon_pld",
                "audit.epsilon_pld",
            ][..],
        ),
        (
            "ε(δ) by RDP, improved conversion",
            &[
                "summary.epsilon_rdp",
                "bound.epsilon_rdp",
                "audit.epsilon_rdp",
            ][..],
        ),
        ("TPR at FPR 1 %", &["summary.membership_tpr"][..]),
        ("advantage max(TPR − FPR)", &["summary.advantage"][..]),
        (
            "MSE ≥",
            &[
                "summary.mse_lower_bound",
                "bound.mse_lower_bound",
                "train.mse_lower_bound_rdp",
            ][..],
        ),
    ] {
        let want = row_value(&table, label);
        for key in keys {
            let shown = shown_at(&page, key);
            assert!(!shown.is_empty(), "{key} is not on the page");
            assert!(
                shown.iter().all(|s| *s == want),
                "{key}: the page shows {shown:?}, `bound` {want}"
            );
        }
    }
    // the report's own terminal lines round γ and ε as the table above them
    let gamma = row_value(&table, "γ for DP-SGD");
    assert!(table.contains(&format!("(γ ≤ {gamma})")), "{table}");
    let eps = row_value(&table, "ε(δ) by PLD, certified");
    assert!(table.contains(&format!("(ε ≤ {eps} by PLD)")), "{table}");
    // the run pages: Opacus's q = 1/235, the default counting's q = 256/60000
    let (run, _) = run_page(&d, "run.html", &[]);
    assert!(run.contains("q = 0.00425532,") && !run.contains("0.00425531914893617"));
    let (code, file, err) = run_s(&args_with(
        &[
            "run",
            "--noise-multiplier",
            "1.1",
            "--batch-size",
            "256",
            "--dataset-size",
            "60000",
            "--epochs",
            "30",
            "--json",
        ],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    let path = write_in(&d, "run-q.json", &file);
    let out = d.join("run-q.html").to_string_lossy().into_owned();
    let (code, _, err) = run_s(&args_with(&["report", "--run", &path, "--out", &out], &[]));
    assert_eq!(code, 0, "{err}");
    let run_q = std::fs::read_to_string(&out).unwrap();
    assert!(run_q.contains("q = 0.00426667"), "{run_q}");
    let (_, bound_run, _) = run_s(&args_with(&["bound", "--run", &path], &[]));
    for (label, key) in [
        ("γ for DP-SGD", "bound.gamma"),
        ("γ from RDP, optimal conversion", "bound.gamma_rdp"),
        ("ε(δ) by PLD, certified", "bound.epsilon_pld"),
        ("TPR at FPR 1 %", "bound.membership.1.tpr"),
        ("MSE ≥", "bound.mse_lower_bound"),
    ] {
        let want = row_value(&bound_run, label);
        let shown = shown_at(&run_q, key);
        assert!(
            !shown.is_empty() && shown.iter().all(|s| *s == want),
            "{key}: {shown:?}, `bound` {want}"
        );
    }
    // no decimal a reader sees has more than 6 significant digits (the audit section too)
    let mut scores = String::from("world,score\n");
    for i in 0..200u32 {
        scores.push_str(&format!("{},{}\n", i % 2, f64::from(i) / 200.0));
    }
    let scores = write_in(&d, "scores.csv", &scores);
    let (audited, _) = run_page(&d, "audited.html", &["--scores", &scores]);
    for (name, p) in [
        ("report", &page),
        ("run", &run),
        ("run-q", &run_q),
        ("audited", &audited),
    ] {
        let long = long_decimals(&visible_text(p));
        assert!(long.is_empty(), "{name}: {long:?}");
    }
    // the scan can fail
    assert_eq!(
        long_decimals("q = 0.004266666666666667, γ ≤ 0.612813, 3.90586e-6, arXiv:2602.04562"),
        ["0.004266666666666667"]
    );
}

/// Issue 43: a bound of 1 said as "≤ 1.000" read as if the attack always won. At σ = 0.5
/// Balle's γ, Fano's bound and the membership TPR are 1 (or round up to it): the page says
/// "no information", nowhere "≤ 1.000".
#[test]
fn vacuous_bounds_say_no_information() {
    let d = dir("vacuous");
    for (extra, fano) in [(&[][..], false), (&["--noise-multiplier", "0.5"][..], true)] {
        let mut e = std::vec!["--json"];
        e.extend_from_slice(extra);
        let (page, text) = report(&d, "r.html", &e);
        let json = object(&text);
        assert!(num(&json, "rero_curve.0.gamma_balle") >= 1.0);
        let row = between(&page, "<tr><td class=\"r\"><a class=\"num\" href=\"#rero\" data-key=\"rero_curve.0.prior_size\"", "</tr>");
        assert!(row.contains("no information"), "{row}");
        assert!(!row.contains("rero_curve.0.gamma_balle"), "{row}");
        let text = visible_text(&page);
        for one in ["≤ 1.0 ", "≤ 1.00", "≤ 1 ", "is 1.0"] {
            assert!(!text.contains(one), "{extra:?}: {one:?} on the page");
        }
        assert_eq!(num(&json, "bound.fano_success_bound") >= 1.0, fano);
        let rero = between(&page, "<section id=\"rero\">", "</section>");
        assert_eq!(
            rero.contains("(worst-case sensitivity Δ² = 4): no information (the bound is 1)"),
            fano,
            "{rero}"
        );
        if fano {
            let answer = between(&page, "<section id=\"answer\">", "</section>");
            assert!(answer.contains("— no information"), "{answer}");
            assert!(
                answer.contains("no information on a membership attack's"),
                "{answer}"
            );
        }
        assert_page_numbers_are_the_json(&page, &json);
    }
}
