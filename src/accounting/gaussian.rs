//! gaussian (in progress)
