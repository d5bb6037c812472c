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
