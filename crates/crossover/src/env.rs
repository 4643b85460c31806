//! Settings read from environment variables, with a warning on stderr (as
//! for `CROSSOVER_DEVICE`) when a value is invalid or unreasonable, never a
//! silent default or a value that makes the process unusable.

/// Most threads `CROSSOVER_NUM_THREADS` may ask for, per core: more only
/// adds switching (10000 threads never finished starting).
pub const MAX_THREADS_PER_CORE: usize = 4;

pub(crate) fn warn(var: &str, value: &str, what: &str) {
    eprintln!("crossover: warning: {var}={value:?}: {what}");
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Threads of the CPU backend: `CROSSOVER_NUM_THREADS` (capped at
/// [`MAX_THREADS_PER_CORE`] times the cores), else all cores.
pub fn num_threads() -> usize {
    parse_threads(
        std::env::var("CROSSOVER_NUM_THREADS").ok().as_deref(),
        cores(),
    )
}

fn parse_threads(value: Option<&str>, cores: usize) -> usize {
    const VAR: &str = "CROSSOVER_NUM_THREADS";
    let Some(v) = value.filter(|v| !v.trim().is_empty()) else {
        return cores;
    };
    match v.trim().parse::<usize>() {
        Ok(n) if n > 0 => {
            let cap = cores * MAX_THREADS_PER_CORE;
            if n > cap {
                warn(
                    VAR,
                    v,
                    &format!("more than {MAX_THREADS_PER_CORE}x the {cores} cores; using {cap}"),
                );
                cap
            } else {
                n
            }
        }
        _ => {
            warn(
                VAR,
                v,
                &format!("not a positive integer; using all {cores} cores"),
            );
            cores
        }
    }
}

/// A count of points from `var` (`value`: its text, when set), else
/// `default`; an invalid value warns and keeps `default`.
pub(crate) fn points(var: &str, value: Option<&str>, default: usize) -> usize {
    let Some(v) = value.filter(|v| !v.trim().is_empty()) else {
        return default;
    };
    v.trim().parse::<usize>().unwrap_or_else(|_| {
        warn(var, v, &format!("not a count of points; using {default}"));
        default
    })
}

#[cfg(test)]
mod tests {
    use super::{parse_threads, points};

    #[test]
    fn thread_counts_are_validated_and_capped() {
        assert_eq!(parse_threads(None, 2), 2);
        assert_eq!(parse_threads(Some("3"), 2), 3);
        assert_eq!(parse_threads(Some("10000"), 2), 8);
        for bad in ["0", "abc", "-3", "1.5"] {
            assert_eq!(parse_threads(Some(bad), 2), 2, "{bad}");
        }
    }

    #[test]
    fn point_counts_are_read_or_the_default_kept() {
        assert_eq!(points("X", None, 2048), 2048);
        assert_eq!(points("X", Some(""), 2048), 2048);
        assert_eq!(points("X", Some("64"), 2048), 64);
        assert_eq!(points("X", Some(" 0 "), 2048), 0);
        for bad in ["abc", "-3", "1.5", "1e3"] {
            assert_eq!(points("X", Some(bad), 2048), 2048, "{bad}");
        }
    }
}
