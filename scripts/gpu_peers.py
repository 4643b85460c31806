"""Device-side peer figures for docs/gpu.md, on the GPU with CuPy and
PyTorch (`scripts/gpu-check.sh large` runs it): a device-to-device copy
(the bandwidth the fused-kernel target is measured against), CuPy's fused
ElementwiseKernel and PyTorch's kernels for the bench's expression, and
PyTorch's sum and std, at 1e8 float32 elements. Times are CUDA-event
medians of 20 runs after 3 warm-ups; inputs are made before timing."""

import statistics

import cupy as cp
import torch

N = 100_000_000


def median_s(run):
    """CUDA-event median of 20 runs of `run` after 3 warm-ups, in seconds
    (`gpu_diag.py` times its peers with it too)."""
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    cp.cuda.runtime.deviceSynchronize()
    times = []
    for _ in range(20):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(times)


def line(name, seconds, moved_bytes):
    print(f"{name:44s} {seconds * 1e3:8.3f} ms  {moved_bytes / seconds / 1e12:6.2f} TB/s")


def main():
    x = torch.rand(N, device="cuda", dtype=torch.float32)
    y = torch.rand(N, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    # PyTorch runs on its own stream: time it on CuPy's by making CuPy use it.
    with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        line("copy 1e8 f32 (torch, read + write)", median_s(lambda: out.copy_(x)), 8 * N)
        line("a*b+sin(a)+cos(b) (torch eager)", median_s(lambda: x * y + torch.sin(x) + torch.cos(y)), 12 * N)
        line("sum 1e8 f32 (torch)", median_s(lambda: x.sum()), 4 * N)
        line("std 1e8 f32 (torch)", median_s(lambda: x.std()), 4 * N)
        a = cp.asarray(x)
        b = cp.asarray(y)
        fused = cp.ElementwiseKernel(
            "float32 a, float32 b", "float32 c", "c = a * b + sinf(a) + cosf(b)", "xo_peer_fused"
        )
        c = cp.empty_like(a)
        line("a*b+sin(a)+cos(b) (CuPy ElementwiseKernel)", median_s(lambda: fused(a, b, c)), 12 * N)
        line("a*b+sin(a)+cos(b) (CuPy, unfused)", median_s(lambda: a * b + cp.sin(a) + cp.cos(b)), 12 * N)
        line("sum 1e8 f32 (CuPy)", median_s(lambda: a.sum()), 4 * N)


if __name__ == "__main__":
    main()
