//! rdp (in progress)
