"""Cross-check against Google's dp_accounting (0.6.0) on 50 random Poisson-subsampled
Gaussian configurations (fixed seed).

RDP: at the integer orders of reconbound's default grid (where both compute the exact
binomial sum) the RDP curves and the ε of the improved conversion (dp_accounting's
get_epsilon) agree to 1e-9 relative. At fractional orders dp_accounting's series is larger
than reconbound's quadrature, which mpmath confirms (q = 0.018623175463466667,
σ = 0.7179256573371279, α = 2.8: one-step RDP 0.0035667624045644 here and by mpmath
quadrature to 11 digits, 0.00358361 by dp_accounting, +0.47 %), so reconbound's epsilon_rdp,
minimised over its whole default grid, is at most dp_accounting's ε on that grid, and within
1 % of it.

PLD: dp_accounting's pessimistic PLD ε lies inside or above reconbound's certified bracket
[epsilon_pld_lower, epsilon_pld], less its discretisation interval, and at most a coarse
discretisation error above it.
"""

import random

import pytest

import reconbound

dpa = pytest.importorskip("dp_accounting")

ORDERS = reconbound.bound()["orders"]
INT_ORDERS = [a for a in ORDERS if a == int(a)]


def configs(n=50, seed=22):
    rng = random.Random(seed)
    for _ in range(n):
        yield (10 ** rng.uniform(-3, -1), rng.uniform(0.6, 3.0), rng.randint(1, 2000),
               10 ** rng.uniform(-8, -4))


def event(q, sigma):
    return dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma))


def dpa_rdp_epsilon(q, sigma, steps, delta, orders):
    acc = dpa.rdp.RdpAccountant(orders=orders)
    acc.compose(event(q, sigma), steps)
    return acc, acc.get_epsilon(delta)


def test_rdp_matches_dp_accounting_on_50_random_configurations():
    n = 0
    for q, sigma, steps, delta in configs():
        acc, eps_int = dpa_rdp_epsilon(q, sigma, steps, delta, INT_ORDERS)
        ours = reconbound.rdp(noise_multiplier=sigma, sampling_rate=q, steps=steps,
                              orders=INT_ORDERS)
        assert ours["orders"] == INT_ORDERS
        for a, x, y in zip(INT_ORDERS, acc._rdp, ours["rdp"]):
            assert abs(y - x) <= 1e-9 * abs(x), (q, sigma, steps, a, x, y)
        eps_ours, _ = dpa.rdp.compute_epsilon(INT_ORDERS, ours["rdp"], delta)
        assert abs(eps_ours - eps_int) <= 1e-9 * eps_int, (q, sigma, steps, delta)
        # The epsilon command minimises over the whole default grid.
        e = reconbound.epsilon(noise_multiplier=sigma, sampling_rate=q, steps=steps,
                               delta=delta, accountant="rdp")
        _, eps_all = dpa_rdp_epsilon(q, sigma, steps, delta, ORDERS)
        assert e["epsilon_rdp"] <= eps_int * (1 + 1e-9)
        assert e["epsilon_rdp"] <= eps_all * (1 + 1e-9)
        assert e["epsilon_rdp"] >= eps_all * (1 - 1e-2), (q, sigma, steps, delta)
        n += 1
    assert n == 50


@pytest.mark.parametrize("vdi,above,count", [(1e-3, 0.05, 50), (1e-4, 1e-3, 4)])
def test_pld_inside_or_above_the_certified_bracket(vdi, above, count):
    n = 0
    for q, sigma, steps, delta in configs(count):
        e = reconbound.epsilon(noise_multiplier=sigma, sampling_rate=q, steps=steps,
                               delta=delta)
        lo, hi = e["epsilon_pld_lower"], e["epsilon_pld"]
        assert lo is not None and hi is not None and 0 <= lo <= hi
        acc = dpa.pld.PLDAccountant(value_discretization_interval=vdi)
        acc.compose(event(q, sigma), steps)
        p = acc.get_epsilon(delta)
        assert p >= lo - vdi, (q, sigma, steps, delta, lo, hi, p)
        assert p <= hi + above, (q, sigma, steps, delta, lo, hi, p)
        n += 1
    assert n == count
