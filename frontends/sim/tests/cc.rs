//! `--cc`: the packet model's congestion controls from the command line.

use lcmp_sim::cli::{experiment, parse_sim_args, to_args, SimArgs};
use lcmp_sim::packet::cc::CcKind;
use lcmp_sim::SimError;

fn args(a: &[&str]) -> SimArgs {
    parse_sim_args(a.iter().copied()).expect("parses")
}

fn config_error(a: &[&str]) -> String {
    match experiment(&args(a)) {
        Err(SimError::Config(m)) => m,
        Err(e) => panic!("{a:?}: not a configuration error: {e}"),
        Ok(_) => panic!("{a:?}: accepted"),
    }
}

#[test]
fn every_control_sets_the_packet_models_senders_and_headers() {
    let base = ["--model", "packet", "--preset", "artifact", "--cc"];
    // (control, data header bytes, ACK bytes): the artifact's INT header
    // (64 hops x 8 B + 2 under HPCC, an 8-byte timestamp under TIMELY).
    for (name, kind, header, ack) in [
        ("dcqcn", CcKind::Dcqcn, 48, 60),
        ("hpcc", CcKind::Hpcc, 48 + 514, 14 + 20 + 12 + 514),
        ("timely", CcKind::Timely, 56, 60),
        ("dctcp", CcKind::Dctcp, 48, 60),
    ] {
        let a: Vec<&str> = base.iter().copied().chain([name]).collect();
        let e = experiment(&args(&a)).expect("valid");
        let pc = &e.engine.packet;
        assert_eq!(pc.cc, kind, "{name}");
        assert_eq!(pc.dcqcn, kind == CcKind::Dcqcn, "{name}");
        assert_eq!((pc.header_bytes, pc.ack_bytes), (header, ack), "{name}");
        assert_eq!(pc.ideal_header_bytes(), 48, "{name}");
        // The flag survives the job round trip.
        let again = args(
            &to_args(&args(&a))
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        assert_eq!(again.cc.as_deref(), Some(name));
    }
    // No --cc: DCQCN, the same configuration as --cc dcqcn.
    let none = experiment(&args(&base[..4])).expect("valid");
    let dcqcn = experiment(&args(&[&base[..], &["dcqcn"]].concat())).expect("valid");
    assert_eq!(none.engine.packet, dcqcn.engine.packet);
}

#[test]
fn bad_controls_and_the_fluid_model_are_one_line_errors() {
    let m = config_error(&["--model", "packet", "--cc", "cubic"]);
    assert!(
        m.contains("cubic") && m.contains("dcqcn, hpcc, timely or dctcp") && !m.contains('\n'),
        "{m}"
    );
    for cc in ["hpcc", "timely", "dctcp"] {
        let m = config_error(&["--cc", cc]);
        assert!(m.contains("packet") && !m.contains('\n'), "{m}");
        let m = config_error(&["--model", "packet", "--no-cc", "--cc", cc]);
        assert!(m.contains("--no-cc"), "{m}");
    }
    // The fluid model's own control is DCQCN-like: `--cc dcqcn` is fine.
    assert!(experiment(&args(&["--cc", "dcqcn"])).is_ok());
}
