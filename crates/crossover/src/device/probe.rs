//! What the machine has: the CPU model and cores, and whether GPU drivers
//! can be loaded (probed once, without initialising them).

/// The CPU model name (from `/proc/cpuinfo`; `"unknown"` elsewhere).
pub fn cpu_model() -> String {
    // Read once: the CPU backend's name is asked for on every evaluation
    // under the forced 'gpu' policy from Python (its device check), and
    // reading /proc/cpuinfo of 16 cores took about 270 us of each call on
    // an H100 machine.
    static MODEL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| {
            std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find(|l| l.starts_with("model name"))
                        .and_then(|l| l.split(':').nth(1))
                        .map(|m| m.trim().to_string())
                })
                .unwrap_or_else(|| "unknown".to_string())
        })
        .clone()
}

/// Logical cores the OS reports.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether the CUDA driver library can be loaded (checked once).
pub fn cuda_driver_present() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PRESENT.get_or_init(probe_cuda_driver)
}

fn probe_cuda_driver() -> bool {
    #[cfg(unix)]
    {
        let name = c"libcuda.so.1";
        // SAFETY: dlopen with a valid NUL-terminated name; a non-null handle
        // is released at once with dlclose. Loading runs the library's
        // initialisers, which the CUDA driver allows at any time.
        unsafe {
            let h = libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL);
            if h.is_null() {
                return false;
            }
            libc::dlclose(h);
        }
        true
    }
    #[cfg(not(unix))]
    {
        false
    }
}
