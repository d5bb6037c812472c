//! A worker speaking the protocol by hand (tests of verified jobs): it
//! registers under the name it is given, leases, explores its units with
//! the family in the test process, and reports honestly or with one count
//! corrupted.

use orchard_core::{DynExploration, Host, LocalFlags};
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::*;
use tonic::transport::Channel;

/// A worker speaking the protocol by hand: register, lease, explore with the
/// family in this process, report (honestly or not).
pub struct RawWorker {
    pub client: WorkerServiceClient<Channel>,
    pub id: u64,
}

impl RawWorker {
    pub async fn register(url: &str, name: &str) -> RawWorker {
        Self::register_for(url, name, "queens").await
    }

    pub async fn register_for(url: &str, name: &str, family: &str) -> RawWorker {
        let client = WorkerServiceClient::connect(url.to_string()).await.unwrap();
        Self::register_on(client, name, family).await
    }

    /// Registers as `name` over `client`'s connection (e.g. one under a
    /// client certificate).
    pub async fn register_on(
        mut client: WorkerServiceClient<Channel>,
        name: &str,
        family: &str,
    ) -> RawWorker {
        let id = client
            .register(RegisterRequest {
                hostname: name.into(),
                threads: 1,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec![family.into()],
            })
            .await
            .unwrap()
            .into_inner()
            .worker_id;
        RawWorker { client, id }
    }

    pub async fn lease(&mut self, max: u32) -> Vec<UnitLease> {
        self.client
            .lease(LeaseRequest {
                worker_id: self.id,
                max_units: max,
            })
            .await
            .unwrap()
            .into_inner()
            .leases
    }

    /// Explores `unit` whole with the family; `lie` adds one to a count
    /// (a queens job's solutions, a synthetic job's nodes).
    pub async fn report(&mut self, unit: &UnitLease, lie: bool) -> Result<bool, tonic::Status> {
        let (mut summary, nodes) = explore_whole(unit);
        if lie {
            summary = corrupt(&unit.family, &summary);
        }
        self.report_raw(unit.unit_id, summary, nodes).await
    }

    pub async fn report_raw(
        &mut self,
        unit_id: u64,
        summary: Vec<u8>,
        nodes: u64,
    ) -> Result<bool, tonic::Status> {
        self.client
            .report(ReportRequest {
                worker_id: self.id,
                unit_id,
                summary,
                nodes,
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner().accepted)
    }
}

/// A well-formed summary of `family` with one count too many.
pub fn corrupt(family: &str, summary: &[u8]) -> Vec<u8> {
    use orchard_core::codec::{decode, encode};
    match family {
        "queens" => {
            let mut s: orchard_queens::QueensSummary = decode(summary).unwrap();
            s.solutions += 1;
            encode(&s)
        }
        "synthetic" => {
            let mut s: orchard_synthetic::SyntheticSummary = decode(summary).unwrap();
            s.nodes += 1;
            encode(&s)
        }
        other => panic!("no lie for {other}"),
    }
}

/// Explores a leased unit with its family in this process, within `budget`
/// nodes (`u64::MAX`: to its end), as a worker would.
pub fn explore(unit: &UnitLease, budget: u64) -> DynExploration {
    let prepared = orchard::Families::builtin()
        .registry
        .by_name(&unit.family)
        .unwrap()
        .prepare(&unit.params_json, &Host::default())
        .unwrap();
    let flags = LocalFlags::default();
    let ctx = flags.context(budget);
    prepared.explore(&unit.unit, &ctx).unwrap()
}

/// Explores a leased unit to its end (a verified job's leases have no
/// budget): its summary and nodes.
pub fn explore_whole(unit: &UnitLease) -> (Vec<u8>, u64) {
    assert_eq!(
        unit.node_budget,
        u64::MAX,
        "a verified unit is explored whole"
    );
    let x = explore(unit, unit.node_budget);
    assert!(x.rest.is_empty());
    (x.summary, x.nodes)
}
