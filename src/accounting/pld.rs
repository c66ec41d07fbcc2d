//! pld (in progress)
