//! Talking to the coordinator through failures: every call is retried with
//! exponential backoff (100 ms doubling to 5 s) until it has failed
//! continuously for the configured give-up time.

use std::future::Future;
use std::time::{Duration, Instant};

use orchard_proto::access::{endpoint, BearerToken, ClientTls};
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::WorkerError;

pub type Client = WorkerServiceClient<InterceptedService<Channel, BearerToken>>;

/// Largest message a worker accepts or sends.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Whether a failed call may succeed if tried again.
pub fn retryable(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable
            | Code::Unknown
            | Code::DeadlineExceeded
            | Code::Aborted
            | Code::Internal
            | Code::Cancelled
    )
}

/// Builds a lazily connecting client for `url` (`http://host:port`, or
/// `https://` with the coordinator's CA certificate and perhaps a client
/// certificate), sending `token`.
pub fn client(url: &str, token: Option<&str>, tls: &ClientTls) -> Result<Client, WorkerError> {
    let endpoint = endpoint(url, tls)?;
    Ok(
        WorkerServiceClient::with_interceptor(endpoint.connect_lazy(), BearerToken::new(token))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES),
    )
}

/// Calls `call` until it succeeds, fails with a non-retryable status, or has
/// kept failing for `give_up_after`.
pub async fn with_retry<T, F, Fut>(
    url: &str,
    give_up_after: Duration,
    what: &str,
    mut call: F,
) -> Result<T, WorkerError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Status>>,
{
    let started = Instant::now();
    let mut delay = Duration::from_millis(100);
    loop {
        match call().await {
            Ok(v) => return Ok(v),
            Err(status) if retryable(&status) => {
                let waited = started.elapsed();
                if waited >= give_up_after {
                    return Err(WorkerError::Unreachable {
                        url: url.to_string(),
                        secs: waited.as_secs(),
                        last: status.message().to_string(),
                    });
                }
                tracing::warn!(
                    "{what}: coordinator at {url} unavailable ({}); retrying in {} ms",
                    status.message(),
                    delay.as_millis()
                );
                tokio::time::sleep(delay.min(give_up_after.saturating_sub(waited))).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
            Err(status) => {
                return Err(WorkerError::Refused(format!(
                    "{what}: {}",
                    status.message()
                )))
            }
        }
    }
}
