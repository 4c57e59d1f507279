//! The replay digest's `extern "C"` functions: the same CRC-64/XZ over
//! packet decisions that `lcmp replay` and the firmware print
//! (`lcmp_tables::replay`), so a C datapath can prove it decides alike.

use ::lcmp_tables::replay::{DecisionRecord, Digest};
use lcmp_decide::GroupId;

use crate::codes::LCMP_OK;
use crate::convert::{decision_from_c, flow_from_c};
use crate::types::{lcmp_decision, lcmp_digest, lcmp_flow, DigestState, DIGEST_MAGIC};

/// Starts an empty digest in `*out`.
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_digest_init(out: *mut lcmp_digest) -> i32 {
    let state = DigestState {
        magic: DIGEST_MAGIC,
        digest: Digest::new(),
    };
    try_boundary!(crate::boundary::digest_init(out, state));
    LCMP_OK
}

/// Adds one packet decision to a digest: `index` is the packet's 0-based
/// position among all events of the trace (packets, samples and link
/// events), `decision` what `lcmp_on_packet` wrote for it.
///
/// # Safety
/// `digest` must be null or initialised by `lcmp_digest_init` and not used
/// concurrently; `flow` and `decision` must be null or readable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_digest_update(
    digest: *mut lcmp_digest,
    index: u32,
    t_us: u64,
    flow: *const lcmp_flow,
    group: u16,
    decision: *const lcmp_decision,
) -> i32 {
    let state = digest_mut!(digest);
    let flow = match flow_from_c(input!(flow)) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let decision = match decision_from_c(input!(decision)) {
        Ok(d) => d,
        Err(e) => return e,
    };
    state.update(&DecisionRecord {
        index,
        t_us,
        flow,
        group: GroupId(group),
        decision,
    });
    LCMP_OK
}

/// Reads a digest's value and the number of decisions it covers (either
/// output may be null).
///
/// # Safety
/// `digest` must be null or initialised; the outputs null or writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_digest_value(
    digest: *mut lcmp_digest,
    value: *mut u64,
    decisions: *mut u64,
) -> i32 {
    let state = digest_mut!(digest);
    let (v, n) = (state.value(), state.decisions());
    if !value.is_null() {
        output!(value, v);
    }
    if !decisions.is_null() {
        output!(decisions, n);
    }
    LCMP_OK
}
