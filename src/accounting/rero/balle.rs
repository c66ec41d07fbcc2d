//! balle (in progress)
