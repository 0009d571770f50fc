"""A conformance kit for DLPack producers: ``check_producer(factory)`` runs the protocol's rules
against the objects ``factory`` makes (their ``__dlpack__``, ``__dlpack_device__`` and C exchange
table) and reports every rule at once; ``assert_conforms`` raises one ``AssertionError`` listing
every unexpected failure (for pytest).

``factory(source)`` receives a NumPy array of a shape, dtype and layout the kit chose and returns
a fresh object of the producer holding its values (``numpy.asarray``, ``torch.from_numpy``,
``jax.numpy.asarray``, ``dlspan.from_dlpack`` all fit), or raises for a source it cannot hold; a
factory of no argument is called as ``factory()``. Requires NumPy.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

RULES: dict[str, str]
"""Every rule the kit checks, by id (``"version.1.0"``, ``"flags.read_only"``, …): what it requires."""

class RuleResult:
    """The outcome of one rule: ``status`` is ``"passed"``, ``"failed"``, ``"skipped"`` or
    ``"info"`` (a fact reported, never a failure); ``detail`` says why."""

    rule: str
    status: str
    detail: str
    def __init__(self, rule: str, status: str, detail: str) -> None: ...

class Report:
    """What ``check_producer`` found: one ``RuleResult`` per rule of ``RULES``, in that order;
    ``str(report)`` is a table of them."""

    producer: str
    results: tuple[RuleResult, ...]
    def __init__(self, producer: str, results: Sequence[RuleResult]) -> None: ...
    def __getitem__(self, rule: str) -> RuleResult:
        """The result of the rule of this id."""
    def __iter__(self) -> Iterator[RuleResult]: ...
    def __len__(self) -> int: ...
    @property
    def failures(self) -> tuple[RuleResult, ...]:
        """The rules that failed."""
    @property
    def failed(self) -> frozenset[str]:
        """The ids of the rules that failed."""
    @property
    def ok(self) -> bool:
        """No rule failed."""

def check_producer(
    factory: Callable[..., Any],
    *,
    dtypes: Iterable[Any] = ...,
    examples: int = 28,
    seed: int = 0,
    values: Callable[[Any], Any] | None = None,
) -> Report:
    """Run every rule of ``RULES`` against the objects ``factory`` makes; never raises for a
    failed rule. ``dtypes``: the dtypes of the random sources (NumPy's standard ones by default);
    ``examples``: how many random sources (``seed`` fixes them); ``values(obj)``: the object's
    values read without DLPack (``numpy.asarray`` by default)."""

def assert_conforms(
    factory: Callable[..., Any],
    *,
    deviations: Iterable[str] = (),
    dtypes: Iterable[Any] = ...,
    examples: int = 28,
    seed: int = 0,
    values: Callable[[Any], Any] | None = None,
) -> Report:
    """``check_producer``, raising one ``AssertionError`` listing every failed rule not in
    ``deviations`` and every rule in ``deviations`` that no longer fails."""
