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

def from_dp_event(event: Any) -> Run: ...
def from_opacus_history(history: Iterable[Sequence[Number]]) -> Run: ...
def from_opacus(obj: Any) -> Run: ...
def describe_run(run: Run | None = ..., *, run_file: str | None = ..., **keywords: Value) -> Result: ...
def write_run(path: str, run: Run | None = ..., **keywords: Value) -> Result: ...
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
) -> Result: ...
def run(command: str, *args: str) -> Tuple[int, str, str]: ...
def to_args(**kwargs: Value | Sequence[Phase]) -> list[str]: ...
def call(command: str, **kwargs: Value | Sequence[Phase]) -> Result: ...
def bound(
    run: Run | None = ..., *, phases: Sequence[Phase] | None = ..., **kwargs: Value
) -> Result: ...
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
) -> Result: ...
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
) -> Result: ...
def one_run_epsilon(
    guesses: Sequence[int],
    truths: Sequence[int],
    *,
    delta: float,
    alpha: float = ...,
    run: Optional[Run] = ...,
    run_file: Optional[str] = ...,
    **keywords: Any,
) -> Result: ...
