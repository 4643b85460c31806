# Fourth run on a real GPU (NVIDIA H100, 2026-11-28, session 25).
# Binaries: release build of 40d7260 (gpu-check/bin, made in session 24).
# here:
scripts/gpu-check.sh pack
# device call 1 (carry gpu-check/xz, timeout 560 s; 270 s): everything
# except probe/
scripts/gpu-check.sh session
# device call 2 (a fresh machine, carry gpu-check/xz, 75 s): probe/, by a
# one-off script whose steps are now `scripts/gpu_diag.py 3 4`:
#   env and ICD files; gpu-check.sh diag /tmp/p 3 (host memcpy rates added,
#   no calibrated profile); the kernel-cache child alone with NVIDIA's
#   OpenCL; the kernel-cache test alone; 25 fresh processes listing OpenCL
#   platforms beside the OpenCL elementwise suite (8 threads)
# a third call was refused (no machine lent at present).
