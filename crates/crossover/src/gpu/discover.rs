//! Which GPU the engine uses: `CROSSOVER_GPU` names one (`cuda`,
//! `cuda:<ordinal>`, `opencl`, `opencl:<part of a platform, vendor or
//! device name>`, `none`), else the first NVIDIA GPU through CUDA, else the
//! first GPU-type OpenCL device. A CPU-type OpenCL device (pocl) is used
//! only when named, since it shares the cores the CPU backend uses.

use super::api::DeviceInfo;
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
    /// A CUDA device by ordinal (0 when not given).
    Cuda(usize),
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
            "cuda" => match rest.as_deref().filter(|r| !r.is_empty()) {
                None => Ok(Selector::Cuda(0)),
                Some(r) => r.parse().map(Selector::Cuda).map_err(|_| {
                    format!("CROSSOVER_GPU={s:?}: a CUDA device is named by its ordinal (cuda:0)")
                }),
            },
            other => Err(format!(
                "CROSSOVER_GPU={s:?}: unknown GPU API '{other}' (expected auto, none, cuda, cuda:<ordinal>, opencl or opencl:<device>)"
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

/// A device chosen by [`selected`], not opened yet.
#[derive(Clone, Debug)]
pub enum Choice {
    OpenCl(&'static opencl::Found),
    /// A CUDA device (ordinal) and what it reported when probed.
    Cuda(usize, DeviceInfo),
}

impl Choice {
    /// What the device reports.
    pub fn info(&self) -> &DeviceInfo {
        match self {
            Choice::OpenCl(f) => &f.info,
            Choice::Cuda(_, info) => info,
        }
    }
}

/// CUDA device `ordinal` as it reports itself (opened once per process:
/// this initialises the driver), or why it cannot be used.
#[cfg(feature = "cuda")]
pub fn cuda_device(ordinal: usize) -> Result<DeviceInfo, String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static PROBED: OnceLock<Mutex<HashMap<usize, Result<DeviceInfo, String>>>> = OnceLock::new();
    crate::cuda::available()?;
    let mut probed = PROBED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    probed
        .entry(ordinal)
        .or_insert_with(|| {
            use super::api::GpuApi;
            crate::cuda::CudaApi::open(ordinal).map(|api| api.info().clone())
        })
        .clone()
}

/// Without the `cuda` feature: why CUDA is not used.
#[cfg(not(feature = "cuda"))]
pub fn cuda_device(_ordinal: usize) -> Result<DeviceInfo, String> {
    Err("this build of crossover has no CUDA backend (feature `cuda` off)".into())
}

/// The device `CROSSOVER_GPU` selects, without opening it (a CUDA device
/// is probed once), or why none.
pub fn selected() -> Result<Choice, String> {
    match Selector::from_env()? {
        Selector::Off => Err("no GPU: CROSSOVER_GPU turns it off".into()),
        Selector::OpenCl(name) => find_opencl(name.as_deref())
            .map(Choice::OpenCl)
            .map_err(|e| format!("OpenCL: {e}")),
        Selector::Cuda(n) => cuda_device(n)
            .map(|info| Choice::Cuda(n, info))
            .map_err(|e| format!("CUDA: {e}")),
        Selector::Auto => match cuda_device(0) {
            Ok(info) => Ok(Choice::Cuda(0, info)),
            Err(cuda) => find_opencl(None)
                .map(Choice::OpenCl)
                .map_err(|e| format!("no usable GPU (CUDA: {cuda}; OpenCL: {e})")),
        },
    }
}

/// The GPU backend `CROSSOVER_GPU` selects, or why there is none.
pub fn from_env() -> Result<Arc<dyn Backend>, String> {
    let dir = super::cache::default_dir();
    match selected()? {
        Choice::OpenCl(pick) => {
            let api =
                OpenClApi::open(pick).map_err(|e| format!("opening {}: {e}", pick.info.name))?;
            let b = GpuBackend::new(api, dir, None).map_err(|e| e.to_string())?;
            Ok(Arc::new(b))
        }
        #[cfg(feature = "cuda")]
        Choice::Cuda(n, _) => {
            let api = crate::cuda::CudaApi::open(n)?;
            let b = GpuBackend::new(api, dir, None).map_err(|e| e.to_string())?;
            Ok(Arc::new(b))
        }
        #[cfg(not(feature = "cuda"))]
        Choice::Cuda(..) => Err(cuda_device(0).err().unwrap_or_default()),
    }
}

/// The GPU part of the machine fingerprint (profiles are per GPU).
pub fn fingerprint() -> String {
    match selected() {
        Ok(c) => format!("{} {} ({})", c.info().api, c.info().name, c.info().driver),
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
        assert_eq!(Selector::parse("cuda").unwrap(), Selector::Cuda(0));
        assert_eq!(Selector::parse("cuda:1").unwrap(), Selector::Cuda(1));
        assert!(Selector::parse("cuda:first").is_err());
        assert!(Selector::parse("metal").is_err());
    }
}
