//! The client commands: `submit`, `status`, `results`, `cancel`.

use std::process::ExitCode;

use orchard_proto::access::{endpoint, read_token, BearerToken};
use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::*;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::CliResult;
use crate::cli::{CancelArgs, ClientArgs, FamilyChoice, ResultsArgs, StatusArgs, SubmitArgs};
use crate::output::{result_object, status_line, status_object};

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
    if args.client.json {
        let value = match (args.job, resp.jobs.first()) {
            (Some(_), Some(job)) => status_object(job),
            _ => {
                serde_json::json!({ "jobs": resp.jobs.iter().map(status_object).collect::<Vec<_>>() })
            }
        };
        println!("{value}");
    } else if resp.jobs.is_empty() {
        println!("no jobs");
    } else {
        for job in &resp.jobs {
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
    let status = resp.status.unwrap_or_default();
    let done = status.state == "done";
    let code = if done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(NOT_FINAL)
    };
    if args.client.json {
        let mut obj = result_object(&status, &resp.result_json, &resp.results_file);
        obj["final"] = serde_json::json!(done);
        println!("{obj}");
        return Ok(code);
    }
    if !done {
        println!(
            "job {} is {}: {}",
            status.job_id,
            status.state,
            crate::output::progress_line(&status)
        );
        if !status.error.is_empty() {
            println!("error: {}", status.error);
        }
        if resp.interim {
            println!("the answer so far (not final):");
            for line in &resp.text {
                println!("  {line}");
            }
        }
        return Ok(code);
    }
    for line in &resp.text {
        println!("{line}");
    }
    println!("results file: {}", resp.results_file);
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
