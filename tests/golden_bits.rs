//! Bit-for-bit golden values of the numeric core, the same for every build.
//!
//! The repository's own builds target the host CPU (`.cargo/config.toml`), so the product
//! kernels pick wider register blocks when AVX or AVX-512 is there. Blocking never changes an
//! entry's summation order; the dense kernels' fused multiply-adds are explicit
//! (`f64::mul_add` / `libm::fma`, correctly rounded: a hardware FMA instruction or a software
//! routine give the same bits) and Rust never fuses any other a·b + c, so every result must be
//! the same bits as a baseline x86-64 build (where every fma is the software routine). This test hashes (FNV-1a over `f64::to_bits`) the outputs
//! of the paths those kernels serve — `tanh`, `loss_and_grad`, `clip`, `loss_and_grad_jvp`,
//! both FIL kernels and short DP-SGD runs — on the five architectures and a small ConvNet
//! with odd tap and channel counts (the tails of every register block), with 8 tangent lanes
//! and, on the ConvNets, 1 and 3; and compares them with constants recorded from a build with
//! `RUSTFLAGS="-C target-cpu=x86-64"` (SSE2 only, software FMA). Recorded once more when
//! the fused multiply-add became the canonical arithmetic of the dense kernels (issue 19):
//! every hash of a model with a dense layer changed (the dense forward and input-gradient
//! sums are fma chains now; the convolution products and the weight-gradient sums still
//! multiply and add separately), `tanh` did not.
//! The DP-SGD runs on MNIST digits go through the batched step's zero-feature skipping, which
//! must not change a bit either (the hashes were not re-recorded for it). `.ci/run` runs this
//! test on the host build, a baseline x86-64 build and, where the CPU has AVX-512F, a build
//! with 512-bit vectors preferred. Tolerance: none (exact bits).

use reconbound::attacks::reconn::reconstructor::{Precision, Reconstructor, ReconstructorConfig};
use reconbound::autodiff::{Dual, Scalar};
use reconbound::data::{embedded_mnist, Dataset};
use reconbound::nn::{arch, bench_gemm, Activation, Layer, Loss, Sequential, Shape};
use reconbound::train::clip::{clip, ClipMethod};
use reconbound::train::dpsgd::{train, Clipping, DpSgdConfig};
use reconbound::train::sampling::Sampling;

/// FNV-1a over the bit patterns of a stream of floats.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn f(&mut self, v: f64) {
        for b in v.to_bits().to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn all(&mut self, v: &[f64]) {
        for &x in v {
            self.f(x);
        }
    }
    fn bits(&mut self, v: &[u64]) {
        for &x in v {
            self.f(f64::from_bits(x));
        }
    }
}

/// An f32 product of `bench_gemm` (m, n, kd, A, B, C, threads).
type ProductF32 = fn(usize, usize, usize, &[f32], &[f32], &mut [f32], usize);

/// Hash of the three f32 products (A·B, Aᵀ·B, A·Bᵀ, one shape with tails in every f32
/// register-block direction, large enough for the blocked kernels), the same on 1 and 3
/// threads (issue 32).
fn gemm_f32_hash() -> u64 {
    let (m, n, kd) = (37, 53, 301);
    let a: Vec<f32> = pseudo_image(m * kd, 21)
        .iter()
        .map(|&v| (v - 0.5) as f32)
        .collect();
    let b: Vec<f32> = pseudo_image(kd * n, 22)
        .iter()
        .map(|&v| (v - 0.5) as f32)
        .collect();
    let mut h = Fnv::new();
    let products: [ProductF32; 3] = [
        bench_gemm::matmul_f32,
        bench_gemm::matmul_tn_f32,
        bench_gemm::matmul_nt_f32,
    ];
    for f in products {
        let mut one = vec![f32::NAN; m * n];
        f(m, n, kd, &a, &b, &mut one, 1);
        let mut three = vec![f32::NAN; m * n];
        f(m, n, kd, &a, &b, &mut three, 3);
        assert_eq!(one, three, "f32 product bits depend on the thread count");
        let bits: Vec<u64> = one.iter().map(|v| u64::from(v.to_bits())).collect();
        h.bits(&bits);
    }
    h.0
}

/// Hash of the parameter bits of a small RecoNN reconstructor (F 200 → H 40 → P 60, 60
/// pairs, batches of 16, 3 epochs: every product large enough for the blocked kernels)
/// trained in `precision`, the same on 1 and 2 threads (issue 32).
fn reconstructor_hash(precision: Precision) -> u64 {
    let (k, f, p) = (60, 200, 60);
    let features: Vec<f64> = pseudo_image(k * f, 31)
        .iter()
        .map(|&v| 4.0 * v - 2.0)
        .collect();
    let images = pseudo_image(k * p, 32);
    let config = ReconstructorConfig {
        hidden: 40,
        batch_size: 16,
        max_epochs: 3,
        precision,
        ..ReconstructorConfig::default()
    };
    let train = |threads| {
        Reconstructor::train(&config, &features, f, &images, p, 9, threads, &mut |_| {}).unwrap()
    };
    let one = train(1);
    assert_eq!(
        one,
        train(2),
        "reconstructor bits depend on the thread count"
    );
    let mut h = Fnv::new();
    h.bits(&one.parameter_bits());
    h.0
}

/// A deterministic input in [0, 1] for models the embedded data does not fit.
fn pseudo_image(len: usize, salt: u64) -> Vec<f64> {
    let mut s = salt.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

fn models() -> Vec<(&'static str, Sequential)> {
    vec![
        (
            "mlp-elu",
            arch::mlp(784, &[10], 10, Activation::Elu).unwrap(),
        ),
        (
            "mlp-tanh",
            arch::mlp(784, &[100], 10, Activation::Tanh).unwrap(),
        ),
        ("mnist-convnet", arch::mnist_tanh_convnet().unwrap()),
        ("cifar-convnet", arch::cifar10_tanh_convnet().unwrap()),
        ("logreg", arch::logistic_regression(784).unwrap()),
        ("odd-conv", odd_conv()),
    ]
}

/// Tap counts 27, 52 and 63 and odd channel counts: the tails of every register block.
fn odd_conv() -> Sequential {
    let conv = |out_channels, kernel, stride, padding| Layer::Conv2d {
        out_channels,
        kernel,
        stride,
        padding,
    };
    Sequential::new(
        Shape::new(3, 7, 5),
        &[
            conv(13, 3, 1, 1),
            Layer::Act(Activation::Tanh),
            conv(7, 2, 1, 0),
            Layer::Act(Activation::Elu),
            conv(9, 3, 2, 1),
            Layer::Act(Activation::Tanh),
            Layer::Dense { units: 5 },
        ],
        Loss::SoftmaxCrossEntropy,
    )
    .unwrap()
}

/// Hash of `loss_and_grad_jvp` with N lanes along `coords` (at most N of them).
fn jvp_hash<const N: usize>(
    model: &Sequential,
    params: &[f64],
    x: &[f64],
    label: usize,
    coords: &[usize],
) -> u64 {
    let mut h = Fnv::new();
    let mut wd = model.workspace::<Dual<N>>();
    let mut gd = vec![Dual::<N>::default(); model.num_params()];
    h.f(model
        .loss_and_grad_jvp(params, x, label, coords, &mut gd, &mut wd)
        .unwrap());
    for v in &gd {
        h.f(v.value);
        h.all(&v.tangent);
    }
    h.0
}

/// Hash of every per-example output of one model at two seeds.
fn model_hash(model: &Sequential, data: &Dataset) -> u64 {
    let mut h = Fnv::new();
    let d = model.input_len();
    let classes = model.num_classes().max(2);
    for seed in [3u64, 11] {
        let params = model.init_params(seed);
        let x = match data.example(seed as usize) {
            Ok((x, _)) if x.len() == d => x.to_vec(),
            _ => pseudo_image(d, seed),
        };
        let label = (seed as usize) % classes.min(model.output_len().max(2));
        let mut ws = model.workspace::<f64>();
        let mut g = vec![0.0; model.num_params()];
        h.f(model
            .loss_and_grad(&params, &x, label, &mut g, &mut ws)
            .unwrap());
        h.all(&g);
        for (method, c) in [(ClipMethod::Gelu, 0.05), (ClipMethod::Hard, 0.05)] {
            let mut gc = g.clone();
            h.f(clip(&mut gc, method, c).unwrap());
            h.all(&gc);
        }
        // Eight coordinates spread over the image, one repeated.
        let coords: Vec<usize> = (0..8).map(|i| (i * 97 + 301 + seed as usize) % d).collect();
        let mut coords = coords;
        coords[7] = coords[2];
        h.0 ^= jvp_hash::<8>(model, &params, &x, label, &coords);
        h.f(0.0);
        // Other lane counts (1 and 3) on the models with convolutions.
        if model.num_params() < 30_000
            && model.input_len() < 1000
            && model
                .layer(0)
                .is_some_and(|(l, _, _)| matches!(l, Layer::Conv2d { .. }))
        {
            h.0 ^= jvp_hash::<1>(model, &params, &x, label, &coords[..1]);
            h.f(1.0);
            h.0 ^= jvp_hash::<3>(model, &params, &x, label, &coords[5..8]);
            h.f(3.0);
        }
        let fil_coords: Vec<usize> = (0..50).map(|i| (i * 41 + 7 * seed as usize) % d).collect();
        let mut fw = model.fil_workspace(fil_coords.len());
        let mut sq = vec![0.0; fil_coords.len()];
        h.f(model
            .clipped_jvp_sq_norms(
                &params,
                &x,
                label,
                &fil_coords,
                ClipMethod::Gelu,
                0.1,
                &mut sq,
                &mut fw,
            )
            .unwrap());
        h.all(&sq);
        let mut gram = vec![0.0; 36];
        h.f(model
            .clipped_jvp_gram(
                &params,
                &x,
                label,
                &fil_coords[..6],
                ClipMethod::Hard,
                0.1,
                &mut gram,
                &mut fw,
            )
            .unwrap());
        h.all(&gram);
    }
    h.0
}

fn dpsgd_hash(model: &Sequential, data: &Dataset, seed: u64) -> u64 {
    let config = DpSgdConfig {
        learning_rate: 0.1,
        momentum: 0.5,
        weight_decay: 1e-4,
        clipping: Some(Clipping {
            method: ClipMethod::Gelu,
            norm: 1.0,
        }),
        noise_multiplier: 1.0,
        sampling: Sampling::Poisson,
        batch_size: 16,
        steps: 4,
        seed,
    };
    let mut params = model.init_params(seed);
    train(model, data, &config, &mut params, &mut ()).unwrap();
    let mut h = Fnv::new();
    h.all(&params);
    h.0
}

#[test]
fn golden_bits_are_the_same_for_every_target_cpu() {
    let data = embedded_mnist().unwrap();
    let small = Dataset::new(
        data.features()[..128 * 784].to_vec(),
        data.labels()[..128].to_vec(),
        data.shape(),
        data.num_classes(),
    )
    .unwrap();
    let mut got = Vec::new();
    let mut t = Fnv::new();
    for i in -4000..=4000 {
        t.f(Scalar::tanh(f64::from(i) * 0.00731));
        let d = Dual::<2>::variable(f64::from(i) * 0.0113, 0)
            .unwrap()
            .tanh();
        t.f(d.value);
        t.all(&d.tangent);
    }
    got.push(("tanh".to_string(), t.0));
    for (name, model) in models() {
        got.push((name.to_string(), model_hash(&model, &data)));
    }
    let mnist = arch::mnist_tanh_convnet().unwrap();
    let mlp = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    got.push(("dpsgd-convnet".to_string(), dpsgd_hash(&mnist, &small, 5)));
    got.push(("dpsgd-mlp".to_string(), dpsgd_hash(&mlp, &small, 6)));
    got.push(("gemm-f32".to_string(), gemm_f32_hash()));
    got.push(("reconn-f32".to_string(), reconstructor_hash(Precision::F32)));
    got.push(("reconn-f64".to_string(), reconstructor_hash(Precision::F64)));
    // Re-recorded once (a baseline x86-64 build, software FMA; the host build without and
    // with AVX-512 gives the same) when the fused multiply-add became the canonical arithmetic
    // of the dense kernels (issue 19): dense forward (`dot`, the batched `dot_2x2`) and dense
    // input gradients are fma chains, so every model with a dense layer and every DP-SGD run
    // changed; `tanh` did not.
    // Added with issue 32 (f32 products and the f32 reconstructor; the f64 reconstructor
    // beside it): recorded on the host build (AVX2 + FMA).
    let want: [(&str, u64); 12] = [
        ("tanh", 0xf6faccabcc58c53c),
        ("mlp-elu", 0x916d05d479800a57),
        ("mlp-tanh", 0x6f43ef40eb942da3),
        ("mnist-convnet", 0x0a5e419fd768af18),
        ("cifar-convnet", 0xaba04dc85b761527),
        ("logreg", 0x75778d79ecba5ce1),
        ("odd-conv", 0x30eb36e8ab9a8cd9),
        ("dpsgd-convnet", 0x9e3b3401108bcccf),
        ("dpsgd-mlp", 0xa48c0b6180c919dd),
        ("gemm-f32", 0xa2820ff9a2feaf31),
        ("reconn-f32", 0x78d885194c2abeed),
        ("reconn-f64", 0x573cb55630260c1d),
    ];
    let report: Vec<String> = got
        .iter()
        .map(|(n, v)| format!("(\"{n}\", {v:#018x}),"))
        .collect();
    for ((name, v), (wname, w)) in got.iter().zip(want) {
        assert_eq!(name, wname);
        assert_eq!(
            *v,
            w,
            "{name}: bits differ from the baseline x86-64 build; all values:\n{}",
            report.join("\n")
        );
    }
}
