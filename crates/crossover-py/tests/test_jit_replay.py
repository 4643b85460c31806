"""@xo.jit replays that run the trace's captured kernel on new inputs
(without building the graph): the same bits as the general path, and the
inputs it must decline (other layouts, pending arrays, other sharing)."""

import threading

import numpy as np
import pytest

import crossover as xo
from conftest import check, nonzero
from test_jit_loops import conditional_accumulate as conditional_loop

#: Replays run a captured kernel only where no GPU could take the work
#: (with one, the general path places each kernel).
CPU_ONLY = xo.info()["devices"] == ["cpu"]


def _tape(f):
    """The one cached trace of the jitted `f`."""
    ((tape, _),) = f._cache.values()
    return tape


def conditional_sum(x, y):
    # where/sum: one kernel.
    return np.where(x > 0.5, x * y, -x).sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 2049, 100_003])
def test_replays_run_the_captured_kernel_with_the_same_bits(rng, n, dtype):
    f = xo.jit(conditional_sum)
    for _ in range(4):
        x, y = rng.random(n).astype(dtype), nonzero(rng, n, dtype)
        got = f(x, y)
        xa, ya = xo.asarray(x), xo.asarray(y)
        general = np.asarray(xo.where(xa > 0.5, xa * ya, -xa).sum())
        # The same kernel either way: the same bits.
        assert got.dtype == dtype and got.tobytes() == general.tobytes()
        check(got, conditional_sum(x.astype(np.float64), y.astype(np.float64)), "reduction", dtype)
    tape = _tape(f)
    assert f.traces == 1 and tape.compiled
    # The first call traced and replayed (capturing); the next three ran it.
    assert tape.compiled_runs == (3 if CPU_ONLY else 0)


def test_replays_decline_inputs_unlike_the_captured_ones(rng):
    n = 3001
    f = xo.jit(lambda x, y: (x * y + 1.0).sum())
    x, y = rng.random(n), rng.random(n)
    for _ in range(2):
        check(f(x, y), (x * y + 1).sum(), "reduction", np.float64)
    tape = _tape(f)
    runs = tape.compiled_runs
    wide = rng.random(2 * n)
    pending = xo.asarray(x) * 2.0
    for a, want in [(wide[::2], (wide[::2] * y + 1).sum()),  # strided: another layout
                     (pending, (x * 2.0 * y + 1).sum())]:    # pending: a longer graph
        check(f(a, y), want, "reduction", np.float64)
    assert f.traces == 1 and tape.compiled_runs == runs
    check(f(x, y), (x * y + 1).sum(), "reduction", np.float64)
    assert tape.compiled_runs == runs + (1 if CPU_ONLY else 0)


def test_replays_keep_which_inputs_are_one_array(rng):
    n = 5000
    a, b = rng.random(n), rng.random(n)
    xa, xb = xo.asarray(a), xo.asarray(b)
    # Captured reading one array twice (one source), then given two.
    f = xo.jit(lambda x, y: (x * 2.0 - y).sum())
    for _ in range(2):
        check(f(xa, xa), a.sum(), "reduction", np.float64)
    check(f(xa, xb), (a * 2.0 - b).sum(), "reduction", np.float64)
    # Captured with two arrays, then given one twice.
    g = xo.jit(lambda x, y: (x * 2.0 - y).sum())
    for _ in range(2):
        check(g(xa, xb), (a * 2.0 - b).sum(), "reduction", np.float64)
    check(g(xb, xb), b.sum(), "reduction", np.float64)
    assert f.traces == 1 and g.traces == 1


def test_replays_read_constants_of_the_trace(rng):
    w = rng.random(4099)
    wa = xo.asarray(w)  # made before the trace: a constant of it
    f = xo.jit(lambda x: (x * wa + 0.25).max())
    for _ in range(3):
        x = rng.random(4099)
        check(f(x), (x * w + 0.25).max(), "exact", np.float64)
    assert f.traces == 1 and _tape(f).compiled


@pytest.mark.parametrize("n", [7, 10_000, 100_003])
def test_translated_loops_replay_their_kernels(rng, n):
    f = xo.jit(conditional_loop)
    x = rng.random(n) * 2 - 0.5
    first = f(x, 0.5)  # traced and replayed by the general path
    for _ in range(2):
        assert f(x, 0.5) == first  # the captured kernels: the same bits
    for _ in range(2):
        x = rng.random(n) * 2 - 0.5
        check(f(x, 0.5), np.where(x > 0.5, x * x, -x).sum(), "reduction", np.float64)
    assert f.traces == 1 and _tape(f).compiled
    assert _tape(f).compiled_runs == (4 if CPU_ONLY else 0)


def standardise(x):
    return np.sin((x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-8))


def test_traces_of_several_kernels_run_in_order_with_the_same_bits(rng):
    f = xo.jit(standardise)
    for _ in range(3):
        x = nonzero(rng, (5, 2051), np.float64)
        got = f(x)
        general = np.asarray(standardise(xo.asarray(x)))
        assert got.tobytes() == general.tobytes()
        check(got, standardise(x), "transcendental", np.float64)
    assert f.traces == 1 and _tape(f).compiled
    assert _tape(f).compiled_runs == (2 if CPU_ONLY else 0)


def test_library_calls_are_not_captured(rng):
    f = xo.jit(lambda a, b: (a @ b).sum(axis=0) * 2.0)
    for _ in range(3):
        a, b = nonzero(rng, (33, 17), np.float64), nonzero(rng, (17, 9), np.float64)
        check(f(a, b), (a @ b).sum(axis=0) * 2.0, "reduction", np.float64)
    assert f.traces == 1 and not _tape(f).compiled


def test_several_outputs_and_elementwise_results(rng):
    f = xo.jit(lambda x: (x.sum(), x.max(), np.abs(x) * 3.0))
    for n in (2049, 2049, 2049, 30_011):
        x = nonzero(rng, n, np.float32)
        s, m, y = f(x)
        check(s, x.astype(np.float64).sum(), "reduction", np.float32)
        assert m == x.max()
        check(y, np.abs(x.astype(np.float64)) * 3, "exact", np.float32)
        assert y.flags.writeable and not np.shares_memory(y, x)


def test_replays_from_several_threads(rng):
    n = 20_000
    f = xo.jit(conditional_sum)
    x0, y0 = rng.random(n), rng.random(n)
    f(x0, y0)
    f(x0, y0)
    inputs = [(rng.random(n), rng.random(n)) for _ in range(8)]
    got = [None] * len(inputs)

    def work(i):
        for _ in range(20):
            got[i] = f(*inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (x, y), g in zip(inputs, got):
        check(g, conditional_sum(x, y), "reduction", np.float64)
    assert f.traces == 1
