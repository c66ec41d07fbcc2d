//! Layer specifications and shape inference.

use super::activation::Activation;
use crate::error::{Error, Result};

/// A tensor shape, channels-first: `(channels, height, width)`; a flat vector of length n is
/// `(n, 1, 1)`. Elements are stored row-major: `(c, h, w)` at `(c·height + h)·width + w`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Number of channels C.
    pub channels: usize,
    /// Height H.
    pub height: usize,
    /// Width W.
    pub width: usize,
}

impl Shape {
    /// The shape `(channels, height, width)`.
    ///
    /// ```
    /// use reconbound::nn::Shape;
    /// assert_eq!(Shape::new(1, 28, 28).len(), Some(784));
    /// ```
    pub const fn new(channels: usize, height: usize, width: usize) -> Self {
        Shape {
            channels,
            height,
            width,
        }
    }

    /// A flat vector of length `n`: the shape `(n, 1, 1)`.
    ///
    /// ```
    /// use reconbound::nn::Shape;
    /// assert_eq!(Shape::flat(10), Shape::new(10, 1, 1));
    /// ```
    pub const fn flat(n: usize) -> Self {
        Shape::new(n, 1, 1)
    }

    /// The number of elements C·H·W, or `None` on overflow.
    pub const fn len(&self) -> Option<usize> {
        match self.channels.checked_mul(self.height) {
            Some(ch) => ch.checked_mul(self.width),
            None => None,
        }
    }

    /// `true` if the shape has no elements (or overflows).
    pub const fn is_empty(&self) -> bool {
        matches!(self.len(), None | Some(0))
    }
}

/// One layer of a [`Sequential`](crate::nn::Sequential) model. Input sizes are inferred from
/// the previous layer's output shape when the model is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layer {
    /// Fully connected: y = W x + b on the flattened input (n = C·H·W inputs); output shape
    /// `(units, 1, 1)`. Parameters: `units·n` weights (row-major `(units, n)`), `units` biases.
    Dense {
        /// Number of outputs.
        units: usize,
    },
    /// 2-D convolution (cross-correlation, as PyTorch) with zero padding:
    /// `y[o, i, j] = b[o] + Σ_{c, a, b} W[o, c, a, b]·x[c, s·i + a − p, s·j + b − p]`
    /// (out-of-range x are 0). Output `(out_channels, (H + 2p − k)/s + 1, (W + 2p − k)/s + 1)`
    /// (integer division). Parameters: weight `(out_channels, C, k, k)`, `out_channels` biases.
    /// Requires 1 ≤ k ≤ H + 2p and W + 2p, s ≥ 1 and p < k.
    Conv2d {
        /// Number of output channels O.
        out_channels: usize,
        /// Square kernel size k.
        kernel: usize,
        /// Stride s ≥ 1.
        stride: usize,
        /// Zero padding p on every side.
        padding: usize,
    },
    /// Average pooling over k × k windows with stride s, no padding:
    /// y[c, i, j] = (1/k²) Σ_{a, b < k} x[c, s·i + a, s·j + b]. Output
    /// `(C, (H − k)/s + 1, (W − k)/s + 1)`; windows that do not fit are dropped (as PyTorch's
    /// `ceil_mode = false`). No parameters.
    AvgPool2d {
        /// Square window size k.
        kernel: usize,
        /// Stride s ≥ 1.
        stride: usize,
    },
    /// An element-wise activation. No parameters.
    Act(Activation),
}

/// A layer with its resolved shapes and parameter offset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Node {
    pub layer: Layer,
    pub input: Shape,
    pub output: Shape,
    pub in_len: usize,
    pub out_len: usize,
    /// Offset of the layer's weights in the flat parameter vector.
    pub offset: usize,
    /// Number of weights (the biases follow).
    pub weights: usize,
    /// Number of biases.
    pub biases: usize,
    /// Fan-in for LeCun initialisation (0 without parameters).
    pub fan_in: usize,
}

fn overflow() -> Error {
    Error::Inconsistent {
        what: "layer sizes overflow usize",
        value: f64::INFINITY,
    }
}

fn count(name: &'static str, value: usize, expected: &'static str) -> Error {
    Error::InvalidCount {
        name,
        value: value as u64,
        expected,
    }
}

/// Resolves `layer` on `input` at parameter offset `offset`.
pub(crate) fn resolve(layer: Layer, input: Shape, offset: usize) -> Result<Node> {
    let in_len = input.len().ok_or_else(overflow)?;
    let (output, weights, biases, fan_in) = match layer {
        Layer::Dense { units } => {
            if units == 0 {
                return Err(count("units", units, ">= 1 (Dense)"));
            }
            let w = units.checked_mul(in_len).ok_or_else(overflow)?;
            (Shape::flat(units), w, units, in_len)
        }
        Layer::Conv2d {
            out_channels,
            kernel,
            stride,
            padding,
        } => {
            if out_channels == 0 {
                return Err(count("out_channels", out_channels, ">= 1 (Conv2d)"));
            }
            if kernel == 0 {
                return Err(count("kernel", kernel, ">= 1 (Conv2d)"));
            }
            if stride == 0 {
                return Err(count("stride", stride, ">= 1 (Conv2d)"));
            }
            if padding >= kernel {
                return Err(count(
                    "padding",
                    padding,
                    "< kernel (Conv2d: a window must overlap the input)",
                ));
            }
            let h = out_dim(input.height, kernel, stride, padding).ok_or(Error::Inconsistent {
                what: "Conv2d kernel larger than the padded input height",
                value: input.height as f64,
            })?;
            let w = out_dim(input.width, kernel, stride, padding).ok_or(Error::Inconsistent {
                what: "Conv2d kernel larger than the padded input width",
                value: input.width as f64,
            })?;
            let fan_in = input
                .channels
                .checked_mul(kernel)
                .and_then(|v| v.checked_mul(kernel))
                .ok_or_else(overflow)?;
            let weights = fan_in.checked_mul(out_channels).ok_or_else(overflow)?;
            (
                Shape::new(out_channels, h, w),
                weights,
                out_channels,
                fan_in,
            )
        }
        Layer::AvgPool2d { kernel, stride } => {
            if kernel == 0 {
                return Err(count("kernel", kernel, ">= 1 (AvgPool2d)"));
            }
            if stride == 0 {
                return Err(count("stride", stride, ">= 1 (AvgPool2d)"));
            }
            let h = out_dim(input.height, kernel, stride, 0).ok_or(Error::Inconsistent {
                what: "AvgPool2d kernel larger than the input height",
                value: input.height as f64,
            })?;
            let w = out_dim(input.width, kernel, stride, 0).ok_or(Error::Inconsistent {
                what: "AvgPool2d kernel larger than the input width",
                value: input.width as f64,
            })?;
            (Shape::new(input.channels, h, w), 0, 0, 0)
        }
        Layer::Act(_) => (input, 0, 0, 0),
    };
    let out_len = output.len().ok_or_else(overflow)?;
    if out_len == 0 {
        return Err(Error::Inconsistent {
            what: "a layer has an empty output",
            value: 0.0,
        });
    }
    Ok(Node {
        layer,
        input,
        output,
        in_len,
        out_len,
        offset,
        weights,
        biases,
        fan_in,
    })
}

/// (n + 2p − k)/s + 1, or `None` if the kernel does not fit.
fn out_dim(n: usize, k: usize, s: usize, p: usize) -> Option<usize> {
    let padded = n.checked_add(p.checked_mul(2)?)?;
    if padded < k || n == 0 {
        return None;
    }
    Some((padded - k) / s + 1)
}
