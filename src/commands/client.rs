//! The client commands: `submit`, `status`, `results`, `cancel`.

use std::process::ExitCode;

use orchard_coordinator::{JobAnswer, JobStatus};
use orchard_proto::access::{endpoint, read_token, BearerToken};
use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::{CancelRequest, ResultsRequest, StatusRequest, SubmitRequest};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::CliResult;
use crate::cli::{CancelArgs, ClientArgs, FamilyChoice, ResultsArgs, StatusArgs, SubmitArgs};
use crate::output::status_line;

type Client = JobServiceClient<InterceptedService<Channel, BearerToken>>;

async fn connect(args: &ClientArgs) -> Result<Client, Box<dyn std::error::Error>> {
    let token = read_token(args.access.token_file.as_deref())?;
    let endpoint = endpoint(&args.coordinator, args.access.tls_ca.as_deref())?;
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

fn rpc_error(what: &str, s: tonic::Status) -> String {
    format!("{what}: {}", s.message())
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
        .map_err(|s| rpc_error("submit", s))?
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
        .map_err(|s| rpc_error("status", s))?
        .into_inner();
    let jobs = resp
        .jobs
        .into_iter()
        .map(JobStatus::try_from)
        .collect::<Result<Vec<_>, _>>()?;
    if args.client.json {
        let value = match (args.job, jobs.first()) {
            (Some(_), Some(job)) => job.to_json(),
            _ => {
                serde_json::json!({ "jobs": jobs.iter().map(JobStatus::to_json).collect::<Vec<_>>() })
            }
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

/// The exit code of `orchard results` for a job that is not done: what it
/// printed (if anything) is not the final answer.
pub const NOT_FINAL: u8 = 3;

pub async fn results(args: ResultsArgs) -> CliResult {
    let mut client = connect(&args.client).await?;
    let resp = client
        .results(ResultsRequest { job_id: args.job })
        .await
        .map_err(|s| rpc_error("results", s))?
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
        .map_err(|s| rpc_error("cancel", s))?
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
