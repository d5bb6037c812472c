#!/usr/bin/env bash
# CI: builds deploy/Dockerfile with podman (daemonless, Debian's packages)
# and runs the image: a coordinator container and two worker containers on
# one network solve h'(4) (`hc --columns 4 --variant subsets`: h' = 47, 5
# maximal games), then all three are stopped with SIGTERM and must exit 0.
# It also builds deploy/programs.Dockerfile and hands its /programs to the
# workers as the Kubernetes component does (a copy into a volume the workers
# mount read-only as their --programs): an `exec` job of the image's
# `collatz` and a `sat` job of its CaDiCaL run on them.
#
# No image registry is reachable from CI, so nothing is pulled:
#   - the base image is made here from Debian's package archive
#     (mmdebstrap, minbase + ca-certificates), imported as
#     localhost/orchard-base:DEBIAN_RELEASE and kept for later runs;
#   - the binary is the one the tests built (target/release/orchard, on the
#     same Debian release), through the Dockerfile's `BINARY=prebuilt` stage;
#     the `build` stage (FROM rust:...) is skipped.
#
# The network: the coordinator's container has its own network namespace
# with loopback only (--network none); the workers and the client join it
# (--network container:...), so every packet stays on that namespace's
# 127.0.0.1 and nothing needs a bridge or NAT.
#
# Sandbox notes (what this machine kind needs; harmless elsewhere):
#   - runc, not crun: the host mounts cgroups in hybrid mode (v1 controllers
#     plus a v2 hierarchy holding hugetlb), which crun refuses;
#   - explicit --ulimit values at or under the host's hard limits: podman's
#     defaults raise nofile and nproc, which needs CAP_SYS_RESOURCE, and the
#     sandbox does not grant it.
#
#   bash deploy/container/ci-test.sh        # ORCHARD_BIN=... to use another binary
#
# Needs root and Debian (apt-get). About 3.5 minutes the first time on a
# fresh machine (packages, mmdebstrap), under a minute once the base image
# exists.
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
log() { printf '[container-ci %3ds] %s\n' "$((SECONDS - t0))" "$*"; }

release=bookworm
base=localhost/orchard-base:$release
image=localhost/orchard:ci-$$
programs_image=localhost/orchard-programs:ci-$$
tag=orchard-ci-$$
bin="${ORCHARD_BIN:-target/release/orchard}"
[[ -x "$bin" ]] || { log "FAIL: no orchard binary at $bin (build it first)"; exit 1; }

missing=()
for tool in podman runc mmdebstrap; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
    log "installing ${missing[*]} (Debian)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc mmdebstrap >/dev/null
fi
log "$(podman --version), runc $(runc --version | head -n1 | awk '{print $3}')"

limits=(--ulimit "nofile=1024:$(ulimit -Hn)" --ulimit "nproc=4096:4096")
podman=(podman --runtime runc)

work=$(mktemp -d)
containers=()
cleanup() {
    local i id
    # Workers and the client first: they live in the coordinator's network.
    for ((i = ${#containers[@]} - 1; i >= 0; i--)); do
        # -v: the anonymous volume of the image's VOLUME too.
        "${podman[@]}" rm -f -v -t 5 "${containers[i]}" >/dev/null 2>&1 || true
    done
    podman volume rm -f "$tag-data" "$tag-programs" >/dev/null 2>&1 || true
    podman rmi -f "$image" "$programs_image" >/dev/null 2>&1 || true
    # The untagged images of the `prebuilt` and `tools` stages, made by
    # these builds only.
    if [[ -f "$work/dangling-before" ]]; then
        for id in $(podman images -q --filter dangling=true 2>/dev/null); do
            grep -qx "$id" "$work/dangling-before" || podman rmi -f "$id" >/dev/null 2>&1 || true
        done
    fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    log "FAIL: $*"
    for c in "${containers[@]}"; do
        echo "----- podman logs $c (last 30 lines)"
        podman logs --tail 30 "$c" 2>&1 || true
    done
    exit 1
}

# --- 1. the base image, from Debian's archive ---------------------------------
if podman image exists "$base"; then
    log "base image $base exists (made by an earlier run)"
else
    log "making $base with mmdebstrap ($release, minbase + ca-certificates)"
    mmdebstrap --quiet --variant=minbase --include=ca-certificates "$release" "$work/rootfs.tar"
    podman import --quiet --change 'CMD ["bash"]' "$work/rootfs.tar" "$base" >/dev/null
    rm -f "$work/rootfs.tar"
fi

# --- 2. the image, from deploy/Dockerfile ----------------------------------------
podman images -q --filter dangling=true >"$work/dangling-before"
mkdir "$work/context"
cp "$bin" "$work/context/orchard"
log "podman build -f deploy/Dockerfile (BINARY=prebuilt, base $base)"
"${podman[@]}" build --quiet --pull=never --network host "${limits[@]}" \
    -f deploy/Dockerfile --build-arg BINARY=prebuilt --build-arg "RUNTIME_BASE=$base" \
    -t "$image" "$work/context" >/dev/null || fail "podman build"
user=$(podman image inspect -f '{{.Config.User}}' "$image")
[[ $user == "10001:10001" ]] || fail "the image runs as '$user', not 10001:10001"

# --- 3. the programs image, its /programs copied into a volume -------------------
# Its own small context: the Dockerfile needs only the collatz example.
mkdir -p "$work/programs-context/examples/exec"
cp examples/exec/collatz.c "$work/programs-context/examples/exec/"
log "podman build -f deploy/programs.Dockerfile (base $base; apt-get installs cadical and gcc in it)"
"${podman[@]}" build --quiet --pull=never --network host "${limits[@]}" \
    -f deploy/programs.Dockerfile --build-arg "BASE=$base" \
    -t "$programs_image" "$work/programs-context" >/dev/null || fail "podman build of the programs image"
run() { "${podman[@]}" run "${limits[@]}" "$@"; }
podman volume create "$tag-programs" >/dev/null
# As deploy/kubernetes/programs' init container: cp -a /programs/. into the
# volume (as root here: a new podman volume belongs to root, an emptyDir
# does not).
run --rm --network none --user 0 -v "$tag-programs:/opt/orchard/programs" "$programs_image" \
    cp -a /programs/. /opt/orchard/programs/ || fail "copying the programs image's /programs"

# --- 4. a coordinator and two workers on one network ------------------------------
podman volume create "$tag-data" >/dev/null
run -d --name "$tag-coordinator" --network none -v "$tag-data:/var/lib/orchard" "$image" \
    coordinator --listen 127.0.0.1:7070 --db /var/lib/orchard/orchard.db >/dev/null
containers+=("$tag-coordinator")
# The client sees the programs (it hashes the program a job names) and the
# formula of the sat job.
mkdir "$work/input"
python3 examples/sat/schur.py 3 14 >"$work/input/s14.cnf"
client() {
    run --rm --network "container:$tag-coordinator" \
        -v "$tag-programs:/opt/orchard/programs:ro" -v "$work/input:/input:ro" \
        "$image" "$@" --coordinator http://127.0.0.1:7070
}
for i in $(seq 1 60); do
    client status --json >/dev/null 2>&1 && break
    ((i < 60)) || fail "the coordinator did not answer"
    sleep 0.5
done
for w in 1 2; do
    run -d --name "$tag-worker$w" --network "container:$tag-coordinator" \
        -v "$tag-programs:/opt/orchard/programs:ro" "$image" \
        worker --coordinator http://127.0.0.1:7070 --threads 1 --name "worker$w" \
        --programs /opt/orchard/programs >/dev/null
    containers+=("$tag-worker$w")
done
# submit ARGS...: the new job's id. wait_results JOB FILE: its results.
submit() { client submit "$@" --json | sed -E 's/.*"job_id":([0-9]+).*/\1/'; }
wait_results() {
    local i
    for i in $(seq 1 300); do
        if client results "$1" --json >"$2" 2>/dev/null; then return; fi
        ((i < 300)) || fail "job $1 not done after 10 minutes: $(client status "$1" --json 2>&1)"
        sleep 2
    done
}
job=$(submit hc --columns 4 --variant subsets)
log "coordinator and 2 workers up; job $job submitted (hc --columns 4 --variant subsets)"
wait_results "$job" "$work/results.json"
grep -q '"h":47,' "$work/results.json" && grep -q '"maximal_count":5,' "$work/results.json" ||
    fail "wrong answer: $(cat "$work/results.json")"
log "h'(4) = 47 with 5 maximal games, from the containers"

# --- 5. an exec job and a sat job on the programs image's programs ----------------
job=$(submit exec --program /opt/orchard/programs/collatz --splits --arg 1000000 --arg 4)
wait_results "$job" "$work/collatz.json"
grep -q '"numbers":999999,' "$work/collatz.json" &&
    grep -q '"steps":{"value":524,"witness":"837799"}' "$work/collatz.json" ||
    fail "collatz below 10^6: not 999,999 numbers, the longest 837799 with 524 steps: $(cat "$work/collatz.json")"
log "exec: collatz below 10^6 by the programs image's program: the longest, 837799, 524 steps"
job=$(submit sat --cnf /input/s14.cnf --solver /opt/orchard/programs/cadical --cubes 4)
wait_results "$job" "$work/sat.json"
grep -q '"verdict":"unsatisfiable"' "$work/sat.json" ||
    fail "sat: [1..14] in 3 colours not refuted (S(3) = 13): $(cat "$work/sat.json")"
log "sat: S(3) = 13, [1..14] refuted by the programs image's CaDiCaL in every cube"
for w in 1 2; do
    # Not `grep -q`: it exits at the first match, podman logs then dies of
    # SIGPIPE, and under pipefail the pipeline fails although the line is there.
    podman logs "$tag-worker$w" 2>&1 | grep "registered" >/dev/null || fail "worker$w never registered"
done

# --- 6. stop them: SIGTERM (the image's STOPSIGNAL), every exit 0 ---------------
podman stop -t 60 "$tag-worker1" "$tag-worker2" >/dev/null
podman stop -t 60 "$tag-coordinator" >/dev/null
for c in "${containers[@]}"; do
    code=$(podman inspect -f '{{.State.ExitCode}}' "$c")
    [[ $code == 0 ]] || fail "$c exited with $code"
done
log "stopped with SIGTERM, all three exited 0: $(podman logs "$tag-worker1" 2>&1 | grep -o 'worker stopped: .*' | head -n1)"
log "PASS"
