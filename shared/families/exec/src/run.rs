//! One call of an external program, watched: its output read as it comes
//! and parsed, its stderr's tail kept, its time and output bounded, and a
//! stop request passed on by closing its stdin.
//!
//! The program runs in a process group of its own (a shell script's
//! children are killed with it), dies with the worker thread that started
//! it (`PR_SET_PDEATHSIG`: a worker killed with SIGKILL leaves no orphan
//! searching on), and sees an environment of its own, not the worker's: no
//! token, no certificate path, nothing but `PATH`, `LANG` and the
//! protocol's variables.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::protocol::{cut, Call, ProtocolError, Report, MAX_TEXT, PROTOCOL_VERSION};

/// Bytes of stderr kept for the error message: the tail.
const STDERR_TAIL: usize = 2_000;

/// How often the watcher looks at the clock and the stop flag.
const TICK: Duration = Duration::from_millis(20);

/// The pauses between looks at a child that has not exited: 0.5 ms, doubled
/// up to [`TICK`]. A cube or unit of a few milliseconds is then seen to end
/// within about its own length, not a whole tick later (a fixed 20 ms tick
/// cost each trivial call 20 ms: `bench/sat-inprocess.sh`, docs/notes/sat.md).
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Backoff(Duration::from_micros(500))
    }

    fn pause(&mut self) {
        std::thread::sleep(self.0);
        self.0 = (self.0 * 2).min(TICK);
    }
}

/// What one call may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall time before the program is killed and the attempt fails.
    pub timeout: Duration,
    /// Bytes of stdout before it is killed and the attempt fails.
    pub max_output: u64,
    /// After a stop request (stdin closed), how long the program has to
    /// print its rest and `done` before it is killed and its unit handed
    /// back whole.
    pub grace: Duration,
}

/// How a call ended, when it did not fail.
#[derive(Debug)]
pub enum Ended {
    /// The program printed a whole report and exited with status 0.
    Report(Report),
    /// Asked to stop, it did not answer within the grace time and was
    /// killed: nothing of it counts, its unit goes back whole.
    Stopped,
}

/// Why a call failed. The attempt is discarded: nothing of it is merged.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("exited with {status}{}", tail(stderr))]
    Exit { status: String, stderr: String },
    #[error("ran past its time limit of {secs} s and was killed{}", tail(stderr))]
    Timeout { secs: u64, stderr: String },
    #[error("printed more than {limit} bytes and was killed{}", tail(stderr))]
    TooMuchOutput { limit: u64, stderr: String },
    #[error("printed what does not parse: {error}{}", tail(stderr))]
    Protocol {
        error: ProtocolError,
        stderr: String,
    },
    #[error("exited without printing `done`{}", tail(stderr))]
    NoDone { stderr: String },
}

fn tail(stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!("; stderr ends: {}", s.replace('\n', " | "))
    }
}

/// The channels between the search and the call.
pub struct Watch<'a> {
    /// Set from outside: ask the program to stop.
    pub stop: &'a AtomicBool,
    /// Nodes so far, from the program's `progress` lines.
    pub progress: &'a AtomicU64,
}

/// Runs `program CALL args...` with `input` on its first line of stdin.
pub fn call(
    program: &Path,
    call: Call,
    args: &[String],
    input: Option<&str>,
    budget: u64,
    limits: Limits,
    watch: Watch<'_>,
) -> Result<Ended, CallError> {
    let word = match call {
        Call::Roots => "roots",
        Call::Explore => "explore",
    };
    let all: Vec<&str> = std::iter::once(word)
        .chain(args.iter().map(String::as_str))
        .collect();
    let env = [
        ("ORCHARD_EXEC_PROTOCOL", PROTOCOL_VERSION.to_string()),
        ("ORCHARD_BUDGET", budget.to_string()),
    ];
    let mut child = start(program, &all, &env)?;
    let mut guard = KillOnDrop(Some(child.id()));
    let mut stdin = child.stdin.take();
    if let (Some(pipe), Some(text)) = (stdin.as_mut(), input) {
        // A program that exits without reading closes the pipe: not an
        // error here; its exit status tells.
        let _ = pipe.write_all(text.as_bytes());
        let _ = pipe.write_all(b"\n");
        let _ = pipe.flush();
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let stderr_reader = std::thread::spawn(move || read_tail(stderr));
    let (lines, received) = mpsc::sync_channel::<Line>(1024);
    let max_output = limits.max_output;
    let stdout_reader = std::thread::spawn(move || read_lines(stdout, max_output, lines));

    let started = Instant::now();
    let mut report = Report::new(call);
    let mut stop_asked: Option<Instant> = None;
    let mut failure: Option<Failure> = None;
    loop {
        match received.recv_timeout(TICK) {
            Ok(Line::Text(text)) => match report.line(&text) {
                Ok(Some(n)) => watch.progress.store(n, Ordering::Relaxed),
                Ok(None) => {}
                Err(e) => {
                    failure = Some(Failure::Protocol(e));
                    break;
                }
            },
            Ok(Line::TooLong) => {
                failure = Some(Failure::Protocol(ProtocolError {
                    line: 0,
                    reason: format!("a line of more than {} bytes", MAX_TEXT + 100),
                    text: String::new(),
                }));
                break;
            }
            Ok(Line::TooMuch) => {
                failure = Some(Failure::TooMuch);
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if started.elapsed() > limits.timeout {
            failure = Some(Failure::Timeout);
            break;
        }
        match stop_asked {
            None if watch.stop.load(Ordering::Relaxed) => {
                stop_asked = Some(Instant::now());
                drop(stdin.take());
            }
            Some(at) if at.elapsed() > limits.grace => {
                failure = Some(Failure::Ignored);
                break;
            }
            _ => {}
        }
    }
    if failure.is_some() {
        guard.kill();
    }
    drop(stdin);
    let status = wait_bounded(&mut child, &mut guard, limits, started);
    guard.0 = None;
    let _ = stdout_reader.join();
    let stderr = stderr_reader.join().unwrap_or_default();
    match failure {
        Some(Failure::Protocol(error)) => return Err(CallError::Protocol { error, stderr }),
        Some(Failure::TooMuch) => {
            return Err(CallError::TooMuchOutput {
                limit: limits.max_output,
                stderr,
            })
        }
        Some(Failure::Timeout) => {
            return Err(CallError::Timeout {
                secs: limits.timeout.as_secs(),
                stderr,
            })
        }
        Some(Failure::Ignored) => return Ok(Ended::Stopped),
        None => {}
    }
    let Some(status) = status else {
        return Err(CallError::Timeout {
            secs: limits.timeout.as_secs(),
            stderr,
        });
    };
    if !status.success() {
        if stop_asked.is_some() && !report.done {
            // Asked to stop, it quit (on SIGPIPE or its own terms) without
            // a report: its unit goes back whole.
            return Ok(Ended::Stopped);
        }
        return Err(CallError::Exit {
            status: describe(status),
            stderr,
        });
    }
    if !report.done {
        if stop_asked.is_some() {
            return Ok(Ended::Stopped);
        }
        return Err(CallError::NoDone { stderr });
    }
    Ok(Ended::Report(report))
}

/// What [`call_raw`] got from a program that exited by itself.
#[derive(Debug)]
pub struct RawOutput {
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    /// The tail of its stderr.
    pub stderr: String,
}

/// Runs `program args...` (a tool with its own output format, such as a
/// SAT solver) with `input` as its whole stdin, under the same isolation
/// and limits as [`call`]: a stop request (or the time limit) kills it,
/// `Ok(None)` for a stop. Its stdout is returned whole, up to the limit.
pub fn call_raw(
    program: &Path,
    args: &[String],
    input: Vec<u8>,
    limits: Limits,
    stop: &AtomicBool,
) -> Result<Option<RawOutput>, CallError> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = start(program, &args, &[])?;
    let mut guard = KillOnDrop(Some(child.id()));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // A thread of its own: a large input would otherwise block on a full
    // pipe while the program blocks on a full stdout.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let stderr_reader = std::thread::spawn(move || read_tail(stderr));
    let max = limits.max_output;
    let stdout_reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let n = stdout.take(max + 1).read_to_end(&mut out);
        (n.is_ok() && out.len() as u64 <= max, out)
    });
    let started = Instant::now();
    let mut stopped = false;
    let mut timed_out = false;
    let mut backoff = Backoff::new();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if stop.load(Ordering::Relaxed) {
            stopped = true;
        } else if started.elapsed() > limits.timeout {
            timed_out = true;
        }
        if stopped || timed_out {
            guard.kill();
            let _ = child.wait();
            break None;
        }
        backoff.pause();
    };
    guard.kill();
    guard.0 = None;
    let _ = writer.join();
    let (within, stdout) = stdout_reader.join().unwrap_or((false, Vec::new()));
    let stderr = stderr_reader.join().unwrap_or_default();
    if stopped {
        return Ok(None);
    }
    if timed_out {
        return Err(CallError::Timeout {
            secs: limits.timeout.as_secs(),
            stderr,
        });
    }
    if !within {
        return Err(CallError::TooMuchOutput {
            limit: limits.max_output,
            stderr,
        });
    }
    let status = status.ok_or_else(|| CallError::Exit {
        status: "an unknown status".into(),
        stderr: stderr.clone(),
    })?;
    if status.code().is_none() {
        return Err(CallError::Exit {
            status: describe(status),
            stderr,
        });
    }
    Ok(Some(RawOutput {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr,
    }))
}

/// Starts `program args...` isolated (see the module's doc), its three
/// streams piped, in its own directory, with only `PATH`, `LANG` and `env`
/// in its environment.
fn start(program: &Path, args: &[&str], env: &[(&str, String)]) -> Result<Child, CallError> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = program.parent() {
        cmd.current_dir(dir);
    }
    isolate(&mut cmd);
    spawn(&mut cmd).map_err(|source| CallError::Spawn {
        program: program.display().to_string(),
        source,
    })
}

/// Spawns, retrying while the executable is busy: a file just written
/// (the program's private copy, made by another thread) can still be open
/// for writing in a child forked meanwhile elsewhere in the process, until
/// that child's exec closes it (ETXTBSY for that short while).
fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

enum Failure {
    Protocol(ProtocolError),
    TooMuch,
    Timeout,
    /// A stop request went unanswered.
    Ignored,
}

enum Line {
    Text(String),
    TooLong,
    TooMuch,
}

/// Sends stdout's lines until it closes or passes `max` bytes.
fn read_lines(stdout: impl Read, max: u64, out: mpsc::SyncSender<Line>) {
    let mut reader = BufReader::new(stdout);
    let mut total = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let limit = (MAX_TEXT + 100) as u64;
        match (&mut reader).take(limit + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                total += n as u64;
                if total > max {
                    let _ = out.send(Line::TooMuch);
                    return;
                }
                if buf.last() != Some(&b'\n') && n as u64 > limit {
                    let _ = out.send(Line::TooLong);
                    return;
                }
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                let text = String::from_utf8_lossy(&buf).into_owned();
                if out.send(Line::Text(text)).is_err() {
                    return;
                }
            }
        }
    }
}

/// The last [`STDERR_TAIL`] bytes of stderr, read to its end.
fn read_tail(mut stderr: impl Read) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > 2 * STDERR_TAIL {
            kept.drain(..kept.len() - STDERR_TAIL);
        }
    }
    if kept.len() > STDERR_TAIL {
        kept.drain(..kept.len() - STDERR_TAIL);
    }
    cut(&String::from_utf8_lossy(&kept), STDERR_TAIL)
}

/// Waits for the program to exit, killing it at the time limit (a program
/// that closed its stdout but goes on running).
fn wait_bounded(
    child: &mut Child,
    guard: &mut KillOnDrop,
    limits: Limits,
    started: Instant,
) -> Option<std::process::ExitStatus> {
    let mut backoff = Backoff::new();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            Err(_) => return None,
        }
        if started.elapsed() > limits.timeout {
            guard.kill();
            let _ = child.wait();
            return None;
        }
        backoff.pause();
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("status {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => status.to_string(),
    }
}

/// Kills the program's process group unless disarmed.
struct KillOnDrop(Option<u32>);

impl KillOnDrop {
    fn kill(&mut self) {
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) with a negative pid signals the process group
            // the child leads (it was started in a group of its own).
            unsafe {
                libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
            }
        }
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A process group of its own, and death with the thread that started it.
fn isolate(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    {
        // SAFETY: only async-signal-safe calls between fork and exec
        // (prctl and getppid).
        let parent = std::process::id() as libc::pid_t;
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died before prctl took effect.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("the worker exited"));
                }
                Ok(())
            });
        }
    }
}
