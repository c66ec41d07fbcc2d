"""Does a DP-SGD trainer do what its accountant assumes? The conformance kit (issue 41).

The accountant of DP-SGD assumes a mechanism: each record in a step's batch independently
with probability q, each per-example gradient clipped to C, Gaussian noise of standard
deviation sigma*C added to the sum, the sum divided by a constant (the expected batch size
q*N), T steps. Each test here drives one trainer from outside and hands what it observed to
the core (``reconbound::conformance``), which holds every statistic:

* ``sampler-rate``, ``sampler-batch-sizes``, ``sampler-independence``: the record indices of
  each step's batch (the trainer's own data loader, over records that carry their index);
* ``noise``, ``noise-gaussian``: the update's coordinates with zero per-example gradients, times q*N / C and
  divided by the per-example contribution the clipping test measures (C when the trainer
  divides by q*N; C*q*N/D when it divides by another constant D), so that the noise is
  measured in units of the clipped sum, whatever constant the trainer divides by; its scale
  (Laurent-Massart chi-squared bounds) and its shape (the Kolmogorov distance from the normal
  against the Dvoretzky-Kiefer-Wolfowitz-Massart band);
* ``clipping``, ``normalisation``: noiseless steps (sigma = 0) where every example's gradient
  points the same way (spread over two coordinates, or a weight and a bias) with norm 1000*C,
  and again with 10*C: an example's contribution must not grow with its gradient, and the
  update's norm times q*N / (lr*C) must be the realised batch size times one constant;
* ``steps``: with gradient accumulation (4 physical batches a step), the steps the
  accountant recorded against the optimizer steps taken.

Each statistical test has false-alarm rate ``alpha`` (default 1e-6, exact: Clopper-Pearson,
Laurent-Massart); the deterministic ones never fail an honest trainer. A failed test reports
what was measured and the certified lower end of the epsilon of the mechanism actually
measured, beside the claimed run's epsilon.

Trainers: ``numpy`` (the reference: the protocol a third library implements, see
:class:`NumpyTrainer`), ``opacus`` (Opacus 1.6.0, :class:`OpacusTrainer`), ``jax-privacy``
(jax_privacy 2.0.0's batch selection, clipping and noise, :class:`JaxPrivacyTrainer`), and
seeded faults
of each: ``shuffle``, ``half-noise``, ``no-clip``, ``realised-batch``, ``accumulation``,
``wrong-q``. The command line::

    python -m reconbound.conformance --trainer numpy|opacus|jax-privacy [--fault NAME] [--seed S] [--json]
        [--grad-sample-mode hooks|functorch|ghost]   (Opacus's per-example gradient modes)

exits 0 when every test ran and passed, 1 when one failed, 3 when none failed but one could
not run (a skipped test is never a pass: the table says which and why), 2 for bad input.
"""

from __future__ import annotations

import argparse
import json as _json
import math
import sys
import time
from dataclasses import dataclass, asdict
from typing import Any, Dict, List, Optional, Tuple

from . import UncertifiableError, UsageError, _native, _typed, sig

FAULTS = ("shuffle", "half-noise", "no-clip", "realised-batch", "accumulation", "wrong-q")

#: The test each fault must fail (the kit's negative controls).
FAULT_TESTS = {
    "shuffle": ("sampler-independence",),
    "half-noise": ("noise",),
    "no-clip": ("clipping",),
    "realised-batch": ("normalisation",),
    "accumulation": ("steps",),
    "wrong-q": ("sampler-rate",),
}


#: The relative tolerance of the deterministic clipping and normalisation tests: float32
#: trainers (Opacus) round a step's update to about 1e-6; the faults they catch are 10 % or
#: more (the realised against the expected batch) and 1000x (clipping off).
UPDATE_TOLERANCE = 1e-3


@dataclass
class Config:
    """The claimed run and the kit's budget. ``dataset_size`` N records, Poisson rate
    ``sampling_rate`` q (q*N must be an integer: the expected batch), ``noise_multiplier``
    sigma, clipping norm ``clip`` C, ``steps`` T of the sampler test (and the claimed run's
    T), ``noise_dim`` parameters observed per noise step (T * noise_dim coordinates),
    ``delta`` of the epsilons, ``alpha`` the false-alarm rate of each test, ``seed``."""

    dataset_size: int = 1000
    sampling_rate: float = 0.05
    noise_multiplier: float = 1.0
    clip: float = 2.0
    steps: int = 400
    noise_dim: int = 250
    accumulation: int = 4
    delta: float = 1e-5
    alpha: float = 1e-6
    seed: int = 0

    @property
    def expected_batch(self) -> int:
        return int(round(self.dataset_size * self.sampling_rate))

    def check(self) -> None:
        if not (isinstance(self.dataset_size, int) and self.dataset_size >= 2):
            raise UsageError(f"dataset_size = {self.dataset_size!r} is out of range: must be an integer >= 2", 2, "dataset_size", self.dataset_size)
        if not (0.0 < self.sampling_rate < 1.0):
            raise UsageError(f"sampling_rate = {self.sampling_rate!r} is out of range: must be in (0, 1)", 2, "sampling_rate", self.sampling_rate)
        b = self.dataset_size * self.sampling_rate
        if abs(b - round(b)) > 1e-9 * b or round(b) < 1:
            raise UsageError(
                f"sampling_rate = {self.sampling_rate!r}: q*N = {b} is not a positive integer "
                "(the expected batch size a trainer divides by)", 2, "sampling_rate", self.sampling_rate)
        if self.dataset_size % int(round(b)) != 0:
            raise UsageError(
                f"dataset_size = {self.dataset_size} is not a multiple of the expected batch "
                f"{int(round(b))}: Opacus samples at 1/ceil(N/B), another rate than q", 2,
                "dataset_size", self.dataset_size)
        if not (isinstance(self.seed, int) and self.seed >= 0):
            raise UsageError(f"seed = {self.seed!r} is out of range: must be an integer >= 0", 2, "seed", self.seed)
        for name in ("noise_multiplier", "clip"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise UsageError(f"{name} = {v!r} is out of range: must be finite and > 0", 2, name, v)
        for name, least in (("steps", 2), ("noise_dim", 1), ("accumulation", 2)):
            v = getattr(self, name)
            if not (isinstance(v, int) and v >= least):
                raise UsageError(f"{name} = {v!r} is out of range: must be an integer >= {least}", 2, name, v)
        if not (1e-300 <= self.alpha <= 0.5):
            raise UsageError(f"alpha = {self.alpha!r} is out of range: must be in [1e-300, 0.5]", 2, "alpha", self.alpha)
        if not (0.0 < self.delta < 1.0):
            raise UsageError(f"delta = {self.delta!r} is out of range: must be in (0, 1)", 2, "delta", self.delta)
        if self.steps * self.noise_dim > 9_000_000:
            raise UsageError(
                f"steps * noise_dim = {self.steps * self.noise_dim} is too large: at most 9000000 "
                "noise coordinates", 2, "noise_dim", self.noise_dim)
        if self.dataset_size * self.steps > 9_999_999:
            raise UsageError(
                f"dataset_size * steps = {self.dataset_size * self.steps} is too large: at most 9999999",
                2, "steps", self.steps)
        smallest = 4 * math.log(2 / self.alpha)
        if self.steps * self.noise_dim <= smallest:
            raise UsageError(
                f"steps * noise_dim = {self.steps * self.noise_dim} is too small to bound the "
                f"noise at alpha = {self.alpha} (must exceed {smallest:.1f})", 2, "noise_dim", self.noise_dim)


class NumpyTrainer:
    """The reference trainer: DP-SGD as its analysis assumes it, in numpy, on per-example
    gradients given as data (record i's gradient is row i of ``gradients``). A library's
    adapter implements the same four methods on the library's own trainer:

    * ``sample_batches(cfg) -> list[list[int]]``: the record indices of each of cfg.steps
      steps' batches, as the trainer's sampler draws them;
    * ``noise_coordinates(cfg) -> list[float]``: the parameter updates of cfg.steps steps
      with zero per-example gradients (learning rate 1), times q*N / C;
    * ``noiseless_updates(cfg) -> (ratios, batch_sizes)``: sigma = 0, every example's
      gradient 1000*C in one direction, learning rate 1: each step's update norm times
      q*N / C, and the realised batch size;
    * ``step_counts(cfg) -> (taken, accounted)``: cfg.steps // 4 optimizer steps with
      cfg.accumulation physical batches each: the updates taken and the steps the trainer's
      accountant recorded.

    ``fault`` seeds one bug (``FAULTS``)."""

    name = "numpy"

    def __init__(self, fault: Optional[str] = None):
        if fault is not None and fault not in FAULTS:
            raise UsageError(f"fault = {fault!r} is not one of {', '.join(FAULTS)}", 2, "fault", fault)
        self.fault = fault

    def _rng(self, cfg: Config, stream: int):
        import numpy as np

        return np.random.default_rng([cfg.seed, stream])

    def _batches(self, cfg: Config, rng, steps: int) -> List[Any]:
        import numpy as np

        n, q = cfg.dataset_size, cfg.sampling_rate
        if self.fault == "wrong-q":
            q = q * 1.25  # "q from the wrong length": 1/len of a shorter loader
        if self.fault == "shuffle":
            b = cfg.expected_batch
            out: List[Any] = []
            while len(out) < steps:
                perm = rng.permutation(n)
                out.extend(perm[i:i + b] for i in range(0, n - b + 1, b))
            return [np.sort(x) for x in out[:steps]]
        return [np.flatnonzero(rng.random(n) < q) for _ in range(steps)]

    def _step(self, cfg: Config, grads, batch, rng, sigma: float) -> Any:
        """One DP-SGD update (learning rate 1) from the per-example gradients of the batch."""
        import numpy as np

        g = grads[batch]
        if self.fault != "no-clip":
            norms = np.linalg.norm(g, axis=1)
            g = g * np.minimum(1.0, cfg.clip / np.maximum(norms, 1e-300))[:, None]
        total = g.sum(axis=0)
        s = sigma / 2 if self.fault == "half-noise" else sigma
        total = total + s * cfg.clip * rng.standard_normal(total.shape[0])
        normaliser = cfg.expected_batch
        if self.fault == "realised-batch":
            normaliser = max(len(batch), 1)
        return total / normaliser

    def sample_batches(self, cfg: Config) -> List[List[int]]:
        return [list(map(int, b)) for b in self._batches(cfg, self._rng(cfg, 1), cfg.steps)]

    def noise_coordinates(self, cfg: Config) -> List[float]:
        import numpy as np

        rng = self._rng(cfg, 2)
        grads = np.zeros((cfg.dataset_size, cfg.noise_dim))
        out = []
        for b in self._batches(cfg, rng, cfg.steps):
            out.append(self._step(cfg, grads, b, rng, cfg.noise_multiplier))
        return list(np.concatenate(out) * cfg.expected_batch / cfg.clip)

    def noiseless_updates(self, cfg: Config, gradient_norm: float = 1000.0) -> Tuple[List[float], List[int]]:
        import numpy as np

        rng = self._rng(cfg, 3 if gradient_norm >= 1000.0 else 4)
        grads = np.zeros((cfg.dataset_size, 4))
        # one direction over two coordinates (a per-coordinate clip shows as sqrt(2)*C)
        grads[:, 0] = grads[:, 1] = gradient_norm * cfg.clip / math.sqrt(2.0)
        ratios, sizes = [], []
        for b in self._batches(cfg, rng, max(cfg.steps // 4, 2)):
            u = self._step(cfg, grads, b, rng, 0.0)
            ratios.append(float(np.linalg.norm(u)) * cfg.expected_batch / cfg.clip)
            sizes.append(len(b))
        return ratios, sizes

    def step_counts(self, cfg: Config) -> Tuple[int, int]:
        taken = max(cfg.steps // 4, 1)
        # the honest accountant records one step per noisy update; the fault, one per
        # `accumulation` updates (the steps counted in units of accumulated batches twice over,
        # as Opacus #834's len(accountant) = 1 after 100 steps)
        accounted = taken // cfg.accumulation if self.fault == "accumulation" else taken
        return taken, accounted


def _ScaledOutput():
    """The criterion Opacus's ghost clipping wraps: per example, target * output (the
    linear loss scale*(w.x + b) with the scale as the target), reduced by ``reduction``."""
    import torch

    class ScaledOutput(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.reduction = "mean"

        def forward(self, out, target):
            per = out.reshape(-1) * target
            if self.reduction == "none":
                return per
            return per.sum() if self.reduction == "sum" else per.mean()

    return ScaledOutput()


class OpacusTrainer:
    """Opacus 1.6.0 (``PrivacyEngine.make_private``, Poisson sampling, its default hooks
    clipping) driven as its users drive it. The faults are Opacus's own ways of going wrong:
    ``shuffle`` is ``poisson_sampling=False`` (a shuffled loader, accounted as Poisson),
    ``half-noise`` trains at sigma/2 while the run claims sigma, ``no-clip`` a clipping norm of
    1e9, ``realised-batch`` divides each step by its realised batch (the optimizer's
    expected_batch_size set to it before each step, Opacus #571), ``accumulation`` fires the
    accountant's hook on one optimizer step in 4 of a BatchMemoryManager run (the accountant
    records fewer steps than were taken, as Opacus #834), ``wrong-q`` builds the loader with batch 1.25*B (q
    from the wrong length)."""

    name = "opacus"

    #: Opacus's ways of computing per-example gradients: ``hooks`` (its default),
    #: ``functorch``, and ``ghost`` (ghost clipping: norms without per-example gradients, two
    #: backward passes through the wrapped criterion; Opacus PR #664 once made it ignore
    #: max_grad_norm).
    GRAD_SAMPLE_MODES = ("hooks", "functorch", "ghost")

    def __init__(self, fault: Optional[str] = None, grad_sample_mode: str = "hooks"):
        if fault is not None and fault not in FAULTS:
            raise UsageError(f"fault = {fault!r} is not one of {', '.join(FAULTS)}", 2, "fault", fault)
        if grad_sample_mode not in self.GRAD_SAMPLE_MODES:
            raise UsageError(
                f"grad_sample_mode = {grad_sample_mode!r} is not one of "
                f"{', '.join(self.GRAD_SAMPLE_MODES)}", 2, "grad_sample_mode", grad_sample_mode)
        self.fault = fault
        self.grad_sample_mode = grad_sample_mode
        if grad_sample_mode != "hooks":
            self.name = f"opacus ({grad_sample_mode})"
        import warnings

        warnings.filterwarnings("ignore", module="opacus")
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        import opacus  # noqa: F401
        import torch  # noqa: F401

    def _make(self, cfg: Config, dim: int, x, sigma: float, clip: float, batch: Optional[int] = None, bias: bool = False):
        import opacus
        import torch

        torch.manual_seed(cfg.seed)
        n = cfg.dataset_size
        b = batch if batch is not None else cfg.expected_batch
        if self.fault == "wrong-q":
            b = int(round(1.25 * b))
        data = torch.utils.data.TensorDataset(x, torch.arange(n))
        loader = torch.utils.data.DataLoader(data, batch_size=b)
        model = torch.nn.Linear(dim, 1, bias=bias)
        for p in model.parameters():
            torch.nn.init.zeros_(p)
        opt = torch.optim.SGD(model.parameters(), lr=1.0)
        engine = opacus.PrivacyEngine(accountant="rdp")
        if self.fault == "half-noise":
            sigma = sigma / 2
        if self.fault == "no-clip":
            clip = 1e9
        if self.grad_sample_mode == "ghost":
            model, opt, self.criterion, loader = engine.make_private(
                module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
                max_grad_norm=clip, poisson_sampling=self.fault != "shuffle",
                criterion=_ScaledOutput(), grad_sample_mode="ghost",
            )
        else:
            model, opt, loader = engine.make_private(
                module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
                max_grad_norm=clip, poisson_sampling=self.fault != "shuffle",
                grad_sample_mode=self.grad_sample_mode,
            )
        return engine, model, opt, loader

    def _backward(self, model, xb, loss_scale: float) -> None:
        """The mean loss scale*(w.x + b) backwards: directly, or through Opacus's ghost
        clipping criterion (its two backward passes)."""
        import torch

        out = model(xb)
        if self.grad_sample_mode == "ghost":
            self.criterion(out, torch.full((len(xb),), float(loss_scale))).backward()
        else:
            (loss_scale * out).mean().backward()

    def sample_batches(self, cfg: Config) -> List[List[int]]:
        import torch

        x = torch.zeros(cfg.dataset_size, 1)
        _, _, _, loader = self._make(cfg, 1, x, cfg.noise_multiplier, cfg.clip)
        out: List[List[int]] = []
        while len(out) < cfg.steps:
            for _, idx in loader:
                out.append(sorted(int(i) for i in idx))
                if len(out) == cfg.steps:
                    break
        return out

    def _train(self, cfg: Config, x, sigma: float, steps: int, loss_scale: float, bias: bool = False):
        """Run ``steps`` optimizer steps on the linear model w.x (+ b) with the mean loss
        scale*(w.x + b), as Opacus's loss_reduction="mean" expects (zero gradients at scale
        0); return each step's update of every parameter, and the realised batch."""
        import numpy as np
        import torch

        engine, model, opt, loader = self._make(cfg, x.shape[1], x, sigma, cfg.clip, bias=bias)
        params = list(model.parameters())
        updates, sizes = [], []
        while len(updates) < steps:
            for xb, idx in loader:
                before = [p.detach().clone() for p in params]
                opt.zero_grad()
                self._backward(model, xb, loss_scale)
                if self.fault == "realised-batch":
                    opt.expected_batch_size = max(len(idx), 1)
                opt.step()
                updates.append(np.concatenate([
                    (p.detach() - b).flatten().numpy().astype(float) for p, b in zip(params, before)
                ]))
                sizes.append(len(idx))
                if len(updates) == steps:
                    break
        return updates, sizes

    def noise_coordinates(self, cfg: Config) -> List[float]:
        import numpy as np
        import torch

        x = torch.ones(cfg.dataset_size, cfg.noise_dim)
        updates, _ = self._train(cfg, x, cfg.noise_multiplier, cfg.steps, 0.0)
        # an SGD step of learning rate 1 is -grad; grad = (sum + noise) / expected batch
        return list(-np.concatenate(updates) * cfg.expected_batch / cfg.clip)

    def noiseless_updates(self, cfg: Config, gradient_norm: float = 1000.0) -> Tuple[List[float], List[int]]:
        import numpy as np
        import torch

        # a weight and a bias, each with half the gradient's square norm (per-layer clipping
        # to C each shows as sqrt(2)*C)
        x = torch.zeros(cfg.dataset_size, 4)
        x[:, 0] = 1.0
        scale = gradient_norm * cfg.clip / math.sqrt(2.0)
        updates, sizes = self._train(cfg, x, 0.0, max(cfg.steps // 4, 2), scale, bias=True)
        ratios = [float(np.linalg.norm(u)) * cfg.expected_batch / cfg.clip for u in updates]
        return ratios, sizes

    def step_counts(self, cfg: Config) -> Tuple[int, int]:
        import torch
        from opacus.utils.batch_memory_manager import BatchMemoryManager

        taken_goal = max(cfg.steps // 4, 1)
        x = torch.ones(cfg.dataset_size, 2)
        engine, model, opt, loader = self._make(cfg, 2, x, cfg.noise_multiplier, cfg.clip)
        physical = max(cfg.expected_batch // cfg.accumulation, 1)
        w = model._module.weight if hasattr(model, "_module") else model.weight
        if self.fault == "accumulation":
            # the accountant's hook fires on one step in `accumulation` only
            hook, calls = opt.step_hook, [0]

            def rarely(optimizer) -> None:
                calls[0] += 1
                if calls[0] % cfg.accumulation == 0:
                    hook(optimizer)

            opt.step_hook = rarely
        taken = 0
        with BatchMemoryManager(data_loader=loader, max_physical_batch_size=physical,
                                optimizer=opt) as mem_loader:
            while taken < taken_goal:
                for xb, _ in mem_loader:
                    before = w.detach().clone()
                    opt.zero_grad()
                    self._backward(model, xb, 1.0)
                    opt.step()
                    if not torch.equal(w.detach(), before):
                        taken += 1
                    if taken >= taken_goal:
                        break
        accounted = sum(int(h[2]) for h in engine.accountant.history)
        return taken, accounted


class JaxPrivacyTrainer:
    """jax_privacy 2.0.0's building blocks composed as its examples compose them: the batches
    of ``batch_selection.CyclicPoissonSampling`` (cycle_length 1: Poisson), the clipped sum of
    ``clipping.clipped_grad``, the noise of ``noise_addition.gaussian_privatizer`` (stddev
    sigma*C) added to the sum, divided by the expected batch size. jax_privacy's core API keeps
    no count of the steps taken (its accountant is given ``num_updates`` by the caller), so the
    ``steps`` test is skipped, saying so. Faults: ``shuffle`` is ``BallsInBinsSampling`` (each
    example in one batch of every cycle), ``half-noise`` stddev sigma*C/2, ``no-clip``
    ``l2_clip_norm=inf``, ``realised-batch`` divides by the batch drawn, ``wrong-q``
    ``sampling_prob=1.25*q``; ``accumulation`` has no step count to break."""

    name = "jax-privacy"
    skip_reasons = {
        "step_counts": "jax_privacy's core API keeps no count of the steps taken: its "
        "accountant is told num_updates by the caller, so there is no record to compare",
    }

    def __init__(self, fault: Optional[str] = None):
        if fault is not None and fault not in FAULTS:
            raise UsageError(f"fault = {fault!r} is not one of {', '.join(FAULTS)}", 2, "fault", fault)
        if fault == "accumulation":
            raise UsageError(
                "fault = 'accumulation' does not apply to the jax-privacy trainer: its core API "
                "keeps no count of the steps taken, so there is nothing to miscount",
                2, "fault", fault)
        self.fault = fault
        import jax  # noqa: F401
        import jax_privacy  # noqa: F401

    def _batches(self, cfg: Config, steps: int, stream: int) -> List[Any]:
        from jax_privacy import batch_selection as bs

        if self.fault == "shuffle":
            strategy = bs.BallsInBinsSampling(
                iterations=steps, cycle_length=int(round(1 / cfg.sampling_rate)))
        else:
            q = cfg.sampling_rate * (1.25 if self.fault == "wrong-q" else 1.0)
            strategy = bs.CyclicPoissonSampling(sampling_prob=q, iterations=steps)
        return list(strategy.batch_iterator(cfg.dataset_size, rng=[cfg.seed, stream]))

    def sample_batches(self, cfg: Config) -> List[List[int]]:
        return [sorted(int(i) for i in b) for b in self._batches(cfg, cfg.steps, 1)]

    def _updates(self, cfg: Config, x, loss_scale: float, sigma: float, steps: int, stream: int):
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax_privacy import clipping, noise_addition

        def loss(w, xb):
            return loss_scale * jnp.sum(xb @ w)

        clip = math.inf if self.fault == "no-clip" else cfg.clip
        grad = clipping.clipped_grad(loss, l2_clip_norm=clip, batch_argnums=1)
        stddev = sigma * cfg.clip * (0.5 if self.fault == "half-noise" else 1.0)
        from jax_privacy.batch_selection import pad_to_multiple_of

        grad = jax.jit(grad)
        w = jnp.zeros(x.shape[1])
        privatizer = noise_addition.gaussian_privatizer(
            stddev=stddev, prng_key=jax.random.key(cfg.seed * 1000 + stream))
        state = privatizer.init(w)
        # padding as jax_privacy pads (index -1), onto a zero row whose gradient is 0: a few
        # batch shapes to compile instead of one per batch size
        padded_x = np.concatenate([x, np.zeros((1, x.shape[1]), dtype=x.dtype)])
        out, sizes = [], []
        for b in self._batches(cfg, steps, stream):
            idx = pad_to_multiple_of(np.asarray(b, dtype=np.int64), 32)
            idx = np.where(idx < 0, len(x), idx)
            summed = grad(w, padded_x[idx]) if len(idx) else jnp.zeros_like(w)
            noisy, state = privatizer.update(summed, state)
            normaliser = max(len(b), 1) if self.fault == "realised-batch" else cfg.expected_batch
            out.append(np.asarray(noisy, dtype=float) / normaliser)
            sizes.append(len(b))
        return out, sizes

    def noise_coordinates(self, cfg: Config) -> List[float]:
        import numpy as np

        x = np.ones((cfg.dataset_size, cfg.noise_dim), dtype=np.float32)
        updates, _ = self._updates(cfg, x, 0.0, cfg.noise_multiplier, cfg.steps, 2)
        return list(np.concatenate(updates) * cfg.expected_batch / cfg.clip)

    def noiseless_updates(self, cfg: Config, gradient_norm: float = 1000.0) -> Tuple[List[float], List[int]]:
        import numpy as np

        x = np.zeros((cfg.dataset_size, 4), dtype=np.float32)
        x[:, 0] = x[:, 1] = gradient_norm * cfg.clip / math.sqrt(2.0)
        stream = 3 if gradient_norm >= 1000.0 else 4
        updates, sizes = self._updates(cfg, x, 1.0, 0.0, max(cfg.steps // 4, 2), stream)
        ratios = [float(np.linalg.norm(u)) * cfg.expected_batch / cfg.clip for u in updates]
        return ratios, sizes


TRAINERS = {"numpy": NumpyTrainer, "opacus": OpacusTrainer, "jax-privacy": JaxPrivacyTrainer}


def run_kit(trainer: Any, cfg: Optional[Config] = None) -> Dict[str, Any]:
    """Run every test on ``trainer`` (an adapter object with the four methods of
    :class:`NumpyTrainer`; a missing method skips its tests, saying so). Returns
    ``{"trainer", "fault", "config", "tests": [...], "passed", "failed", "skipped",
    "seconds"}`` (``passed``: every test ran and passed); each test has
    ``name``, ``passed`` (``None`` when skipped), ``alpha``, ``measured``
    (``measured_lower``, ``measured_upper``), ``expected``, ``finding``,
    ``epsilon_claimed`` and ``epsilon_measured_lower``."""
    cfg = cfg or Config()
    cfg.check()
    start = time.perf_counter()
    args = (cfg.sampling_rate, cfg.noise_multiplier, cfg.steps, cfg.delta)
    tests: List[Dict[str, Any]] = []

    def add(names: Tuple[str, ...], method: str, call) -> None:
        f = getattr(trainer, method, None)
        if f is None:
            why = getattr(trainer, "skip_reasons", {}).get(
                method, f"the trainer has no {method}()")
            for name in names:
                tests.append({"name": name, "passed": None, "skipped": why})
            return
        tests.extend(_typed(call, f)["tests"])

    add(("sampler-rate", "sampler-batch-sizes", "sampler-independence"), "sample_batches",
        lambda f: _native.conformance_sampler(f(cfg), cfg.dataset_size, cfg.sampling_rate,
                                              cfg.noise_multiplier, cfg.steps, cfg.delta,
                                              cfg.alpha))
    # clipping and normalisation first: the per-example contribution c they measure is C·E/D
    # for a trainer that divides by a constant D, so the noise in units of the sum is z / c
    updates: List[Dict[str, Any]] = []
    f = getattr(trainer, "noiseless_updates", None)
    if f is not None:
        high, low = _pair(f(cfg, 1000.0)), _pair(f(cfg, 10.0))
        updates = _typed(
            _native.conformance_updates, *high, *low, UPDATE_TOLERANCE, *args)["tests"]
    c = 1.0
    if updates and updates[0]["passed"] and updates[0]["contribution"] > 0:
        c = updates[0]["contribution"]
    add(("noise", "noise-gaussian"), "noise_coordinates",
        lambda f: _native.conformance_noise([float(z) / c for z in f(cfg)], *args, cfg.alpha))
    if f is None:
        add(("clipping", "normalisation"), "noiseless_updates", lambda f: "")
    else:
        tests.extend(updates)
    add(("steps",), "step_counts",
        lambda f: _native.conformance_steps(*f(cfg), *args))
    if updates and not updates[0]["passed"]:
        # without clipping the noise has no sensitivity to be measured against
        for t in tests:
            if t["name"] in ("noise", "noise-gaussian") and not t["passed"]:
                t["epsilon_measured_lower"] = None
                t["epsilon_note"] = "not meaningful: clipping failed, the sensitivity is unbounded"
    return {
        "trainer": getattr(trainer, "name", type(trainer).__name__),
        "fault": getattr(trainer, "fault", None),
        "config": asdict(cfg),
        "tests": tests,
        "passed": all(t["passed"] is True for t in tests),
        "failed": any(t["passed"] is False for t in tests),
        "skipped": [t["name"] for t in tests if t["passed"] is None],
        "seconds": time.perf_counter() - start,
    }


def _pair(x: Tuple[List[float], List[int]]) -> Tuple[List[float], List[int]]:
    ratios, sizes = x
    return [float(r) for r in ratios], [int(s) for s in sizes]


def _table(result: Dict[str, Any]) -> str:
    lines = [
        f"conformance of the {result['trainer']} trainer"
        + (f" (seeded fault: {result['fault']})" if result["fault"] else "")
        + f" against DP-SGD at q = {result['config']['sampling_rate']}, "
        f"sigma = {result['config']['noise_multiplier']}, C = {result['config']['clip']}, "
        f"N = {result['config']['dataset_size']} (alpha = {result['config']['alpha']} per test)",
        f"{'test':22s} {'verdict':8s} {'measured':>28s} {'expected':>12s}  epsilon (claimed -> measured)",
    ]
    for t in result["tests"]:
        if t["passed"] is None:
            lines.append(f"{t['name']:22s} SKIPPED  {t['skipped']}")
            continue
        verdict = "pass" if t["passed"] else "FAIL"
        # rounded as the command line rounds (issue 43): the interval's ends outwards, the
        # claimed ε (an upper bound) up, the measured ε's lower bound down
        if t["measured_lower"] == t["measured_upper"]:
            m = sig(t["measured"], 6)
        else:
            m = f"{sig(t['measured'], 6)} [{sig(t['measured_lower'], 4, 'down')}, " \
                f"{sig(t['measured_upper'], 4, 'up')}]"
        eps = sig(t["epsilon_claimed"], 4, "up") if t.get("epsilon_claimed") is not None else "-"
        if not t["passed"]:
            em = t.get("epsilon_measured_lower")
            eps += f" -> {'>= ' + sig(em, 4, 'down') if em is not None else 'none'}"
        lines.append(f"{t['name']:22s} {verdict:8s} {m:>28s} {t['expected']:>12.6g}  {eps}")
        if not t["passed"]:
            lines.append(f"{'':22s} {t['finding']}" + (f" ({t['epsilon_note']})" if t.get("epsilon_note") else ""))
    if result["failed"]:
        verdict = "NOT CONFORMANT"
    elif result["passed"]:
        verdict = "every test passed"
    else:
        verdict = ("no test failed, but " + ", ".join(result["skipped"])
                   + " could not run (skipped: not a pass)")
    lines.append(verdict + f" ({result['seconds']:.1f} s)")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m reconbound.conformance",
        description="Does a DP-SGD trainer do what its accountant assumes? Tests of the "
        "sampler, noise, clipping, normalisation and step counting, each at a stated "
        "false-alarm rate; exit 0 when all pass, 1 when one fails, 3 when none fails but one "
        "could not run (skipped), 2 for bad input.",
    )
    p.add_argument("--trainer", choices=sorted(TRAINERS), default="numpy")
    p.add_argument("--fault", choices=FAULTS)
    p.add_argument("--grad-sample-mode", choices=OpacusTrainer.GRAD_SAMPLE_MODES,
                   help="Opacus only: how it computes per-example gradients (default hooks)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--alpha", type=float, default=1e-6)
    p.add_argument("--json", action="store_true")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        if a.grad_sample_mode is not None and a.trainer != "opacus":
            raise UsageError(
                f"--grad-sample-mode applies only to --trainer opacus (not {a.trainer})", 2,
                "grad_sample_mode", a.grad_sample_mode)
        if a.trainer == "opacus":
            trainer = OpacusTrainer(a.fault, a.grad_sample_mode or "hooks")
        else:
            trainer = TRAINERS[a.trainer](a.fault)
        result = run_kit(trainer, Config(seed=a.seed, alpha=a.alpha))
    except UsageError as e:
        print(f"reconbound.conformance: {e}", file=sys.stderr)
        return 2
    except UncertifiableError as e:
        print(f"reconbound.conformance: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"reconbound.conformance: the {a.trainer} trainer needs {e.name} "
              f"(pip install it): {e}", file=sys.stderr)
        return 2
    if a.json:
        print(_json.dumps(result))
    else:
        sys.stdout.write(_table(result))
    if result["failed"]:
        return 1
    return 0 if result["passed"] else 3


if __name__ == "__main__":
    sys.exit(main())
