//! prior (in progress)
