//! `reconbound attack glm`: the GLM reconstruction attack (Balle et al. 2022, §III) against
//! output-perturbed logistic regression, every training example as the target, against its
//! per-example FIL bound (Guo et al. 2022, §7.2, Figs. 3 and 4).

use super::args::{parse, switch as s, value as v};
use super::failure::Failure;
use super::fil_logreg::{
    defaults, load_two_digit_split, num_or_null, output_path, row, shown, usage,
};
use super::format::{sig, Side};
use super::json::{Object, Value};
use super::svg;
use reconbound::accounting::fil::logreg::embedded_output_perturbation_fil;
use reconbound::attacks::glm::{AllTargets, CandidateStatus};
use reconbound::error::check_positive;
use reconbound::math::beta::beta_inc_inv;
use reconbound::train::logreg::{self, LinearEmbedding};
use std::format;
use std::string::String;
use std::time::Instant;
use std::vec::Vec;

type Out = Result<String, Failure>;

/// Documented defaults of `reconbound attack glm` (λ that of `fil-logreg`, σ Guo et al.'s
/// §7.2).
mod glm_defaults {
    /// Output noise σ: Guo et al. 2022 §7.2 (Figs. 3–4), small enough that the most exposed
    /// examples are reconstructed.
    pub const NOISE: f64 = 1e-5;
    /// Noise draws of the release.
    pub const TRIALS: u64 = 10;
    /// Largest number of noise draws.
    pub const MAX_TRIALS: u64 = 1_000_000;
    /// Examples per row of the `--images` grid.
    pub const IMAGES_PER_ROW: usize = 8;
    /// Two-sided level of the Monte Carlo interval.
    pub const CONFIDENCE: f64 = 0.95;
}

const HELP: &str = "\
usage: reconbound attack glm [--data embedded|<idx dir>] [--digits A,B] [--lambda L] [--noise S]
                             [--train-size N] [--trials R] [--seed X] [--no-intercept]
                             [--out FILE.csv] [--plot FILE.svg] [--images FILE.svg] [--json]
                             [--quiet]

The GLM attack of Balle et al. 2022 (§III) as evaluated by Guo et al. 2022 (§7.2) against
output-perturbed L2-regularised logistic regression on digit A (label 0) vs digit B (label 1)
of MNIST. The model: every raw image x ∈ [0, 1]^d goes through the fixed linear embedding
x_aug = (c₀, a·x), c₀ = 1/(t√2), a = 1/(t√(2d)), t = 1 + (d + 8)·2⁻⁵² — a regularised constant
feature (an intercept) with ‖x_aug‖ ≤ 1, so (2, ε)-RDP with ε = 4/(nλS)² is a guarantee — then
w* = argmin (1/n)Σ ℓ + (λ/2)‖w‖² (Newton) is released as w̃ = w* + N(0, S²I).
--no-intercept: x_aug = a·x, a = 1/(t√d), and a model through the origin.

The adversary knows every training example but the target, λ, the loss, w̃ and the target's
label. B = Σ_{j≠t} ∇ℓ_j(w̃) + nλw̃ is the target's gradient up to sign. With the intercept the
reconstruction is x̂ = c₀·B₁:/(a·B₀); without it x̂ = ±r·B with r·σ(−r·w̃ᵀB) = 1, which has two
roots for every correctly classified target at S = 0 (x is then not identifiable: the MSE of a
target is averaged over its candidates, the adversary picking one at random) and none when
w̃ᵀB > e^{−u*} ≈ 0.27846 (the closest candidate, r = u*/w̃ᵀB, is used). With B₀ = 0 there is no
candidate and the centre of [0, 1]^d is used. Every case is counted (statuses unique,
two_roots, no_root, degenerate_b0), none dropped.

For every training example: the realised MSE ‖x̂ − x‖²/d in raw [0, 1]^d units, averaged over R
noise draws (draw r of the whole release from Rng::for_trial(X, r): one trained model per draw,
every example attacked), with a Student-t 95% interval mean ± t(0.975, R−1)·sd/√R (per
example, not simultaneous; approximate, the MSE is not Gaussian; empty for R = 1); its bound
d/Tr(I) from the Fisher information about the raw pixels (Guo Thm 2, for unbiased attacks,
rounded down, the same units); and the ratio MSE/bound. An attack unbiased to first order (small
S) cannot fall below the bound; a biased one can (Guo et al. observe this for samples whose
bound exceeds 1, the perfect-privacy line).

Data and split as 'reconbound fil-logreg' (embedded: the 2,000 MNIST images shipped with the
crate; N training examples, default 80 % of the two digits, the rest for testing, drawn with
--seed). Defaults: --data embedded --digits 0,1 --lambda 0.01 --noise 1e-5 (Guo et al. §7.2,
Figs. 3-4; fil-logreg's default noise is 0.01) --trials 10 --seed 0.

--out writes one CSV row per training example: index,label,mse,mse_ci_low,mse_ci_high,
fil_bound,dfil,ratio,status (status: counts over the R draws, e.g. unique:10 or
two_roots:9;no_root:1; empty interval fields for R = 1). --plot: realised MSE against the bound,
log-log, with y = x (Guo Fig. 3). --images: the 8 targets with the highest and the 8 with the
lowest dFIL over their reconstructions in draw 0 (Guo Fig. 4). --quiet: no report (files and
--json output are still written).

JSON keys: command, attack, data, digits, intercept, train_size, test_size, dim, lambda,
noise_std, trials, seed, rdp_order2, test_accuracy (draw 0; null without a test set), examples,
below_bound (mean MSE < bound), below_bound_significant (interval above end < bound),
perfect_privacy_count (bound ≥ 1), ratio_min, ratio_median, ratio_max, mse_min, mse_median,
mse_max, fil_bound_min, fil_bound_median, fil_bound_max (lower medians), max_abs_error (largest
|x̂_k − x_k| over all targets, draws and candidates), max_abs_error_closest (the same for the
candidate closest to the target), status_unique, status_two_roots, status_no_root,
status_degenerate_b0 (counts over examples × draws), interval, out, plot, images (null when not
written), seconds. Everything but seconds is identical across runs with the same flags.
";

/// `attack glm --help` (issue 43: it fits a screen; [`HELP`] is `--help-all`).
const SHORT_HELP: &str = "\
usage: reconbound attack glm [--data embedded|<idx dir>] [--digits A,B] [--lambda L] [--noise S]
                             [--train-size N] [--trials R] [--seed X] [--no-intercept]
                             [--out FILE.csv] [--plot FILE.svg] [--images FILE.svg] [--json]
                             [--quiet]

Does a real attack get below the Fisher-information bound? The GLM attack of Balle et al. 2022
(§III), as Guo et al. 2022 (§7.2) evaluate it, reconstructs every training image of an
output-perturbed logistic regression (digit A vs digit B of MNIST) from the released model and
every other training example. Per example: its realised MSE (mean over R noise draws, with a
95 % interval) beside the bound d/Tr(I) for unbiased attacks, and the ratio MSE/bound.

Common flags (defaults in brackets):
  --data D          embedded (the 2,000 MNIST images shipped with the crate) or a directory
                    of MNIST IDX files [embedded]
  --digits A,B      the two digits (labels 0 and 1) [0,1]
  --lambda L        the L2 regularisation [0.01]
  --noise S         the output noise's standard deviation [1e-5, Guo et al. §7.2]
  --trials R        noise draws, one trained model each [10]
  --no-intercept    a model through the origin (default: with an intercept)
  --out FILE.csv    one row per training example; --plot, --images: Guo et al. Figs. 3, 4
  --json            every number at full precision, as JSON

Example (two noise draws):
  reconbound attack glm --trials 2
";

/// The two-sided Student-t quantile t(1 − α/2, ν): P(|T_ν| > t) = α ⇔
/// I_{ν/(ν+t²)}(ν/2, 1/2) = α.
fn t_quantile(alpha: f64, dof: f64) -> Result<f64, Failure> {
    let x = beta_inc_inv(dof / 2.0, 0.5, alpha)?;
    Ok(libm::sqrt(dof * (1.0 - x) / x))
}

/// Per-target accumulators over the draws (Welford).
#[derive(Clone, Default)]
struct Acc {
    mean: f64,
    m2: f64,
    count: u64,
    statuses: [u64; 4],
}

impl Acc {
    fn push(&mut self, v: f64) {
        self.count += 1;
        let delta = v - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (v - self.mean);
    }

    fn sd(&self) -> Option<f64> {
        (self.count > 1).then(|| libm::sqrt(self.m2.max(0.0) / (self.count - 1) as f64))
    }
}

fn status_index(st: CandidateStatus) -> usize {
    CandidateStatus::ALL
        .iter()
        .position(|&s| s == st)
        .unwrap_or(0)
}

/// One row of the per-example results.
struct Row {
    index: usize,
    label: u32,
    mse: f64,
    ci: Option<(f64, f64)>,
    bound: Option<f64>,
    dfil: f64,
    statuses: [u64; 4],
}

impl Row {
    fn ratio(&self) -> Option<f64> {
        self.bound.map(|b| self.mse / b)
    }

    fn status_text(&self) -> String {
        let parts: Vec<String> = CandidateStatus::ALL
            .iter()
            .zip(&self.statuses)
            .filter(|(_, &c)| c > 0)
            .map(|(st, c)| format!("{}:{c}", st.name()))
            .collect();
        parts.join(";")
    }
}

/// Write every rendered file (through [`super::output::write_whole`]), or none new: on a
/// failure the files this call created are removed (a file that existed before, a link's
/// target or a device is never removed).
fn write_all(files: &[(&str, &str, String)]) -> Result<(), Failure> {
    let mut created: Vec<&str> = Vec::new();
    for (flag, path, text) in files {
        let new = std::fs::symlink_metadata(path).is_err();
        if let Err(e) = super::output::write_whole(flag, path, text) {
            for p in created {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
        if new {
            created.push(path);
        }
    }
    Ok(())
}

/// `reconbound attack glm`.
pub(crate) fn attack_glm(args: &[String]) -> Out {
    let f = parse(
        args,
        &[
            v("data"),
            v("digits"),
            v("lambda"),
            v("noise"),
            v("train-size"),
            v("trials"),
            v("seed"),
            s("no-intercept"),
            v("out"),
            v("plot"),
            v("images"),
            s("json"),
            s("quiet"),
        ],
    )?;
    if f.help {
        return Ok(f.help_text("attack glm", SHORT_HELP, String::from(HELP)));
    }
    super::output::check_flag_paths(&f, &["out", "plot", "images"], &["data"], &[])?;
    let lambda = f.f64("lambda")?.unwrap_or(defaults::LAMBDA);
    check_positive("lambda", lambda)?;
    let noise = f.f64("noise")?.unwrap_or(glm_defaults::NOISE);
    check_positive("noise", noise)?;
    let trials = f.u64("trials")?.unwrap_or(glm_defaults::TRIALS);
    if trials == 0 || trials > glm_defaults::MAX_TRIALS {
        return Err(usage(format!(
            "--trials = {trials} is out of range: must be in 1..={}",
            glm_defaults::MAX_TRIALS
        )));
    }
    let seed = f.u64("seed")?.unwrap_or(0);
    let intercept = !f.has("no-intercept");
    let data_spec = f.raw("data").unwrap_or("embedded");
    let out_path = output_path(&f, "out")?;
    let plot_path = output_path(&f, "plot")?;
    let images_path = output_path(&f, "images")?;

    let start = Instant::now();
    let split = load_two_digit_split(&f, data_spec, seed)?;
    let train = &split.train;
    let d = train.dim();
    let embedding = LinearEmbedding::new(d, intercept)?;
    let fil =
        embedded_output_perturbation_fil(train, &embedding, lambda, noise).map_err(
            |e| match e {
                reconbound::Error::InvalidParameter {
                    name: "noise_std", ..
                } => usage(format!(
                    "--noise = {noise} is out of range: must be finite and > 0"
                )),
                other => Failure::from(other),
            },
        )?;
    let w_star = &fil.fit.weights;
    let targets = AllTargets::new(train, lambda, &embedding)?;
    let n = targets.len();
    let centre = std::vec![0.5; d];

    let mut acc = std::vec![Acc::default(); n];
    let mut first: Vec<Vec<f64>> = Vec::new(); // draw 0's reconstructions, for --images
    let mut max_abs = 0.0f64;
    let mut max_abs_closest = 0.0f64;
    let mut test_accuracy = None;
    for trial in 0..trials {
        let released = logreg::perturb(w_star, noise, seed, trial)?;
        if trial == 0 {
            if let Some(t) = &split.test {
                test_accuracy = Some(logreg::accuracy(&released, &embedding.embed_dataset(t)?)?);
            }
        }
        let recs = targets.attack_all(&released)?;
        for (((x, _), rec), a) in train.iter().zip(&recs).zip(acc.iter_mut()) {
            let cands: Vec<&[f64]> = if rec.candidates.is_empty() {
                std::vec![centre.as_slice()]
            } else {
                rec.candidates.iter().map(Vec::as_slice).collect()
            };
            let mut mse = 0.0;
            let mut closest = f64::INFINITY;
            for c in &cands {
                let mut sq = 0.0;
                let mut worst = 0.0f64;
                for (p, q) in c.iter().zip(x) {
                    let e = p - q;
                    sq += e * e;
                    worst = worst.max(libm::fabs(e));
                }
                mse += sq / d as f64;
                max_abs = max_abs.max(worst);
                closest = closest.min(worst);
            }
            max_abs_closest = max_abs_closest.max(closest);
            a.push(mse / cands.len() as f64);
            if let Some(c) = a.statuses.get_mut(status_index(rec.status)) {
                *c += 1;
            }
            if trial == 0 {
                first.push(cands.first().map(|c| c.to_vec()).unwrap_or_default());
            }
        }
    }
    let t_crit = if trials > 1 {
        Some(t_quantile(
            1.0 - glm_defaults::CONFIDENCE,
            (trials - 1) as f64,
        )?)
    } else {
        None
    };
    let rows: Vec<Row> = fil
        .examples
        .iter()
        .zip(&acc)
        .map(|(e, a)| Row {
            index: e.index,
            label: e.label,
            mse: a.mean,
            ci: match (a.sd(), t_crit) {
                (Some(sd), Some(t)) => {
                    let h = t * sd / libm::sqrt(a.count as f64);
                    Some((a.mean - h, a.mean + h))
                }
                _ => None,
            },
            bound: e.mse_bound,
            dfil: e.dfil,
            statuses: a.statuses,
        })
        .collect();
    let below = rows
        .iter()
        .filter(|r| r.bound.is_some_and(|b| r.mse < b))
        .count();
    let below_sig = rows
        .iter()
        .filter(|r| matches!((r.bound, r.ci), (Some(b), Some((_, hi))) if hi < b))
        .count();
    let perfect = rows
        .iter()
        .filter(|r| r.bound.is_none_or(|b| b >= fil.trivial_mse))
        .count();
    let (ratio_min, ratio_med, ratio_max) =
        super::format::min_median_max(rows.iter().filter_map(Row::ratio).collect());
    let (mse_min, mse_med, mse_max) =
        super::format::min_median_max(rows.iter().map(|r| r.mse).collect());
    let (b_min, b_med, b_max) = super::format::min_median_max(
        rows.iter()
            .map(|r| r.bound.unwrap_or(f64::INFINITY))
            .collect(),
    );
    let mut status_total = [0u64; 4];
    for r in &rows {
        for (t, c) in status_total.iter_mut().zip(&r.statuses) {
            *t += c;
        }
    }

    // Files: render all, then write all (or none).
    let model = if intercept {
        "intercept"
    } else {
        "no intercept"
    };
    let what = format!(
        "digits {} vs {} of {}, n = {n}, {model}, λ = {lambda}, σ = {noise}, {trials} noise draws, seed {seed}",
        split.digits[0],
        split.digits[1],
        shown(data_spec)
    );
    let mut files: Vec<(&str, &str, String)> = Vec::new();
    if let Some(p) = out_path.as_deref() {
        let mut csv =
            String::from("index,label,mse,mse_ci_low,mse_ci_high,fil_bound,dfil,ratio,status\n");
        let num = |x: Option<f64>| x.map(|v| format!("{v:?}")).unwrap_or_default();
        for r in &rows {
            csv.push_str(&format!(
                "{},{},{:?},{},{},{},{:?},{},{}\n",
                r.index,
                r.label,
                r.mse,
                num(r.ci.map(|c| c.0)),
                num(r.ci.map(|c| c.1)),
                num(r.bound),
                r.dfil,
                num(r.ratio()),
                r.status_text()
            ));
        }
        files.push(("out", p, csv));
    }
    if let Some(p) = plot_path.as_deref() {
        let points: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (r.bound.unwrap_or(f64::INFINITY), r.mse))
            .collect();
        let markers = [svg::Marker {
            value: fil.trivial_mse,
            label: String::from("bound = 1 (perfect privacy: any guess in [0, 1]^d has MSE ≤ 1)"),
        }];
        files.push((
            "plot",
            p,
            svg::scatter_svg(&svg::ScatterPlot {
                title: "GLM attack: realised MSE against the FIL bound d/Tr(I) (Guo et al. 2022 Fig. 3)",
                subtitle: &what,
                x_label: "MSE lower bound d/Tr(I) for unbiased attacks (Guo et al. 2022 Thm 2)",
                y_label: "realised MSE of the GLM attack",
                points: &points,
                diagonal_label: "y = x: realised MSE = bound",
                below_label: "examples below their bound",
                markers: &markers,
            }),
        ));
    }
    if let Some(p) = images_path.as_deref() {
        let mut order: Vec<&Row> = rows.iter().collect();
        order.sort_by(|a, b| b.dfil.total_cmp(&a.dfil).then(a.index.cmp(&b.index)));
        let k = glm_defaults::IMAGES_PER_ROW;
        let pick =
            |rs: &[&Row]| -> Result<(Vec<svg::GridImage<'_>>, Vec<svg::GridImage<'_>>), Failure> {
                let mut top = Vec::new();
                let mut bottom = Vec::new();
                for r in rs {
                    let (pixels, _) = train.example(r.index)?;
                    top.push(svg::GridImage {
                        pixels,
                        caption: format!("dFIL {}, #{}", sig(r.dfil, 3, Side::Up), r.index),
                    });
                    let recon = first.get(r.index).map(Vec::as_slice).unwrap_or(&[]);
                    bottom.push(svg::GridImage {
                        pixels: recon,
                        caption: format!("mean MSE {}", sig(r.mse, 3, Side::Nearest)),
                    });
                }
                Ok((top, bottom))
            };
        let highest: Vec<&Row> = order.iter().take(k).copied().collect();
        let mut lowest: Vec<&Row> = order.iter().rev().take(k).copied().collect();
        lowest.reverse();
        let (h_t, h_r) = pick(&highest)?;
        let (l_t, l_r) = pick(&lowest)?;
        let grid = svg::image_grid_svg(&svg::ImageGrid {
            title: "GLM attack: targets (rows 1, 3) over their reconstructions in draw 0, by decreasing dFIL (Guo et al. 2022 Fig. 4)",
            subtitle: &what,
            shape: split.image_shape,
            rows: std::vec![
                svg::GridRow {
                    label: String::from("highest dFIL"),
                    images: h_t,
                },
                svg::GridRow {
                    label: String::from("reconstruction"),
                    images: h_r,
                },
                svg::GridRow {
                    label: String::from("lowest dFIL"),
                    images: l_t,
                },
                svg::GridRow {
                    label: String::from("reconstruction"),
                    images: l_r,
                },
            ],
        })
        .map_err(|e| usage(format!("--images: {e}")))?;
        files.push(("images", p, grid));
    }
    write_all(&files)?;
    let seconds = start.elapsed().as_secs_f64();
    let interval = format!(
        "student-t {}% per example: mean ± t(0.975, R−1)·sd/√R",
        glm_defaults::CONFIDENCE * 100.0
    );

    if f.has("json") {
        let mut o = Object::new();
        o.str("command", "attack glm")
            .str("attack", "glm")
            .str("data", data_spec)
            .put(
                "digits",
                Value::Arr(
                    split
                        .digits
                        .iter()
                        .map(|&d| Value::Int(u64::from(d)))
                        .collect(),
                ),
            )
            .put("intercept", Value::Bool(intercept))
            .int("train_size", n as u64)
            .int("test_size", split.test_size() as u64)
            .int("dim", d as u64)
            .num("lambda", lambda)
            .num("noise_std", noise)
            .int("trials", trials)
            .int("seed", seed)
            .num("rdp_order2", fil.rdp_order2);
        num_or_null(&mut o, "test_accuracy", test_accuracy);
        o.int("examples", n as u64)
            .int("below_bound", below as u64)
            .int("below_bound_significant", below_sig as u64)
            .int("perfect_privacy_count", perfect as u64)
            .num("ratio_min", ratio_min)
            .num("ratio_median", ratio_med)
            .num("ratio_max", ratio_max)
            .num("mse_min", mse_min)
            .num("mse_median", mse_med)
            .num("mse_max", mse_max)
            .num("fil_bound_min", b_min)
            .num("fil_bound_median", b_med)
            .num("fil_bound_max", b_max)
            .num("max_abs_error", max_abs)
            .num("max_abs_error_closest", max_abs_closest);
        for (st, c) in CandidateStatus::ALL.iter().zip(&status_total) {
            o.int(&format!("status_{}", st.name()), *c);
        }
        o.str("interval", &interval);
        for (key, p) in [
            ("out", &out_path),
            ("plot", &plot_path),
            ("images", &images_path),
        ] {
            match p {
                Some(p) => o.str(key, p),
                None => o.put(key, Value::Null),
            };
        }
        o.num("seconds", seconds);
        return Ok(o.render() + "\n");
    }
    if f.has("quiet") {
        return Ok(String::new());
    }

    let mut t = format!(
        "reconbound attack glm: the GLM attack (Balle et al. 2022 §III) against output-perturbed logistic regression, against the FIL bound (Guo et al. 2022 §7.2)\n\
         \x20 digits {} (label 0) vs {} (label 1) of {}: {n} training / {} test examples, d = {d}\n\
         \x20 model: {}; λ = {lambda}, output noise σ = {noise}, (2, ε)-RDP with ε = {} (a guarantee: ‖x_aug‖ ≤ 1)\n\
         \x20 every training example attacked in each of {trials} noise draws (draw r from Rng::for_trial({seed}, r)); MSE in raw [0, 1]^d units\n\n",
        split.digits[0],
        split.digits[1],
        shown(data_spec),
        split.test_size(),
        if intercept {
            "x ↦ (c₀, a·x), c₀ = 1/(t√2), a = 1/(t√(2d)): intercept, x̂ = c₀B₁:/(a·B₀)"
        } else {
            "x ↦ a·x, a = 1/(t√d): no intercept, x̂ = ±r·B, r·σ(−r·w̃ᵀB) = 1"
        },
        sig(fil.rdp_order2, 4, Side::Up),
    );
    match test_accuracy {
        Some(a) => row(
            &mut t,
            "test accuracy",
            &sig(a, 6, Side::Nearest),
            "released model of draw 0",
        ),
        None => row(&mut t, "test accuracy", "-", "no test set"),
    }
    row(&mut t, "examples", &format!("{n}"), "");
    row(
        &mut t,
        "below their bound",
        &format!("{below} of {n}"),
        &format!("mean MSE < d/Tr(I); {below_sig} significantly (95% interval below)"),
    );
    let nums = |a: f64, b: f64, c: f64, side: Side| {
        format!(
            "{} / {} / {}",
            sig(a, 4, side),
            sig(b, 4, side),
            sig(c, 4, side)
        )
    };
    t.push_str("  (min / median / max over the examples)\n");
    row(
        &mut t,
        "ratio MSE / bound",
        &nums(ratio_min, ratio_med, ratio_max, Side::Nearest),
        "",
    );
    row(
        &mut t,
        "realised MSE (mean over draws)",
        &nums(mse_min, mse_med, mse_max, Side::Nearest),
        "",
    );
    row(
        &mut t,
        "bound d/Tr(I) (Thm 2)",
        &nums(b_min, b_med, b_max, Side::Down),
        "(rounded down)",
    );
    row(
        &mut t,
        "perfect privacy",
        &format!("{perfect} of {n}"),
        "bound ≥ 1: any guess in [0, 1]^d has MSE ≤ 1",
    );
    row(
        &mut t,
        "max_abs_error",
        &sig(max_abs, 4, Side::Up),
        &format!(
            "largest |x̂_k − x_k| (closest candidate: {})",
            sig(max_abs_closest, 4, Side::Up)
        ),
    );
    let counts: Vec<String> = CandidateStatus::ALL
        .iter()
        .zip(&status_total)
        .map(|(st, c)| format!("{} {c}", st.name()))
        .collect();
    row(&mut t, "candidate statuses", &counts.join(", "), "");
    for (what, p) in [
        ("per-example rows", &out_path),
        ("scatter plot", &plot_path),
        ("image grid", &images_path),
    ] {
        if let Some(p) = p {
            row(&mut t, what, &shown(p), "");
        }
    }
    row(&mut t, "wall time", &format!("{seconds:.2} s"), "");
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// t(0.975, ν) against mpmath (30 digits, I_{ν/(ν+t²)}(ν/2, ½) = 0.05 solved by
    /// findroot): tolerance 1e-12 relative (beta_inc_inv is accurate to ≈ 1e-14 for x ≤ ½).
    #[test]
    fn student_t_quantiles() {
        for (dof, want) in [
            (1.0, 12.706_204_736_174_704),
            (9.0, 2.262_157_162_798_205_5),
            (499.0, 1.964_729_390_987_689),
        ] {
            let Ok(t) = t_quantile(0.05, dof) else {
                panic!("t_quantile failed at {dof}");
            };
            assert!((t / want - 1.0).abs() < 1e-12, "{dof}: {t}");
        }
    }
}
