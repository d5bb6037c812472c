//! Talking to the coordinator through failures: every call is retried with
//! exponential backoff (100 ms doubling to 5 s) until it has failed
//! continuously for the configured give-up time.

use std::future::Future;
use std::time::{Duration, Instant};

use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use crate::WorkerError;

pub type Client = WorkerServiceClient<Channel>;

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

/// Builds a lazily connecting client for `url` (`http://host:port`).
pub fn client(url: &str) -> Result<Client, WorkerError> {
    let endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| WorkerError::BadUrl {
            url: url.to_string(),
            reason: e.to_string(),
        })?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(20));
    Ok(WorkerServiceClient::new(endpoint.connect_lazy())
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES))
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
