//! Generates the gRPC code with a protoc binary shipped inside the
//! `protoc-bin-vendored` crate, so a fresh clone builds with cargo alone.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);
    tonic_prost_build::configure().compile_with_config(
        config,
        &["orchard/v1/orchard.proto"],
        &["."],
    )?;
    println!("cargo:rerun-if-changed=orchard/v1/orchard.proto");
    Ok(())
}
