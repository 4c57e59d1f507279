//! Host cost of installing a signed blob: the signature check alone
//! (`verify_envelope`) and the whole decode-and-verify path
//! (`decode_verified_into`), beside the unsigned decode, for testbed8's DC1
//! (a 386-byte signed blob). Figures in docs/firmware.md ("Signed blobs").

use criterion::{criterion_group, criterion_main, Criterion};
use lcmp_decide::Tables;
use lcmp_tables::blob::signed::{
    decode_verified_into, public_key, sign_blob_vec, verify_envelope, Claims, Device, TrustedKey,
    TrustedKeys, Unsigned,
};
use lcmp_tables::blob::{decode_blob_into, encode_blob_vec};
use lcmp_tables::{build_tables, BuildOptions, Topology};

fn bench(c: &mut Criterion) {
    let topo = Topology::embedded("testbed8").expect("embedded");
    let tables = build_tables(&topo, 1, &BuildOptions::default()).expect("build");
    let inner = encode_blob_vec(&tables, 2).expect("encode");
    let seed = [0x42; 32];
    let claims = Claims {
        scope: topo.scope(1),
        not_after: None,
    };
    let device = Device {
        scope: claims.scope,
        now: None,
    };
    let signed = sign_blob_vec(&inner, &seed, &claims).expect("sign");
    let keys = TrustedKeys::one(TrustedKey::new(public_key(&seed)).expect("key"));
    let mut scratch = Box::new(Tables::new());
    c.bench_function("verify_envelope (signature only)", |b| {
        b.iter(|| verify_envelope(std::hint::black_box(&signed), &keys).is_ok())
    });
    c.bench_function("decode_verified_into (verify + decode + validate)", |b| {
        b.iter(|| {
            decode_verified_into(
                std::hint::black_box(&signed),
                &keys,
                &device,
                1,
                Unsigned::Reject,
                &mut scratch,
            )
            .is_ok()
        })
    });
    c.bench_function("decode_blob_into (unsigned, for comparison)", |b| {
        b.iter(|| decode_blob_into(std::hint::black_box(&inner), &mut scratch).is_ok())
    });
    let pk = public_key(&seed);
    c.bench_function("TrustedKey::new (key check, once per boot)", |b| {
        b.iter(|| TrustedKey::new(std::hint::black_box(pk)).is_ok())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
