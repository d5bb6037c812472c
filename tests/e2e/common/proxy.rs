//! A fault proxy between workers and the coordinator: a TCP relay on
//! 127.0.0.1 that can add latency, reset every connection, or cut the
//! network (a partition: live connections reset, new ones refused by a
//! reset as soon as they are accepted) and heal it. Real sockets, real
//! TCP resets (SO_LINGER 0), so the worker's gRPC client sees what it would
//! see on a real network.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct Faults {
    /// Added to every chunk, each way.
    latency_ms: AtomicU64,
    partitioned: AtomicBool,
    /// Both sockets of every live connection, to reset them.
    live: Mutex<Vec<(TcpStream, TcpStream)>>,
    /// Connections relayed so far.
    accepted: AtomicU64,
}

/// A relay from `127.0.0.1:port()` to an upstream address.
pub struct FaultProxy {
    port: u16,
    faults: Arc<Faults>,
}

/// Closes a socket with a TCP reset rather than a FIN.
fn reset(s: &TcpStream) {
    let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
    let _ = s.shutdown(Shutdown::Both);
}

/// Copies `from` to `to` chunk by chunk, each delayed by the latency.
fn pump(mut from: TcpStream, mut to: TcpStream, faults: Arc<Faults>) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let ms = faults.latency_ms.load(Ordering::Relaxed);
        if ms > 0 {
            std::thread::sleep(Duration::from_millis(ms));
        }
        if faults.partitioned.load(Ordering::Relaxed) || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

impl FaultProxy {
    /// Starts relaying to `upstream` (`host:port`), faults off.
    pub fn start(upstream: &str) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let faults = Arc::new(Faults::default());
        let f = faults.clone();
        let upstream = upstream.to_string();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if f.partitioned.load(Ordering::Relaxed) {
                    reset(&client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    reset(&client);
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                f.accepted.fetch_add(1, Ordering::Relaxed);
                f.live
                    .lock()
                    .unwrap()
                    .push((client.try_clone().unwrap(), server.try_clone().unwrap()));
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (fa, fb) = (f.clone(), f.clone());
                std::thread::spawn(move || pump(client, server, fa));
                std::thread::spawn(move || pump(s2, c2, fb));
            }
        });
        FaultProxy { port, faults }
    }

    /// The address workers are given: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Adds `ms` milliseconds to every chunk each way (a round trip gains
    /// at least twice that).
    pub fn set_latency(&self, ms: u64) {
        self.faults.latency_ms.store(ms, Ordering::Relaxed);
    }

    /// Resets every live connection (new ones are accepted as before).
    pub fn reset_all(&self) {
        for (a, b) in self.faults.live.lock().unwrap().drain(..) {
            reset(&a);
            reset(&b);
        }
    }

    /// Cuts the network: live connections reset, new ones refused.
    pub fn partition(&self) {
        self.faults.partitioned.store(true, Ordering::Relaxed);
        self.reset_all();
    }

    /// Ends a partition.
    pub fn heal(&self) {
        self.faults.partitioned.store(false, Ordering::Relaxed);
    }

    /// Connections relayed so far (a reconnect after a reset counts again).
    pub fn connections(&self) -> u64 {
        self.faults.accepted.load(Ordering::Relaxed)
    }
}
