//! RDP of the Poisson-subsampled Gaussian and the analytic Gaussian δ(ε) against the
//! mpmath/scipy reference vectors in ../shared/vectors/.

use crate::common::{read_csv, rel_err};
use reconbound::accounting::gaussian::analytic_delta;
use reconbound::accounting::rdp::subsampled_gaussian_rdp;

/// Every row of rdp_subsampled_gaussian.csv (mpmath quadrature, 40 digits), integer and
/// fractional orders, at relative 1e-9 (the tolerance). Our values are exact up to
/// ~1e-14 and then inflated by at most ~1e-11 relative to stay on the safe side, so they
/// must also never be below the reference by more than 1e-13 relative.
#[test]
fn mironov19_subsampled_gaussian_rdp_matches_mpmath_vectors() {
    let rows = read_csv("rdp_subsampled_gaussian.csv");
    assert_eq!(rows.len(), 10);
    for row in rows {
        let (q, sigma, alpha, want) = (row[0], row[1], row[2], row[3]);
        let got = subsampled_gaussian_rdp(q, sigma, alpha).unwrap();
        assert!(
            rel_err(got, want) < 1e-9,
            "q={q} sigma={sigma} alpha={alpha}: {got} vs {want}"
        );
        assert!(
            got >= want * (1.0 - 1e-13),
            "not conservative: q={q} sigma={sigma} alpha={alpha}: {got} vs {want}"
        );
    }
}

/// Every row of gaussian_delta.csv (scipy) at relative 1e-12: δ is computed in log space from
/// ln Φ, whose relative accuracy is ~1e-15 at these arguments, with no cancellation.
#[test]
fn balle_wang18_analytic_gaussian_delta_matches_vectors() {
    let rows = read_csv("gaussian_delta.csv");
    assert_eq!(rows.len(), 4);
    for row in rows {
        let (eps, mu, want) = (row[0], row[1], row[2]);
        let got = analytic_delta(eps, mu).unwrap();
        assert!(
            rel_err(got, want) < 1e-12,
            "eps={eps} mu={mu}: {got} vs {want}"
        );
    }
}
