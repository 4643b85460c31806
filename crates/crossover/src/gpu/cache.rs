//! Compiled kernels: in memory (variant -> module) over a disk cache under
//! `$XDG_CACHE_HOME/crossover/kernels/` (or `CROSSOVER_KERNEL_CACHE`;
//! `off` disables it), so a second process compiles nothing.
//!
//! The disk key is a SHA-256 of the *inputs* (codegen version, API, device,
//! driver, compiler options, full source), never of the output. Files are
//! written atomically (temporary file + rename) with a checksum; a damaged
//! or unreadable file is recompiled, and any I/O problem falls back to the
//! memory cache with one warning.

use super::api::{ApiError, GpuApi};
use super::codegen::{prelude, Features, Rendered, Variant, CODEGEN_VERSION};
use crate::expr::ir::Program;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const MAGIC: &[u8; 8] = b"XOKERN01";

/// Variants whose disk lookup is remembered at most (then forgotten).
const ON_DISK_MEMO_MAX: usize = 4096;

/// A compiled variant.
pub struct Entry<A: GpuApi> {
    pub module: A::Module,
    pub rendered: Rendered,
}

/// Counters, for tests and `explain`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Variants compiled from source.
    pub compiled: u64,
    /// Variants loaded from disk.
    pub loaded: u64,
    /// Disk files found damaged (and recompiled).
    pub damaged: u64,
    /// Sources rendered and hashed to ask whether a variant is on disk
    /// (once per variant: the answer is remembered).
    pub disk_lookups: u64,
}

/// The kernel cache of one device.
pub struct KernelCache<A: GpuApi> {
    modules: Mutex<HashMap<Variant, Arc<Entry<A>>>>,
    /// What [`KernelCache::is_cached`] found on disk, per variant: the
    /// planner asks for every kernel of every call, and rendering, hashing
    /// and looking for the file cost about 20 us (a 4,096-element sum with
    /// pocl present took 27 us a call against 1.8 without a GPU). A file
    /// written or removed later is found by `get`, which never reads this.
    on_disk: Mutex<HashMap<Variant, bool>>,
    dir: Option<PathBuf>,
    warned: AtomicBool,
    compiled: AtomicU64,
    loaded: AtomicU64,
    damaged: AtomicU64,
    disk_lookups: AtomicU64,
}

/// The disk cache directory from the environment (`None`: memory only).
pub fn default_dir() -> Option<PathBuf> {
    match std::env::var("CROSSOVER_KERNEL_CACHE") {
        Ok(s) if s.eq_ignore_ascii_case("off") || s == "0" => return None,
        Ok(s) if !s.is_empty() => return Some(PathBuf::from(s)),
        _ => {}
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|s| !s.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("crossover").join("kernels"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl<A: GpuApi> KernelCache<A> {
    /// A cache writing compiled kernels under `dir` (`None`: memory only).
    pub fn new(dir: Option<PathBuf>) -> Self {
        KernelCache {
            modules: Mutex::new(HashMap::new()),
            on_disk: Mutex::new(HashMap::new()),
            dir,
            warned: AtomicBool::new(false),
            compiled: AtomicU64::new(0),
            loaded: AtomicU64::new(0),
            damaged: AtomicU64::new(0),
            disk_lookups: AtomicU64::new(0),
        }
    }

    /// The disk directory, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Counters so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            compiled: self.compiled.load(Ordering::Relaxed),
            loaded: self.loaded.load(Ordering::Relaxed),
            damaged: self.damaged.load(Ordering::Relaxed),
            disk_lookups: self.disk_lookups.load(Ordering::Relaxed),
        }
    }

    /// Whether `variant` is compiled in this process.
    pub fn in_memory(&self, variant: &Variant) -> bool {
        self.lock().contains_key(variant)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Variant, Arc<Entry<A>>>> {
        self.modules.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The full source of a variant for `api`.
    pub fn source(api: &A, features: Features, rendered: &Rendered) -> String {
        let mut s = prelude(api.dialect(), features);
        s.push_str(&rendered.body);
        s
    }

    fn path(&self, api: &A, source: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let info = api.info();
        let mut h = Sha256::new();
        for part in [
            format!("codegen {CODEGEN_VERSION}"),
            info.api.to_string(),
            info.name.clone(),
            info.driver.clone(),
            api.options(),
        ] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        h.update(source.as_bytes());
        let key = hex(&h.finalize());
        Some(dir.join(&key[..2]).join(format!("{key}.bin")))
    }

    /// Whether a compiled `variant` is on disk (or in memory).
    pub fn is_cached(
        &self,
        api: &A,
        features: Features,
        variant: &Variant,
        program: &Program,
    ) -> bool {
        if self.in_memory(variant) {
            return true;
        }
        let memo = || self.on_disk.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&found) = memo().get(variant) {
            return found;
        }
        self.disk_lookups.fetch_add(1, Ordering::Relaxed);
        let rendered = variant.render(program);
        let found = self
            .path(api, &Self::source(api, features, &rendered))
            .is_some_and(|p| p.exists());
        let mut memo = memo();
        if memo.len() >= ON_DISK_MEMO_MAX {
            memo.clear();
        }
        memo.insert(variant.clone(), found);
        found
    }

    fn warn(&self, msg: String) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            eprintln!(
                "crossover: warning: kernel cache: {msg}; compiled kernels are kept in memory only"
            );
        }
    }

    /// The compiled module of `variant`: from memory, disk, or compiled now.
    ///
    /// # Errors
    /// The compiler's error (with its log).
    pub fn get(
        &self,
        api: &A,
        features: Features,
        variant: &Variant,
        program: &Program,
    ) -> Result<Arc<Entry<A>>, ApiError> {
        if let Some(e) = self.lock().get(variant) {
            return Ok(Arc::clone(e));
        }
        let rendered = variant.render(program);
        let source = Self::source(api, features, &rendered);
        let path = self.path(api, &source);
        let mut module = None;
        if let Some(p) = &path {
            match std::fs::read(p) {
                Ok(bytes) => match unpack(&bytes) {
                    Some(binary) => match api.load(binary, &rendered.entries) {
                        Ok(m) => {
                            self.loaded.fetch_add(1, Ordering::Relaxed);
                            module = Some(m);
                        }
                        Err(_) => {
                            self.damaged.fetch_add(1, Ordering::Relaxed);
                        }
                    },
                    None => {
                        self.damaged.fetch_add(1, Ordering::Relaxed);
                    }
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => self.warn(format!("reading {}: {e}", p.display())),
            }
        }
        let module = match module {
            Some(m) => m,
            None => {
                let c = api.compile(&source, &rendered.entries, path.is_some())?;
                self.compiled.fetch_add(1, Ordering::Relaxed);
                if let (Some(p), Some(bin)) = (&path, &c.binary) {
                    if let Err(e) = store(p, bin) {
                        self.warn(format!("writing {}: {e}", p.display()));
                    }
                }
                c.module
            }
        };
        let entry = Arc::new(Entry { module, rendered });
        self.lock()
            .entry(variant.clone())
            .or_insert_with(|| Arc::clone(&entry));
        Ok(entry)
    }
}

/// The binary inside a cache file, if its header and checksum hold.
fn unpack(bytes: &[u8]) -> Option<&[u8]> {
    if bytes.len() < MAGIC.len() + 32 || &bytes[..MAGIC.len()] != MAGIC {
        return None;
    }
    let (sum, payload) = bytes[MAGIC.len()..].split_at(32);
    (Sha256::digest(payload).as_slice() == sum).then_some(payload)
}

/// A cache file's contents: header, checksum, binary. Public so tests can
/// plant a well-formed file whose binary the driver refuses.
pub fn pack(binary: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(binary.len() + MAGIC.len() + 32);
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(&Sha256::digest(binary));
    data.extend_from_slice(binary);
    data
}

/// Writes a cache file atomically.
fn store(path: &Path, binary: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("kernel"),
        std::process::id()
    ));
    std::fs::write(&tmp, pack(binary))?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_and_damage_is_detected() {
        let dir = std::env::temp_dir().join(format!("xo-cache-test-{}", std::process::id()));
        let p = dir.join("ab").join("x.bin");
        store(&p, b"binary").unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(unpack(&bytes), Some(&b"binary"[..]));
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert_eq!(unpack(&bad), None);
        assert_eq!(unpack(b"short"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
