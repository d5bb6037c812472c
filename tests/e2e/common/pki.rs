//! A test certificate authority (rcgen): the coordinator's certificate for
//! localhost / 127.0.0.1, and client certificates for mutual TLS, written
//! as PEM files the processes read.

use std::path::PathBuf;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};

use super::process::TempDir;

/// A certificate and its key, as PEM files.
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl CertFiles {
    /// `--tls-client-cert CERT --tls-client-key KEY`.
    pub fn client_flags(&self) -> Vec<String> {
        vec![
            "--tls-client-cert".into(),
            self.cert.display().to_string(),
            "--tls-client-key".into(),
            self.key.display().to_string(),
        ]
    }
}

/// A CA named `name` whose certificate is `NAME-ca.pem` in the directory.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
    name: String,
    pub pem: PathBuf,
}

impl TestCa {
    pub fn new(dir: &TempDir, name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("orchard test CA {name}"));
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pem = dir.path(&format!("{name}-ca.pem"));
        std::fs::write(&pem, issuer.pem()).unwrap();
        TestCa {
            issuer,
            name: name.to_string(),
            pem,
        }
    }

    fn issue(&self, dir: &TempDir, file: &str, params: CertificateParams) -> CertFiles {
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let files = CertFiles {
            cert: dir.path(&format!("{}-{file}.pem", self.name)),
            key: dir.path(&format!("{}-{file}.key", self.name)),
        };
        std::fs::write(&files.cert, cert.pem()).unwrap();
        std::fs::write(&files.key, key.serialize_pem()).unwrap();
        files
    }

    /// A server certificate for localhost and 127.0.0.1.
    pub fn server(&self, dir: &TempDir) -> CertFiles {
        let params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        self.issue(dir, "server", params)
    }

    /// A client certificate whose subject's common name is `cn`.
    pub fn client(&self, dir: &TempDir, cn: &str) -> CertFiles {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.issue(dir, cn, params)
    }
}
