//! The artifact's published numbers carried under `data/` (issue 35):
//! every `data/artifact-fig*/` CSV is the analysis script's 20-bin table
//! with its README, and the GoogleRPC flow-size CDF loads with the
//! simulator's workload loader and keeps the published flow list's
//! statistics (`data/workload-googlerpc/README.md`).

use lcmp_sim::rng::Pcg32;
use lcmp_sim::workload::Workload;
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

fn googlerpc() -> Workload {
    let path = data().join("workload-googlerpc/googlerpc.cdf");
    let text = std::fs::read_to_string(&path).expect("the GoogleRPC CDF is committed");
    Workload::parse("googlerpc", &text).expect("the workload loader accepts it")
}

#[test]
fn the_googlerpc_cdf_keeps_the_flow_lists_mean() {
    // The artifact's flow list: 10 271 flows, mean 2 337 B (README).
    let mean = googlerpc().mean_bytes();
    assert!((mean - 2337.0).abs() / 2337.0 < 0.03, "mean {mean}");
}

#[test]
fn samples_of_the_googlerpc_cdf_have_the_flow_lists_percentiles() {
    let w = googlerpc();
    let mut rng = Pcg32::new(35, 9);
    let mut sizes: Vec<u64> = (0..200_000).map(|_| w.sample(&mut rng)).collect();
    sizes.sort_unstable();
    let at = |q: f64| sizes[((sizes.len() as f64) * q) as usize];
    // The flow list's median is 259 B, its 90th percentile 1 717 B and
    // 4.39 % of its flows are 1 B long.
    assert!((240..=280).contains(&at(0.5)), "median {}", at(0.5));
    assert!((1_550..=1_900).contains(&at(0.9)), "p90 {}", at(0.9));
    assert_eq!(at(0.03), 1);
    assert!(at(0.08) > 1);
    assert!(*sizes.last().unwrap() <= 1_327_858);
}

/// One published table: the header and the rows of numbers.
fn table(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|x| {
                    x.parse::<f64>()
                        .unwrap_or_else(|_| panic!("{}: {l}", path.display()))
                })
                .collect::<Vec<f64>>()
        })
        .collect();
    (header, rows)
}

#[test]
fn every_published_fct_table_has_twenty_bins_of_slowdowns() {
    let mut tables = 0;
    for fig in ["1", "7", "8", "9", "10", "11"] {
        let dir = data().join(format!("artifact-fig{fig}"));
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".csv") {
                continue;
            }
            assert!(
                readme.contains(&format!("`{name}`")),
                "{fig}: README names {name}"
            );
            // Not FCT tables: Fig. 1's link use, Fig. 8's flow counts.
            if name == "link-utilization.csv" || name == "flows.csv" {
                continue;
            }
            let (header, rows) = table(&path);
            assert_eq!(
                header[..2],
                ["Percentile", "FlowSize"],
                "{}",
                path.display()
            );
            assert!(header.len() >= 4 && header.len() % 2 == 0);
            for pair in header[2..].chunks(2) {
                assert!(pair[0].ends_with("-fct_p50") && pair[1].ends_with("-fct_p99"));
            }
            assert_eq!(rows.len(), 20, "{}", path.display());
            for (i, row) in rows.iter().enumerate() {
                assert_eq!(row.len(), header.len());
                assert!((row[0] - i as f64 * 0.05).abs() < 1e-9);
                for pair in row[2..].chunks(2) {
                    // A slowdown is at least 1 and p99 is not below p50,
                    // up to the script's rounding.
                    assert!(
                        pair[0] >= 0.99 && pair[1] >= pair[0] * 0.99,
                        "{}: {row:?}",
                        path.display()
                    );
                }
            }
            tables += 1;
        }
    }
    assert_eq!(tables, 1 + 3 + 3 + 6 + 4 + 4);
}

#[test]
fn figure_1s_link_utilisation_covers_dc1s_six_links() {
    let text = std::fs::read_to_string(data().join("artifact-fig1/link-utilization.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Link,ECMP,UCMP,Ours"));
    let links: Vec<&str> = lines
        .map(|l| {
            let mut it = l.split(',');
            let link = it.next().unwrap();
            let utils: Vec<f64> = it.map(|x| x.parse().unwrap()).collect();
            assert_eq!(utils.len(), 3);
            assert!(utils.iter().all(|u| (0.0..=100.0).contains(u)), "{l}");
            link
        })
        .collect();
    // DC1's DCI switch (node 176) to DC2..DC7's (177..182).
    assert_eq!(
        links,
        ["176-177", "176-178", "176-179", "176-180", "176-181", "176-182"]
    );
}
