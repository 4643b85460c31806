//! `crossover info`: the devices found (and why a GPU is not usable), the
//! policy, the profile file and its age.

use crossover::cost::{profile_path, Profile};
use crossover::cpu::{self, simd};
use crossover::device::{cores, cpu_model};
use crossover::explain::time;
use crossover::Engine;

fn age(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}

pub fn run() -> Result<(), String> {
    let engine = Engine::global();
    println!("crossover {}", crossover::VERSION);
    println!("cpu:       {} ({} cores)", cpu_model(), cores());
    println!("simd:      {}", simd::level().name());
    println!(
        "threads:   {} (set CROSSOVER_NUM_THREADS to change)",
        cpu::threads()
    );
    match crossover::linalg::blas_library() {
        Some((path, config)) => {
            println!("blas:      {config} ({path}); large real matmuls (CROSSOVER_BLAS=none: faer)")
        }
        None => println!(
            "blas:      none, faer runs every matmul (CROSSOVER_BLAS=<path> loads an OpenBLAS)"
        ),
    }
    if crossover::linalg::svd_lapack_available() {
        let from = |d: crossover::DType| match crossover::linalg::svd_lapack_min_dim(d) {
            usize::MAX => "never".to_string(),
            side => format!("from {side}"),
        };
        println!(
            "lapack:    ?gebrd/?bdsdc for real SVDs, float32 {}, float64 {} (CROSSOVER_SVD_LAPACK_MIN_DIM)",
            from(crossover::DType::F32),
            from(crossover::DType::F64)
        );
    }
    println!("devices:");
    for d in engine.devices() {
        match (&d.usable, &d.name) {
            (Ok(()), Some(name)) => println!("  {:<4} usable: {name}", d.device.name()),
            (Ok(()), None) => println!("  {:<4} usable", d.device.name()),
            (Err(why), _) => println!("  {:<4} not usable: {why}", d.device.name()),
        }
    }
    match crossover::gpu::discover::opencl_devices() {
        Err(why) => println!("opencl:    {why}"),
        Ok(found) => {
            println!(
                "opencl:    (CROSSOVER_GPU=opencl:<name> selects one; CPU devices only when named)"
            );
            let chosen = match crossover::gpu::discover::selected() {
                Ok(crossover::gpu::discover::Choice::OpenCl(f)) => Some(f.info.name.clone()),
                _ => None,
            };
            for f in found {
                let used = chosen.as_deref() == Some(f.info.name.as_str());
                println!(
                    "  {} {} on {}",
                    if used { "*" } else { "-" },
                    f.info.describe(),
                    f.platform
                );
            }
        }
    }
    match crossover::gpu::discover::cuda_device(0) {
        Ok(info) => println!(
            "cuda:      * {} (CROSSOVER_GPU=cuda:<n> selects one)",
            info.describe()
        ),
        Err(why) => println!("cuda:      not used: {why}"),
    }
    println!(
        "policy:    {} (CROSSOVER_DEVICE={})",
        engine.policy(),
        std::env::var("CROSSOVER_DEVICE").unwrap_or_else(|_| "unset".into())
    );
    match profile_path() {
        None => println!("profile:   no location (HOME unset; set CROSSOVER_PROFILE)"),
        Some(p) if !p.exists() => println!(
            "profile:   {} (not written yet; run `crossover calibrate --quick`)",
            p.display()
        ),
        Some(p) => match Profile::load(&p, false) {
            Ok(prof) => {
                println!("profile:   {}", p.display());
                println!(
                    "           {}, age {}, {} history entries",
                    prof.source,
                    age(prof.age_s()),
                    prof.history.len()
                );
                for d in &prof.devices {
                    println!(
                        "           {}: launch {}, {:.1} GB/s, {:.1} GFLOP/s f32",
                        d.device,
                        time(d.launch_s),
                        d.bandwidth / 1e9,
                        d.rates.f32_arith / 1e9
                    );
                }
            }
            Err(e) => println!("profile:   {e}"),
        },
    }
    println!("in use:    {}", engine.profile_note());
    println!(
        "trace:     {}",
        crossover::trace::env_path()
            .map_or("off (set CROSSOVER_TRACE=file.json)".to_string(), |p| {
                format!("on, written to {} at exit", p.display())
            })
    );
    Ok(())
}
