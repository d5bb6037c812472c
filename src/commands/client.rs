//! The client commands: `submit`, `status`, `results`, `cancel`, `retry`.

use std::process::ExitCode;

use orchard_coordinator::{JobAnswer, JobStatus};
use orchard_proto::access::{endpoint, read_token, BearerToken};
use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::{
    CancelRequest, ResultsRequest, RetryRequest, StatusRequest, SubmitRequest, WorkerInfo,
};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::CliResult;
use crate::cli::{
    CancelArgs, ClientArgs, FamilyChoice, ResultsArgs, RetryArgs, StatusArgs, SubmitArgs,
};
use crate::output::status_line;

type Client = JobServiceClient<InterceptedService<Channel, BearerToken>>;

async fn connect(args: &ClientArgs) -> Result<Client, Box<dyn std::error::Error>> {
    let token = read_token(args.access.token_file.as_deref())?;
    let endpoint = endpoint(&args.coordinator, &args.access.tls())?;
    let channel = endpoint.connect().await.map_err(|e| {
        format!(
            "cannot reach the coordinator at {}: {}",
            args.coordinator,
            error_chain(&e)
        )
    })?;
    Ok(
        JobServiceClient::with_interceptor(channel, BearerToken::new(token.as_deref()))
            .max_decoding_message_size(64 << 20),
    )
}

/// An error and its causes on one line (transport errors hide the useful
/// part, e.g. a certificate problem, in their sources).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// A failed call in one line: the status's message, or for a transport
/// failure the causes it hides (a TLS alert: the coordinator does not
/// trust this client's certificate). A coordinator that requires client
/// certificates closes the connection of a client without one before it
/// can say why, so such a client is told what it may be missing.
fn rpc_error(what: &str, s: tonic::Status, args: &ClientArgs) -> String {
    let Some(cause) = std::error::Error::source(&s) else {
        return format!("{what}: {}", s.message());
    };
    let hint = if args.access.tls_ca.is_some() && args.access.tls_client_cert.is_none() {
        " (a coordinator started with --tls-client-ca accepts only clients that give \
         --tls-client-cert and --tls-client-key)"
    } else {
        ""
    };
    format!("{what}: {}{hint}", error_chain(cause))
}

pub async fn submit(args: SubmitArgs, family: FamilyChoice) -> CliResult {
    let mut client = connect(&args.client).await?;
    let resp = client
        .submit(SubmitRequest {
            family: family.family.to_string(),
            params_json: family.params_json,
            replicas: args.replicas.replicas,
        })
        .await
        .map_err(|s| rpc_error("submit", s, &args.client))?
        .into_inner();
    if args.client.json {
        println!(
            "{}",
            serde_json::json!({ "job_id": resp.job_id, "existing": resp.existing })
        );
    } else if resp.existing {
        println!("job {} (an identical job already exists)", resp.job_id);
    } else {
        println!("job {}", resp.job_id);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn status(args: StatusArgs) -> CliResult {
    let mut client = connect(&args.client).await?;
    let resp = client
        .status(StatusRequest {
            job_id: args.job.unwrap_or(0),
        })
        .await
        .map_err(|s| rpc_error("status", s, &args.client))?
        .into_inner();
    let jobs = resp
        .jobs
        .into_iter()
        .map(JobStatus::try_from)
        .collect::<Result<Vec<_>, _>>()?;
    if args.client.json {
        let value = match (args.job, jobs.first()) {
            (Some(_), Some(job)) => job.to_json(),
            _ => serde_json::json!({
                "jobs": jobs.iter().map(JobStatus::to_json).collect::<Vec<_>>(),
                "workers": resp.workers.iter().map(worker_json).collect::<Vec<_>>(),
            }),
        };
        println!("{value}");
    } else if jobs.is_empty() {
        println!("no jobs");
    } else {
        for job in &jobs {
            println!("{}", status_line(job));
            if !job.error.is_empty() {
                println!("           error: {}", job.error);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A registered worker as `status --json` prints it; `certificate` (the
/// subject CN of its client certificate) and its fingerprint are null
/// without mutual TLS.
fn worker_json(w: &WorkerInfo) -> serde_json::Value {
    let or_null = |s: &str| (!s.is_empty()).then(|| s.to_string());
    serde_json::json!({
        "worker_id": w.worker_id,
        "hostname": w.hostname,
        "threads": w.threads,
        "live": w.live,
        "units": w.units,
        "nodes": w.nodes,
        "certificate": or_null(&w.certificate),
        "certificate_sha256": or_null(&w.certificate_sha256),
    })
}

/// The exit code of `orchard results` for a job that is not done: what it
/// printed (if anything) is not the final answer.
pub const NOT_FINAL: u8 = 3;

pub async fn results(args: ResultsArgs) -> CliResult {
    let mut client = connect(&args.client).await?;
    let resp = client
        .results(ResultsRequest { job_id: args.job })
        .await
        .map_err(|s| rpc_error("results", s, &args.client))?
        .into_inner();
    let answer = JobAnswer::try_from(resp)?;
    let status = &answer.status;
    let code = if answer.is_final {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(NOT_FINAL)
    };
    if args.client.json {
        println!("{}", answer.to_json());
        return Ok(code);
    }
    if !answer.is_final {
        println!(
            "job {} is {}: {}",
            status.job_id,
            status.state,
            crate::output::progress_line(status)
        );
        if !status.error.is_empty() {
            println!("error: {}", status.error);
        }
        if !answer.result.is_null() {
            println!("the answer so far (not final):");
            for line in &answer.text {
                println!("  {line}");
            }
        }
        return Ok(code);
    }
    for line in &answer.text {
        println!("{line}");
    }
    println!("results file: {}", answer.results_file);
    Ok(code)
}

pub async fn cancel(args: CancelArgs) -> CliResult {
    let mut client = connect(&args.client).await?;
    let resp = client
        .cancel(CancelRequest { job_id: args.job })
        .await
        .map_err(|s| rpc_error("cancel", s, &args.client))?
        .into_inner();
    if args.client.json {
        println!(
            "{}",
            serde_json::json!({ "job_id": args.job, "cancelled": resp.cancelled })
        );
    } else if resp.cancelled {
        println!("job {} cancelled", args.job);
    } else {
        println!("job {} was not running", args.job);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn retry(args: RetryArgs) -> CliResult {
    let mut client = connect(&args.client).await?;
    let resp = client
        .retry(RetryRequest { job_id: args.job })
        .await
        .map_err(|s| rpc_error("retry", s, &args.client))?
        .into_inner();
    if args.client.json {
        println!(
            "{}",
            serde_json::json!({
                "job_id": args.job,
                "retried": true,
                "units_pending": resp.units_pending,
                "units_done": resp.units_done,
            })
        );
    } else {
        println!(
            "job {} running again: {} units to search, {} done kept",
            args.job, resp.units_pending, resp.units_done
        );
    }
    Ok(ExitCode::SUCCESS)
}
