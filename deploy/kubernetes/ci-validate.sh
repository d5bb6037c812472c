#!/usr/bin/env bash
# CI: validates the Kubernetes manifests in this folder against the
# Kubernetes JSON schemas, in strict mode (unknown fields are errors), with
# kubernetes-validate from PyPI, which ships the schemas of every Kubernetes
# release it knows: nothing is downloaded after the install.
#
#   bash deploy/kubernetes/ci-validate.sh
#
# It also checks that:
#   - the programs component (programs/) fits the workers: merged into them
#     it validates, and it renders with kubectl when present;
#   - the validator rejects deliberately broken manifests (so a pass means
#     something);
#   - kustomization.yaml lists every manifest, and renders (with kubectl, when
#     present) to resources that validate too;
#   - every flag the containers pass exists in the orchard binary's --help
#     (when target/release/orchard or ORCHARD_BIN is there).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

validator_version=1.37.0
# The oldest and newest Kubernetes releases the manifests must be valid for.
k8s_versions=(1.29.0 1.37.0)
manifests=(namespace.yaml coordinator.yaml workers.yaml secret.example.yaml)

log() { printf '[k8s-validate] %s\n' "$*"; }
fail() {
    log "FAIL: $*"
    exit 1
}

# --- the validator, in a venv of its own (kept between runs) ------------------
venv="${ORCHARD_CI_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/orchard-ci}/kubernetes-validate-$validator_version"
kv="$venv/bin/kubernetes-validate"
if ! "$kv" --version 2>/dev/null | grep -qF "$validator_version"; then
    log "installing kubernetes-validate==$validator_version into $venv"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 600 "$venv/bin/pip" install --quiet \
        "kubernetes-validate==$validator_version"
fi
log "$("$kv" --version 2>&1)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

validate() { # validate K8S_VERSION FILE...: strict, quiet but for failures
    "$kv" --strict --quiet -k "$@"
}

# --- 1. the validator must reject broken manifests ---------------------------
cat >"$tmp/broken-type.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  replicas: four
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers: [{name: worker, image: orchard}]
EOF
cat >"$tmp/broken-field.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  replicas: 2
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
        - name: worker
          image: orchard
          resources:
            requets: {cpu: "2"}
EOF
for b in broken-type broken-field; do
    if validate "${k8s_versions[-1]}" "$tmp/$b.yaml" >"$tmp/$b.out" 2>&1; then
        fail "the validator accepted $b.yaml: $(cat "$tmp/$b.out")"
    fi
    grep -qE "replicas|requets" "$tmp/$b.out" || fail "unexpected error for $b.yaml: $(cat "$tmp/$b.out")"
    log "rejects $b.yaml as it should: $(grep -oE "(spec[^:]*: .*)" "$tmp/$b.out" | head -n1)"
done

# --- 2. every manifest, strict, against each Kubernetes version ---------------
for v in "${k8s_versions[@]}"; do
    for m in "${manifests[@]}"; do
        validate "$v" "$here/$m" || fail "$m is not valid for Kubernetes $v"
    done
    log "valid for Kubernetes $v (strict): ${manifests[*]}"
done

# --- 3. kustomization.yaml: lists every manifest; renders and validates ------
"$venv/bin/python" - "$here" <<'EOF' || fail "kustomization.yaml does not match the manifests"
import os, sys, yaml
here = sys.argv[1]
k = yaml.safe_load(open(os.path.join(here, "kustomization.yaml")))
res = k.get("resources", [])
missing = [r for r in res if not os.path.isfile(os.path.join(here, r))]
unlisted = sorted(f for f in os.listdir(here)
                  if f.endswith(".yaml") and f not in res
                  and f not in ("kustomization.yaml", "secret.example.yaml"))
secrets = [g["name"] for g in k.get("secretGenerator", [])]
if missing or unlisted or secrets != ["orchard-token"]:
    sys.exit(f"missing: {missing}, not listed: {unlisted}, secrets generated: {secrets}")
EOF
if command -v kubectl >/dev/null 2>&1 && kubectl kustomize --help >/dev/null 2>&1; then
    mkdir "$tmp/k"
    cp "$here"/*.yaml "$tmp/k/"
    echo "ci-token-$RANDOM" >"$tmp/k/token"
    kubectl kustomize "$tmp/k" >"$tmp/rendered.yaml" || fail "kubectl kustomize failed"
    for v in "${k8s_versions[@]}"; do
        validate "$v" "$tmp/rendered.yaml" || fail "the rendered kustomization is not valid for Kubernetes $v"
    done
    kinds=$(grep -E '^kind: ' "$tmp/rendered.yaml" | cut -d' ' -f2 | sort | paste -sd' ')
    [[ $kinds == "Deployment Namespace Secret Service StatefulSet" ]] || fail "rendered kinds: $kinds"
    log "kubectl kustomize renders $kinds, all valid"
    cp -r "$here/programs" "$tmp/k/"
    printf 'components:\n  - programs\n' >>"$tmp/k/kustomization.yaml"
    kubectl kustomize "$tmp/k" >"$tmp/rendered-programs.yaml" || fail "kubectl kustomize with programs/ failed"
    for v in "${k8s_versions[@]}"; do
        validate "$v" "$tmp/rendered-programs.yaml" || fail "the kustomization with programs/ is not valid for Kubernetes $v"
    done
    grep -q "image: orchard-programs" "$tmp/rendered-programs.yaml" || fail "programs/ adds no init container"
    log "kubectl kustomize with programs/ renders the init container, valid"
else
    log "kubectl not found: kustomization.yaml checked for consistency only"
fi

# --- 3b. the programs component: its patch merged into the workers validates --
"$venv/bin/python" - "$here" "$tmp/workers-with-programs.yaml" <<'EOF' || fail "programs/ does not fit workers.yaml"
import os, sys, yaml
here, out = sys.argv[1], sys.argv[2]
comp = yaml.safe_load(open(os.path.join(here, "programs", "kustomization.yaml")))
assert comp["kind"] == "Component", comp["kind"]
patch = yaml.safe_load(open(os.path.join(here, "programs", comp["patches"][0]["path"])))
docs = [d for d in yaml.safe_load_all(open(os.path.join(here, "workers.yaml"))) if d]
(workers,) = [d for d in docs if d["kind"] == "Deployment"]
assert patch["metadata"]["name"] == workers["metadata"]["name"], "the patch names another Deployment"
spec = workers["spec"]["template"]["spec"]
volumes = {v["name"] for v in spec["volumes"]}
init = patch["spec"]["template"]["spec"]["initContainers"]
for c in init:
    for m in c.get("volumeMounts", []):
        assert m["name"] in volumes, f"the init container mounts {m['name']}, which workers.yaml lacks"
(worker,) = spec["containers"]
env = {e["name"]: e.get("value") for e in worker.get("env", [])}
mounts = {m["mountPath"] for m in worker["volumeMounts"]}
assert env.get("ORCHARD_PROGRAMS") in mounts, "ORCHARD_PROGRAMS is not a mounted folder"
spec["initContainers"] = init
yaml.safe_dump(workers, open(out, "w"))
EOF
for v in "${k8s_versions[@]}"; do
    validate "$v" "$tmp/workers-with-programs.yaml" || fail "workers.yaml with programs/ is not valid for Kubernetes $v"
done
log "programs/: the workers with its init container validate"

# --- 4. the flags in the manifests exist in orchard --------------------------
bin="${ORCHARD_BIN:-$repo/target/release/orchard}"
if [[ -x "$bin" ]]; then
    "$venv/bin/python" - "$here" >"$tmp/flags" <<'EOF'
import os, sys, yaml
here = sys.argv[1]
for f in ("coordinator.yaml", "workers.yaml"):
    for doc in yaml.safe_load_all(open(os.path.join(here, f))):
        if doc and doc.get("kind") in ("StatefulSet", "Deployment"):
            for c in doc["spec"]["template"]["spec"]["containers"]:
                args = c.get("args", [])
                for a in args[1:]:
                    if a.startswith("--"):
                        print(args[0], a)
EOF
    while read -r sub flag; do
        # grep reads the whole help (no -q): an early exit would kill the
        # writer with SIGPIPE, a failure under pipefail.
        "$bin" "$sub" --help | grep -E -- "(^|[ ,])$flag([ =]|$)" >/dev/null ||
            fail "orchard $sub has no $flag (used in the manifests)"
    done <"$tmp/flags"
    log "every flag in the manifests exists in $("$bin" --version): $(cut -d' ' -f2 "$tmp/flags" | sort -u | paste -sd' ')"
else
    log "no orchard binary at $bin: flags not checked"
fi
log "PASS"
