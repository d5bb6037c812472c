//! Generates the gRPC code with a protoc binary shipped inside the
//! `protoc-bin-vendored` crate, so a fresh clone builds with cargo alone.
//! Also writes the protocol's file descriptor set, which the coordinator's
//! server reflection hands to generic clients (grpcurl and the like).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);
    tonic_prost_build::configure()
        .file_descriptor_set_path(out_dir.join("orchard_v1_descriptor.bin"))
        .compile_with_config(config, &["orchard/v1/orchard.proto"], &["."])?;
    println!("cargo:rerun-if-changed=orchard/v1/orchard.proto");
    Ok(())
}
