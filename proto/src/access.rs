//! Who may talk to a coordinator, and how: the bearer token and TLS, on both
//! ends of every connection.
//!
//! * A coordinator started with a token accepts only requests whose
//!   `authorization` metadata is `Bearer <token>` ([`TokenCheck`]); anything
//!   else is refused with `Unauthenticated` and logged.
//! * Workers and clients attach the token to every request ([`BearerToken`]).
//! * The token comes from a file (`--token-file`) or the `ORCHARD_TOKEN`
//!   environment variable, never from a command-line argument, where any
//!   user of the machine could read it in the process list.
//! * TLS (rustls): the coordinator presents a certificate and key; workers
//!   and clients verify it against a given CA certificate ([`endpoint`]).
//! * Mutual TLS: a coordinator given a client CA accepts only connections
//!   whose client presents a certificate that CA signed; workers and clients
//!   present theirs ([`ClientTls::identity`]). The coordinator tells its
//!   workers apart by these certificates.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
use tonic::{Request, Status};

/// The environment variable holding the token when no file is given.
pub const TOKEN_ENV: &str = "ORCHARD_TOKEN";

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("cannot read the token file {path}: {source}")]
    TokenFile {
        path: String,
        source: std::io::Error,
    },
    #[error("the token in {0} is empty")]
    EmptyToken(String),
    #[error("the token in {0} has characters that cannot go in a header (use printable ASCII)")]
    BadToken(String),
    #[error("cannot read {what} {path}: {source}")]
    Pem {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("invalid coordinator address '{url}': {reason}")]
    BadUrl { url: String, reason: String },
    #[error("TLS setup for {url}: {reason}")]
    Tls { url: String, reason: String },
}

/// Reads the token from `file` if given, else from `ORCHARD_TOKEN`; `None`
/// when neither is set. Surrounding whitespace (a trailing newline) is
/// ignored.
pub fn read_token(file: Option<&Path>) -> Result<Option<String>, AccessError> {
    let (raw, source) = match file {
        Some(path) => (
            std::fs::read_to_string(path).map_err(|source| AccessError::TokenFile {
                path: path.display().to_string(),
                source,
            })?,
            path.display().to_string(),
        ),
        None => match std::env::var(TOKEN_ENV) {
            Ok(v) => (v, TOKEN_ENV.to_string()),
            Err(_) => return Ok(None),
        },
    };
    let token = raw.trim().to_string();
    if token.is_empty() {
        return Err(AccessError::EmptyToken(source));
    }
    if MetadataValue::<Ascii>::try_from(format!("Bearer {token}")).is_err() {
        return Err(AccessError::BadToken(source));
    }
    Ok(Some(token))
}

/// Client side: adds `authorization: Bearer <token>` to every request.
#[derive(Clone, Default)]
pub struct BearerToken(Option<MetadataValue<Ascii>>);

impl BearerToken {
    pub fn new(token: Option<&str>) -> Self {
        BearerToken(token.and_then(|t| MetadataValue::try_from(format!("Bearer {t}")).ok()))
    }
}

impl Interceptor for BearerToken {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

/// Server side: refuses requests without the right token.
#[derive(Clone)]
pub struct TokenCheck(Option<Arc<[u8]>>);

impl TokenCheck {
    /// `None`: no token configured, every request is accepted.
    pub fn new(token: Option<&str>) -> Self {
        TokenCheck(token.map(|t| Arc::from(format!("Bearer {t}").into_bytes())))
    }
}

/// Compares without an early exit, so timing does not reveal how much of a
/// guessed token was right.
pub fn same_token(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Interceptor for TokenCheck {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.0 else {
            return Ok(req);
        };
        let given = req.metadata().get("authorization").map(|v| v.as_bytes());
        if given.is_some_and(|g| same_token(g, expected)) {
            return Ok(req);
        }
        let peer = req
            .remote_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|| "unknown".into());
        let why = if given.is_some() {
            "wrong token"
        } else {
            "no token"
        };
        tracing::warn!(%peer, "refused a request: {why}");
        Err(Status::unauthenticated(format!(
            "{why}: this coordinator requires a bearer token"
        )))
    }
}

/// A worker's or client's side of TLS: the CA certificate that signed the
/// coordinator's, and for a coordinator that requires client certificates
/// (mutual TLS), this side's own certificate and key. All PEM files.
#[derive(Debug, Clone, Default)]
pub struct ClientTls {
    /// Verifies the coordinator (`--tls-ca`).
    pub ca: Option<PathBuf>,
    /// Presented to the coordinator (`--tls-client-cert`, `--tls-client-key`).
    pub identity: Option<ClientIdentity>,
}

/// A client certificate chain and its private key, PEM files.
#[derive(Debug, Clone)]
pub struct ClientIdentity {
    pub cert: PathBuf,
    pub key: PathBuf,
}

fn read_pem(what: &'static str, path: &Path) -> Result<Vec<u8>, AccessError> {
    std::fs::read(path).map_err(|source| AccessError::Pem {
        what,
        path: path.display().to_string(),
        source,
    })
}

/// The endpoint for `url`, with TLS verified against `tls.ca` when given (or
/// when the URL is `https://`, against that CA only: there is no system root
/// store in play), presenting `tls.identity` when given.
pub fn endpoint(url: &str, tls: &ClientTls) -> Result<Endpoint, AccessError> {
    let bad = |reason: String| AccessError::BadUrl {
        url: url.to_string(),
        reason,
    };
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| bad(e.to_string()))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(20));
    if let Some(ca) = &tls.ca {
        if !url.starts_with("https://") {
            return Err(bad(
                "a CA certificate was given: use an https:// address".into()
            ));
        }
        let mut config = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(read_pem("CA certificate", ca)?));
        if let Some(id) = &tls.identity {
            config = config.identity(Identity::from_pem(
                read_pem("client certificate", &id.cert)?,
                read_pem("client key", &id.key)?,
            ));
        }
        endpoint = endpoint.tls_config(config).map_err(|e| AccessError::Tls {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
    } else if url.starts_with("https://") {
        return Err(bad(
            "https:// needs the coordinator's CA certificate (--tls-ca)".into(),
        ));
    } else if tls.identity.is_some() {
        return Err(bad(
            "a client certificate is presented over TLS only: use an https:// address and --tls-ca"
                .into(),
        ));
    }
    Ok(endpoint)
}
