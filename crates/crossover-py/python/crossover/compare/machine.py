"""The report header: machine, environment variables and the BLAS in use.

Everything here is read, never changed: the comparison must describe the
process as the user started it (``OPENBLAS_CORETYPE`` in particular)."""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from datetime import datetime, timezone
from typing import Any

#: Variables that change how fast the systems run, recorded when set.
ENV_VARS = (
    "OPENBLAS_CORETYPE",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "NUMEXPR_MAX_THREADS",
    "CROSSOVER_NUM_THREADS",
    "CROSSOVER_DEVICE",
    "CROSSOVER_PROFILE",
    "CROSSOVER_SIMD",
    "RAYON_NUM_THREADS",
)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def machine(gpu: str, load: float | None) -> dict[str, Any]:
    m: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": cores(),
        "memory_gib": memory_gib(),
        "os": platform.platform(),
        "gpu": gpu,
        "load_average_at_start": load,
    }
    try:  # what crossover's CPU backend uses, as `crossover bench` records it
        import crossover

        info = crossover.info()
        m["simd"], m["threads used"] = info.get("simd"), info.get("threads")
        # Large real matmuls run through this BLAS (NumPy's own) when set.
        m["crossover blas"] = info.get("blas") or "none (faer)"
    except Exception:
        pass
    return m


def busy_note(load: float | None) -> str | None:
    """A note when other processes were using the CPU as the run started:
    threaded libraries that wait for all their threads (OpenBLAS, Numba's
    OpenMP) then lose whole scheduler slices and their times mean little."""
    n = cores()
    if load is None or load < max(1.0, 0.5 * n):
        return None
    return (
        f"the machine was busy when the run started (1-minute load average {load:g} on {n} cores): "
        "times may be inflated, threaded libraries (BLAS, Numba) most; rerun on a quiet machine"
    )


def _symbol(lib: Any, name: str) -> Any:
    """``name`` in an OpenBLAS build: plain, SciPy's renamed one, or its
    64-bit-integer variant."""
    for full in (f"scipy_openblas_{name}64_", f"scipy_openblas_{name}", f"openblas_{name}"):
        f = getattr(lib, full, None)
        if f is not None:
            return f
    return None


def _openblas_runtime() -> list[str]:
    """Core type and threads of each OpenBLAS loaded in this process, asked
    of the library itself: NumPy's build-time config string names the build
    machine's core, not the one ``OPENBLAS_CORETYPE`` forces at run time."""
    out: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower() and ".so" in ln})
    except OSError:
        return out
    for path in paths:
        try:
            lib = ctypes.CDLL(path)  # already loaded: the same handle
        except OSError:
            continue
        core, threads = _symbol(lib, "get_corename"), _symbol(lib, "get_num_threads")
        if core is None or threads is None:
            continue
        core.restype, threads.restype = ctypes.c_char_p, ctypes.c_int
        name = os.path.basename(path).split("-")[0]
        out.append(f"{name} running: core {core().decode()}, {threads()} threads")
    return out


def blas_summary() -> str:
    """One line: NumPy's BLAS (name, version, build config), the running
    OpenBLAS core types, and threadpoolctl's view when it is installed."""
    parts = []
    try:
        import numpy as np

        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        if blas:
            text = f"numpy: {blas.get('name', '?')} {blas.get('version', '?')}"
            if blas.get("openblas configuration"):
                text += f" (build config: {' '.join(blas['openblas configuration'].split())})"
            parts.append(text)
    except Exception:  # older NumPy without mode="dicts"
        pass
    parts += _openblas_runtime()
    try:
        import threadpoolctl

        for p in threadpoolctl.threadpool_info():
            parts.append(
                "threadpoolctl: {} {} {} {} threads".format(
                    p.get("internal_api", "?"), p.get("version", "?"),
                    p.get("architecture", ""), p.get("num_threads", "?"),
                ).replace("  ", " ")
            )
    except ImportError:
        pass
    return "; ".join(parts) or "unknown"


def environment() -> dict[str, str]:
    env = {k: os.environ[k] for k in ENV_VARS if k in os.environ}
    env["blas"] = blas_summary()
    return env


def start_notes(command: str) -> tuple[list[str], str, float | None]:
    """What a benchmark run records as it starts: its notes so far (a busy
    machine, a forced OpenBLAS core type; each also printed to stderr),
    the start time (UTC, ISO 8601) and the load average."""
    notes: list[str] = []
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    load = load_average()
    for note in (busy_note(load), coretype_note(command)):
        if note:
            print(f"warning: {note}", file=sys.stderr)
            notes.append(note)
    return notes, started, load


def coretype_note(argv_text: str) -> str | None:
    """The warning for a forced OpenBLAS core type, or None."""
    core = os.environ.get("OPENBLAS_CORETYPE")
    if not core:
        return None
    rest = argv_text.split("crossover.compare", 1)[-1]
    return (
        f"OPENBLAS_CORETYPE={core} is set: NumPy/SciPy's OpenBLAS is limited to {core} kernels "
        "(on an AVX-512 CPU this can halve matmul speed); rerun with "
        f"`env -u OPENBLAS_CORETYPE python -m crossover.compare{rest}` to let it pick the CPU's own"
    )
