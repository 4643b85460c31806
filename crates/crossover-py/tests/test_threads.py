"""Several Python threads calling crossover at once; the GIL is released
while the engine works."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import crossover as xo
from conftest import nonzero


def test_concurrent_evaluate_jit_and_ops(rng):
    inputs = [nonzero(rng, (64, 1000), np.float32) for _ in range(8)]
    f = xo.jit(lambda x: np.tanh(x - x.mean(axis=1, keepdims=True)) * 2)

    def work(i):
        a = inputs[i % len(inputs)]
        r1 = xo.evaluate("a * 2 + sin(a)", a=a)
        r2 = f(a)
        x = xo.asarray(a)
        r3 = (x * x).sum(axis=0).numpy()
        return i, r1, r2, r3

    with ThreadPoolExecutor(max_workers=6) as ex:
        results = list(ex.map(work, range(48)))
    for i, r1, r2, r3 in results:
        a = inputs[i % len(inputs)].astype(np.float64)
        np.testing.assert_allclose(r1, a * 2 + np.sin(a), rtol=5e-6, atol=1e-6)
        np.testing.assert_allclose(r2, np.tanh(a - a.mean(axis=1, keepdims=True)) * 2, rtol=5e-6, atol=1e-6)
        np.testing.assert_allclose(r3, (a * a).sum(axis=0), rtol=1e-5)


def test_gil_is_released_during_engine_work(rng):
    a = nonzero(rng, 4_000_000, np.float32)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    start = time.perf_counter()
    for _ in range(4):
        xo.evaluate("sin(a) * cos(a) + exp(a * 0.1)", a=a)
    end = time.perf_counter()
    stop.set()
    t.join()
    during = [x for x in ticks if start < x < end]
    # With the GIL held for the whole computation, the ticker could not run.
    assert len(during) >= 3, (len(during), end - start)


def test_shared_generator_from_threads():
    g = xo.random.default_rng(5)
    with ThreadPoolExecutor(max_workers=4) as ex:
        outs = list(ex.map(lambda _: g.random(1000).numpy(), range(16)))
    assert len({o.tobytes() for o in outs}) == 16  # every draw is distinct
