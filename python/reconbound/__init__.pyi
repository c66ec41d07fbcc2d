# Type stubs of reconbound. The typed functions (epsilon, empirical_epsilon, one_run_epsilon)
# take values and call the core; the command functions take the command's flags as keyword
# arguments (noise_multiplier=1.1 -> --noise-multiplier 1.1). Both return a Result: the
# command's JSON object (`reconbound <command> --help` lists its keys) as a dict whose keys
# are also attributes.
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

__version__: str

Number = Union[int, float]
Value = Union[None, bool, int, float, str, Sequence[Union[int, float, str]]]
Phase = Union[str, Sequence[Number]]
JSON = Dict[str, Any]

class UsageError(ValueError):
    message: str
    code: int
    parameter: str | None
    value: Any
    def __init__(
        self, message: str, code: int = ..., parameter: Any = ..., value: Any = ...
    ) -> None: ...

class UncertifiableError(RuntimeError):
    message: str
    code: int
    parameter: None
    value: None
    def __init__(
        self, message: str, code: int = ..., parameter: Any = ..., value: Any = ...
    ) -> None: ...

class Result(Dict[str, Any]):
    def __getattr__(self, name: str) -> Any: ...
    def to_dict(self) -> JSON: ...

# The typed results: one class per function, its fields the keys of the command's JSON
# (python/tests/test_result_types.py fails when a key the JSON has is not declared here).
# A field marked "# when ..." is present only in that case.

class EpsilonResult(Result):
    command: str
    noise_multiplier: float
    sampling_rate: float  # Poisson, one phase
    steps: int
    delta: float
    accountant: str
    epsilon_rdp: float | None
    best_order: float | None
    epsilon_rdp_mironov: float | None
    best_order_mironov: float | None
    epsilon_pld: float | None
    epsilon_pld_lower: float | None
    phases: list[JSON]  # when a schedule
    sampling: str  # when fixed-size
    adjacency: str  # when fixed-size
    batch_size: int  # when fixed-size
    dataset_size: int  # when fixed-size
    noise_multiplier_replace_one: float  # when fixed-size

class BoundResult(Result):
    command: str
    noise_multiplier: float
    sampling_rate: float
    steps: int
    phases: list[JSON]  # when a schedule
    delta: float
    kappa: float
    prior_size: int | None
    orders: list[float]
    rdp: list[float]
    epsilon_rdp: float
    best_order: float
    epsilon_rdp_mironov: float
    best_order_mironov: float
    gamma_balle: float
    gamma_balle_order: float
    gamma_rdp: float
    method: str
    epsilon_pld: float | None
    epsilon_pld_lower: float | None
    gamma: float | None
    gamma_lower: float | None
    tightest: str
    membership: list[JSON]
    advantage: float | None
    advantage_lower: float | None
    fano_success_bound: float | None
    fano_advantage: float | None
    fano_sensitivity_sq: float
    fano_note: str  # when Fano's bound is 1 or absent
    rdp_order2: float
    rdp_order2_substitution: float
    diameter: float
    mse_lower_bound: float

class TradeoffResult(Result):
    command: str
    config: JSON
    source: str
    mu: float  # when the full batch (the curve is mu-GDP)
    delta: float
    prior: float
    fpr: list[JSON]
    advantage: float
    advantage_lower: float
    bayes_security: float
    bayes_accuracy: float
    bayes_accuracy_lower: float
    epsilon: float
    epsilon_lower: float
    kappa: float  # when kappa is given
    gamma: float  # when kappa is given
    gamma_lower: float  # when kappa is given
    curve: list[JSON]  # when points is given
    @property
    def fprs(self) -> Any: ...
    @property
    def tprs(self) -> Any: ...
    @property
    def alphas(self) -> Any: ...
    @property
    def betas(self) -> Any: ...
    @property
    def betas_upper(self) -> Any: ...

class EmpiricalResult(Result):
    command: str
    estimator: str
    threshold_rule: str
    calibration: int | None
    calibration_rows: str | None
    split_seed: int | None
    calibration_out: int | None
    calibration_in: int | None
    fixed_threshold: float | None
    alpha: float
    confidence: float
    delta: float
    trials_out: int
    trials_in: int
    ignored_columns: list[str]
    epsilon_empirical: float
    gdp_mu: float | None
    threshold: float
    threshold_direction: str
    candidates: int
    negatives: int
    false_positives: int
    positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    epsilon_empirical_max: float

class OneRunResult(Result):
    command: str
    estimator: str
    alpha: float
    confidence: float
    delta: float
    canaries: int
    guesses: int
    correct: int
    epsilon_empirical: float
    epsilon_fdp: float | None
    epsilon_fdp_noise_scale: float | None
    claim_refuted_fdp: bool | None
    p_value_fdp: float | None
    epsilon_fdp_unavailable: str | None
    epsilon_fdp_note: str
    epsilon_gdp: float | None
    mu_gdp: float
    gdp_note: str
    epsilon_certified: float | None  # the run's certified epsilon (with a run)
    claim_refuted: bool | None  # the core's verdict on the claim that the trainer is the run
    claim_error: float | None  # alpha per test run
    claim_unavailable: str | None  # why there is no verdict
    run: JSON | None
    ignored_columns: list[str]

class CheckResult(Result):
    command: str
    verdict: str | None
    claimed_epsilon: float | None
    delta: float
    library: str
    tolerance: float
    epsilon_lower: float
    epsilon_lower_by: str
    epsilon_upper: float | None
    epsilon_upper_by: str
    margin: float
    upper_certified: bool
    run: JSON
    explanations: list[JSON]
    message: str

class RunDescription(Result):
    format: str
    noise_multiplier: float
    sampling_rate: float  # when given as a rate
    batch_size: int  # when given as a batch
    dataset_size: int  # when given as a batch
    steps: int  # when given as steps
    epochs: float  # when given as epochs
    phases: list[JSON]  # when a schedule
    sampling: str
    counting: str
    accumulation: int
    microbatches: int | None
    relation: str
    mechanism: JSON

class Run:
    kind: str
    phases: list[Tuple[float, float, int]]
    batches: Tuple[int, int] | None
    as_schedule: bool
    @classmethod
    def poisson(cls, sampling_rate: float, noise_multiplier: float, steps: int) -> Run: ...
    @classmethod
    def full_batch(cls, noise_multiplier: float, steps: int) -> Run: ...
    @classmethod
    def schedule(cls, phases: Iterable[Sequence[Number]]) -> Run: ...
    @classmethod
    def fixed_size(
        cls, batch_size: int, dataset_size: int, noise_multiplier: float, steps: int
    ) -> Run: ...
    @classmethod
    def shuffled(
        cls, batch_size: int, dataset_size: int, noise_multiplier: float, steps: int
    ) -> Run: ...
    def then(self, other: Run) -> Run: ...
    def to_args(self) -> list[str]: ...
    @classmethod
    def read(cls, path: str) -> Run: ...
    @classmethod
    def of(cls, **keywords: Value) -> Run: ...

def sig(x: float, digits: int = 4, side: str = "nearest") -> str: ...
def from_dp_event(event: Any) -> Run: ...
def from_opacus_history(history: Iterable[Sequence[Number]]) -> Run: ...
def from_opacus(obj: Any) -> Run: ...
def describe_run(run: Run | None = ..., *, run_file: str | None = ..., **keywords: Value) -> RunDescription: ...
def write_run(path: str, run: Run | None = ..., **keywords: Value) -> RunDescription: ...
def check(
    run: Run | None = ...,
    *,
    claimed_epsilon: float | None = ...,
    target_epsilon: float | None = ...,
    delta: float | None = ...,
    library: str | None = ...,
    tolerance: float | None = ...,
    run_file: str | None = ...,
    **keywords: Value,
) -> CheckResult: ...
def run(command: str, *args: str) -> Tuple[int, str, str]: ...
def to_args(**kwargs: Value | Sequence[Phase]) -> list[str]: ...
def call(command: str, **kwargs: Value | Sequence[Phase]) -> Result: ...
def bound(
    run: Run | None = ..., *, phases: Sequence[Phase] | None = ..., **kwargs: Value
) -> BoundResult: ...
def epsilon(
    run: Run | None = ...,
    *,
    delta: float,
    accountant: str = ...,
    noise_multiplier: float | None = ...,
    sampling_rate: float | None = ...,
    steps: int | None = ...,
    phases: Sequence[Sequence[Number]] | None = ...,
    sampling: str | None = ...,
    batch_size: int | None = ...,
    dataset_size: int | None = ...,
    schedule: str | None = ...,
) -> EpsilonResult: ...
def rdp(**kwargs: Value) -> Result: ...
def rero(*, phases: Sequence[Phase] | None = ..., **kwargs: Value) -> Result: ...
def calibrate(*, phases: Sequence[Phase] | None = ..., **kwargs: Value) -> Result: ...
def fano(**kwargs: Value) -> Result: ...
def attack_prior_aware(**kwargs: Value) -> Result: ...
def attack_glm(**kwargs: Value) -> Result: ...
def audit(**kwargs: Value) -> Result: ...
def report(**kwargs: Value) -> Result: ...
def estimate(**kwargs: Value) -> Result: ...
def empirical_epsilon(
    scores_out: Sequence[float],
    scores_in: Sequence[float],
    *,
    delta: float,
    estimator: str = ...,
    threshold: str | float = ...,
    calibration: int | None = ...,
    alpha: float = ...,
    split_out: Sequence[str | bool] | None = ...,
    split_in: Sequence[str | bool] | None = ...,
) -> EmpiricalResult: ...
def one_run_epsilon(
    guesses: Sequence[int],
    truths: Sequence[int],
    *,
    delta: float,
    alpha: float = ...,
    run: Optional[Run] = ...,
    run_file: Optional[str] = ...,
    **keywords: Any,
) -> OneRunResult: ...
def tradeoff(
    run: Run | None = ...,
    *,
    fpr: float | Sequence[float] = ...,
    prior: float = ...,
    kappa: float | None = ...,
    delta: float = ...,
    points: int | None = ...,
    noise_multiplier: float | None = ...,
    sampling_rate: float | None = ...,
    steps: int | None = ...,
    phases: Sequence[Sequence[Number]] | None = ...,
    **keywords: Value,
) -> TradeoffResult: ...
