"""Opacus 1.6.0's three accountants checked by `reconbound check` on random (sigma, q, T)
(issue 40): how often each is optimistic (below the certified lower end of the exact epsilon)
or conservative, and by how much. Needs `pip install ./python opacus==1.6.0`.

    python scripts/check_opacus.py [N] [SEED]      (defaults: 50 configurations, seed 40)
"""

import random
import statistics
import sys
import warnings

import reconbound
from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant

warnings.simplefilter("ignore")
n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 40
rng = random.Random(seed)
rows = {"rdp": [], "prv": [], "gdp": []}
for _ in range(n):
    sigma = round(rng.uniform(0.6, 3.0), 4)
    q = round(10 ** rng.uniform(-3.5, -1.2), 7)
    steps = int(10 ** rng.uniform(2, 3.7))
    for mech, cls in (("rdp", RDPAccountant), ("prv", PRVAccountant), ("gdp", GaussianAccountant)):
        acc = cls()
        acc.history = [(sigma, q, steps)]
        eps = float(acc.get_epsilon(1e-5))
        r = reconbound.check(reconbound.from_opacus(acc), claimed_epsilon=eps, delta=1e-5,
                             library="opacus-" + mech)
        rows[mech].append((r.verdict, r.margin, r.margin / max(r.epsilon_lower, 1e-300)))
print(f"{n} configurations, seed {seed}: sigma in [0.6, 3], q in [10^-3.5, 10^-1.2], "
      f"T in [100, 5000], delta 1e-5")
for mech, rs in rows.items():
    counts = {v: sum(1 for r in rs if r[0] == v) for v in ("optimistic", "consistent", "conservative")}
    opt = [r for r in rs if r[0] == "optimistic"]
    con = [r for r in rs if r[0] == "conservative"]
    line = f"opacus-{mech}: " + ", ".join(f"{v} {c}" for v, c in counts.items())
    if opt:
        line += (f"; optimistic by median {statistics.median(r[1] for r in opt):.4f} "
                 f"({100 * statistics.median(r[2] for r in opt):.1f} %), "
                 f"max {max(r[1] for r in opt):.4f} ({100 * max(r[2] for r in opt):.1f} %)")
    if con:
        line += (f"; conservative by median {statistics.median(r[1] for r in con):.4f} "
                 f"({100 * statistics.median(r[2] for r in con):.1f} %)")
    print(line)
