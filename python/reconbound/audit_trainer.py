"""Audit another library's DP-SGD training in one run (issue 42): Dirac gradient canaries,
white box (Steinke, Nasr, Jagielski 2023, "Privacy auditing with one (1) training run").

One training run of the real library, with m canaries in it:

* the model is linear, w.x with no bias, one weight per canary (dimension d = m), weights
  initialised to 0, plain SGD at learning rate 1; the loss of a record is w.x (Opacus: the
  batch mean, as its ``loss_reduction="mean"`` expects; numpy and jax_privacy: the sum);
* canary i is the input x = G*e_i with G = 1000*C: its gradient is G*e_i, so its clipped
  per-example gradient is C*e_i (a Dirac gradient canary);
* each canary is in the training set independently with probability 1/2 (drawn from the
  seed). The data set always has N records: slot i holds canary i when it is in, and a record
  whose input is 0 when it is out, and N - m further zero records pad N to what the trainer's
  sampler needs (Opacus samples at 1/len(loader): N a multiple of 1/q). A record of input 0
  has gradient 0, so it adds nothing to any step: to DP-SGD, "canary i out" is "record i
  removed", and N, hence the normaliser q*N the trainers divide by, is public and the same
  for every draw of the inclusions;
* the auditor sees every step's update Delta_t (parameters after minus before) and knows only
  what the claim states (q, sigma, C) and the normaliser q*N: never the inclusions, the
  batches or the noise. In units of the clip, y_t = -Delta_t * q*N / C is, per coordinate,
  1[canary i in the batch] + sigma*z. Canary i's score: full batch (q = 1) the sum of its
  y_t; Poisson, the log-likelihood ratio of "in" against "out" under the claim,
  sum_t log(1 - q + q*exp((2*y_t - 1) / (2*sigma^2)));
* the guesses are fixed in advance: the r/2 highest scores "in" (+1), the r/2 lowest "out"
  (-1), the rest abstain (0). Guesses and truths go to the core's one-run estimators
  (:func:`reconbound.one_run_epsilon`): ``epsilon_empirical`` (Steinke et al., valid for every
  mechanism) and, where the core has them, the f-DP bound against the claimed run's own
  curve family (``epsilon_fdp``, ``claim_refuted_fdp``). The claim is refuted when the f-DP
  test refutes its curve or a valid lower bound exceeds its certified epsilon.

Trainers (the conformance kit's adapters, :mod:`reconbound.conformance`, and its fault names):
``numpy`` (the reference), ``opacus`` (Opacus 1.6.0, ``PrivacyEngine.make_private`` with
Poisson sampling), ``jax-privacy`` (jax_privacy 2.0.0's ``CyclicPoissonSampling``,
``clipped_grad`` and ``gaussian_privatizer``); seeded faults ``half-noise`` (trains at
sigma/2 while the run claims sigma) and ``no-clip`` (clipping off). The command line::

    python -m reconbound.audit_trainer --trainer numpy|opacus|jax-privacy [--fault NAME]
        --sampling-rate Q --steps T --noise-multiplier S [--claimed-noise-multiplier S2]
        --canaries M --guesses R [--view white-box|final-model] [--seed X] [--delta D]
        [--alpha A] [--json]

exits 0 when the claim is not refuted, 1 when it is refuted, 2 for bad input (nothing
printed on stdout). Views: ``white-box`` (every step's update: the per-step likelihood
ratio under Poisson sampling) and ``final-model`` (the black box: the final parameters
theta_T alone, theta_0 = 0 public; canary i's score is its input's loss decrease at theta_T,
-theta_T[i] in units of C/(q*N) — for the full batch the same score as white-box, for
Poisson sampling the sum over steps instead of the likelihood ratio, so weaker).
"""

from __future__ import annotations

import argparse
import json as _json
import math
import sys
import time
from dataclasses import dataclass, asdict
from typing import Any, Dict, Iterator, List, Optional

from . import UncertifiableError, UsageError
from . import conformance as _kit

#: The seeded faults an audit knows (the conformance kit's names; the others break the
#: sampler or the accountant, which the kit tests, not the noise a canary meets).
FAULTS = ("half-noise", "no-clip")

VIEWS = ("white-box", "final-model")

#: A canary's gradient norm in units of the clip: far above it, so clipping is what sets its
#: contribution (C*e_i), and a trainer that does not clip shows it 1000-fold.
CANARY_NORM = 1000.0

#: The seed stream of the inclusions (the trainers use streams 1 to 4 of the kit and 12 here).
INCLUSION_STREAM = 10
TRAINING_STREAM = 12

MAX_CANARIES = 100_000
#: Coordinates observed over the run: steps * canaries (each step's update of every weight).
MAX_OBSERVED = 500_000_000
#: Per-example gradient coordinates of one expected batch (q*N*m): the trainers hold each
#: example's gradient of m weights (Opacus's grad_sample, jax_privacy's vmap), in float32.
MAX_BATCH_COORDINATES = 20_000_000


def _real(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _integer(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass
class Config:
    """One audit: the trainer (``numpy``, ``opacus``, ``jax-privacy``) and its seeded
    ``fault``; the run trained, Poisson rate ``sampling_rate`` q (1: full batch),
    ``steps`` T, ``noise_multiplier`` sigma, clip ``clip`` C; the run claimed (q, T,
    ``claimed_noise_multiplier``, sigma when None, C); ``canaries`` m, ``guesses`` r (even,
    at most m), the ``view`` (``white-box``), ``seed``, ``delta`` of the epsilons and
    ``alpha``, one minus the confidence of the lower bounds."""

    trainer: str = "numpy"
    fault: Optional[str] = None
    sampling_rate: float = 1.0
    steps: int = 1
    noise_multiplier: float = 1.0
    claimed_noise_multiplier: Optional[float] = None
    canaries: int = 1000
    guesses: int = 100
    view: str = "white-box"
    seed: int = 0
    delta: float = 1e-5
    alpha: float = 0.05
    clip: float = 1.0

    @property
    def claimed(self) -> float:
        """The claimed noise multiplier (the one trained, unless stated)."""
        if self.claimed_noise_multiplier is None:
            return self.noise_multiplier
        return self.claimed_noise_multiplier

    @property
    def period(self) -> Optional[int]:
        """k when q = 1/k exactly (the rates Opacus can sample at: 1/len(loader)), else None."""
        k = int(round(1.0 / self.sampling_rate))
        return k if k >= 1 and 1.0 / k == self.sampling_rate else None

    @property
    def dataset_size(self) -> int:
        """N: the m canary slots and zero records up to the least multiple of k (q = 1/k)
        whose Opacus normaliser int(N * (1/k)) is N/k (the float product truncates below it
        for some N, e.g. 49*m for many m)."""
        k = self.period
        if k is None:
            return self.canaries
        n = -(-self.canaries // k) * k
        while int(n * (1.0 / k)) != n // k:
            n += k
        return n

    @property
    def expected_batch(self) -> float:
        """q*N, the normaliser of every trainer here (public: N does not depend on the
        inclusions)."""
        k = self.period
        return float(self.dataset_size // k) if k is not None else self.sampling_rate * self.dataset_size

    def check(self) -> None:
        """Raise UsageError naming the first parameter out of range (nothing is run)."""
        if self.trainer not in TRAINERS:
            raise UsageError(
                f"trainer = {self.trainer!r} is not one of {', '.join(sorted(TRAINERS))}",
                2, "trainer", self.trainer)
        if self.fault is not None and self.fault not in FAULTS:
            raise UsageError(
                f"fault = {self.fault!r} is not one of {', '.join(FAULTS)} (the audit's seeded "
                "faults; the conformance kit, python -m reconbound.conformance, tests the others)",
                2, "fault", self.fault)
        if self.view not in VIEWS:
            raise UsageError(f"view = {self.view!r} is not one of white-box, final-model",
                             2, "view", self.view)
        if not (_real(self.sampling_rate) and 0.0 < self.sampling_rate <= 1.0):
            raise UsageError(
                f"sampling_rate = {self.sampling_rate!r} is out of range: must be in (0, 1] "
                "(1: full batch)", 2, "sampling_rate", self.sampling_rate)
        for name in ("noise_multiplier", "claimed_noise_multiplier", "clip"):
            v = getattr(self, name)
            if name == "claimed_noise_multiplier" and v is None:
                continue
            if not (_real(v) and v > 0):
                raise UsageError(f"{name} = {v!r} is out of range: must be finite and > 0",
                                 2, name, v)
        if not (_integer(self.canaries) and 2 <= self.canaries <= MAX_CANARIES):
            raise UsageError(
                f"canaries = {self.canaries!r} is out of range: must be an integer in "
                f"[2, {MAX_CANARIES}] (the model holds one weight per canary, and the white-box "
                "view records every weight's update at every step)", 2, "canaries", self.canaries)
        if not (_integer(self.guesses) and 2 <= self.guesses <= self.canaries
                and self.guesses % 2 == 0):
            raise UsageError(
                f"guesses = {self.guesses!r} is out of range: must be an even integer in "
                f"[2, canaries = {self.canaries}] (half guessed in, half out; at most one guess "
                "per canary)", 2, "guesses", self.guesses)
        if not (_integer(self.steps) and self.steps >= 1):
            raise UsageError(f"steps = {self.steps!r} is out of range: must be an integer >= 1",
                             2, "steps", self.steps)
        if self.steps * self.canaries > MAX_OBSERVED:
            raise UsageError(
                f"steps = {self.steps} is too large for {self.canaries} canaries: steps * "
                f"canaries = {self.steps * self.canaries} coordinates observed, at most "
                f"{MAX_OBSERVED}", 2, "steps", self.steps)
        if not (_integer(self.seed) and self.seed >= 0):
            raise UsageError(f"seed = {self.seed!r} is out of range: must be an integer >= 0",
                             2, "seed", self.seed)
        if not (_real(self.delta) and 0.0 < self.delta < 1.0):
            raise UsageError(f"delta = {self.delta!r} is out of range: must be in (0, 1)",
                             2, "delta", self.delta)
        if not (_real(self.alpha) and 1e-300 <= self.alpha <= 0.5):
            raise UsageError(f"alpha = {self.alpha!r} is out of range: must be in [1e-300, 0.5]",
                             2, "alpha", self.alpha)
        if self.trainer == "opacus" and self.period is None:
            raise UsageError(
                f"sampling_rate = {self.sampling_rate!r} cannot be trained by Opacus: it samples "
                "at 1/len(loader), so q must be 1/k for an integer k (e.g. 0.01, 0.5, 1)",
                2, "sampling_rate", self.sampling_rate)
        work = self.expected_batch * self.canaries
        if work > MAX_BATCH_COORDINATES:
            raise UsageError(
                f"canaries = {self.canaries} is too many at sampling_rate = {self.sampling_rate}: "
                f"an expected batch of {self.expected_batch:g} records holds q*N*m = {work:.4g} "
                f"per-example gradient coordinates (each example's gradient has one coordinate "
                f"per canary), at most {MAX_BATCH_COORDINATES}; use fewer canaries or a smaller "
                "sampling rate", 2, "canaries", self.canaries)


# --------------------------------------------------------------------------------------------
# The trainers: each yields the update Delta_t of every step (parameters after minus before),
# given the inclusions; the conformance kit's adapters, with their seeding and faults.


def _rows(cfg: Config, included, batch, dtype: str = "float32"):
    """The inputs of the records ``batch`` (indices into N, -1 a zero padding row):
    canary i's slot holds G*e_i when it is in, else 0; the slots past m are 0."""
    import numpy as np

    rows = np.zeros((len(batch), cfg.canaries), dtype=dtype)
    batch = np.asarray(batch, dtype=np.int64)
    k = np.flatnonzero((batch >= 0) & (batch < cfg.canaries))
    if len(k):
        slot = batch[k]
        live = included[slot]
        rows[k[live], slot[live]] = CANARY_NORM * cfg.clip
    return rows


class NumpyAudit(_kit.NumpyTrainer):
    """The reference: :class:`reconbound.conformance.NumpyTrainer`'s sampler and step (clip
    each row, sum, add sigma*C Gaussian noise, divide by q*N) on the canaries' gradients
    (the gradient of w.x is x), SGD at learning rate 1."""

    def updates(self, cfg: Config, included) -> Iterator[Any]:
        import numpy as np

        rng = self._rng(cfg, TRAINING_STREAM)
        w = np.zeros(cfg.canaries)
        for batch in self._batches(cfg, rng, cfg.steps):
            g = self._step(cfg, _rows(cfg, included, batch, "float64"), np.arange(len(batch)), rng,
                           cfg.noise_multiplier)
            before = w.copy()
            w -= g
            yield w - before


class _Canaries:
    """The data set as Opacus's loader reads it: record j is (x_j, j), x_j made on demand
    (N*m floats are never held)."""

    def __init__(self, cfg: Config, included):
        self.cfg, self.included = cfg, included

    def __len__(self) -> int:
        return self.cfg.dataset_size

    def __getitem__(self, j: int):
        import torch

        x = torch.zeros(self.cfg.canaries)
        if j < self.cfg.canaries and self.included[j]:
            x[j] = CANARY_NORM * self.cfg.clip
        return x, j


class OpacusAudit(_kit.OpacusTrainer):
    """Opacus 1.6.0 as :class:`reconbound.conformance.OpacusTrainer` drives it
    (``torch.manual_seed(seed)``, ``PrivacyEngine(accountant="rdp").make_private`` with
    ``poisson_sampling=True`` over a loader of batch q*N, so Opacus's rate 1/len(loader) is q;
    ``half-noise`` passes sigma/2, ``no-clip`` a clipping norm of 1e9 with the noise
    multiplier sigma*C/1e9, so the noise stays sigma*C) on Linear(m, 1,
    bias=False), the batch-mean loss of w.x, SGD at learning rate 1. Refuses to train when
    the loader's sample_rate or the optimizer's expected_batch_size is not what the claim
    states."""

    def updates(self, cfg: Config, included) -> Iterator[Any]:
        import numpy as np
        import opacus
        import torch

        torch.manual_seed(cfg.seed)
        batch = int(cfg.expected_batch)
        loader = torch.utils.data.DataLoader(_Canaries(cfg, included), batch_size=batch)
        model = torch.nn.Linear(cfg.canaries, 1, bias=False)
        torch.nn.init.zeros_(model.weight)
        opt = torch.optim.SGD(model.parameters(), lr=1.0)
        engine = opacus.PrivacyEngine(accountant="rdp")
        sigma, clip = cfg.noise_multiplier, cfg.clip
        if self.fault == "half-noise":
            sigma = sigma / 2
        if self.fault == "no-clip":
            # Opacus's noise is noise_multiplier * max_grad_norm: a clipping norm of 1e9 at
            # sigma adds 1e9-fold noise (a run more private than claimed, not less). Clipping
            # off with the claimed noise sigma*C, as the other trainers' fault:
            clip, sigma = 1e9, sigma * cfg.clip / 1e9
        model, opt, loader = engine.make_private(
            module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
            max_grad_norm=clip, poisson_sampling=True,
        )
        if loader.sample_rate != cfg.sampling_rate:
            raise UsageError(
                f"sampling_rate = {cfg.sampling_rate!r}: Opacus samples at {loader.sample_rate!r} "
                f"(1/len(loader) over N = {cfg.dataset_size}, batch {batch}), another rate",
                2, "sampling_rate", cfg.sampling_rate)
        if opt.expected_batch_size != batch:
            raise UsageError(
                f"sampling_rate = {cfg.sampling_rate!r}: Opacus divides by "
                f"{opt.expected_batch_size}, not q*N = {batch}", 2, "sampling_rate",
                cfg.sampling_rate)
        w = model._module.weight if hasattr(model, "_module") else model.weight
        taken = 0
        while taken < cfg.steps:
            for xb, _ in loader:
                before = w.detach().clone()
                opt.zero_grad()
                model(xb).mean().backward()
                opt.step()
                yield (w.detach() - before).flatten().numpy().astype(np.float64)
                taken += 1
                if taken == cfg.steps:
                    break


class JaxPrivacyAudit(_kit.JaxPrivacyTrainer):
    """jax_privacy 2.0.0 as :class:`reconbound.conformance.JaxPrivacyTrainer` composes it:
    the batches of ``CyclicPoissonSampling`` (padded as jax_privacy pads, onto zero rows),
    the clipped sum of ``clipped_grad`` of the sum of w.x, the noise of
    ``gaussian_privatizer`` (stddev sigma*C; ``half-noise`` sigma*C/2; ``no-clip`` clips at
    inf) added to the sum, divided by q*N, SGD at learning rate 1."""

    def updates(self, cfg: Config, included) -> Iterator[Any]:
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax_privacy import clipping, noise_addition
        from jax_privacy.batch_selection import pad_to_multiple_of

        def loss(w, xb):
            return jnp.sum(xb @ w)

        clip = math.inf if self.fault == "no-clip" else cfg.clip
        grad = jax.jit(clipping.clipped_grad(loss, l2_clip_norm=clip, batch_argnums=1))
        stddev = cfg.noise_multiplier * cfg.clip * (0.5 if self.fault == "half-noise" else 1.0)
        w = jnp.zeros(cfg.canaries, dtype=jnp.float32)
        privatizer = noise_addition.gaussian_privatizer(
            stddev=stddev, prng_key=jax.random.key(cfg.seed * 1000 + TRAINING_STREAM))
        state = privatizer.init(w)
        for b in self._batches(cfg, cfg.steps, TRAINING_STREAM):
            idx = pad_to_multiple_of(np.asarray(b, dtype=np.int64), 32)
            summed = grad(w, _rows(cfg, included, idx)) if len(idx) else jnp.zeros_like(w)
            noisy, state = privatizer.update(summed, state)
            step = np.asarray(noisy, dtype=np.float64) / cfg.expected_batch
            before = np.asarray(w, dtype=np.float64)
            w = w - jnp.asarray(step, dtype=w.dtype)
            yield np.asarray(w, dtype=np.float64) - before


TRAINERS = {"numpy": NumpyAudit, "opacus": OpacusAudit, "jax-privacy": JaxPrivacyAudit}


# --------------------------------------------------------------------------------------------
# The auditor: scores from the updates and the claim only.


class Scorer:
    """Canary i's score from the updates, online (O(m) memory), knowing only the claim
    (q, sigma, C) and the public normaliser q*N: y = -Delta * q*N / C per coordinate; full
    batch, the sum of y; Poisson, the log-likelihood ratio of the mixture
    (1-q)*N(0, sigma^2) + q*N(1, sigma^2) against N(0, sigma^2), summed over steps."""

    def __init__(self, cfg: Config):
        import numpy as np

        self.q, self.sigma = cfg.sampling_rate, cfg.claimed
        # the final model alone: only the sum of the updates, theta_T - theta_0, is read
        self.final_model = cfg.view == "final-model"
        self.unit = cfg.expected_batch / cfg.clip
        self.scores = np.zeros(cfg.canaries)

    def observe(self, delta) -> None:
        import numpy as np

        y = -np.asarray(delta, dtype=np.float64) * self.unit
        if self.q == 1.0 or self.final_model:
            self.scores += y
        else:
            a = (2.0 * y - 1.0) / (2.0 * self.sigma ** 2)
            self.scores += np.logaddexp(math.log1p(-self.q), math.log(self.q) + a)


def guesses_from_scores(scores, r: int):
    """The guesses fixed in advance: the r/2 highest scores +1, the r/2 lowest -1, else 0
    (ties broken by canary index)."""
    import numpy as np

    order = np.argsort(np.asarray(scores), kind="stable")
    g = np.zeros(len(order), dtype=np.int64)
    g[order[len(order) - r // 2:]] = 1
    g[order[:r // 2]] = -1
    return g


def _core_bounds(guesses, truths, cfg: Config) -> Dict[str, Any]:
    """The core's one-run bounds of the guesses against the claimed run (q, claimed sigma,
    T): ``epsilon_empirical`` (Steinke et al., any mechanism), ``epsilon_fdp`` (against the
    claimed run's own curves, its sigma scaled; None if none), ``claim_refuted_fdp``,
    ``p_value_fdp`` (the claimed run's curve itself), ``epsilon_gdp`` (the counts read
    against Gaussian curves: a lower bound only for the full batch) and the core's verdict on
    the claim (``epsilon_certified``, ``claim_refuted``, ``claim_error``: refuted when
    ``epsilon_empirical`` exceeds the certified epsilon or the f-DP test refutes the curve,
    alpha per test; the verdict is the core's, not decided here)."""
    import reconbound

    g, t = [int(x) for x in guesses], [int(x) for x in truths]
    r = reconbound.one_run_epsilon(
        g, t, delta=cfg.delta, alpha=cfg.alpha, sampling_rate=cfg.sampling_rate,
        noise_multiplier=cfg.claimed, steps=cfg.steps)
    return {
        "correct": r.get("correct"),
        "epsilon_empirical": r.get("epsilon_empirical"),
        "epsilon_fdp": r.get("epsilon_fdp"),
        "claim_refuted_fdp": r.get("claim_refuted_fdp"),
        "p_value_fdp": r.get("p_value_fdp"),
        "epsilon_gdp": r.get("epsilon_gdp"),
        "epsilon_certified": r.get("epsilon_certified"),
        "claim_refuted": r.get("claim_refuted"),
        "claim_error": r.get("claim_error"),
        "claim_unavailable": r.get("claim_unavailable"),
    }


def _check_certifiable(cfg: Config) -> None:
    """Refuse, before any training, a claimed run that certifies no finite epsilon at delta
    (the certified epsilon reported is the core's, with its verdict)."""
    import reconbound

    try:
        r = reconbound.epsilon(sampling_rate=cfg.sampling_rate, noise_multiplier=cfg.claimed,
                               steps=cfg.steps, delta=cfg.delta)
    except UncertifiableError as e:
        raise UsageError(f"claimed_noise_multiplier = {cfg.claimed!r}: the claimed run "
                         f"certifies no epsilon ({e})", 2, "claimed_noise_multiplier",
                         cfg.claimed) from None
    eps = r.get("epsilon_pld")
    if eps is None:
        eps = r.get("epsilon_rdp")
    if eps is None or not math.isfinite(eps):
        raise UsageError(
            f"claimed_noise_multiplier = {cfg.claimed!r}: the claimed run (q = "
            f"{cfg.sampling_rate}, T = {cfg.steps}) certifies no finite epsilon at delta = "
            f"{cfg.delta}", 2, "claimed_noise_multiplier", cfg.claimed)


def audit(
    trainer_name: str,
    *,
    sampling_rate: float,
    steps: int,
    noise_multiplier: float,
    claimed_noise_multiplier: Optional[float] = None,
    canaries: int = 1000,
    guesses: int = 100,
    fault: Optional[str] = None,
    seed: int = 0,
    delta: float = 1e-5,
    alpha: float = 0.05,
    clip: float = 1.0,
    view: str = "white-box",
    progress: bool = False,
) -> Dict[str, Any]:
    """One white-box audit of one training run of ``trainer_name`` (module docstring).
    Returns ``{"trainer", "fault", "view", "config", "canaries", "guesses", "correct",
    "epsilon_empirical", "epsilon_fdp", "epsilon_lower", "epsilon_gdp",
    "epsilon_certified", "claim_refuted", "seconds_training", "seconds_total", "seed", ...}``:
    ``epsilon_lower`` the lower bound valid for any trainer (Steinke et al.'s);
    ``epsilon_lower_if_claimed_family`` the larger bound that holds if the trainer is the
    claimed run up to its noise (the f-DP bound against the claimed run's curves, and at
    q = 1 the Gaussian-curve one); ``claim_refuted`` the core's verdict (``reconbound
    estimate --guesses`` with the claimed run): the f-DP test refutes the claimed curve or
    ``epsilon_lower`` exceeds ``epsilon_certified``, each at level alpha, valid for any trainer
    that meets the claim; ``claim_error`` bounds the chance that a true claim is refuted
    (alpha per test). Raises UsageError (nothing run) for
    invalid input, ImportError when the trainer's library is missing."""
    start = time.perf_counter()
    cfg = Config(trainer=trainer_name, fault=fault, sampling_rate=sampling_rate, steps=steps,
                 noise_multiplier=noise_multiplier,
                 claimed_noise_multiplier=claimed_noise_multiplier, canaries=canaries,
                 guesses=guesses, view=view, seed=seed, delta=delta, alpha=alpha, clip=clip)
    cfg.check()
    _check_certifiable(cfg)
    import numpy as np

    trainer = TRAINERS[cfg.trainer](cfg.fault)
    included = np.random.default_rng([cfg.seed, INCLUSION_STREAM]).random(cfg.canaries) < 0.5
    scorer = Scorer(cfg)
    every = max(cfg.steps // 20, 1)
    train_start = time.perf_counter()
    taken = 0
    for delta_t in trainer.updates(cfg, included):
        scorer.observe(delta_t)
        taken += 1
        if progress and (taken % every == 0 or taken == cfg.steps):
            print(f"\r{cfg.trainer}: step {taken}/{cfg.steps}", end="", file=sys.stderr,
                  flush=True)
    seconds_training = time.perf_counter() - train_start
    if progress:
        print(file=sys.stderr)
    if taken != cfg.steps:
        raise RuntimeError(f"the {cfg.trainer} trainer took {taken} steps, not {cfg.steps}")
    g = guesses_from_scores(scorer.scores, cfg.guesses)
    core = _core_bounds(g, included.astype(np.int64), cfg)
    # Steinke et al.'s bound holds for any trainer: the audited one is not trusted, so it
    # alone is epsilon_lower. The f-DP bounds hold if the trainer is the claimed run up to
    # its noise (a trainer adding Laplace noise of the claimed variance breaks them: the
    # conformance kit's noise-gaussian test is the check), so they are reported apart.
    epsilon_lower = core["epsilon_empirical"]
    family = [core["epsilon_fdp"]]
    if cfg.sampling_rate == 1.0:
        family.append(core["epsilon_gdp"])
    family = [x for x in family if x is not None]
    epsilon_if_family = max(family) if family else None
    # the verdict is the core's (estimate --guesses with the run: either test, alpha each)
    if core["claim_refuted"] is None:  # the core gives no verdict: say why, never "not refuted"
        raise UncertifiableError(
            f"no verdict on the claimed run: {core.get('claim_unavailable')}", 1)
    refuted = bool(core["claim_refuted"])
    return {
        "trainer": cfg.trainer,
        "fault": cfg.fault,
        "view": cfg.view,
        "config": asdict(cfg),
        "canaries": cfg.canaries,
        "guesses": cfg.guesses,
        "correct": core["correct"] if core["correct"] is not None
        else int(np.sum(g * (2 * included - 1) > 0)),
        "included": int(included.sum()),
        "dataset_size": cfg.dataset_size,
        "normaliser": cfg.expected_batch,
        "claimed_noise_multiplier": cfg.claimed,
        "trained_noise_multiplier": cfg.noise_multiplier / 2 if cfg.fault == "half-noise"
        else cfg.noise_multiplier,
        "epsilon_empirical": core["epsilon_empirical"],
        "epsilon_fdp": core["epsilon_fdp"],
        "epsilon_lower": epsilon_lower,
        "epsilon_lower_if_claimed_family": epsilon_if_family,
        "epsilon_gdp": core["epsilon_gdp"],
        "epsilon_certified": core["epsilon_certified"],
        "claim_refuted_fdp": core["claim_refuted_fdp"],
        "p_value_fdp": core["p_value_fdp"],
        "claim_refuted": refuted,
        "claim_error": core["claim_error"],
        "seconds_training": seconds_training,
        "seconds_total": time.perf_counter() - start,
        "seed": cfg.seed,
    }


def _num(x: Optional[float], side: str = "nearest") -> str:
    """``x`` as the command line prints it (4 significant digits, rounded towards ``side``:
    up for an upper bound, down for a lower bound; issue 43)."""
    import reconbound

    return "-" if x is None else reconbound.sig(x, 4, side)


def _table(r: Dict[str, Any]) -> str:
    c = r["config"]
    trained = "" if r["trained_noise_multiplier"] == r["claimed_noise_multiplier"] else \
        f" (trained at sigma = {r['trained_noise_multiplier']:g})"
    lines = [
        f"one-run {r['view']} audit of the {r['trainer']} trainer"
        + (f" (seeded fault: {r['fault']})" if r["fault"] else ""),
        f"claimed run: q = {c['sampling_rate']:g}, sigma = {r['claimed_noise_multiplier']:g}, "
        f"T = {c['steps']}, C = {c['clip']:g}{trained}; {r['canaries']} Dirac gradient canaries "
        f"({r['included']} in), N = {r['dataset_size']}",
        f"{'epsilon at delta = %g' % c['delta']:38s} value",
        f"{'lower bound, any trainer (SNJ23)':38s} {_num(r['epsilon_lower'], 'down')}",
        f"{'if the trainer is the claimed run':38s} {_num(r['epsilon_lower_if_claimed_family'], 'down')}",
        f"{'  f-DP, the claimed curves':38s} {_num(r['epsilon_fdp'], 'down')}",
        f"{'  Gaussian curves' + ('' if c['sampling_rate'] == 1 else ' (no bound here)'):38s} "
        f"{_num(r['epsilon_gdp'], 'down')}",
        f"{'certified (must not be beaten)':38s} {_num(r['epsilon_certified'], 'up')}",
        f"guesses {r['guesses']}: {r['correct']} correct; trials: 1 run; seed {r['seed']}; "
        f"alpha = {c['alpha']:g} ({100 * (1 - c['alpha']):g} % confidence)",
    ]
    if r["claim_refuted"]:
        why = "the f-DP test refutes the claimed curve" if r["claim_refuted_fdp"] else \
            f"lower bound {_num(r['epsilon_lower'], 'down')} > certified {_num(r['epsilon_certified'], 'up')}"
        verdict = f"claim REFUTED in one run ({why}; a true claim is refuted with " \
            f"probability <= {_num(r['claim_error'], 'up')})"
    else:
        verdict = f"claim not refuted (lower bound {_num(r['epsilon_lower'], 'down')} <= certified " \
            f"{_num(r['epsilon_certified'], 'up')}, and the f-DP test does not refute the curve)"
    lines.append(verdict + f" (training {r['seconds_training']:.1f} s of "
                 f"{r['seconds_total']:.1f} s)")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m reconbound.audit_trainer",
        description="Audit a DP-SGD trainer in one training run with Dirac gradient canaries "
        "(white box, Steinke, Nasr, Jagielski 2023): a lower bound on epsilon beside the "
        "claimed run's certified epsilon; exit 0 when the claim is not refuted, 1 when it is, "
        "2 for bad input.",
    )
    p.add_argument("--trainer", default="numpy", help="numpy, opacus or jax-privacy")
    p.add_argument("--fault", help="a seeded fault: half-noise or no-clip")
    # defaults: the full batch, one step, sigma 1 (the guide's first row: a stable setting
    # that runs in a fraction of a second with the numpy trainer)
    p.add_argument("--sampling-rate", type=float, default=1.0)
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--noise-multiplier", type=float, default=1.0)
    p.add_argument("--claimed-noise-multiplier", type=float)
    p.add_argument("--canaries", type=int, default=1000)
    p.add_argument("--guesses", type=int, default=100)
    p.add_argument("--view", default="white-box",
                   help="white-box (every update) or final-model (theta_T alone)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        result = audit(
            a.trainer, sampling_rate=a.sampling_rate, steps=a.steps,
            noise_multiplier=a.noise_multiplier,
            claimed_noise_multiplier=a.claimed_noise_multiplier, canaries=a.canaries,
            guesses=a.guesses, fault=a.fault, seed=a.seed, delta=a.delta, alpha=a.alpha,
            clip=a.clip, view=a.view, progress=sys.stderr.isatty() and not a.quiet)
    except UsageError as e:
        print(f"reconbound.audit_trainer: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"reconbound.audit_trainer: the {a.trainer} trainer needs {e.name} "
              f"(pip install it): {e}", file=sys.stderr)
        return 2
    if a.json:
        print(_json.dumps(result))
    else:
        sys.stdout.write(_table(result))
    return 1 if result["claim_refuted"] else 0


if __name__ == "__main__":
    sys.exit(main())
