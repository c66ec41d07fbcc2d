//! mse (in progress)
