//! rero (in progress)
