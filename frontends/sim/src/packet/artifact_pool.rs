//! The shared pool each DCI switch of the artifact really has, for any
//! topology (issue 35 item 2, the 13-DC network with the artifact's
//! settings).
//!
//! Both artifact configurations set `DCI_BUFFER_SIZE 128` (MB;
//! `simulation/mix/config/{8DC,13DC}-hetero/config_batch.txt` line 80), and
//! `scratch/third.cc` (lines 1458-1482) gives every DCI port a PFC
//! headroom of `rate * delay / 8 / 1e9 * 3` bytes, computed in 64 bits
//! (`rate` in bit/s, `delay` in ns) and stored in 32 (`uint32_t
//! headroom`), and a 4 KiB reserve. `switch-mmu.cc` (`ConfigNPort`,
//! lines 120-127, and `GetPfcThreshold`, lines 93-95) sums them in 32 bits
//! and subtracts them from the 128 MiB in 32 bits: on the long-haul ports
//! the headrooms exceed the buffer, so the pool a switch's PFC thresholds
//! are taken from wraps around 2^32 to a value that differs from switch to
//! switch, from 40 MB to 4 GB. [`pool_bytes`] is that arithmetic;
//! [`dci_pools`] applies it to every DCI switch of a topology, each with
//! its inter-DC ports and its spine ports.
//!
//! `lcmp sim --model packet --preset artifact` gives each DCI switch its
//! own pool (`DciPool::Artifact`, the fabric applies [`pool_bytes`] to the
//! switch's ports); the fluid model keeps DC1's for every DCI switch
//! (`lcmp_sim::args::ARTIFACT_DCI_BUFFER_BYTES`); the transit DCs' own
//! pools are smaller or larger (the table in [`dci_pools`]' tests).

use lcmp_tables::Topology;

use super::config::PacketConfig;

/// The artifact's `DCI_BUFFER_SIZE`, MiB (both configurations, line 80).
pub const ARTIFACT_DCI_BUFFER_MIB: u32 = 128;

/// The pool left of a switch buffer of `buffer_bytes` after the
/// artifact's headroom and reserve of every port `(rate bit/s, one-way
/// delay ns)`, in the artifact's 64- and 32-bit arithmetic.
#[must_use]
pub fn pool_bytes(buffer_bytes: u32, reserve_bytes: u32, ports: &[(u64, u64)]) -> u32 {
    let mut headroom = 0u32;
    let mut reserve = 0u32;
    for &(rate_bps, delay_ns) in ports {
        // `uint32_t headroom = rate * delay / 8 / 1000000000 * 3;`
        let h = (rate_bps.wrapping_mul(delay_ns) / 8 / 1_000_000_000).wrapping_mul(3);
        headroom = headroom.wrapping_add(h as u32);
        reserve = reserve.wrapping_add(reserve_bytes);
    }
    buffer_bytes.wrapping_sub(headroom).wrapping_sub(reserve)
}

/// Every DCI switch's pool, `(DC id, bytes)` in the topology's DC order:
/// its inter-DC ports and `pc.spines` spine ports (`pc.spine_dci_bps`,
/// `pc.intra_delay_ps`), with a buffer of `buffer_mib` MiB.
#[must_use]
pub fn dci_pools(topo: &Topology, pc: &PacketConfig, buffer_mib: u32) -> Vec<(u16, u64)> {
    let buffer = buffer_mib.wrapping_mul(1 << 20);
    let reserve = u32::try_from(pc.reserve_bytes).unwrap_or(u32::MAX);
    topo.dcs
        .iter()
        .map(|dc| {
            let mut ports: Vec<(u64, u64)> = topo
                .links
                .iter()
                .filter(|l| l.a == dc.id || l.b == dc.id)
                .map(|l| (l.capacity_bps, l.delay_us.saturating_mul(1_000)))
                .collect();
            let spine = (pc.spine_dci_bps, pc.intra_delay_ps / 1_000);
            ports.extend(std::iter::repeat_n(spine, usize::from(pc.spines)));
            (dc.id, u64::from(pool_bytes(buffer, reserve, &ports)))
        })
        .collect()
}

#[cfg(test)]
mod test {
    use super::*;

    fn pools(name: &str) -> Vec<u64> {
        let topo = Topology::embedded(name).unwrap();
        dci_pools(&topo, &PacketConfig::DEFAULT, ARTIFACT_DCI_BUFFER_MIB)
            .into_iter()
            .map(|(_, b)| b)
            .collect()
    }

    #[test]
    #[cfg(feature = "cli")]
    fn testbed8s_dc1_pool_is_the_artifact_presets() {
        let p = pools("testbed8");
        assert_eq!(p[0], crate::args::ARTIFACT_DCI_BUFFER_BYTES);
        assert_eq!(p[7], crate::args::ARTIFACT_DCI_BUFFER_BYTES);
    }

    /// The same arithmetic run (in Python) on the artifact's own topology
    /// files, `topology_LeafSpine_MultiDC8.txt` (DCI nodes 176-183) and
    /// `topology_LeafSpine_MultiDC13.txt` (DCI nodes 286-298), DC1 first:
    /// the embedded topologies give the artifact's numbers.
    #[test]
    fn every_dci_pool_is_the_one_the_artifacts_topology_files_give() {
        assert_eq!(
            pools("testbed8"),
            [
                1_588_219_905,
                678_868_640,
                3_188_919_346,
                3_678_868_640,
                1_223_835_936,
                40_151_344,
                3_491_368_640,
                1_588_219_905
            ]
        );
        assert_eq!(
            pools("bso13"),
            [
                58_905_440,
                88_897_248,
                3_161_352_256,
                88_897_248,
                3_476_360_448,
                4_151_360_448,
                2_726_360_448,
                103_901_344,
                4_053_868_640,
                58_901_344,
                2_928_864_544,
                3_738_856_352,
                58_905_440
            ]
        );
    }

    #[test]
    fn a_short_port_takes_its_headroom_and_reserve_without_wrapping() {
        // 100 Gbps, 1 µs: 100e9 · 1000 / 8 / 1e9 · 3 = 37 500 B.
        let pool = pool_bytes(1 << 20, 4096, &[(100_000_000_000, 1_000)]);
        assert_eq!(pool, (1 << 20) - 37_500 - 4096);
        // 200 Gbps × 250 ms overflows 64 bits before the division.
        let wrapped = (200_000_000_000u64).wrapping_mul(250_000_000) / 8 / 1_000_000_000 * 3;
        assert_eq!(
            pool_bytes(0, 0, &[(200_000_000_000, 250_000_000)]),
            0u32.wrapping_sub(wrapped as u32)
        );
    }
}
