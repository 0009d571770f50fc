"""100 000 exchange cycles per direction with no growth (tracemalloc and RSS), and objects that
outlive their producers under garbage-collector stress."""

import gc
import random
import sys
import tracemalloc
import weakref

import numpy as np
import pytest

import dlspan
import dlspan.examples

CYCLES = 100_000


def rss_bytes():
    with open("/proc/self/statm") as statm:
        import os

        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def assert_no_growth(step, cycles=CYCLES, warmup=1000, owner=None):
    """Runs `step` `cycles` times after `warmup` runs; Python allocations and RSS (less what
    tracemalloc itself allocated meanwhile) must not grow, nor the reference count of `owner` (a
    tensor whose exports the step makes: each holds a reference until its deleter runs)."""
    for _ in range(warmup):
        step()
    gc.collect()
    references = sys.getrefcount(owner)
    tracemalloc.start()
    before_traced = tracemalloc.get_traced_memory()[0]
    before_rss = rss_bytes() - tracemalloc.get_tracemalloc_memory()
    for _ in range(cycles):
        step()
    gc.collect()
    grown_traced = tracemalloc.get_traced_memory()[0] - before_traced
    grown_rss = rss_bytes() - tracemalloc.get_tracemalloc_memory() - before_rss
    tracemalloc.stop()
    # A leak of one small object per cycle would be megabytes.
    assert grown_traced < 64 * 1024, f"Python allocations grew by {grown_traced} bytes"
    assert grown_rss < 8 * 1024 * 1024, f"RSS grew by {grown_rss} bytes"
    assert owner is None or sys.getrefcount(owner) == references, "exports left unreleased"
    print(f"{cycles} cycles: traced {grown_traced} bytes, RSS {grown_rss} bytes")


@pytest.mark.parametrize("direction", ["numpy->dlspan", "dlspan->numpy", "capsule unconsumed", "typed argument"])
def test_numpy_cycles(direction):
    a = np.arange(16, dtype=np.float32)
    t = dlspan.from_dlpack(a)
    y = np.zeros(16, np.float32)
    steps = {
        "numpy->dlspan": lambda: dlspan.from_dlpack(a),
        "dlspan->numpy": lambda: np.from_dlpack(t),
        "capsule unconsumed": lambda: t.__dlpack__(max_version=(1, 0)),
        "typed argument": lambda: dlspan.examples.axpy(1.0, a, y),
    }
    assert_no_growth(steps[direction], owner=t if direction != "numpy->dlspan" else None)


@pytest.mark.parametrize("direction", ["torch->dlspan", "dlspan->torch", "exchange argument", "dynamic arguments"])
def test_torch_cycles(torch, direction):
    x = torch.arange(16, dtype=torch.float32)
    t = dlspan.zeros(16)
    out = torch.zeros(16)
    steps = {
        "torch->dlspan": lambda: dlspan.from_dlpack(x),
        "dlspan->torch": lambda: torch.from_dlpack(t),
        "exchange argument": lambda: dlspan.sum(x),
        "dynamic arguments": lambda: dlspan.add(x, x, out),
    }
    cycles = CYCLES if direction != "torch->dlspan" else CYCLES // 4
    assert_no_growth(steps[direction], cycles=cycles, owner=t if direction == "dlspan->torch" else None)


@pytest.mark.parametrize("direction", ["jax->dlspan", "dlspan->jax"])
def test_jax_cycles(jnp, direction):
    j = jnp.arange(16.0)
    t = dlspan.arange(16, "float32")
    steps = {
        "jax->dlspan": lambda: dlspan.from_dlpack(j),
        "dlspan->jax": lambda: jnp.from_dlpack(t),
    }
    if direction == "jax->dlspan":
        assert_no_growth(steps[direction])
    else:
        # JAX's own import costs about 90 µs a call, and its RSS grows by megabytes over its first
        # thousands of imports of any producer's capsules (NumPy's too) before it levels off.
        assert_no_growth(steps[direction], cycles=CYCLES // 5, warmup=CYCLES // 5, owner=t)


def test_error_paths_do_not_leak():
    y = np.zeros(4, np.float32)
    bad = np.zeros(4)

    def refused():
        try:
            dlspan.examples.axpy(1.0, bad, y)
        except TypeError:
            pass
        try:
            dlspan.examples.axpy(1.0, y, y)
        except ValueError:
            pass

    assert_no_growth(refused, cycles=20_000)


def test_chains_under_gc_stress(torch, jnp):
    """np -> dlspan -> torch -> dlspan -> np, intermediates dropped in random order with the
    collector running at nearly every allocation and between drops; the data stays valid and
    everything is freed at the end. (Young generations: a full collection with PyTorch and JAX
    loaded takes a fifth of a second, so only every 50th trial runs one.)"""
    rng = random.Random(7)
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, thresholds[2])
    try:
        for trial in range(200):
            source = np.arange(64, dtype=np.int64) * trial
            alive = weakref.ref(source)
            chain = [source]
            chain.append(dlspan.from_dlpack(chain[-1]))
            chain.append(torch.from_dlpack(chain[-1]))
            chain.append(dlspan.from_dlpack(chain[-1]))
            chain.append(np.from_dlpack(chain[-1]))
            last = chain[-1]
            order = list(range(len(chain) - 1))
            rng.shuffle(order)
            del source
            for index in order:
                chain[index] = None
                if rng.random() < 0.5:
                    gc.collect(rng.choice((0, 1)))
            assert last[63] == 63 * trial
            chain.clear()
            del last
            gc.collect(2 if trial % 50 == 0 else 1)
            assert alive() is None, "the source is freed once every consumer is gone"
    finally:
        gc.set_threshold(*thresholds)
    j = jnp.arange(8.0)
    t = dlspan.from_dlpack(j)
    del j
    gc.collect()
    np.testing.assert_array_equal(np.asarray(t), np.arange(8.0))
