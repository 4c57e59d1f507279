//! # lcmp-firmware
//!
//! LCMP's decision core as a bare-metal Cortex-M4F image, run in QEMU
//! (`mps2-an386`). It stands for the management or packet core of a
//! SmartNIC: it owns one statically allocated decider, and for each
//! embedded scenario it installs the scenario's table blob, then works like
//! a datapath loop over the scenario's trace (packet descriptors, queue
//! samples, link events) and reports the decision digest and the counters.
//! It exits through semihosting with success only if every digest equals
//! the one the host computed at build time with the same replay driver
//! (`lcmp_tables::replay`).
//!
//! With the `log` feature (default) the semihosting output carries only
//! `defmt` frames, decoded on the host with `defmt-print`. The
//! `panic-never` build has no output at all: its exit status is its report.
//!
//! It installs only signed table blobs (`lcmp_tables::blob::signed`): one
//! trusted controller key, and the rollback rule (a blob's generation must
//! be newer than the installed one). The floor lives in a model of flash
//! (`flash`): each install verifies the blob, persists its generation
//! under its key id, and only then installs. After the scenarios it
//! offers four blobs that must be refused, and checks each is, with its
//! own error and nothing changed: a payload changed after signing, a blob
//! signed by an untrusted key, another switch's blob, and the first
//! scenario's blob replayed. Then it simulates a reset (every piece of
//! state rebuilt but the flash) and checks that the floor survived: the
//! blob it installed before the reset is refused, a write cut short by a
//! power loss leaves the previous floor, and a newer blob installs.
//!
//! The flow cache's SipHash key comes from `board_flow_key`, where a real
//! board reads its random source; QEMU's mps2-an386 models none, so the
//! test image uses the test's fixed key, the all-zero key, with which its
//! digests stay those of `lcmp replay` and the C examples.
//!
//! See docs/firmware.md for building, running, sizes and the panic proof.
#![no_std]
#![no_main]

// This mod MUST go first, so that the others see its macros.
mod flash;
mod fmt;

use cortex_m_rt::entry;
use cortex_m_semihosting::debug::{self, EXIT_FAILURE, EXIT_SUCCESS};
#[cfg(feature = "log")]
use defmt_semihosting as _;
use flash::Flash;
use lcmp_decide::{DeciderConfig, FlowCacheKey, HashAlgorithm, Overflow, Scheme, Tables};
use lcmp_tables::blob::signed::{
    decode_verified_valid, Device, KeyId, Scope, TrustedKey, TrustedKeys, Unsigned,
};
use lcmp_tables::replay::{replay, ReplayDecider, TraceReader};
use lcmp_tables::{SignatureError, TablesError};
use static_cell::{ConstStaticCell, StaticCell};

#[cfg(feature = "panic-never")]
use panic_never as _;

/// What the host computed for a scenario at build time.
struct Expected {
    /// The decision digest (CRC-64/XZ, `lcmp_tables::replay::Digest`).
    digest: u64,
    /// Packet decisions.
    decisions: u64,
    /// Packets counted by the decider.
    packets: u64,
    /// Decisions that were flow-cache hits.
    hits: u64,
    /// Decisions routed unpinned (flow cache full).
    unpinned: u64,
    /// Decisions without a route.
    no_route: u64,
}

/// One embedded scenario: a table blob, an encoded trace, the expectation.
struct Scenario {
    /// The trace's file stem under `traces/`.
    name: &'static str,
    /// The device's scope in this scenario (its topology and switch; the
    /// image is reconfigured as that switch), as `lcmp tables scope`
    /// prints it.
    scope: [u8; 20],
    /// The signed table blob (`lcmp_tables::blob::signed`).
    tables: &'static [u8],
    /// The encoded trace (`lcmp_tables::replay::encode_trace`).
    trace: &'static [u8],
    /// The host's results.
    expected: Expected,
}

include!(concat!(env!("OUT_DIR"), "/scenarios.rs"));

/// The decider settings `lcmp replay` uses by default.
const CONFIG: DeciderConfig = DeciderConfig::DEFAULT
    .with_scheme(Scheme::Lcmp)
    .with_seed(0)
    .with_hash(HashAlgorithm::Murmur3)
    .with_overflow(Overflow::Refuse);

/// The decider (the shape the replay digest is defined for: 64 ports, 1024
/// flow slots), handed out once as `&'static mut`; no heap, no `static
/// mut`. A decider without tables is all zero bytes, so its `const`
/// initial value lands in `.bss` (no flash, no start-up copy through the
/// stack; the size report checks `.data` stays empty).
static DECIDER: ConstStaticCell<ReplayDecider> = ConstStaticCell::new(ReplayDecider::new(CONFIG));

/// Where table blobs are decoded before they are installed (`.bss`, about
/// 19 KiB): decoding into it rather than into a value on the stack keeps
/// every stack frame of the image under 4 KiB (docs/firmware.md, "Stack").
static SCRATCH: StaticCell<Tables> = StaticCell::new();

/// The flash page that holds the rollback floor (`.bss`: this model's
/// erased state is zero bytes). The only state a simulated reset keeps.
static FLASH: ConstStaticCell<Flash> = ConstStaticCell::new(Flash::ERASED);

#[entry]
fn main() -> ! {
    let mut ok = false;
    if let (Some(decider), Some(scratch), Some(flash), Some(keys)) =
        (take_decider(), take_scratch(), FLASH.try_take(), keys())
    {
        ok = true;
        for scenario in &SCENARIOS {
            // Evaluate every scenario, even after a failure.
            ok &= run(decider, scratch, &keys, flash, scenario);
        }
        ok &= rejections(decider, scratch, &keys, flash);
        ok &= after_reset(decider, scratch, flash);
    }
    if ok {
        fmt::info!("all scenarios match the host");
    }
    debug::exit(if ok { EXIT_SUCCESS } else { EXIT_FAILURE });
    #[allow(clippy::empty_loop)]
    loop {}
}

// The set-up steps below are kept out of line (`inline(never)`), so that
// each has its own stack frame and the test part can name them when one
// grows (docs/firmware.md, "Stack"; every frame must stay under 4 KiB).

/// Takes the static decider, once.
#[inline(never)]
fn take_decider() -> Option<&'static mut ReplayDecider> {
    DECIDER.try_take()
}

/// Initialises the static blob scratch in place, once.
#[inline(never)]
fn take_scratch() -> Option<&'static mut Tables> {
    SCRATCH.try_init_with(Tables::new)
}

/// The trusted keys: the test controller's public key (build.rs).
#[inline(never)]
fn keys() -> Option<TrustedKeys> {
    match TrustedKey::new(TRUSTED_KEY) {
        Ok(k) => Some(TrustedKeys::one(k)),
        Err(_) => {
            fmt::error!("the trusted key is not a valid Ed25519 key");
            None
        }
    }
}

/// A short name of an install error, for the log.
fn error_name(e: &TablesError) -> &'static str {
    match e {
        TablesError::Signature(SignatureError::BadSignature) => "bad signature",
        TablesError::Signature(SignatureError::UnknownKey(_)) => "unknown key",
        TablesError::Signature(SignatureError::Rollback { .. }) => "rollback",
        TablesError::Signature(SignatureError::Unsigned) => "unsigned",
        TablesError::Signature(SignatureError::WrongScope { .. }) => "wrong scope",
        TablesError::Signature(SignatureError::Expired { .. }) => "expired",
        TablesError::Signature(_) => "signature error",
        TablesError::Core(_) => "tables rejected by the core",
        _ => "malformed blob",
    }
}

/// The flow cache's key, drawn once per start (never from a blob, never
/// logged): the hook where a board reads its random source (a TRNG
/// peripheral) into `FlowCacheKey::from_bytes`. QEMU's mps2-an386 models
/// none, so this test image returns the test's fixed key, the all-zero
/// one: the digests it must reproduce are those of `lcmp replay` and the
/// C examples, which use it too (a keyed cache places entries elsewhere,
/// and a trace that fills a bucket then refuses other flows). A product
/// image must not ship a fixed key (docs/firmware.md, "Flow key").
fn board_flow_key() -> FlowCacheKey {
    FlowCacheKey::ZERO
}

/// Resets the decider, as a firmware would on reconfiguration.
#[inline(never)]
fn reset(decider: &mut ReplayDecider) {
    decider.reset(CONFIG.with_flow_key(board_flow_key()));
}

/// Verifies a signed table blob against the floor in `flash` and decodes
/// it into `scratch`, persists its generation under its key id, and only
/// then installs it (docs/firmware.md, "What firmware persists"). On any
/// error before the persist nothing changes; a reset between the persist
/// and the install costs only this blob (it is refused from then on).
#[inline(never)]
fn install(
    decider: &mut ReplayDecider,
    scratch: &mut Tables,
    keys: &TrustedKeys,
    scope: &[u8; 20],
    flash: &mut Flash,
    blob: &[u8],
) -> Result<u64, &'static str> {
    // No clock on the board: a signed expiry is not checked
    // (docs/tables.md, "Threat model").
    let device = Device {
        scope: Scope::from_bytes(scope).map_err(|e| error_name(&e))?,
        now: None,
    };
    let floors = flash.load();
    // Validated once, here: the install takes the proof and does not
    // validate again.
    let (v, valid) = decode_verified_valid(
        blob,
        keys,
        &device,
        floors.floor(keys),
        Unsigned::Reject,
        scratch,
    )
    .map_err(|e| error_name(&e))?;
    // Signed blobs only, so there is a key id.
    let key = v.key_id.ok_or("unsigned")?;
    if !flash.store(&floors.with(key, v.generation, keys), None) {
        return Err("flash write failed");
    }
    decider
        .install_valid(valid)
        .map_err(|e| error_name(&e.into()))?;
    Ok(v.generation)
}

/// Offers the blobs that must be refused, after the scenarios: each must
/// fail with its own error and leave the decider (its counters) and the
/// floor in flash as they were.
#[inline(never)]
fn rejections(
    decider: &mut ReplayDecider,
    scratch: &mut Tables,
    keys: &TrustedKeys,
    flash: &mut Flash,
) -> bool {
    let mut ok = true;
    // As the last scenario's device, except the replay of the first
    // scenario's blob, which runs as the first's (so that only its
    // generation can refuse it).
    let [first, .., last] = &SCENARIOS;
    let cases: [(&str, &[u8], &[u8; 20], &str); 4] = [
        ("tampered payload", TAMPERED, &last.scope, "bad signature"),
        ("untrusted key", OTHER_KEY, &last.scope, "unknown key"),
        (
            "another switch's blob",
            WRONG_SCOPE,
            &last.scope,
            "wrong scope",
        ),
        (
            "replayed older generation",
            first.tables,
            &first.scope,
            "rollback",
        ),
    ];
    for (what, blob, scope, want) in cases {
        let (before, floors) = (*decider.counters(), flash.load());
        let got = match install(decider, scratch, keys, scope, flash, blob) {
            Ok(_) => "installed",
            Err(e) => e,
        };
        let unchanged = *decider.counters() == before && flash.load() == floors;
        if got == want && unchanged {
            fmt::info!("rejected {=str}: {=str}", what, got);
        } else {
            fmt::error!("{=str}: {=str}, want {=str}", what, got, want);
            ok = false;
        }
    }
    ok
}

/// A simulated reset after the rejections: every piece of state but the
/// flash is rebuilt (the decider as at power-on, the trusted keys, the
/// floor read back from flash). The floor must have survived: the last
/// scenario's blob, installed before the reset, is refused; a write of a
/// new floor cut short by a power loss leaves the floor as it was; and a
/// newer blob installs (its generation becomes the floor).
#[inline(never)]
fn after_reset(decider: &mut ReplayDecider, scratch: &mut Tables, flash: &mut Flash) -> bool {
    reset(decider);
    let Some(keys) = keys() else {
        return false;
    };
    let floors = flash.load();
    let floor = floors.floor(&keys);
    fmt::info!("after a reset: floor {=u64} read from flash", floor);
    let [.., last] = &SCENARIOS;
    let mut ok = floor == SCENARIOS.len() as u64;
    match install(decider, scratch, &keys, &last.scope, flash, last.tables) {
        Err("rollback") if decider.counters().packets == 0 && flash.load() == floors => {
            fmt::info!("after a reset: refused the blob installed before: rollback")
        }
        Err(e) => {
            fmt::error!("after a reset: the blob installed before: {=str}", e);
            ok = false;
        }
        Ok(_) => {
            fmt::error!("after a reset: the blob installed before was installed again");
            ok = false;
        }
    }
    // A power loss one byte before the commit word is complete.
    let key = KeyId::of(&TRUSTED_KEY);
    let torn = flash.store(
        &floors.with(key, floor.wrapping_add(1), &keys),
        Some(flash::RECORD - 1),
    );
    if !torn && flash.load() == floors {
        fmt::info!(
            "after a torn flash write: floor {=u64} kept",
            flash.load().floor(&keys)
        );
    } else {
        fmt::error!("a torn flash write changed the floor");
        ok = false;
    }
    match install(decider, scratch, &keys, &last.scope, flash, NEWER) {
        Ok(g) if g == floor.wrapping_add(1) && flash.load().floor(&keys) == g => {
            fmt::info!("after a reset: installed the newer generation {=u64}", g)
        }
        Ok(g) => {
            fmt::error!(
                "after a reset: installed generation {=u64}, floor not moved",
                g
            );
            ok = false;
        }
        Err(e) => {
            fmt::error!("after a reset: the newer blob: {=str}", e);
            ok = false;
        }
    }
    ok
}

/// Runs one scenario on a freshly reset decider; `true` if it reproduces
/// the host's digest and counts.
fn run(
    decider: &mut ReplayDecider,
    scratch: &mut Tables,
    keys: &TrustedKeys,
    flash: &mut Flash,
    s: &Scenario,
) -> bool {
    reset(decider);
    let generation = match install(decider, scratch, keys, &s.scope, flash, s.tables) {
        Ok(g) => g,
        Err(e) => {
            fmt::error!("{=str}: signed blob rejected: {=str}", s.name, e);
            return false;
        }
    };
    let reader = match TraceReader::new(s.trace) {
        Ok(r) => r,
        Err(_) => {
            fmt::error!("{=str}: trace header rejected", s.name);
            return false;
        }
    };
    let (mut hits, mut unpinned, mut no_route) = (0u64, 0u64, 0u64);
    let summary = replay(decider, reader, |r| match r.decision {
        lcmp_decide::Decision::Hit(_) => hits = hits.wrapping_add(1),
        lcmp_decide::Decision::Unpinned(_) => unpinned = unpinned.wrapping_add(1),
        lcmp_decide::Decision::NoRoute(_) => no_route = no_route.wrapping_add(1),
        lcmp_decide::Decision::New { .. } => {}
    });
    let summary = match summary {
        Ok(s) => s,
        Err(_) => {
            fmt::error!("{=str}: trace event rejected", s.name);
            return false;
        }
    };
    let c = decider.counters();
    // The two lines of `lcmp replay --quiet`, prefixed with the scenario.
    fmt::info!(
        "{=str}: generation={=u64} digest {=u64:#018x}",
        s.name,
        generation,
        summary.digest
    );
    fmt::info!(
        "{=str}: events={=u32} decisions={=u64} packets={=u64} hits={=u64} new_flows={=u64} failovers={=u64} unpinned={=u64} no_route={=u64} min_cost_fallbacks={=u64} ecmp_fallbacks={=u64} samples={=u64}",
        s.name,
        summary.events,
        summary.decisions,
        c.packets,
        c.hits,
        c.new_flows,
        c.failovers,
        c.unpinned,
        c.no_route,
        c.min_cost_fallbacks,
        c.ecmp_fallbacks,
        c.samples
    );
    let e = &s.expected;
    let ok = summary.digest == e.digest
        && summary.decisions == e.decisions
        && c.packets == e.packets
        && hits == e.hits
        && unpinned == e.unpinned
        && no_route == e.no_route;
    if !ok {
        fmt::error!(
            "{=str}: differs from the host (digest {=u64:#018x})",
            s.name,
            e.digest
        );
    }
    ok
}

/// Without `panic-never`: log and exit with failure, so a panic is a failed
/// run and never a hang.
#[cfg(not(feature = "panic-never"))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    fmt::error!("panic");
    debug::exit(EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}
