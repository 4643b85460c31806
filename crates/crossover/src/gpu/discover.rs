//! Which GPU the engine uses: `CROSSOVER_GPU` names one (`opencl`,
//! `opencl:<part of a platform, vendor or device name>`, `none`), else the
//! first GPU-type device found. A CPU-type OpenCL device (pocl) is used
//! only when named, since it shares the cores the CPU backend uses.

use super::GpuBackend;
use crate::device::Backend;
use crate::opencl::{self, OpenClApi};
use std::sync::{Arc, OnceLock};

/// What `CROSSOVER_GPU` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The first GPU-type device of any API.
    Auto,
    /// No GPU.
    Off,
    /// An OpenCL device: the first GPU, or the first device whose
    /// platform, vendor or name contains this text (any type).
    OpenCl(Option<String>),
}

impl Selector {
    /// Parses a `CROSSOVER_GPU` value.
    ///
    /// # Errors
    /// An unknown API name.
    pub fn parse(s: &str) -> Result<Selector, String> {
        let s = s.trim();
        let (api, rest) = match s.split_once(':') {
            Some((a, r)) => (a.trim().to_ascii_lowercase(), Some(r.trim().to_string())),
            None => (s.to_ascii_lowercase(), None),
        };
        match api.as_str() {
            "" | "auto" => Ok(Selector::Auto),
            "none" | "off" | "cpu" => Ok(Selector::Off),
            "opencl" | "cl" => Ok(Selector::OpenCl(rest.filter(|r| !r.is_empty()))),
            other => Err(format!(
                "CROSSOVER_GPU={s:?}: unknown GPU API '{other}' (expected auto, none, opencl or opencl:<device>)"
            )),
        }
    }

    /// The selector in `CROSSOVER_GPU` (auto when unset).
    pub fn from_env() -> Result<Selector, String> {
        Selector::parse(&std::env::var("CROSSOVER_GPU").unwrap_or_default())
    }
}

/// The OpenCL devices of this machine (listed once per process).
pub fn opencl_devices() -> &'static Result<Vec<opencl::Found>, String> {
    static FOUND: OnceLock<Result<Vec<opencl::Found>, String>> = OnceLock::new();
    FOUND.get_or_init(opencl::discover)
}

/// Whether `text` names `f`: part of its platform, vendor or device name,
/// or a platform's short name (`pocl` for Portable Computing Language).
fn matches(f: &opencl::Found, text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    let short = match f.platform.as_str() {
        "Portable Computing Language" => "pocl",
        _ => "",
    };
    [f.platform.as_str(), &f.info.vendor, &f.info.name, short]
        .iter()
        .any(|s| !s.is_empty() && s.to_ascii_lowercase().contains(&t))
}

/// The OpenCL device `name` selects (or the first GPU), without opening it.
///
/// # Errors
/// Why there is none: no OpenCL, or no matching device.
pub fn find_opencl(name: Option<&str>) -> Result<&'static opencl::Found, String> {
    let found = opencl_devices().as_ref().map_err(|e| e.clone())?;
    let list = || {
        found
            .iter()
            .map(|f| format!("{} on {}", f.info.name, f.platform))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(n) => found
            .iter()
            .find(|f| matches(f, n))
            .ok_or_else(|| format!("no OpenCL device matches '{n}' (devices: {})", list())),
        None => found.iter().find(|f| f.info.is_gpu).ok_or_else(|| {
            format!(
                "OpenCL has only CPU devices ({}); set CROSSOVER_GPU=opencl:<name> to use one anyway",
                list()
            )
        }),
    }
}

/// Opens the OpenCL device `name` selects (or the first GPU) as a backend.
///
/// # Errors
/// Why there is none: no OpenCL, no matching device, or the device failed
/// to open.
pub fn opencl_backend(name: Option<&str>) -> Result<GpuBackend<OpenClApi>, String> {
    let pick = find_opencl(name)?;
    let api = OpenClApi::open(pick).map_err(|e| format!("opening {}: {e}", pick.info.name))?;
    GpuBackend::new(api, super::cache::default_dir(), None).map_err(|e| e.to_string())
}

const NO_CUDA: &str = "CUDA: the CUDA backend is not built yet";

/// The device `CROSSOVER_GPU` selects, without opening it, or why none.
pub fn selected() -> Result<&'static opencl::Found, String> {
    match Selector::from_env()? {
        Selector::Off => Err("no GPU: CROSSOVER_GPU turns it off".into()),
        Selector::OpenCl(name) => find_opencl(name.as_deref()).map_err(|e| format!("OpenCL: {e}")),
        Selector::Auto => {
            find_opencl(None).map_err(|e| format!("no usable GPU ({NO_CUDA}; OpenCL: {e})"))
        }
    }
}

/// The GPU backend `CROSSOVER_GPU` selects, or why there is none.
pub fn from_env() -> Result<Arc<dyn Backend>, String> {
    let pick = selected()?;
    let api = OpenClApi::open(pick).map_err(|e| format!("opening {}: {e}", pick.info.name))?;
    let b = GpuBackend::new(api, super::cache::default_dir(), None).map_err(|e| e.to_string())?;
    Ok(Arc::new(b))
}

/// The GPU part of the machine fingerprint (profiles are per GPU).
pub fn fingerprint() -> String {
    match selected() {
        Ok(f) => format!("{} {} ({})", f.info.api, f.info.name, f.info.driver),
        Err(_) => "none".into(),
    }
}

/// Why no GPU is used, or `None` when one is selected.
pub fn unavailable_reason() -> Option<String> {
    selected().err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse() {
        assert_eq!(Selector::parse("").unwrap(), Selector::Auto);
        assert_eq!(Selector::parse("none").unwrap(), Selector::Off);
        assert_eq!(Selector::parse("opencl").unwrap(), Selector::OpenCl(None));
        assert_eq!(
            Selector::parse("OpenCL: pocl ").unwrap(),
            Selector::OpenCl(Some("pocl".into()))
        );
        assert!(Selector::parse("metal").is_err());
    }
}
