//! `crossover explain "a*b + sin(a) + cos(b)" --shape 3162,3162 [--resident gpu]`:
//! where each kernel of an expression would run and why.

use clap::Args;
use crossover::device::SyntheticGpu;
use crossover::explain::time;
use crossover::{Array, DType, DeviceKind, Engine, Generator, Policy, Profile};

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The expression, e.g. "a*b + sin(a) + cos(b)"; every name is an input.
    pub expr: String,
    /// Shape of every input, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1000000")]
    pub shape: Vec<usize>,
    /// Element type of the inputs.
    #[arg(long, default_value = "float32")]
    pub dtype: String,
    /// Where the inputs already live: cpu (host) or gpu.
    #[arg(long, default_value = "cpu")]
    pub resident: String,
    /// Policy: auto, cpu or gpu (default: CROSSOVER_DEVICE, else auto).
    #[arg(long)]
    pub device: Option<String>,
    /// Run it too, and show measured times beside the predictions.
    #[arg(long)]
    pub run: bool,
    /// Plan with a stand-in GPU (from the synthetic profile's GPU numbers,
    /// run on the host) when this machine has none.
    #[arg(long)]
    pub synthetic_gpu: bool,
    /// Print each kernel's generated code instead of the plan: `ir` (the
    /// fused program), `opencl` or `cuda` (the kernel source with its
    /// prelude). Needs no GPU.
    #[arg(long, value_name = "ir|opencl|cuda")]
    pub source: Option<String>,
}

/// Prints the generated code of every kernel computing `y`.
fn print_sources(y: &Array, what: &str) -> Result<(), String> {
    use crossover::gpu::codegen::Dialect;
    let dialect = match what {
        "ir" => None,
        "opencl" | "cl" => Some(Dialect::OpenCl),
        "cuda" => Some(Dialect::Cuda),
        other => return Err(format!("--source {other}: expected ir, opencl or cuda")),
    };
    let kernels = crossover::lower(std::slice::from_ref(y)).map_err(|e| e.to_string())?;
    for (i, k) in kernels.iter().enumerate() {
        println!("// kernel {i}: {} over {:?}", k.name(), k.shape);
        match (dialect, k.program()) {
            (None, Some(p)) => println!("{p}"),
            (Some(d), Some(_)) => {
                print!(
                    "{}",
                    crossover::gpu::kernel_source(k, d).unwrap_or_default()
                )
            }
            (_, None) => println!("// a library call: no generated code"),
        }
    }
    Ok(())
}

fn parse_dtype(s: &str) -> Result<DType, String> {
    match s {
        "float32" | "f32" => Ok(DType::F32),
        "float64" | "f64" => Ok(DType::F64),
        other => Err(format!("--dtype {other}: expected float32 or float64")),
    }
}

/// The global profile plus the synthetic profile's GPU, links and curves
/// (`explain` and `advise` with `--synthetic-gpu`).
pub fn with_synthetic_gpu(mut p: Profile) -> Profile {
    let s = Profile::synthetic();
    if p.device(DeviceKind::Gpu).is_none() {
        if let Some(g) = s.device(DeviceKind::Gpu) {
            p.set_device(g.clone());
        }
        p.links = s.links.clone();
        for c in s.library.iter().filter(|c| c.device == DeviceKind::Gpu) {
            p.set_curve(c.clone());
        }
    }
    p.source = format!("{} + synthetic GPU", p.source);
    p
}

pub fn run(args: &ExplainArgs) -> Result<(), String> {
    let err = |e: crossover::Error| e.to_string();
    let dtype = parse_dtype(&args.dtype)?;
    let resident: DeviceKind = args.resident.parse().map_err(err)?;
    let policy: Option<Policy> = args
        .device
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(err)?;
    let owned;
    let engine: &Engine = if args.synthetic_gpu {
        owned = Engine::new(with_synthetic_gpu(Engine::global().profile()))
            .with_gpu(SyntheticGpu::new().with_library(&["matmul"]))
            .with_policy(Engine::global().policy());
        &owned
    } else {
        Engine::global()
    };
    let expr = crossover::expr::parse(&args.expr).map_err(err)?;
    let no_device = |e: String| {
        format!(
            "--resident {resident}: {e}{}",
            if args.synthetic_gpu {
                ""
            } else {
                " (add --synthetic-gpu to plan with a stand-in GPU)"
            }
        )
    };
    let mut gen = Generator::new(0);
    if let Some(what) = &args.source {
        // Code only: lazy inputs, nothing runs.
        let mut inputs = Vec::new();
        for name in expr.names() {
            inputs.push((name, Array::placeholder(&args.shape, dtype).map_err(err)?));
        }
        let vars: Vec<(&str, &Array)> = inputs.iter().map(|(n, a)| (n.as_str(), a)).collect();
        return print_sources(&expr.eval(&vars).map_err(err)?, what);
    }
    let mut inputs: Vec<(String, Array)> = Vec::new();
    for name in expr.names() {
        let a = if args.run {
            // Real data, since the kernels run.
            let a = gen
                .uniform_range(0.1, 1.0, &args.shape, dtype)
                .map_err(err)?;
            engine
                .evaluate(
                    std::slice::from_ref(&a),
                    Some(Policy::Force(DeviceKind::Cpu)),
                )
                .map_err(err)?;
            if resident != DeviceKind::Cpu {
                engine
                    .to_device(&a, resident)
                    .map_err(|e| no_device(e.to_string()))?;
            }
            a
        } else {
            // A plan needs shapes and dtypes only: inputs that own no
            // memory plan at any size at once (20000x20000 took 10 s and
            // 3 GB when they were made and filled).
            let a = Array::placeholder(&args.shape, dtype).map_err(err)?;
            if resident != DeviceKind::Cpu {
                let status = engine.devices().into_iter().find(|d| d.device == resident);
                if let Some(Err(why)) = status.map(|d| d.usable) {
                    return Err(no_device(why));
                }
                a.assume_resident(resident).map_err(err)?;
            }
            a
        };
        inputs.push((name, a));
    }
    let vars: Vec<(&str, &Array)> = inputs.iter().map(|(n, a)| (n.as_str(), a)).collect();
    let y = expr.eval(&vars).map_err(err)?;
    println!(
        "{}  inputs: {} of shape {:?} {dtype} on {}",
        args.expr,
        inputs.len(),
        args.shape,
        if resident == DeviceKind::Cpu {
            "host"
        } else {
            "gpu"
        }
    );
    let plan = if args.run {
        engine.evaluate(std::slice::from_ref(&y), policy)
    } else {
        engine.plan(std::slice::from_ref(&y), policy)
    }
    .map_err(err)?;
    print!("{plan}");
    if args.run {
        // The first run pays page faults, thread start-up and cold caches;
        // a second run of the same graph shows the steady state.
        let again = expr.eval(&vars).map_err(err)?;
        let warm = engine
            .evaluate(std::slice::from_ref(&again), policy)
            .map_err(err)?;
        println!("warm (a second run of the same work):");
        for (i, k) in warm.kernels.iter().enumerate() {
            let pred = k.predicted().map_or(0.0, |p| p.kernel.seconds);
            let m = k.measured_s.unwrap_or(0.0);
            println!(
                "  kernel {i}: {} on {} (cold {}, predicted {}{})",
                time(m),
                k.device,
                time(
                    plan.kernels
                        .get(i)
                        .and_then(|c| c.measured_s)
                        .unwrap_or(0.0)
                ),
                time(pred),
                if pred > 0.0 {
                    let call = k.measured_call_s().unwrap_or(m);
                    format!(", actual/predicted {:.2}", call / pred)
                } else {
                    String::new()
                }
            );
        }
    }
    if args.run && args.synthetic_gpu && plan.devices().contains(&DeviceKind::Gpu) {
        println!(
            "note: the synthetic GPU runs its kernels on the host, so its measured times are host times"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(expr: &str, shape: Vec<usize>, run: bool) -> ExplainArgs {
        ExplainArgs {
            expr: expr.into(),
            shape,
            dtype: "float32".into(),
            resident: "cpu".into(),
            device: None,
            run,
            synthetic_gpu: false,
            source: None,
        }
    }

    #[test]
    fn plans_allocate_nothing_so_any_size_plans() {
        // 1e10 float32 elements per input (40 GB each): planning made and
        // filled them (10 s and 3 GB for 20000x20000; 1e10 ran out of memory).
        let a = args("a*b + sin(a) + cos(b)", vec![100_000, 100_000], false);
        assert_eq!(run(&a), Ok(()));
        let mut gpu = args("a*b + 1", vec![100_000, 100_000], false);
        gpu.resident = "gpu".into();
        gpu.synthetic_gpu = true;
        assert_eq!(run(&gpu), Ok(()));
    }

    #[test]
    fn runs_refuse_shapes_that_overflow_or_cannot_fit() {
        // 2^32 x 2^32 "ran" 0 points (the element count wrapped).
        let e = run(&args("a*b", vec![1 << 32, 1 << 32], true)).unwrap_err();
        assert!(e.contains("too big"), "{e}");
        let e = run(&args("a*b", vec![1_000_000, 1_000_000], true)).unwrap_err();
        assert!(e.contains("unable to allocate"), "{e}");
    }
}
