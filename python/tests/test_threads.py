"""View arguments inside `py.detach`: kernels on large tensors run with the GIL released, their
views stay registered meanwhile, and threads working on disjoint memory do not disturb each other."""

import threading
import time

import numpy as np
import pytest

import dlspan

LARGE = 1 << 22  # far above the element count from which dlspan's kernels release the GIL


@pytest.mark.parametrize(
    "kernel, probe",
    [
        ("scale_", lambda big: dlspan.sum(big[:4])),
        ("sum", lambda big: dlspan.scale_(big[:4], 1.0)),
    ],
)
def test_a_view_held_without_the_gil_still_conflicts(kernel, probe):
    """A thread loops a kernel over a large tensor; the main thread probes four of its elements
    with a call too small to release the GIL. The probe can only run while the kernel is inside its
    call if the kernel released the GIL there, and then finds the kernel's view registered: one
    conflict shows both."""
    big = np.ones(LARGE, np.float32)
    run = {"scale_": lambda: dlspan.scale_(big, 1.0), "sum": lambda: dlspan.sum(big)}[kernel]
    stop, failures = threading.Event(), []

    def loop():
        try:
            while not stop.is_set():
                run()
        except Exception as err:  # noqa: BLE001 - asserted below
            failures.append(err)

    thread = threading.Thread(target=loop)
    thread.start()
    conflicts, probes = 0, 0
    deadline = time.monotonic() + 60
    try:
        while conflicts == 0 and time.monotonic() < deadline:
            try:
                probe(big)
                probes += 1
            except ValueError as err:
                assert err.kind == "BorrowConflict"
                conflicts += 1
    finally:
        stop.set()
        thread.join()
    assert failures == [], "the kernel never conflicts: the probe holds the GIL throughout"
    assert conflicts == 1, f"no conflict in 60 s ({probes} probes): {kernel} held the GIL"
    assert (big == 1).all()


def test_threads_on_disjoint_parts():
    data = np.ones(4 * LARGE, np.int64)
    parts = [data[i::4] for i in range(4)]  # interleaved: overlapping byte ranges, disjoint elements
    failures = []

    def work(part, factor):
        try:
            for _ in range(5):
                dlspan.scale_(part, factor)
        except Exception as err:  # noqa: BLE001 - asserted below
            failures.append(err)

    threads = [threading.Thread(target=work, args=(part, i + 2)) for i, part in enumerate(parts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for i, part in enumerate(parts):
        assert (part == (i + 2) ** 5).all()
