//! The architectures used in the papers, as [`Sequential`] models.

use super::{Activation, Layer, Loss, Sequential, Shape};
use crate::error::{Error, Result};
use alloc::vec::Vec;

/// A multilayer perceptron on flat inputs of length `input`: for each entry of `hidden` a
/// dense layer of that width followed by `activation`, then a dense layer of `classes`
/// logits, with softmax cross-entropy.
///
/// `mlp(784, &[10], 10, Activation::Elu)` is the MNIST model of Hayes et al. 2023 and Balle
/// et al. 2022 (7,960 parameters).
///
/// # Errors
///
/// [`Error::InvalidCount`] `input`/`units` if a size is 0, `classes` if < 2.
///
/// # Examples
///
/// ```
/// use reconbound::nn::{arch, Activation};
/// assert_eq!(arch::mlp(784, &[10], 10, Activation::Elu)?.num_params(), 7_960);
/// assert_eq!(arch::mlp(784, &[100], 10, Activation::Tanh)?.num_params(), 79_510);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn mlp(
    input: usize,
    hidden: &[usize],
    classes: usize,
    activation: Activation,
) -> Result<Sequential> {
    if classes < 2 {
        return Err(Error::InvalidCount {
            name: "classes",
            value: classes as u64,
            expected: ">= 2",
        });
    }
    let mut layers = Vec::with_capacity(2 * hidden.len() + 1);
    for &units in hidden {
        layers.push(Layer::Dense { units });
        layers.push(Layer::Act(activation));
    }
    layers.push(Layer::Dense { units: classes });
    Sequential::new(Shape::flat(input), &layers, Loss::SoftmaxCrossEntropy)
}

/// The MNIST tanh ConvNet of Guo et al. 2022, App. C, Table 1 (adapted from Papernot et al.
/// 2020): input 1 × 28 × 28; Conv 16 × 8 × 8 stride 2 padding 2, tanh, AvgPool 2 × 2 stride
/// 1, Conv 32 × 4 × 4 stride 2, tanh, AvgPool 2 × 2 stride 1, Dense 32, tanh, Dense 10;
/// softmax cross-entropy. 26,010 parameters.
///
/// **Deviation:** Table 1 prints "+tanh" after the last fully connected layer too; we output
/// the 10 logits without tanh (a tanh there would bound the logits to [−1, 1]).
///
/// # Errors
///
/// None in practice (the shapes are fixed); the `Result` is that of [`Sequential::new`].
///
/// # Examples
///
/// ```
/// use reconbound::nn::arch;
/// assert_eq!(arch::mnist_tanh_convnet()?.num_params(), 26_010);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn mnist_tanh_convnet() -> Result<Sequential> {
    let tanh = Layer::Act(Activation::Tanh);
    let layers = [
        Layer::Conv2d {
            out_channels: 16,
            kernel: 8,
            stride: 2,
            padding: 2,
        },
        tanh,
        Layer::AvgPool2d {
            kernel: 2,
            stride: 1,
        },
        Layer::Conv2d {
            out_channels: 32,
            kernel: 4,
            stride: 2,
            padding: 0,
        },
        tanh,
        Layer::AvgPool2d {
            kernel: 2,
            stride: 1,
        },
        Layer::Dense { units: 32 },
        tanh,
        Layer::Dense { units: 10 },
    ];
    Sequential::new(Shape::new(1, 28, 28), &layers, Loss::SoftmaxCrossEntropy)
}

/// The CIFAR-10 tanh ConvNet of Guo et al. 2022, App. C, Table 2: input 3 × 32 × 32;
/// (Conv 32 3 × 3 stride 1 padding 1, tanh) × 2, AvgPool 2 × 2 stride 2,
/// (Conv 64 3 × 3 s1 p1, tanh) × 2, AvgPool 2 × 2 s2, (Conv 128 3 × 3 s1 p1, tanh) × 2,
/// AvgPool 2 × 2 s2, Dense 128, tanh, Dense 10; softmax cross-entropy. 550,570 parameters.
///
/// **Deviation:** as in [`mnist_tanh_convnet`], the last dense layer outputs logits without
/// the tanh Table 2 prints.
///
/// # Errors
///
/// None in practice; the `Result` is that of [`Sequential::new`].
///
/// # Examples
///
/// ```
/// use reconbound::nn::arch;
/// assert_eq!(arch::cifar10_tanh_convnet()?.num_params(), 550_570);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn cifar10_tanh_convnet() -> Result<Sequential> {
    let tanh = Layer::Act(Activation::Tanh);
    let conv = |out_channels| Layer::Conv2d {
        out_channels,
        kernel: 3,
        stride: 1,
        padding: 1,
    };
    let pool = Layer::AvgPool2d {
        kernel: 2,
        stride: 2,
    };
    let layers = [
        conv(32),
        tanh,
        conv(32),
        tanh,
        pool,
        conv(64),
        tanh,
        conv(64),
        tanh,
        pool,
        conv(128),
        tanh,
        conv(128),
        tanh,
        pool,
        Layer::Dense { units: 128 },
        tanh,
        Layer::Dense { units: 10 },
    ];
    Sequential::new(Shape::new(3, 32, 32), &layers, Loss::SoftmaxCrossEntropy)
}

/// Logistic regression with bias on `d` features: one dense unit (weights `w_1..w_d`, then the
/// bias) and the binary logistic loss, labels in {0, 1}. d + 1 parameters.
///
/// # Errors
///
/// [`Error::InvalidCount`] `input` if `d` = 0.
///
/// # Examples
///
/// ```
/// use reconbound::nn::arch;
/// assert_eq!(arch::logistic_regression(784)?.num_params(), 785);
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn logistic_regression(d: usize) -> Result<Sequential> {
    Sequential::new(Shape::flat(d), &[Layer::Dense { units: 1 }], Loss::Logistic)
}
