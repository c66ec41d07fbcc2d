#!/usr/bin/env python3
"""The reference vectors of tests/vectors/ (a copy of ../shared/vectors/), recomputed
independently of the crate with scipy and mpmath (40 digits).

    python3 scripts/vectors.py            # check: recompute every value, compare (exit 1 on a mismatch)
    python3 scripts/vectors.py --write    # write the files again from their input columns

Each file keeps its input columns (the points at which the reference is wanted); this script
recomputes the output columns and prints them with repr (shortest round-trip). Tolerances of
the check: 2 ulp-scale (4e-16 relative, 1e-300 absolute) for the scipy columns, which are the
same double-precision routines; 1e-12 relative for the mpmath columns (quadrature and 40-digit
arithmetic, then rounded once: a different mpmath version may move the last digit or two;
with scipy 1.17.1 and mpmath 1.4.1 the recomputed values equal the files' bits except
rero_full_batch (4.5e-16 relative) and gaussian_delta (2.3e-15)).

Needs: pip install scipy mpmath.
"""

import csv
import math
import sys
from pathlib import Path

import mpmath as mp
from scipy import special, stats

mp.mp.dps = 40
DIR = Path(__file__).resolve().parent.parent / "tests" / "vectors"


def normal_cdf(x):
    return [stats.norm.cdf(x), special.log_ndtr(x)]


def normal_quantile(p):
    return [special.ndtri(p)]


def clopper_pearson(k, n, a):
    k, n = int(k), int(n)
    lower = 0.0 if k == 0 else special.betaincinv(k, n - k + 1, a)
    upper = 1.0 if k == n else special.betaincinv(k + 1, n - k, 1 - a)
    return [lower, upper]


def rdp_subsampled_gaussian(q, sigma, alpha):
    """ln E_{x~N(0, σ²)}[((1 − q) + q·e^{(2x − 1)/(2σ²)})^α] / (α − 1), by quadrature."""
    q, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)

    def f(x):
        w = (1 - q) + q * mp.e ** ((2 * x - 1) / (2 * s * s))
        return mp.npdf(x, 0, s) * w ** a

    # split at 0 and at the likelihood ratio's scale: smooth pieces for tanh-sinh
    points = [-mp.inf, -10 * s, 0, mp.mpf(1) / 2, 10 * s + a / s, mp.inf]
    return [float(mp.log(mp.quad(f, points)) / (a - 1))]


def rero_full_batch(kappa, sigma, steps):
    k, s, t = mp.mpf(kappa), mp.mpf(sigma), mp.mpf(steps)
    return [float(mp.ncdf(mp.sqrt(2) * mp.erfinv(2 * k - 1) + mp.sqrt(t) / s))]


def gaussian_delta(eps, mu):
    e, m = mp.mpf(eps), mp.mpf(mu)
    return [float(mp.ncdf(m / 2 - e / m) - mp.e ** e * mp.ncdf(-m / 2 - e / m))]


# file: (number of input columns, function, relative tolerance of the check)
FILES = {
    "normal_cdf.csv": (1, normal_cdf, 4e-16),
    "normal_quantile.csv": (1, normal_quantile, 4e-16),
    "clopper_pearson.csv": (3, clopper_pearson, 4e-16),
    "rdp_subsampled_gaussian.csv": (3, rdp_subsampled_gaussian, 1e-12),
    "rero_full_batch.csv": (3, rero_full_batch, 1e-12),
    "gaussian_delta.csv": (2, gaussian_delta, 1e-12),
}


def text(x):
    return repr(float(x))


def main(write):
    bad = 0
    for name, (n_in, f, tol) in FILES.items():
        path = DIR / name
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
        header, body = rows[0], rows[1:]
        out = [header]
        for row in body:
            inputs = row[:n_in]
            got = f(*[float(v) for v in inputs])
            if write:
                out.append(inputs + [text(v) for v in got])
                continue
            for col, (g, w) in enumerate(zip(got, row[n_in:])):
                w = float(w)
                ok = (g == w) or abs(g - w) <= max(tol * abs(w), 1e-300)
                if not ok:
                    bad += 1
                    print(f"{name}: {inputs} column {header[n_in + col]}: file {w!r}, "
                          f"recomputed {g!r}")
        if write:
            with open(path, "w", newline="") as fh:
                csv.writer(fh, lineterminator="\n").writerows(out)
        print(f"{name}: {len(body)} rows {'written' if write else 'checked'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main("--write" in sys.argv[1:]))
