from typing import List, Optional, Tuple

__version__: str

def run(args: List[str]) -> Tuple[int, str, str]: ...
def epsilon(
    kind: str,
    phases: List[Tuple[float, float, int]],
    batches: Optional[Tuple[int, int]],
    delta: float,
    accountant: str,
    as_schedule: bool,
) -> str: ...
def bound(
    kind: str,
    phases: List[Tuple[float, float, int]],
    batches: Optional[Tuple[int, int]],
    delta: float,
    kappa: Optional[float],
    prior_size: Optional[int],
    diameter: float,
    as_schedule: bool,
) -> str: ...
def estimate_scores(
    scores_out: List[float],
    scores_in: List[float],
    split_out: Optional[List[bool]],
    split_in: Optional[List[bool]],
    delta: float,
    estimator: str,
    threshold: str,
    calibration: Optional[int],
    alpha: float,
) -> str: ...
def estimate_guesses(guesses: List[int], truths: List[int], delta: float, alpha: float, run_args: List[str]) -> str: ...
def conformance_sampler(
    batches: List[List[int]],
    dataset_size: int,
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    delta: float,
    alpha: float,
) -> str: ...
def conformance_noise(
    z: List[float],
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    delta: float,
    alpha: float,
) -> str: ...
def conformance_updates(
    ratios: List[float],
    batch_sizes: List[int],
    low_ratios: List[float],
    low_batch_sizes: List[int],
    tolerance: float,
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    delta: float,
) -> str: ...
def conformance_steps(
    taken: int,
    accounted: int,
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    delta: float,
) -> str: ...
