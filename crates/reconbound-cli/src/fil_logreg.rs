//! `reconbound fil-logreg`: per-example Fisher information leakage of output-perturbed
//! logistic regression on two MNIST digits (Guo et al. 2022, Sec. 7.1), beside the RDP bound.

use super::args::{parse, switch as s, value as v, Flags, UsageError};
use super::failure::Failure;
use super::format::{sig, Side};
use super::json::{Object, Value};
use reconbound::accounting::fil::logreg::{
    embedded_output_perturbation_fil, output_perturbation_fil, projected_output_perturbation_fil,
    InputSpace, LogregFil,
};
use reconbound::data::{self, Dataset};
use reconbound::error::check_positive;
use reconbound::rng::Rng;
use reconbound::train::logreg::{self, LinearEmbedding};
use std::format;
use std::string::String;
use std::time::Instant;
use std::vec::Vec;

type Out = Result<String, Failure>;

/// Documented defaults of `reconbound fil-logreg` (Guo et al. 2022, Sec. 7.1).
pub(crate) mod defaults {
    /// The two digits (first → label 0, second → label 1).
    pub const DIGITS: [u32; 2] = [0, 1];
    /// λ.
    pub const LAMBDA: f64 = 1e-2;
    /// σ of the output noise.
    pub const NOISE: f64 = 1e-2;
    /// Fraction of the two-digit examples held out for testing (rounded).
    pub const TEST_FRACTION: f64 = 0.2;
}

const HELP: &str = "\
usage: reconbound fil-logreg [--data embedded|<idx dir>] [--digits A,B] [--lambda L] [--noise S]
                             [--train-size N] [--seed X]
                             [--space pixels|unit-ball|intercept|scaled] [--out FILE.csv] [--json]

Guo et al. 2022 Sec. 7.1: output-perturbed L2-regularised logistic regression (no intercept,
exact minimiser w* by Newton's method, released w* + N(0, S²I)) on digit A (label 0) vs digit B
(label 1) of MNIST. For every training example x: the Fisher information of the release about
x, I = JᵀJ/S² with J = ∂w*/∂x by the implicit function theorem (exact, closed form; it does not
depend on the noise draw, so no averaging over runs is needed), its trace, the dFIL Tr(I)/d and
the Thm 2 bound MSE ≥ d/Tr(I) for unbiased reconstructions; beside them the (2, ε)-RDP,
ε = 4/(nλS)², and the Thm 1 bound MSE ≥ 1/(4(e^ε − 1)) (diameter 1 per coordinate).

Unit ball: ε needs ‖x‖ ≤ 1, but MNIST images in [0, 1]^784 have norms ≈ 9–10 (Guo et al.'s code
does not normalise, so their ε is not a guarantee for their data). The mechanism here first
projects every image onto the unit ball (x/(t‖x‖) when t‖x‖ > 1, t = 1 + (d + 4)·2⁻⁵² so that the result is inside), then trains. --space pixels
(default): the FIL and the MSE are about the raw image in [0, 1]^784 (chain rule through the
projection), comparable with Guo's Fig. 2; 'perfect privacy' = bound ≥ 1 (any guess in
[0, 1]^d has MSE ≤ 1). --space unit-ball: about the projected image; the worst guess in
[0, 1]^d ∩ unit ball has MSE 2/d, the perfect-privacy line. --space intercept: the mechanism
maps every image by the fixed linear embedding x ↦ (c₀, a·x), c₀ = 1/(t√2), a = 1/(t√(2d)) (a
regularised constant feature: an intercept; ‖(c₀, a·x)‖ ≤ 1 on [0, 1]^d, so ε stays a guarantee)
and the FIL and MSE are about the raw image (the model of 'reconbound attack glm'); --space
scaled: x ↦ a·x, a = 1/(t√d), no intercept (as 'attack glm --no-intercept'). Both: perfect
privacy = bound ≥ 1.

Data: embedded (the 2,000 MNIST images shipped with the crate) or a directory of MNIST IDX
files. Split: N training examples (default 80 % of the two digits) and the rest for testing,
drawn with --seed exactly as 'reconbound train --model logreg' does (N = all: no test set). The
test accuracy is that of the released model (noise from --seed) and of w*.

Defaults: --data embedded --digits 0,1 --lambda 0.01 --noise 0.01 --seed 0 --space pixels.
Printed bounds are rounded to the safe side: MSE bounds down, ε and dFIL up.
--out writes one CSV row per training example: index (in the training set), label (0/1),
trace, dfil, mse_bound (empty if the trace is 0: no bound), digit, source_index (in --data).

JSON keys: command, data, digits, space, train_size, test_size, dim, lambda, noise_std, seed,
max_input_norm, newton_iterations, gradient_norm_relative, test_accuracy,
test_accuracy_nonprivate (null without a test set), rdp_order2, rdp_mse_bound,
fil_mse_bound_min, fil_mse_bound_median (lower median), fil_mse_bound_max, dfil_max,
trivial_mse, perfect_privacy_count, margin, out (null without --out), seconds.
Everything but seconds is identical across runs with the same flags.
";

/// `fil-logreg --help` (issue 43: it fits a screen; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound fil-logreg [--data embedded|<idx dir>] [--digits A,B] [--lambda L] [--noise S]
                             [--train-size N] [--seed X]
                             [--space pixels|unit-ball|intercept|scaled] [--out FILE.csv] [--json]

How well could an unbiased attacker reconstruct each training image of an output-perturbed
logistic regression (Guo et al. 2022 §7.1: w* + N(0, S²I), digit A vs digit B of MNIST)? Per
example, exactly: the Fisher information leakage and the bound MSE ≥ d/Tr(I), beside the
(2, ε)-RDP bound MSE ≥ 1/(4(e^ε − 1)). Printed bounds are rounded to the safe side.

Common flags (defaults in brackets):
  --data D          embedded (the 2,000 MNIST images shipped with the crate) or a directory
                    of MNIST IDX files [embedded]
  --digits A,B      the two digits (labels 0 and 1) [0,1]
  --lambda L        the L2 regularisation [0.01]
  --noise S         the output noise's standard deviation [0.01]
  --train-size N    training examples, or all (no test set) [80 % of the two digits]
  --space P         what the bounds are about: pixels (the raw image), unit-ball, intercept
                    or scaled [pixels]
  --out FILE.csv    one row per training example
  --json            every number at full precision, as JSON

Example (digits 3 vs 8 at ten times the default noise):
  reconbound fil-logreg --digits 3,8 --noise 0.1
";

/// The stream of `Rng::for_trial(seed, ·)` that seeds the split (as `reconbound train`).
const SPLIT_STREAM: u64 = u64::MAX;

pub(super) fn usage(msg: String) -> Failure {
    Failure::Usage(UsageError(msg))
}

pub(super) fn shown(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(80).collect()
}

fn load_mnist(spec: &str) -> Result<Dataset, Failure> {
    if spec == "embedded" {
        return Ok(data::embedded_mnist()?);
    }
    let path = std::path::Path::new(spec);
    if !path.is_dir() {
        return Err(usage(format!(
            "--data: '{}' is neither 'embedded' nor a directory of MNIST IDX files",
            shown(spec)
        )));
    }
    super::train::check_idx_files(path)?;
    data::idx::mnist_from_dir(path).map_err(|e| {
        usage(format!(
            "--data: cannot load '{}': {}",
            shown(spec),
            super::failure::data_error(&e)
        ))
    })
}

fn parse_digits(f: &Flags) -> Result<[u32; 2], Failure> {
    let Some(raw) = f.raw("digits") else {
        return Ok(defaults::DIGITS);
    };
    let bad = || {
        usage(format!(
            "flag '--digits': '{}' is not two distinct labels A,B",
            shown(raw)
        ))
    };
    let parts: Vec<&str> = raw.split(',').map(str::trim).collect();
    let [a, b] = parts.as_slice() else {
        return Err(bad());
    };
    let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
        return Err(bad());
    };
    if a == b {
        return Err(bad());
    }
    Ok([a, b])
}

/// The two-digit training and test sets of `fil-logreg` and `attack glm`.
pub(super) struct TwoDigitSplit {
    /// The two digits (first → label 0, second → label 1).
    pub digits: [u32; 2],
    /// Training examples, raw pixels in [0, 1]^d, flattened.
    pub train: Dataset,
    /// Test examples (raw, flattened); `None` when every example trains.
    pub test: Option<Dataset>,
    /// For each training example, its index in `--data`.
    pub train_source: Vec<usize>,
    /// The images' (channels, height, width) before flattening.
    pub image_shape: (usize, usize, usize),
}

impl TwoDigitSplit {
    /// Number of test examples.
    pub fn test_size(&self) -> usize {
        self.test.as_ref().map_or(0, Dataset::len)
    }
}

/// `--data`, `--digits` and `--train-size`: the two digits of MNIST, split into N training
/// examples (default 80 %) and the rest for testing, by `Rng::for_trial(seed, u64::MAX)` as
/// `reconbound train --model logreg` draws it.
pub(super) fn load_two_digit_split(
    f: &Flags,
    data_spec: &str,
    seed: u64,
) -> Result<TwoDigitSplit, Failure> {
    let digits = parse_digits(f)?;
    let train_size_flag = f.u64("train-size")?;
    let loaded = load_mnist(data_spec)?;
    let image_shape = loaded.shape();
    for d in digits {
        if d as usize >= loaded.num_classes() {
            return Err(usage(format!(
                "--digits: {d} is not a label of --data (labels 0..={})",
                loaded.num_classes().saturating_sub(1)
            )));
        }
    }
    let source_index: Vec<usize> = loaded
        .labels()
        .iter()
        .enumerate()
        .filter(|(_, &y)| digits.contains(&y))
        .map(|(i, _)| i)
        .collect();
    let two = loaded
        .filter_labels(&digits)
        .map_err(|e| {
            usage(format!(
                "--digits: no examples of digits {} and {} in --data ({e})",
                digits[0], digits[1]
            ))
        })?
        .flatten();
    drop(loaded);
    let counts = two.class_counts();
    if counts.contains(&0) {
        return Err(usage(format!(
            "--digits: --data has {} examples of digit {} and {} of digit {}: both are needed",
            counts.first().copied().unwrap_or(0),
            digits[0],
            counts.get(1).copied().unwrap_or(0),
            digits[1]
        )));
    }
    let n_all = two.len();
    let default_test =
        (libm::round(n_all as f64 * defaults::TEST_FRACTION) as usize).clamp(1, n_all - 1);
    let train_size = match train_size_flag {
        Some(t) => usize::try_from(t).unwrap_or(usize::MAX),
        None => n_all - default_test,
    };
    if train_size == 0 || train_size > n_all {
        return Err(usage(format!(
            "--train-size = {} is out of range: must be in 1..={n_all} (examples of digits {} and {})",
            train_size_flag.unwrap_or(0),
            digits[0],
            digits[1]
        )));
    }
    let rest = n_all - train_size;
    let (train_idx, test_idx) = if rest == 0 {
        ((0..n_all).collect::<Vec<_>>(), Vec::new())
    } else {
        let split_seed = Rng::for_trial(seed, SPLIT_STREAM).next_u64();
        let test = Rng::from_seed(split_seed).subset(n_all, rest)?;
        (reconbound::data::complement(n_all, &test), test)
    };
    let train = two.subset(&train_idx)?;
    let test = if test_idx.is_empty() {
        None
    } else {
        Some(two.subset(&test_idx)?)
    };
    let train_source = train_idx
        .iter()
        .map(|&i| source_index.get(i).copied().unwrap_or(usize::MAX))
        .collect();
    Ok(TwoDigitSplit {
        digits,
        train,
        test,
        train_source,
        image_shape,
    })
}

/// The output file of flag `--name`, if given, after checking that its folder exists (so
/// that a bad path fails before any computation and nothing is written).
pub(super) fn output_path(f: &Flags, name: &str) -> Result<Option<String>, Failure> {
    let Some(p) = f.raw(name) else {
        return Ok(None);
    };
    if p.is_empty() {
        return Err(usage(format!("flag '--{name}' needs a file name")));
    }
    let path = std::path::Path::new(p);
    if path.is_dir() {
        return Err(usage(format!(
            "--{name}: cannot write '{}': it is a folder",
            shown(p)
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(usage(format!(
                "--{name}: cannot write '{}': its folder does not exist",
                shown(p)
            )));
        }
    }
    super::output::check_writable(name, p)?;
    Ok(Some(String::from(p)))
}

/// Safe-side summary of the MSE bounds: (min, lower median, max); `None` bounds (trace 0)
/// count as +∞.
fn summary(fil: &LogregFil) -> (f64, f64, f64) {
    let b: Vec<f64> = fil
        .examples
        .iter()
        .map(|e| e.mse_bound.unwrap_or(f64::INFINITY))
        .collect();
    super::format::min_median_max(b)
}

/// `  label` padded to the value column, the value, then a note.
pub(super) fn row(t: &mut String, label: &str, value: &str, note: &str) {
    let pad = 36usize.saturating_sub(label.chars().count());
    t.push_str("  ");
    t.push_str(label);
    t.extend(core::iter::repeat_n(' ', pad));
    t.push_str(value);
    if !note.is_empty() {
        let pad = 12usize.saturating_sub(value.chars().count()).max(1);
        t.extend(core::iter::repeat_n(' ', pad));
        t.push_str(note);
    }
    t.push('\n');
}

pub(super) fn num_or_null(o: &mut Object, key: &str, x: Option<f64>) {
    match x {
        Some(x) => o.num(key, x),
        None => o.put(key, Value::Null),
    };
}

pub(crate) fn fil_logreg(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("data"),
            v("digits"),
            v("lambda"),
            v("noise"),
            v("train-size"),
            v("seed"),
            v("space"),
            v("out"),
            s("json"),
        ],
    )?;
    if f.help {
        return Ok(f.help_text("fil-logreg", SHORT_HELP, String::from(HELP)));
    }
    super::output::check_flag_paths(&f, &["out"], &["data"], &[])?;
    let lambda = f.f64("lambda")?.unwrap_or(defaults::LAMBDA);
    check_positive("lambda", lambda)?;
    let noise = f.f64("noise")?.unwrap_or(defaults::NOISE);
    check_positive("noise", noise)?;
    let seed = f.u64("seed")?.unwrap_or(0);
    let space = match f.raw("space").unwrap_or("pixels") {
        "pixels" => InputSpace::Projected,
        "unit-ball" => InputSpace::UnitBall,
        "intercept" => InputSpace::Embedded { intercept: true },
        "scaled" => InputSpace::Embedded { intercept: false },
        other => {
            return Err(usage(format!(
                "flag '--space': '{}' is not one of pixels, unit-ball, intercept, scaled",
                other.chars().take(20).collect::<String>()
            )))
        }
    };
    let data_spec = f.raw("data").unwrap_or("embedded");
    let out_path = output_path(&f, "out")?;
    let out_path = out_path.as_deref();

    let start = Instant::now();
    let split = load_two_digit_split(&f, data_spec, seed)?;
    let digits = split.digits;
    let train_raw = &split.train;
    let max_input_norm = train_raw.max_l2_norm();

    let embedding = match space {
        InputSpace::Embedded { intercept } => {
            Some(LinearEmbedding::new(train_raw.dim(), intercept)?)
        }
        InputSpace::Projected | InputSpace::UnitBall => None,
    };
    let fil = match (space, &embedding) {
        (_, Some(e)) => embedded_output_perturbation_fil(train_raw, e, lambda, noise),
        (InputSpace::UnitBall, None) => {
            output_perturbation_fil(&train_raw.clone().project_to_unit_ball(), lambda, noise)
        }
        (_, None) => projected_output_perturbation_fil(train_raw, lambda, noise),
    }
    .map_err(|e| match e {
        reconbound::Error::InvalidParameter {
            name: "noise_std", ..
        } => usage(format!(
            "--noise = {noise} is out of range: must be finite and > 0"
        )),
        other => Failure::from(other),
    })?;
    // The released model: w* + N(0, S²I) from Rng::for_trial(seed, 0), as
    // train::logreg::output_perturbation draws it.
    let released = logreg::perturb(&fil.fit.weights, noise, seed, 0)?;
    let test_set = match (&split.test, &embedding) {
        (None, _) => None,
        (Some(t), Some(e)) => Some(e.embed_dataset(t)?),
        (Some(t), None) => Some(t.clone().project_to_unit_ball()),
    };
    let (acc, acc_np) = match &test_set {
        Some(t) => (
            Some(logreg::accuracy(&released, t)?),
            Some(logreg::accuracy(&fil.fit.weights, t)?),
        ),
        None => (None, None),
    };
    let (b_min, b_median, b_max) = summary(&fil);
    let dfil_max = fil.examples.iter().map(|e| e.dfil).fold(0.0, f64::max);
    let perfect = fil
        .examples
        .iter()
        .filter(|e| e.mse_bound.is_none_or(|b| b >= fil.trivial_mse))
        .count();
    let relative = if fil.fit.initial_gradient_norm > 0.0 {
        fil.fit.gradient_norm / fil.fit.initial_gradient_norm
    } else {
        0.0
    };

    if let Some(path) = out_path {
        let mut csv = String::from("index,label,trace,dfil,mse_bound,digit,source_index\n");
        for e in &fil.examples {
            let bound = match e.mse_bound {
                Some(b) => format!("{b:?}"),
                None => String::new(),
            };
            let source = split
                .train_source
                .get(e.index)
                .copied()
                .unwrap_or(usize::MAX);
            let digit = digits.get(e.label as usize).copied().unwrap_or(u32::MAX);
            csv.push_str(&format!(
                "{},{},{:?},{:?},{bound},{digit},{source}\n",
                e.index, e.label, e.trace, e.dfil
            ));
        }
        super::output::write_whole("out", path, &csv)?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let space_name = match space {
        InputSpace::Projected => "pixels",
        InputSpace::UnitBall => "unit-ball",
        InputSpace::Embedded { intercept: true } => "intercept",
        InputSpace::Embedded { intercept: false } => "scaled",
    };

    if f.has("json") {
        let mut o = Object::new();
        o.str("command", "fil-logreg")
            .str("data", data_spec)
            .put(
                "digits",
                Value::Arr(digits.iter().map(|&d| Value::Int(u64::from(d))).collect()),
            )
            .str("space", space_name)
            .int("train_size", fil.n as u64)
            .int("test_size", split.test_size() as u64)
            .int("dim", fil.d as u64)
            .num("lambda", lambda)
            .num("noise_std", noise)
            .int("seed", seed)
            .num("max_input_norm", max_input_norm)
            .int("newton_iterations", u64::from(fil.fit.iterations))
            .num("gradient_norm_relative", relative);
        num_or_null(&mut o, "test_accuracy", acc);
        num_or_null(&mut o, "test_accuracy_nonprivate", acc_np);
        o.num("rdp_order2", fil.rdp_order2)
            .num("rdp_mse_bound", fil.rdp_mse_bound)
            .num("fil_mse_bound_min", b_min)
            .num("fil_mse_bound_median", b_median)
            .num("fil_mse_bound_max", b_max)
            .num("dfil_max", dfil_max)
            .num("trivial_mse", fil.trivial_mse)
            .int("perfect_privacy_count", perfect as u64)
            .num("margin", fil.margin);
        match out_path {
            Some(p) => o.str("out", p),
            None => o.put("out", Value::Null),
        };
        o.num("seconds", seconds);
        return Ok(o.render() + "\n");
    }

    let d = fil.d;
    let mut t = format!(
        "reconbound fil-logreg: Fisher information leakage of output-perturbed logistic regression (Guo et al. 2022 §7.1)\n\
         \x20 digits {} (label 0) vs {} (label 1) of {data_spec}: {} training / {} test examples, d = {d}\n",
        digits[0],
        digits[1],
        fil.n,
        split.test_size(),
    );
    match space {
        InputSpace::Projected => t.push_str(&format!(
            "  inputs: raw pixels in [0, 1]^{d} (largest norm {}), projected onto the unit ball by the mechanism; FIL and MSE about the raw pixels\n",
            sig(max_input_norm, 4, Side::Nearest)
        )),
        InputSpace::UnitBall => t.push_str(&format!(
            "  inputs: images projected onto the unit ball (largest raw norm {}); FIL and MSE about the projected images\n",
            sig(max_input_norm, 4, Side::Nearest)
        )),
        InputSpace::Embedded { intercept } => t.push_str(&format!(
            "  inputs: raw pixels in [0, 1]^{d} (largest norm {}) mapped by the fixed linear embedding {}; FIL and MSE about the raw pixels\n",
            sig(max_input_norm, 4, Side::Nearest),
            if intercept {
                "x ↦ (c₀, a·x), c₀ = 1/(t√2), a = 1/(t√(2d)) (an intercept)"
            } else {
                "x ↦ a·x, a = 1/(t√d) (no intercept)"
            }
        )),
    }
    t.push_str(&format!(
        "  λ = {lambda}, output noise σ = {noise}, seed {seed}; Newton: {} iterations, final gradient norm {} relative to w = 0\n\n",
        fil.fit.iterations,
        sig(relative, 3, Side::Up),
    ));
    match (acc, acc_np) {
        (Some(a), Some(b)) => row(
            &mut t,
            "test accuracy",
            &sig(a, 6, Side::Nearest),
            &format!(
                "released model (seed {seed}); non-private w*: {}",
                sig(b, 6, Side::Nearest)
            ),
        ),
        _ => row(
            &mut t,
            "test accuracy",
            "-",
            "no test set (--train-size = all)",
        ),
    }
    row(
        &mut t,
        "(2, ε)-RDP, ε = 4/(nλσ)²",
        &sig(fil.rdp_order2, 6, Side::Up),
        "upper bound (Guo et al.: n = 12665 gives 2.49)",
    );
    let thm1_note = if fil.rdp_mse_bound > 0.0 {
        String::from("1/(4(e^ε − 1)), diameter 1 per coordinate")
    } else {
        // 1/(4(e^ε − 1)) < e^{−ε}/2 underflows: say how small it is.
        format!(
            "1/(4(e^ε − 1)) < 10^{} underflows; diameter 1 per coordinate",
            sig(
                -fil.rdp_order2 / core::f64::consts::LN_10 + 0.01,
                6,
                Side::Up
            )
        )
    };
    row(
        &mut t,
        "MSE ≥ (Thm 1, from RDP)",
        &sig(fil.rdp_mse_bound, 6, Side::Down),
        &thm1_note,
    );
    row(
        &mut t,
        "MSE ≥ d/Tr(I) (Thm 2): min",
        &sig(b_min, 6, Side::Down),
        "per-example lower bounds for unbiased attacks",
    );
    row(
        &mut t,
        "                   median",
        &sig(b_median, 6, Side::Down),
        "(lower median)",
    );
    row(
        &mut t,
        "                   max",
        &sig(b_max, 6, Side::Down),
        "",
    );
    row(
        &mut t,
        "dFIL Tr(I)/d: max",
        &sig(dfil_max, 6, Side::Up),
        "upper bound",
    );
    let line = match space {
        InputSpace::Projected | InputSpace::Embedded { .. } => {
            String::from("bound ≥ 1: any guess in [0, 1]^d has MSE ≤ 1")
        }
        InputSpace::UnitBall => format!(
            "bound ≥ 2/d = {}: any guess in [0, 1]^d ∩ unit ball has MSE ≤ 2/d",
            sig(fil.trivial_mse, 6, Side::Nearest)
        ),
    };
    row(
        &mut t,
        "perfect privacy",
        &format!("{perfect} of {}", fil.n),
        &line,
    );
    if let Some(p) = out_path {
        row(
            &mut t,
            "per-example rows",
            &shown(p),
            "index,label,trace,dfil,mse_bound,digit,source_index",
        );
    }
    row(&mut t, "wall time", &format!("{seconds:.2} s"), "");
    Ok(t)
}
