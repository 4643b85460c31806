//! `crossover advise` as text: the decision table, the CPU-side advice and
//! the notes, in aligned columns and prose wrapped for a terminal.

use super::cpu::{self, CpuAdvice};
use super::model::{Advice, Crossover, Helps, N_MIN};
use super::Report;
/// A table with a header row; the first column left-aligned, the others
/// right-aligned, columns separated by two spaces.
pub fn format_table(header: &[&[&str]], rows: &[Vec<String>]) -> String {
    let cols = header.iter().map(|h| h.len()).max().unwrap_or(0);
    let mut width = vec![0usize; cols];
    let cells = header
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect::<Vec<_>>())
        .chain(rows.iter().cloned());
    for r in cells.clone() {
        for (w, c) in width.iter_mut().zip(&r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate().take(cols) {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = width[i].saturating_sub(c.chars().count());
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    cells.map(|r| line(&r)).collect()
}

/// Seconds with three significant digits, in s, ms, us or ns.
pub fn time3(s: f64) -> String {
    let (v, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "us")
    } else {
        (s * 1e9, "ns")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

fn crossover_cell(c: Crossover) -> String {
    match c {
        Crossover::Always => format!("<= {N_MIN}"),
        Crossover::From(n) => n.to_string(),
        Crossover::Never => "never".into(),
    }
}

fn speedup(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}x")
    } else if x >= 0.1 {
        format!("{x:.1}x")
    } else {
        format!("{x:.3}x")
    }
}

fn dtype_short(d: &str) -> &str {
    match d {
        "float32" => "f32",
        "float64" => "f64",
        "complex64" => "c64",
        other => other,
    }
}

fn render_table(rows: &[Advice]) -> String {
    let header: [&[&str]; 2] = [
        &[
            "", "GPU", "from N", "from N", "", "", "", "", "speedup", "speedup",
        ],
        &[
            "workload",
            "helps?",
            "host",
            "on GPU",
            "at N",
            "CPU",
            "GPU+copies",
            "GPU only",
            "host",
            "on GPU",
        ],
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                format!("{} {}", r.workload, dtype_short(r.dtype)),
                match r.helps {
                    Helps::Yes => "yes",
                    Helps::IfResident => "if on GPU",
                    Helps::No => "no",
                }
                .into(),
                crossover_cell(r.from_host),
                crossover_cell(r.from_resident),
                r.at_n.to_string(),
                time3(r.cpu_s),
                time3(r.gpu_host_s),
                time3(r.gpu_resident_s),
                speedup(r.speedup_host),
                speedup(r.speedup_resident),
            ]
        })
        .collect();
    format_table(&header, &cells)
}

/// How a row's kernel times were modelled, for the legend.
fn model_note(r: &Advice) -> String {
    match (r.cpu_model, r.gpu_model) {
        (c, g) if c == g => format!("{c} on both"),
        (c, g) => format!("cpu {c}, gpu {g}"),
    }
}

/// `text` word-wrapped at [`WIDTH`] columns: the first line starts with
/// `first`, the others with as many spaces.
pub fn wrap(first: &str, text: &str) -> String {
    let pad = " ".repeat(first.chars().count());
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = pad.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// Prose is wrapped at this many columns.
pub const WIDTH: usize = 100;

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

fn noisy_cell(noisy: bool) -> String {
    if noisy { "noisy" } else { "" }.to_string()
}

fn render_cpu(c: &CpuAdvice) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "(a) threads: the engine uses {} threads", c.threads);
    let _ = writeln!(
        s,
        "    it runs this kernel on the calling thread below {} elements (PARALLEL_MIN_WORK)",
        c.engine_parallel_from
    );
    if !c.thread_scan.is_empty() {
        let rows: Vec<Vec<String>> = c
            .thread_scan
            .iter()
            .map(|p| {
                vec![
                    format!("{:e}", p.elements as f64),
                    time3(p.one_thread_s),
                    time3(p.all_threads_s),
                    speedup(p.speedup),
                    noisy_cell(p.noisy),
                ]
            })
            .collect();
        let t = format_table(
            &[&["elements", "1 thread", "all threads", "speedup", ""]],
            &rows,
        );
        s.push_str(&indent(&t, "    "));
        let last = c.thread_scan.last().map_or(1.0, |p| p.speedup);
        match c.threads_pay_from {
            Some(n) => {
                let _ = writeln!(
                    s,
                    "    all cores pay from {:e} elements (>= {:.1}x); {} at 1e7",
                    n as f64,
                    cpu::PAYS,
                    speedup(last)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "    all cores never paid >= {:.1}x up to the largest size ({} at 1e7)",
                    cpu::PAYS,
                    speedup(last)
                );
            }
        }
    }
    if let Some(n) = &c.thread_note {
        let _ = writeln!(s, "    {n}");
    }
    let measured = c.fusion.first().is_some_and(|f| f.measured);
    s.push_str(&wrap(
        "(b) ",
        &format!(
            "fusion: a*b + sin(a) + cos(b) in one pass against an evaluation per op (NumPy's \
             way), {}",
            if measured {
                "measured"
            } else {
                "predicted by the profile (--no-measure)"
            }
        ),
    ));
    let rows: Vec<Vec<String>> = c
        .fusion
        .iter()
        .map(|f| {
            vec![
                format!("{:e}", f.elements as f64),
                time3(f.fused_s),
                time3(f.unfused_s),
                time3(f.saved_s),
                speedup(f.ratio),
                noisy_cell(f.noisy),
            ]
        })
        .collect();
    let t = format_table(
        &[&["elements", "fused", "unfused", "saved", "unfused/fused", ""]],
        &rows,
    );
    s.push_str(&indent(&t, "    "));
    s.push_str(&wrap("(c) ", &c.keep_data));
    s.push_str(&wrap("(d) ", &c.float32));
    if c.measure_s > 0.0 {
        let noisy = c.thread_scan.iter().any(|p| p.noisy) || c.fusion.iter().any(|f| f.noisy);
        let mut line = format!(
            "measurements took {:.1} s (medians of alternating runs)",
            c.measure_s
        );
        if noisy {
            line.push_str(&format!(
                "; \"noisy\": the middle half of the runs spread over more than {:.0}% of \
                 their median, the machine is busy: rerun when it is idle",
                cpu::NOISY * 100.0
            ));
        }
        s.push_str(&wrap("", &line));
    }
    s
}

/// The report as text for a terminal.
pub fn render(r: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "crossover advise: does a GPU help here?");
    let _ = writeln!(
        s,
        "gpu:     {}",
        if r.gpu.usable {
            format!("usable: {}", r.gpu.detail)
        } else {
            format!("not usable: {}", r.gpu.detail)
        }
    );
    let _ = writeln!(
        s,
        "profile: {}{}",
        r.sources.profile,
        r.sources
            .file
            .as_ref()
            .map_or(String::new(), |f| format!(" (--profile {f})"))
    );
    if let Some(rows) = &r.table {
        s.push('\n');
        s.push_str(&wrap(
            "",
            &format!(
                "N: problem side (NxN; see the legend). \"from N\": smallest N from which the GPU \
                 stays faster (scanned {}..{}); host: inputs start on the host (their copies in \
                 and the result's copy back counted); on GPU: inputs already there, result left \
                 there. Times and speedups (CPU time / GPU time) are predicted at \"at N\": 10x \
                 the elements of the first crossover (N x 3.16).",
                r.n_min, r.n_max
            ),
        ));
        s.push('\n');
        s.push_str(&render_table(rows));
        let _ = writeln!(s, "\nlegend:");
        for a in rows {
            let _ = writeln!(s, "  {:<23} {} ({})", a.workload, a.computes, model_note(a));
        }
        let caveats: Vec<&String> = rows.iter().flat_map(|a| &a.caveats).collect();
        if !caveats.is_empty() {
            let _ = writeln!(s, "caveats:");
            for c in caveats {
                s.push_str(&wrap("  - ", c));
            }
        }
    } else {
        let _ = writeln!(
            s,
            "\nNo usable GPU, so there is no GPU table: everything runs on the CPU.\n\
             CPU-side advice for this machine (workload a*b + sin(a) + cos(b), float32):\n"
        );
    }
    if let Some(c) = &r.cpu {
        s.push_str(&render_cpu(c));
    }
    if !r.notes.is_empty() {
        let _ = writeln!(s, "notes:");
        for n in &r.notes {
            s.push_str(&wrap("  - ", n));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_columns_are_aligned() {
        let t = format_table(
            &[&["name", "value"]],
            &[
                vec!["a".into(), "1".into()],
                vec!["longer".into(), "12345678".into()],
            ],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        // Right-aligned numbers end in the same column.
        assert_eq!(lines[1].len(), lines[2].len());
        assert!(lines[1].starts_with("a "));
        assert!(lines[1].ends_with(" 1"));
    }

    #[test]
    fn header_rows_align_with_the_cells() {
        let t = format_table(
            &[&["", "from N"], &["workload", "host"]],
            &[vec!["elementwise f32".into(), "392".into()]],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.len() == lines[2].len()), "{t}");
    }

    #[test]
    fn time3_keeps_three_digits() {
        assert_eq!(time3(266.48e-3), "266 ms");
        assert_eq!(time3(1.559e-3), "1.56 ms");
        assert_eq!(time3(19.2e-6), "19.2 us");
        assert_eq!(time3(2.5), "2.50 s");
        assert_eq!(time3(5e-9), "5.00 ns");
    }

    #[test]
    fn wrap_breaks_at_the_width_and_indents() {
        let text = "word ".repeat(60);
        let w = wrap("(c) ", &text);
        assert!(w.lines().all(|l| l.chars().count() <= WIDTH));
        assert!(w.starts_with("(c) word"));
        assert!(w.lines().skip(1).all(|l| l.starts_with("    word")));
        assert_eq!(w.split_whitespace().count(), 61);
    }
}
