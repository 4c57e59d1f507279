//! Reports of a [`StagePlan`]: Markdown tables for `docs/tofino.md`, and
//! the block comment at the head of the generated `lcmp.p4`.

use core::fmt::Write as _;

use super::{limits, StagePlan};
use crate::model::Target;

impl StagePlan {
    /// The stage plan of every gress and the memory per object, as
    /// Markdown tables (what `docs/tofino.md` shows).
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        for g in &self.gresses {
            o.push_str(&format!(
                "{} ({}): {} stages\n\n",
                g.control,
                self.target.name(),
                g.stages
            ));
            if g.stages == 0 {
                continue;
            }
            o.push_str("| stage | units |\n| --- | --- |\n");
            for (i, names) in self.stage_names(g).iter().enumerate() {
                o.push_str(&format!("| {i} | {} |\n", names.join(", ")));
            }
            o.push('\n');
        }
        o.push_str("| object | kind | entries | width | stage | SRAM blocks | TCAM blocks |\n");
        o.push_str("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
        for f in &self.objects {
            o.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} |\n",
                f.name, f.kind, f.entries, f.width, f.stage, f.sram_blocks, f.tcam_blocks
            ));
        }
        o.push_str(&format!(
            "| total | | | | | {} | {} |\n",
            self.sram_blocks(),
            self.tcam_blocks()
        ));
        o
    }

    /// The plan as lines of a C block comment (` * ...`): each gress's
    /// stages and what they hold, the memory per object (Tofino 1 only:
    /// the objects are the same on Tofino 2), the blocks used of the
    /// pipe's total, and every violation.
    pub fn p4_comment(&self) -> String {
        let mut o = String::new();
        let t = self.target;
        let _ = writeln!(
            o,
            " * {} (stage analysis, crate::analysis; budget {} stages per gress):",
            t.name(),
            t.stages()
        );
        for g in &self.gresses {
            let _ = writeln!(o, " *   {}: {} stages", g.control, g.stages);
            for (i, names) in self.stage_names(g).iter().enumerate() {
                let _ = writeln!(o, " *     stage {i}: {}", names.join(", "));
            }
        }
        if t == Target::Tofino1 {
            let _ = writeln!(
                o,
                " *   {:<31} {:>8} {:>8} {:>5} {:>5} {:>5}",
                "object", "kind", "entries", "stage", "SRAM", "TCAM"
            );
            for f in &self.objects {
                let _ = writeln!(
                    o,
                    " *   {:<31} {:>8} {:>8} {:>5} {:>5} {:>5}",
                    f.name, f.kind, f.entries, f.stage, f.sram_blocks, f.tcam_blocks
                );
            }
        }
        let stages = u64::from(t.stages());
        let (sram, tcam) = (limits::SRAM_BLOCKS * stages, limits::TCAM_BLOCKS * stages);
        let _ = writeln!(
            o,
            " *   SRAM {}/{sram} blocks ({}%), TCAM {}/{tcam} ({}%) per pipe",
            self.sram_blocks(),
            (100 * self.sram_blocks()).div_ceil(sram),
            self.tcam_blocks(),
            (100 * self.tcam_blocks()).div_ceil(tcam),
        );
        for v in &self.violations {
            let _ = writeln!(o, " *   VIOLATION: {v}");
        }
        o
    }
}
