//! Who a client is, by the certificate it presented (mutual TLS): the
//! subject's common name, for people, and the SHA-256 fingerprint of the
//! whole certificate, which is what the coordinator compares. A worker
//! registers under its certificate, and every later request naming that
//! worker must arrive under the same one (see `service::workers`).
//!
//! Only certificates that the TLS layer has already verified against the
//! client CA reach here, so parsing them is not the first line of defence;
//! a certificate that does not parse still has a fingerprint.

use tonic::Request;

/// A client certificate, as the coordinator records and shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerIdentity {
    /// The subject's common name, or the whole subject when it has none
    /// (empty if the certificate does not parse).
    pub name: String,
    /// SHA-256 of the certificate's DER encoding, lowercase hex.
    pub sha256: String,
}

impl PeerIdentity {
    /// The identity of a DER-encoded certificate.
    pub fn of_der(der: &[u8]) -> PeerIdentity {
        let name = match x509_parser::parse_x509_certificate(der) {
            Ok((_, cert)) => {
                let subject = cert.subject();
                subject
                    .iter_common_name()
                    .next()
                    .and_then(|cn| cn.as_str().ok())
                    .map(str::to_string)
                    .unwrap_or_else(|| subject.to_string())
            }
            Err(_) => String::new(),
        };
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let sha256 = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        PeerIdentity { name, sha256 }
    }

    /// The identity of the certificate a request's client presented (the
    /// first of its chain, its own); `None` without mutual TLS.
    pub fn of_request<T>(req: &Request<T>) -> Option<PeerIdentity> {
        let certs = req.peer_certs()?;
        certs.first().map(|c| PeerIdentity::of_der(c.as_ref()))
    }

    /// "name (sha256:0123456789abcdef)": the name and enough of the
    /// fingerprint to tell two certificates of one name apart.
    pub fn label(&self) -> String {
        format!("{} (sha256:{})", self.name, &self.sha256[..16])
    }
}

/// Who a worker is beyond one connection and one coordinator process: the
/// key a job's exclusion of a worker found lying is stored under (see
/// `scheduler::replicas`), so that registering again, or a restart of the
/// coordinator, does not wash it clean.
///
/// * Under mutual TLS, the SHA-256 fingerprint of the client certificate
///   (`sha256:<64 hex>`), not its subject CN: the fingerprint names the one
///   certificate whose private key the TLS handshake proved the worker
///   holds, while a CN is whatever string the CA wrote, which need not be
///   unique (one CA may issue "worker" to many machines, and excluding by
///   it would shut honest machines out for another's lie). The cost: a
///   certificate re-issued to the liar is a new identity, which only the
///   CA's operator can grant (and should not).
/// * Without mutual TLS, the name the worker declared when it registered
///   (`name:<name>`, its `--name`, by default its host name). Anyone can
///   declare any name, so this exclusion only binds honest mistakes (a
///   broken machine that keeps its name); only mutual TLS makes it binding.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkerIdentity {
    /// What is compared and stored: `sha256:<hex>` or `name:<name>`.
    pub key: String,
    /// For people: the certificate's name and full fingerprint, or the
    /// declared name (the key itself).
    pub label: String,
}

impl WorkerIdentity {
    /// Whether `key` names a certificate (mutual TLS), which the handshake
    /// proved, rather than a declared name, which anyone may declare.
    pub fn is_certificate(key: &str) -> bool {
        key.starts_with("sha256:")
    }

    /// The identity of a worker that registered as `name` under the client
    /// certificate `peer` (mutual TLS), or under none.
    pub fn of(peer: Option<&PeerIdentity>, name: &str) -> WorkerIdentity {
        match peer {
            Some(p) => WorkerIdentity {
                key: format!("sha256:{}", p.sha256),
                label: format!("cert:{} sha256:{}", p.name, p.sha256),
            },
            None => {
                let key = format!("name:{name}");
                WorkerIdentity {
                    label: key.clone(),
                    key,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certificate(subject: &[(rcgen::DnType, &str)]) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        for (t, v) in subject {
            params.distinguished_name.push(t.clone(), *v);
        }
        let key = rcgen::KeyPair::generate().unwrap();
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn a_certificate_is_named_by_its_common_name_or_else_its_subject() {
        let der = certificate(&[
            (rcgen::DnType::OrganizationName, "lab"),
            (rcgen::DnType::CommonName, "worker-7"),
        ]);
        let id = PeerIdentity::of_der(&der);
        assert_eq!(id.name, "worker-7");
        assert_eq!(id, PeerIdentity::of_der(&der));
        assert!(id.label().starts_with("worker-7 (sha256:"));
        let id = PeerIdentity::of_der(&certificate(&[(rcgen::DnType::OrganizationName, "lab")]));
        assert_eq!(id.name, "O=lab");
    }

    #[test]
    fn a_certificate_that_does_not_parse_still_has_a_fingerprint() {
        let id = PeerIdentity::of_der(b"not a certificate");
        assert_eq!(id.name, "");
        assert_eq!(id.sha256.len(), 64);
        assert_ne!(id, PeerIdentity::of_der(b"not a certificate either"));
    }
}
