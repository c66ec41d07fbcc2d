//! fano (in progress)
