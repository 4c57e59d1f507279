//! The CSV trace of `lcmp replay` (format in the module docs of `replay`
//! and in `docs/tables.md`).

use alloc::vec::Vec;
use core::net::IpAddr;

use lcmp_decide::PortId;

use super::{flow_key, TraceEvent, MAX_TRACE_EVENTS};
use crate::error::{Count, TablesError, TraceError};

/// Parses a CSV trace (see the module docs). `dst_dc` names are resolved
/// with `topology` when given. Times must not decrease.
///
/// ```
/// # use lcmp_tables::replay::{parse_csv, TraceEvent};
/// let events = parse_csv("# t,kind,...\n0,sample,2,1000\n5,link,2,down\n", None).unwrap();
/// assert_eq!(events.len(), 2);
/// assert!(matches!(events[1], TraceEvent::Link { up: false, .. }));
/// ```
pub fn parse_csv(
    text: &str,
    topology: Option<&crate::Topology>,
) -> Result<Vec<TraceEvent>, TablesError> {
    use crate::error::TraceFault as F;
    let mut out = Vec::new();
    let mut last = 0u64;
    for (i, raw) in text.lines().enumerate() {
        let line = u32::try_from(i.saturating_add(1)).unwrap_or(u32::MAX);
        let err = |fault| TablesError::Trace(TraceError::Csv { line, fault });
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if out.len() >= MAX_TRACE_EVENTS as usize {
            return Err(TablesError::TooMany {
                what: Count::Events,
                count: u64::from(line),
            });
        }
        let fields: Vec<&str> = trimmed.split(',').map(str::trim).take(9).collect();
        if fields.len() > 8 {
            return Err(err(F::FieldCount));
        }
        let field = |n: usize| fields.get(n).copied().unwrap_or("");
        let t_us: u64 = field(0).parse().map_err(|_| err(F::Time))?;
        if t_us < last {
            return Err(err(F::TimeWentBackwards));
        }
        last = t_us;
        let port = |s: &str| -> Result<PortId, TablesError> {
            s.parse::<u8>().map(PortId).map_err(|_| err(F::Number))
        };
        let event = match (field(1), fields.len()) {
            ("packet", 8) => {
                let src: IpAddr = field(2).parse().map_err(|_| err(F::Address))?;
                let dst: IpAddr = field(3).parse().map_err(|_| err(F::Address))?;
                let sport: u16 = field(4).parse().map_err(|_| err(F::Number))?;
                let dport: u16 = field(5).parse().map_err(|_| err(F::Number))?;
                let proto: u8 = field(6).parse().map_err(|_| err(F::Number))?;
                let flow = flow_key(src, dst, sport, dport, proto).ok_or(err(F::Address))?;
                let dst_dc = resolve_dc(field(7), topology).ok_or(err(F::Dc))?;
                TraceEvent::Packet { t_us, flow, dst_dc }
            }
            ("sample", 4) => {
                let queue_bytes = field(3).parse().map_err(|_| err(F::Number))?;
                TraceEvent::Sample {
                    t_us,
                    port: port(field(2))?,
                    queue_bytes,
                }
            }
            ("link", 4) => {
                let up = match field(3) {
                    "up" => true,
                    "down" => false,
                    _ => return Err(err(F::LinkState)),
                };
                TraceEvent::Link {
                    t_us,
                    port: port(field(2))?,
                    up,
                }
            }
            ("packet" | "sample" | "link", _) => return Err(err(F::FieldCount)),
            _ => return Err(err(F::Kind)),
        };
        out.push(event);
    }
    Ok(out)
}

fn resolve_dc(text: &str, topology: Option<&crate::Topology>) -> Option<u16> {
    match topology {
        Some(t) => t.dc_id(text),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::error::TraceFault;
    use crate::replay::fixtures::{arbitrary_events, sample_events};
    use core::net::Ipv4Addr;

    #[test]
    fn csv_parse_and_errors() {
        let text = "# trace\n0,sample,2,4000000000\n10,packet,10.0.0.1,10.0.7.1,1001,4791,17,8\n\n\
                    20,link,4,down\n4294967302,packet,10.0.0.1,10.0.7.1,1002,4791,17,3\n";
        assert_eq!(parse_csv(text, None), Ok(sample_events()));
        let topo = crate::Topology::embedded("testbed8").expect("embedded");
        let named = parse_csv("5,packet,fd00::1,fd00::2,1,2,17,DC8", Some(&topo)).expect("parse");
        assert!(matches!(named[0], TraceEvent::Packet { dst_dc: 8, .. }));
        let cases = [
            ("x,sample,1,1", TraceFault::Time),
            ("1,teleport,1,1", TraceFault::Kind),
            ("1,sample,1", TraceFault::FieldCount),
            ("1,sample,1,1,1,1,1,1,1,1", TraceFault::FieldCount),
            ("1,sample,256,1", TraceFault::Number),
            ("1,link,1,sideways", TraceFault::LinkState),
            ("1,packet,10.0.0.1,fd00::1,1,2,17,8", TraceFault::Address),
            ("1,packet,10.0.0.1,10.0.0.999,1,2,17,8", TraceFault::Address),
            ("1,packet,10.0.0.1,10.0.0.2,1,2,17,DC8", TraceFault::Dc),
        ];
        for (line, fault) in cases {
            assert_eq!(
                parse_csv(&alloc::format!("# c\n{line}"), None),
                Err(TablesError::Trace(TraceError::Csv { line: 2, fault })),
                "{line}"
            );
        }
        assert_eq!(
            parse_csv("5,link,1,up\n4,link,1,up", None),
            Err(TablesError::Trace(TraceError::Csv {
                line: 2,
                fault: TraceFault::TimeWentBackwards
            }))
        );
    }

    quickcheck::quickcheck! {
        fn csv_parser_never_panics(text: alloc::string::String) -> bool {
            let _ = parse_csv(&text, None);
            true
        }

        fn csv_lines_never_panic(fields: Vec<(u8, alloc::string::String)>) -> bool {
            // Well-formed prefixes with arbitrary tails reach every branch.
            let kinds = ["packet", "sample", "link", "pkt"];
            let text: alloc::string::String = fields
                .iter()
                .map(|(k, rest)| alloc::format!("{k},{},{rest}\n", kinds[usize::from(*k) % 4]))
                .collect();
            let _ = parse_csv(&text, None);
            true
        }

        // The panic checks above, with results: what the CSV form writes
        // reads back as the same events, and a damaged line is the
        // documented error.

        fn csv_round_trips(raw: Vec<(u32, u8, u128, u128, u64)>) -> bool {
            let events = arbitrary_events(&raw);
            let text: alloc::string::String = events.iter().map(csv_line).collect();
            parse_csv(&text, None) == Ok(events)
        }

        fn csv_faults_name_the_line_and_kind(raw: Vec<(u32, u8, u128, u128, u64)>, at: usize, how: u8) -> bool {
            let events = arbitrary_events(&raw);
            if events.is_empty() {
                return true;
            }
            let at = at % events.len();
            let mut lines: Vec<alloc::string::String> = events.iter().map(csv_line).collect();
            let earlier = at > 0 && events[at - 1].t_us() > 0;
            let line = &mut lines[at];
            let mut parts = line.splitn(3, ',');
            let (time, kind, tail) = (
                alloc::string::String::from(parts.next().unwrap_or_default()),
                alloc::string::String::from(parts.next().unwrap_or_default()),
                alloc::string::String::from(parts.next().unwrap_or_default()),
            );
            let fault = match how % 4 {
                0 => {
                    *line = alloc::format!("{time},teleport,{tail}");
                    TraceFault::Kind
                }
                1 => {
                    *line = alloc::format!("t{time},{kind},{tail}");
                    TraceFault::Time
                }
                2 => {
                    *line = alloc::format!("{},extra\n", line.trim_end());
                    TraceFault::FieldCount
                }
                _ => {
                    // Time 0 after a later event (nothing is earlier than 0).
                    if !earlier {
                        return true;
                    }
                    *line = alloc::format!("0,{kind},{tail}");
                    TraceFault::TimeWentBackwards
                }
            };
            let text: alloc::string::String = lines.concat();
            let line = u32::try_from(at + 1).unwrap_or(u32::MAX);
            parse_csv(&text, None) == Err(TablesError::Trace(TraceError::Csv { line, fault }))
        }
    }

    /// One CSV line, written from the module docs' format (not by the
    /// parser's code): addresses in their standard text form.
    fn csv_line(e: &TraceEvent) -> alloc::string::String {
        match *e {
            TraceEvent::Packet { t_us, flow, dst_dc } => {
                let (src, dst): (IpAddr, IpAddr) = match flow.addrs {
                    lcmp_decide::Addresses::V4 { src, dst } => (
                        Ipv4Addr::from_bits(src).into(),
                        Ipv4Addr::from_bits(dst).into(),
                    ),
                    lcmp_decide::Addresses::V6 { src, dst } => (
                        core::net::Ipv6Addr::from_bits(src).into(),
                        core::net::Ipv6Addr::from_bits(dst).into(),
                    ),
                };
                alloc::format!(
                    "{t_us},packet,{src},{dst},{},{},{},{dst_dc}\n",
                    flow.sport,
                    flow.dport,
                    flow.proto
                )
            }
            TraceEvent::Sample {
                t_us,
                port,
                queue_bytes,
            } => alloc::format!("{t_us},sample,{},{queue_bytes}\n", port.0),
            TraceEvent::Link { t_us, port, up } => {
                alloc::format!(
                    "{t_us},link,{},{}\n",
                    port.0,
                    if up { "up" } else { "down" }
                )
            }
        }
    }
}
