#!/usr/bin/env bash
# Builds the container image from the release binary and proves, with a real Docker engine, that
# it runs the way deploy/k8s/base/statefulset.yaml runs it. CI runs this as the `image` stage of
# `.ci/run`, after the test stage has built target/release/chess-server; it can be run alone:
#
#     cargo build --release && CI_ONLY=tools bash .ci/run && deploy/image_check.sh
#
# As root, on a Debian machine with no Docker engine running and no image registry reachable:
#   1. installs Debian's docker.io (dockerd 20.10), debootstrap, docker-compose (1.29) and
#      prometheus (2.42) with apt when they are missing;
#   2. starts its OWN dockerd (--bridge=none --iptables=false: no bridge, no firewall rules), whose
#      data-root, exec-root, pidfile and socket all live in a git-ignored folder (.ci/docker/), and
#      stops it on every exit (success, failure, timeout); `/usr/bin/docker` talks to it through
#      DOCKER_HOST (another `docker` client earlier on PATH is never used);
#   3. makes the base image without a registry: `debootstrap --variant=minbase bookworm` from the
#      mirror the machine's own apt sources name, cached as a tarball in .ci/docker/base/ (built
#      once), then `docker import`;
#   4. builds deploy/Dockerfile's runtime stage with BINARY=prebuilt from a context holding only
#      the release binary, offline (`--network none`);
#   5. runs it as the StatefulSet does (user, read-only root, capabilities, no privilege
#      escalation, command, the ConfigMap's environment, data volume, /tmp in memory, limits:
#      all read from the manifests), on the host network listening on loopback only, and checks
#      with grpcurl: health SERVING; NewGame and Play; `docker stop` (SIGTERM, with the pod's
#      terminationGracePeriodSeconds) exits 0 after flushing; a new container on the same volume
#      has the game; `docker kill` (SIGKILL) in the middle of a stream of moves, then a restart,
#      loses no acknowledged move;
#   6. runs deploy/compose.yaml's chess-server and postgres services with docker-compose, from a file
#      derived from it for this engine (host network, free loopback ports, the image built in 4,
#      a postgres stand-in built from the base with Debian's postgresql-15: deploy/postgres-standin;
#      see compose_checks for exactly what changes), and checks: postgres healthy before the
#      server starts, SERVING, NewGame and Play, /metrics with store="postgres", the database
#      stopped (NOT_SERVING, chess_store_available 0) and started again (SERVING), a restarted
#      server container has the game, `docker-compose stop` exits 0 after flushing; and Debian's
#      Prometheus on the host, with the compose file's prometheus.yml (target rewritten) and
#      alerts.yaml, scrapes that server: every rule healthy, every dashboard query evaluates, and
#      ChessDatabaseUnavailable and ChessNotServing go pending while postgres is stopped;
#   7. reports the image size and the start-to-SERVING times;
#   8. runs the full two-stage build (way 1 of the Dockerfile) only if a Rust builder image
#      ($RUST_IMAGE) is already in the engine, and says loudly that it skipped it otherwise.
#
# Environment: CHESS_SERVER_BIN (the binary; default target/release/chess-server), GRPCURL
# (default .ci/venv/bin/grpcurl), CHESS_IMAGE_STATE (the git-ignored folder; default .ci/docker),
# RUST_IMAGE (default rust:1.95-bookworm), CHESS_IMAGE_SUITE (default bookworm).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CHESS_IMAGE_STATE:-$ROOT/.ci/docker}"
BIN="${CHESS_SERVER_BIN:-$ROOT/target/release/chess-server}"
GRPCURL="${GRPCURL:-$ROOT/.ci/venv/bin/grpcurl}"
SUITE="${CHESS_IMAGE_SUITE:-bookworm}"
RUST_IMAGE="${RUST_IMAGE:-rust:1.95-bookworm}"

DOCKER=/usr/bin/docker # Debian's docker.io client, never whatever `docker` is first on PATH
DOCKERD=/usr/sbin/dockerd
ENGINE="$STATE/engine"
BASE_TAR="$STATE/base/debian-$SUITE-minbase.tar"
BASE_IMAGE="chess-base:$SUITE-minbase"
IMAGE="chess-server:ci"
FULL_IMAGE="chess-server:ci-full"
VOLUME="chess-image-check-data"
CONTAINER="chess-image-check"
LOGS="$STATE/logs"

log() { printf '[image %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() {
    log "FAIL: $*"
    exit 1
}
banner() {
    echo "###################################################################################"
    printf '### %s\n' "$@"
    echo "###################################################################################"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ------------------------------------------------------------------------------------ clean-up
# Everything this script starts is stopped on every way out: success, failure (set -e), Ctrl-C,
# and the SIGTERM that .ci/run's `timeout` sends when the stage runs over its limit.
POLICY_RC_D_OURS=0
ENGINE_STARTED=0
EXEC_ROOT=""
EXEC_ROOT_TMP=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    if [[ $ENGINE_STARTED == 1 ]]; then
        # Quick: .ci/run's `timeout` sends SIGKILL 20 s after its SIGTERM.
        log "clean-up: removing the test containers and volume, stopping our dockerd"
        local c
        for c in $(timeout 5 "$DOCKER" ps -aq --filter "name=^$CONTAINER" 2>/dev/null); do
            timeout 5 "$DOCKER" rm -f "$c" >/dev/null 2>&1
        done
        timeout 5 "$DOCKER" volume rm -f "$VOLUME" >/dev/null 2>&1
        stop_prometheus
        if [[ -n $DERIVED && -f $DERIVED ]]; then
            timeout 30 "$COMPOSE" -p "$COMPOSE_PROJECT" -f "$DERIVED" down -v >/dev/null 2>&1
        fi
        if [[ $INTERRUPTED == 0 ]]; then
            # Old builds of chess-server:ci and their build cache: the data-root stays small.
            timeout 10 "$DOCKER" image prune -f >/dev/null 2>&1
            timeout 10 "$DOCKER" builder prune -af >/dev/null 2>&1
        fi
    fi
    stop_engine
    if [[ $POLICY_RC_D_OURS == 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
    if [[ -n $EXEC_ROOT_TMP ]]; then rm -rf "$EXEC_ROOT_TMP"; fi
    exit "$rc"
}
INTERRUPTED=0
trap cleanup EXIT
trap 'INTERRUPTED=1; log "interrupted"; exit 130' INT
trap 'INTERRUPTED=1; log "terminated (stage time limit?)"; exit 143' TERM

# Is PID a process of ours: alive and its command line naming our own state folder?
ours() {
    local pid=$1
    [[ -n $pid && -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$2"
}

stop_pid() { # PID NAME: SIGTERM, up to 12 s, then SIGKILL
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 120; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    log "$2 (pid $pid) ignored SIGTERM for 12 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null
    sleep 0.2
}

# Stops our dockerd and the containerd it runs, also ones a killed earlier run left behind (found
# through the pidfiles in our own folder, and only if their command line names that folder).
stop_engine() {
    local pid
    pid=$(cat "$ENGINE/dockerd.pid" 2>/dev/null || true)
    if ours "$pid" "$ENGINE/data"; then
        stop_pid "$pid" dockerd
        log "dockerd (pid $pid) stopped"
    fi
    local exec_root
    for exec_root in "$EXEC_ROOT" "$ENGINE/exec" $(cat "$ENGINE/exec-root" 2>/dev/null); do
        [[ -n $exec_root ]] || continue
        pid=$(cat "$exec_root/containerd/containerd.pid" 2>/dev/null || true)
        if ours "$pid" "$exec_root/containerd"; then
            stop_pid "$pid" containerd
            log "containerd (pid $pid) stopped"
        fi
    done
    rm -f "$ENGINE/dockerd.pid"
    # dockerd leaves its bind mount of the host's network namespace (exec-root/netns/default)
    # behind when it stops: unmount whatever is still mounted in our folders, deepest first.
    local m
    awk -v a="$ENGINE/" -v b="${EXEC_ROOT_TMP:-/nonexistent}/" \
        'index($2, a) == 1 || index($2, b) == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r m; do
            umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
        done
}

# ------------------------------------------------------------------------------------- install
install_packages() {
    local -a need=()
    [[ -x $DOCKERD && -x $DOCKER ]] || need+=(docker.io)
    [[ -x /usr/sbin/debootstrap ]] || need+=(debootstrap)
    [[ -x /usr/bin/docker-compose ]] || need+=(docker-compose)
    [[ -x /usr/bin/prometheus ]] || need+=(prometheus)
    if ((${#need[@]} == 0)); then
        log "docker.io, debootstrap, docker-compose and prometheus are installed"
        return 0
    fi
    [[ $(id -u) == 0 ]] || die "installing ${need[*]} needs root"
    # docker.io's postinst would start the system's own dockerd (and prometheus's its service)
    # where no policy forbids it: forbid it for the install (the standard policy-rc.d "101: not
    # allowed"). We start our own.
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 0755 /usr/sbin/policy-rc.d
        POLICY_RC_D_OURS=1
    fi
    log "installing ${need[*]} with apt (log: $LOGS/apt.log)"
    local -a apt=(apt-get -y -q -o DPkg::Lock::Timeout=600)
    if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "${need[@]}" \
        >"$LOGS/apt.log" 2>&1; then
        log "apt-get install failed; apt-get update, then once more"
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" update >>"$LOGS/apt.log" 2>&1 || true
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "${need[@]}" \
            >>"$LOGS/apt.log" 2>&1 || {
            tail -20 "$LOGS/apt.log"
            die "apt-get install ${need[*]} failed"
        }
    fi
    if [[ $POLICY_RC_D_OURS == 1 ]]; then
        rm -f /usr/sbin/policy-rc.d
        POLICY_RC_D_OURS=0
    fi
    [[ -x $DOCKERD && -x $DOCKER && -x /usr/sbin/debootstrap && -x /usr/bin/docker-compose && -x /usr/bin/prometheus ]] ||
        die "${need[*]} installed, but $DOCKERD, $DOCKER, debootstrap, docker-compose or prometheus is missing"
}

# ------------------------------------------------------------------------------------- engine
start_engine() {
    mkdir -p "$ENGINE"
    stop_engine # one a killed earlier run left behind
    # containerd's sockets live under the exec-root, and a unix socket path has at most 107
    # bytes: a clone in a very deep folder gets a short exec-root under /tmp instead.
    EXEC_ROOT="$ENGINE/exec"
    if ((${#EXEC_ROOT} > 60)); then
        EXEC_ROOT_TMP=$(mktemp -d /tmp/chess-dockerd.XXXXXX)
        EXEC_ROOT="$EXEC_ROOT_TMP"
        log "the state folder's path is long: exec-root is $EXEC_ROOT (removed at the end)"
    fi
    echo "$EXEC_ROOT" >"$ENGINE/exec-root"
    local sock="$ENGINE/docker.sock"
    ((${#sock} <= 100)) || sock="$EXEC_ROOT/docker.sock"
    export DOCKER_HOST="unix://$sock"
    # The client reads no configuration of the machine's (credential helpers, contexts) either.
    export DOCKER_CONFIG="$STATE/client"
    unset DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH
    mkdir -p "$DOCKER_CONFIG"
    # No daemon.json of the machine's: an empty one of ours.
    echo '{}' >"$ENGINE/daemon.json"
    log "starting our own dockerd: $DOCKERD, data-root $ENGINE/data, DOCKER_HOST=$DOCKER_HOST"
    ENGINE_STARTED=1
    "$DOCKERD" \
        --config-file "$ENGINE/daemon.json" \
        --data-root "$ENGINE/data" \
        --exec-root "$EXEC_ROOT" \
        --pidfile "$ENGINE/dockerd.pid" \
        --host "$DOCKER_HOST" \
        --bridge=none --iptables=false --ip6tables=false \
        >"$LOGS/dockerd.log" 2>&1 </dev/null &
    local pid=$! i
    for ((i = 0; i < 600; i++)); do
        if "$DOCKER" version >/dev/null 2>&1; then break; fi
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -30 "$LOGS/dockerd.log"
            die "dockerd exited while starting (log above: $LOGS/dockerd.log)"
        fi
        sleep 0.1
    done
    "$DOCKER" version >/dev/null 2>&1 || {
        tail -30 "$LOGS/dockerd.log"
        die "dockerd did not answer within 60 s"
    }
    log "engine up: $("$DOCKER" version --format 'client {{.Client.Version}}, server {{.Server.Version}}'), storage driver $("$DOCKER" info --format '{{.Driver}}')"
    # What an earlier, killed run may have left in our data-root.
    remove_containers
    "$DOCKER" volume rm -f "$VOLUME" >/dev/null
}

# ---------------------------------------------------------------------------------- base image
# The first deb (not deb-src) source of the machine's apt configuration that offers SUITE's main
# component: /etc/apt/sources.list and /etc/apt/sources.list.d/*.list (one-line format), and
# /etc/apt/sources.list.d/*.sources (deb822). Only http(s) and file URIs.
apt_mirror() {
    python3 - "$SUITE" <<'PY'
import glob, os, re, sys
suite = sys.argv[1]
found = []

def consider(types, uris, suites, comps, enabled=True):
    if not enabled or "deb" not in types or suite not in suites or "main" not in comps:
        return
    found.extend(u for u in uris if re.match(r"^(https?|file):", u))

def one_line(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        line = re.sub(r"\[[^\]]*\]", " ", line)  # [arch=amd64 signed-by=...]
        f = line.split()
        if len(f) >= 4:
            consider([f[0]], [f[1]], [f[2]], f[3:])

def deb822(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    for stanza in re.split(r"\n\s*\n", text):
        fields, key = {}, None
        for line in stanza.splitlines():
            if line.startswith("#"):
                continue
            if line[:1] in (" ", "\t") and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, value = line.split(":", 1)
                key = key.strip().lower()
                fields[key] = value.strip()
        if fields:
            consider(fields.get("types", "").split(), fields.get("uris", "").split(),
                     fields.get("suites", "").split(), fields.get("components", "").split(),
                     fields.get("enabled", "yes").lower() not in ("no", "false", "0"))

if os.path.exists("/etc/apt/sources.list"):
    one_line("/etc/apt/sources.list")
for path in sorted(glob.glob("/etc/apt/sources.list.d/*")):
    if path.endswith(".list"):
        one_line(path)
    elif path.endswith(".sources"):
        deb822(path)
if not found:
    sys.exit(f"no apt source offers 'deb ... {suite} main' in /etc/apt/sources.list or "
             "/etc/apt/sources.list.d/*.list|*.sources")
print(found[0])
PY
}

ensure_base() {
    if [[ ! -s $BASE_TAR ]]; then
        local mirror rootfs="$STATE/base/rootfs" t0=$SECONDS
        mirror=$(apt_mirror) || die "no mirror for debootstrap"
        log "building the base once: debootstrap --variant=minbase $SUITE from $mirror (log: $LOGS/debootstrap.log)"
        mkdir -p "$STATE/base"
        rm -rf "$rootfs"
        /usr/sbin/debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" \
            >"$LOGS/debootstrap.log" 2>&1 || {
            tail -20 "$LOGS/debootstrap.log"
            die "debootstrap failed"
        }
        # What debian:*-slim leaves out too: the downloaded .debs, the package lists, docs.
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin \
            "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* \
            "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*
        tar --numeric-owner -C "$rootfs" -cf "$BASE_TAR.tmp" .
        mv "$BASE_TAR.tmp" "$BASE_TAR"
        rm -rf "$rootfs"
        log "base cached: $BASE_TAR ($(du -m "$BASE_TAR" | cut -f1) MB) in $((SECONDS - t0)) s"
    else
        log "base: cached $BASE_TAR (delete it to rebuild)"
    fi
    # The image is imported again only when the tarball is newer than it (or it is missing).
    local want have
    want=$(stat -c %Y "$BASE_TAR")
    have=$("$DOCKER" image inspect -f '{{index .Config.Labels "chess.base.tar-mtime"}}' "$BASE_IMAGE" 2>/dev/null || true)
    if [[ $have != "$want" ]]; then
        log "docker import $BASE_TAR $BASE_IMAGE"
        "$DOCKER" import --change "LABEL chess.base.tar-mtime=$want" "$BASE_TAR" "$BASE_IMAGE" >/dev/null
    fi
}

# --------------------------------------------------------------------------------- the image
build_image() {
    local ctx="$STATE/context" t0
    rm -rf "$ctx"
    mkdir -p "$ctx"
    cp "$BIN" "$ctx/chess-server"
    log "building $IMAGE: deploy/Dockerfile, BINARY=prebuilt, RUNTIME_IMAGE=$BASE_IMAGE, context $ctx (only chess-server), --network none"
    t0=$(now_ms)
    DOCKER_BUILDKIT=1 "$DOCKER" build --progress plain --network none \
        -f "$ROOT/deploy/Dockerfile" \
        --build-arg BINARY=prebuilt \
        --build-arg RUNTIME_IMAGE="$BASE_IMAGE" \
        -t "$IMAGE" "$ctx" >"$LOGS/build.log" 2>&1 || {
        tail -30 "$LOGS/build.log"
        die "docker build failed (log: $LOGS/build.log)"
    }
    BUILD_MS=$(($(now_ms) - t0))
    log "built $IMAGE in $((BUILD_MS / 1000)).$((BUILD_MS % 1000 / 100)) s"
    # The image is what the StatefulSet expects of it.
    local user entry
    user=$("$DOCKER" image inspect -f '{{.Config.User}}' "$IMAGE")
    entry=$("$DOCKER" image inspect -f '{{json .Config.Entrypoint}}' "$IMAGE")
    [[ $user == "10001:10001" ]] || die "image user is '$user', not 10001:10001"
    [[ $entry == '["/usr/local/bin/chess-server"]' ]] || die "image entrypoint is $entry"
    cmp -s "$BIN" <("$DOCKER" run --rm --network none --entrypoint cat "$IMAGE" /usr/local/bin/chess-server) ||
        die "the image's /usr/local/bin/chess-server is not $BIN"
    log "image: user $user, entrypoint $entry, binary identical to $BIN"
}

# The `docker run` options that reproduce the StatefulSet's pod, read from the manifests
# (deploy/k8s/base): one option per line. Only the listen address differs: loopback and a free
# port on the host network, instead of 0.0.0.0:50051 in a pod's own network namespace.
pod_options() {
    local py="$ROOT/.ci/venv/bin/python"
    [[ -x $py ]] || py=python3
    "$py" - "$ROOT/deploy/k8s/base" "$PORT" "$VOLUME" "$SECRETS" "$HEALTH_PORT" <<'PY'
import sys, yaml
base, port, volume, secrets, health_port = sys.argv[1:6]
sts = yaml.safe_load(open(f"{base}/statefulset.yaml"))
kust = yaml.safe_load(open(f"{base}/kustomization.yaml"))
pod = sts["spec"]["template"]["spec"]
(c,) = pod["containers"]
psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
sc = {**psc, **csc}
out = []
assert sc.get("runAsNonRoot") and sc["runAsUser"] != 0
out += ["--user", f'{sc["runAsUser"]}:{sc["runAsGroup"]}']
# fsGroup: Kubernetes adds it to the process's groups (and gives it the volume).
if "fsGroup" in psc:
    out += ["--group-add", str(psc["fsGroup"])]
if sc.get("readOnlyRootFilesystem"):
    out.append("--read-only")
for cap in sc.get("capabilities", {}).get("drop", []):
    out += ["--cap-drop", cap]
if sc.get("allowPrivilegeEscalation") is False:
    out += ["--security-opt", "no-new-privileges"]
# seccompProfile RuntimeDefault is Docker's default profile: nothing to add.
assert sc.get("seccompProfile", {}).get("type") == "RuntimeDefault"
# command: replaces the image's ENTRYPOINT and drops its CMD, as `--entrypoint` does.
command = c["command"]
assert len(command) == 1 and not c.get("args"), "only a one-word command is mapped"
out += ["--entrypoint", command[0]]
# envFrom the generated ConfigMap: its literals.
(gen,) = [g for g in kust["configMapGenerator"] if g["name"] == c["envFrom"][0]["configMapRef"]["name"]]
for lit in gen["literals"]:
    k, v = lit.split("=", 1)
    if k == "CHESS_LISTEN":
        v = f"127.0.0.1:{port}"
    if k == "CHESS_HEALTH_LISTEN":
        v = f"127.0.0.1:{health_port}"
    if k == "CHESS_METRICS_LISTEN":
        v = "127.0.0.1:0"  # a free loopback port: the host network is shared
    out += ["--env", f"{k}={v}"]
volumes = {v["name"]: v for v in pod.get("volumes", [])}
claims = {t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])}
for m in c["volumeMounts"]:
    if m["name"] in claims:
        out += ["--mount", f'type=volume,source={volume},target={m["mountPath"]}']
    elif "secret" in volumes[m["name"]]:
        # A Secret: the test secret of that name (make_secrets), mounted read-only.
        assert m.get("readOnly"), "Secrets are mounted read-only"
        name = volumes[m["name"]]["secret"]["secretName"]
        out += ["--mount", f'type=bind,source={secrets}/{name},target={m["mountPath"]},readonly']
    else:
        ed = volumes[m["name"]]["emptyDir"]
        assert ed.get("medium") == "Memory", "only in-memory emptyDirs are mapped"
        size = ed["sizeLimit"].replace("Mi", "m").replace("Gi", "g")
        out += ["--tmpfs", f'{m["mountPath"]}:rw,nosuid,nodev,size={size}']
lim = c["resources"]["limits"]
out += ["--cpus", str(lim["cpu"]), "--memory", lim["memory"].replace("Mi", "m").replace("Gi", "g")]
print("\n".join(out))
print(f'#grace={pod["terminationGracePeriodSeconds"]}')
PY
}

# --------------------------------------------------------------------------------- the checks
# The pod serves TLS and wants a token (the base mounts the TLS and token Secrets): the test
# secrets of make_secrets, an admin token.
grpc() { "$GRPCURL" -cacert "$SECRETS/ca.pem" -H "authorization: Bearer $TOKEN" -connect-timeout 2 "$@"; }

# Test stand-ins for the Secrets the StatefulSet mounts (chess-server-tls: tls.crt and tls.key
# for localhost and 127.0.0.1, signed by a throwaway CA; chess-server-tokens: a token file with
# one admin token), readable by the pod's group as the Secrets' mode 0440 makes them.
make_secrets() {
    command -v openssl >/dev/null || {
        log "installing openssl (apt) for the test secrets"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
    }
    SECRETS="$ROOT/.ci/docker/secrets"
    rm -rf "$SECRETS"
    mkdir -p "$SECRETS/chess-server-tls" "$SECRETS/chess-server-tokens"
    (
        cd "$SECRETS"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=image check CA" -keyout ca.key -out ca.pem 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj "/CN=localhost" -keyout chess-server-tls/tls.key -out server.csr 2>/dev/null
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out chess-server-tls/tls.crt 2>/dev/null
        echo "image-check admin $(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)" >chess-server-tokens/tokens
    ) || die "could not make the test secrets"
    chgrp -R 10001 "$SECRETS/chess-server-tls" "$SECRETS/chess-server-tokens"
    chmod 0750 "$SECRETS/chess-server-tls" "$SECRETS/chess-server-tokens"
    chmod 0440 "$SECRETS"/chess-server-tls/* "$SECRETS"/chess-server-tokens/*
}
TOKEN="image-check-admin-token"

# Waits until health (service "" and chess.v1.ChessService) answers SERVING; prints the ms since
# the given start time. Gives up after 120 s, the StatefulSet's startup budget.
wait_serving() {
    local t0=$1 name=$2 i out
    for ((i = 0; i < 1200; i++)); do
        if out=$(grpc -d '{"service": "chess.v1.ChessService"}' "127.0.0.1:$PORT" grpc.health.v1.Health/Check 2>/dev/null) &&
            [[ $out == *'"SERVING"'* ]]; then
            echo $(($(now_ms) - t0))
            return 0
        fi
        if [[ $("$DOCKER" inspect -f '{{.State.Running}}' "$name" 2>/dev/null) != true ]]; then
            "$DOCKER" logs "$name" 2>&1 | tail -20 >&2
            log "container $name is not running" >&2
            return 1
        fi
        sleep 0.1
    done
    "$DOCKER" logs "$name" 2>&1 | tail -20 >&2
    log "container $name not SERVING within 120 s" >&2
    return 1
}

# Starts a container of IMAGE named NAME with the pod's options. Sets STARTUP_MS, from
# `docker run` to the first SERVING answer, and PROCESS_MS, from the start of the container's
# process (docker's State.StartedAt) to that answer. Health is polled every 100 ms with grpcurl.
start_container() {
    local image=$1 name=$2 t0 t_serving started
    t0=$(now_ms)
    "$DOCKER" run -d --name "$name" --network host "${POD_OPTS[@]}" "$image" >/dev/null
    STARTUP_MS=$(wait_serving "$t0" "$name") || die "$name did not become SERVING"
    t_serving=$((t0 + STARTUP_MS))
    started=$("$DOCKER" inspect -f '{{.State.StartedAt}}' "$name")
    # The server's own "listening on" log line (JSON, with its timestamp) gives the part the
    # polling cannot resolve: from the process start to the listening socket.
    read -r PROCESS_MS LISTEN_MS < <("$DOCKER" logs "$name" 2>&1 | python3 -c '
import sys, json, datetime
def ms(t):  # RFC 3339 with up to nanoseconds, in UTC
    whole, frac = (t.rstrip("Z").split(".") + ["0"])[:2]
    s = datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.timezone.utc).timestamp()
    return (s + float("0." + frac)) * 1000
start = ms(sys.argv[1])
listen = next((json.loads(l)["timestamp"] for l in sys.stdin
               if l.startswith("{") and "listening on" in l), None)
print(round(int(sys.argv[2]) - start), round(ms(listen) - start) if listen else "?")' "$started" "$t_serving")
    local overall
    overall=$(grpc "127.0.0.1:$PORT" grpc.health.v1.Health/Check) || die "health of \"\" failed on $name"
    [[ $overall == *'"SERVING"'* ]] || die "health of \"\" is not SERVING on $name: $overall"
    log "$name: SERVING (health \"\" and chess.v1.ChessService) $STARTUP_MS ms after docker run, $PROCESS_MS ms after its process started (which logged 'listening' after $LISTEN_MS ms)"
}

# JSON field extraction with python (no jq on a fresh machine).
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {}, {'d': d}))" "$1"; }

play() { # GAME MOVE EXPECTED_PLY -> the response JSON
    grpc -d "{\"game_id\": \"$1\", \"move\": \"$2\", \"expected_ply\": $3}" "127.0.0.1:$PORT" chess.v1.ChessService/Play
}

game_moves() { # GAME -> the game's moves (UCI), space-separated
    grpc -d "{\"game_id\": \"$1\"}" "127.0.0.1:$PORT" chess.v1.ChessService/GetGame |
        json '" ".join(d["game"].get("moves", []))'
}

remove_containers() {
    local c
    for c in $("$DOCKER" ps -aq --filter "name=^$CONTAINER"); do "$DOCKER" rm -f "$c" >/dev/null; done
}

exit_code() { "$DOCKER" inspect -f '{{.State.ExitCode}}' "$1"; }

# SIGTERM with the pod's grace: must exit 0 well within it, with the store flushed.
stop_gracefully() {
    local name=$1 t0 took code
    t0=$(now_ms)
    "$DOCKER" stop -t "$GRACE" "$name" >/dev/null
    took=$(($(now_ms) - t0))
    code=$(exit_code "$name")
    [[ $code == 0 ]] || die "docker stop -t $GRACE $name: exit code $code, not 0 (logs: $("$DOCKER" logs --tail 5 "$name" 2>&1))"
    ((took < GRACE * 1000)) || die "docker stop took $took ms: the grace of $GRACE s ran out (SIGKILL)"
    # The logs read whole first: `grep -q` stops at its match, and the SIGPIPE that then
    # ends `docker logs` fails the pipeline under pipefail (a flake seen in CI).
    [[ $("$DOCKER" logs "$name" 2>&1) == *'store flushed; bye'* ]] ||
        die "$name exited 0 but never logged 'store flushed; bye'"
    log "$name: docker stop -t $GRACE (SIGTERM): exit code 0 after $took ms, 'store flushed; bye' logged"
    STOP_MS=$took
}

# The Opera Game (Morphy, 1858): 33 legal plies, in SAN.
OPERA=(e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 Nxb5 cxb5
    Bxb5+ Nbd7 O-O-O Rd8 Rxd7 Rxd7 Rd1 Qe6 Bxd7+ Nxd7 Qb8+ Nxb8 Rd8#)

run_checks() {
    local image=$1 tag=$2 game="image-check" kgame="image-check-kill" out ply
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    HEALTH_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    make_secrets
    mapfile -t POD_OPTS < <(pod_options)
    [[ ${#POD_OPTS[@]} -gt 4 && ${POD_OPTS[-1]} == "#grace="* ]] ||
        die "could not read the pod's options from deploy/k8s/base (PyYAML: the tools stage puts it in .ci/venv)"
    GRACE=${POD_OPTS[-1]#\#grace=}
    unset 'POD_OPTS[-1]'
    # The grace must cover --shutdown-grace-secs (the server's default 10 s: the ConfigMap does
    # not set it) plus the store's flush.
    ((GRACE >= 10 + 5)) || die "terminationGracePeriodSeconds $GRACE does not cover the server's 10 s grace + flush"
    log "running $image as the StatefulSet does: docker run -d --network host ${POD_OPTS[*]} $image"
    remove_containers
    "$DOCKER" volume rm -f "$VOLUME" >/dev/null
    "$DOCKER" volume create "$VOLUME" >/dev/null

    # 1. Fresh volume: SERVING, NewGame, Play.
    start_container "$image" "$CONTAINER-1"
    local start_fresh=$STARTUP_MS proc_fresh=$PROCESS_MS listen_fresh=$LISTEN_MS
    out=$(grpc -d "{\"game_id\": \"$game\"}" "127.0.0.1:$PORT" chess.v1.ChessService/NewGame) || die "NewGame failed"
    [[ $(json 'd["game"]["gameId"]' <<<"$out") == "$game" ]] || die "NewGame answered $out"
    for ply in 0 1 2 3; do
        out=$(play "$game" "${OPERA[$ply]}" "$ply") || die "Play ${OPERA[$ply]} failed: $out"
        [[ $(json 'd["game"]["ply"]' <<<"$out") == $((ply + 1)) ]] || die "Play ${OPERA[$ply]} answered $out"
    done
    local want="e2e4 e7e5 g1f3 d7d6"
    [[ $(game_moves "$game") == "$want" ]] || die "GetGame after four plays: $(game_moves "$game"), want $want"
    log "NewGame and four Plays answered; GetGame shows $want"
    # Nothing can be written outside the volume and /tmp, not even by root: the root filesystem
    # is read-only.
    out=$("$DOCKER" exec -u 0 "$CONTAINER-1" sh -c ': > /probe' 2>&1) &&
        die "the root filesystem of $CONTAINER-1 is writable"
    [[ $out == *"Read-only file system"* ]] || die "writing / in $CONTAINER-1 failed, but not read-only: $out"
    log "the root filesystem is read-only (root in the container: $out)"

    # 2. SIGTERM: exit 0; a new container on the same volume has the game.
    stop_gracefully "$CONTAINER-1"
    local stop1=$STOP_MS
    start_container "$image" "$CONTAINER-2"
    local start_restart=$STARTUP_MS proc_restart=$PROCESS_MS listen_restart=$LISTEN_MS
    [[ $(game_moves "$game") == "$want" ]] || die "after the restart GetGame shows '$(game_moves "$game")', want $want"
    log "restart on the same volume: the game is intact ($want)"

    # 3. SIGKILL in the middle of a stream of moves: every acknowledged move survives.
    grpc -d "{\"game_id\": \"$kgame\"}" "127.0.0.1:$PORT" chess.v1.ChessService/NewGame >/dev/null || die "NewGame $kgame failed"
    local acked="$STATE/acked.txt"
    : >"$acked"
    (
        for ((ply = 0; ply < ${#OPERA[@]}; ply++)); do
            out=$(play "$kgame" "${OPERA[$ply]}" "$ply" 2>/dev/null) || exit 0
            json 'd["move"]["uci"]' <<<"$out" >>"$acked"
        done
    ) &
    # Kill once 12 plies are acknowledged (or after 120 s on a very slow machine).
    local player=$! i
    for ((i = 0; i < 2400; i++)); do
        (($(wc -l <"$acked" || echo 0) >= 12)) && break
        kill -0 "$player" 2>/dev/null || break
        sleep 0.05
    done
    "$DOCKER" kill "$CONTAINER-2" >/dev/null
    wait "$player" || true
    local code n_acked
    code=$(exit_code "$CONTAINER-2")
    [[ $code == 137 ]] || die "docker kill: exit code $code, not 137 (SIGKILL)"
    n_acked=$(wc -l <"$acked")
    ((n_acked >= 1 && n_acked < ${#OPERA[@]})) ||
        die "the kill did not land in the middle of the stream ($n_acked of ${#OPERA[@]} plies acknowledged)"
    log "docker kill (SIGKILL) after $n_acked of ${#OPERA[@]} plies acknowledged, the player still sending: exit code 137"
    start_container "$image" "$CONTAINER-3"
    local start_crash=$STARTUP_MS proc_crash=$PROCESS_MS listen_crash=$LISTEN_MS
    local got
    got=$(game_moves "$kgame")
    python3 - "$acked" "$got" <<'PY' || die "acknowledged moves lost after SIGKILL"
import sys
acked = open(sys.argv[1]).read().split()
got = sys.argv[2].split()
if got[: len(acked)] != acked or len(got) > len(acked) + 1:
    sys.exit(f"acknowledged {acked}\nafter the restart {got}")
extra = ("the one in flight at the kill too" if len(got) > len(acked)
         else "none beyond them: the one in flight, if any, was not applied")
print(f"  acknowledged {len(acked)} plies; after the restart the game has {len(got)} ({extra})")
PY
    [[ $(game_moves "$game") == "$want" ]] || die "after the SIGKILL the first game shows '$(game_moves "$game")'"
    log "restart after SIGKILL: no acknowledged move lost; the first game intact too"
    stop_gracefully "$CONTAINER-3"
    local stop3=$STOP_MS

    remove_containers
    local size
    size=$("$DOCKER" image inspect -f '{{.Size}}' "$image")
    RESULTS+=("$(printf '%s: image size %d MB (%d bytes)' "$tag" $((size / 1000000)) "$size")")
    RESULTS+=("  start to SERVING, ms: docker run -> SERVING / process start -> SERVING / process start -> 'listening' logged")
    RESULTS+=("    fresh volume $start_fresh / $proc_fresh / $listen_fresh; restart after SIGTERM $start_restart / $proc_restart / $listen_restart; restart after SIGKILL $start_crash / $proc_crash / $listen_crash")
    RESULTS+=("    (SERVING is polled with grpcurl, one call about every 0.2-0.3 s: that is the resolution of the first two)")
    RESULTS+=("$(printf '  docker stop (SIGTERM to exit 0): %d ms and %d ms' "$stop1" "$stop3")")
}

# ------------------------------------------------------------------- the compose file's services
# deploy/compose.yaml's chess-server and postgres services, run by docker-compose itself from a
# file derived from it. What the derivation changes, and nothing else:
#   - both services on the host network (`network_mode: host`, no `ports`): this engine has no
#     bridge, and nothing may leave loopback; so the server reaches the database at 127.0.0.1 on
#     a free port (PGPORT) instead of postgres:5432, and listens on free loopback ports;
#   - postgres: no registry is reachable, so its image is a stand-in built here from the
#     debootstrap base and Debian's postgresql-15 (deploy/postgres-standin: the official image's
#     POSTGRES_USER/POSTGRES_PASSWORD/POSTGRES_DB contract), listening on 127.0.0.1 only;
#   - chess-server: the image is the one built above from the release binary (the compose file's
#     `build:` is the full two-stage build, which needs a Rust image from a registry);
#   - prometheus and grafana are left out (no images): `monitoring` checks their configuration.
# Everything else is the compose file's: the server's entrypoint, environment (the database
# URL's credentials against the postgres service's), read-only root, capabilities, restart
# policy; the postgres environment, volume and healthcheck, and depends_on service_healthy.
COMPOSE_PROJECT="chess-compose-check"
PG_STANDIN="chess-ci/postgres-standin:15"
COMPOSE=/usr/bin/docker-compose
DERIVED=""

compose() { "$COMPOSE" -p "$COMPOSE_PROJECT" -f "$DERIVED" "$@"; }
cgrpc() { "$GRPCURL" -plaintext -connect-timeout 2 "$@"; }

# The stand-in is built again only when its files or the base change (a label records them).
build_postgres_standin() {
    local want have t0
    want="$(cat "$ROOT"/deploy/postgres-standin/* | sha256sum | cut -c1-16)-$("$DOCKER" image inspect -f '{{.Id}}' "$BASE_IMAGE" | cut -c8-23)"
    have=$("$DOCKER" image inspect -f '{{index .Config.Labels "chess.standin.source"}}' "$PG_STANDIN" 2>/dev/null || true)
    if [[ $have == "$want" ]]; then
        log "postgres stand-in: $PG_STANDIN is current"
        return
    fi
    log "building the postgres stand-in $PG_STANDIN: Debian's postgresql-15 on $BASE_IMAGE (apt over the host network; log: $LOGS/build-postgres.log)"
    t0=$SECONDS
    DOCKER_BUILDKIT=0 "$DOCKER" build --force-rm --network host --label "chess.standin.source=$want" \
        --build-arg BASE="$BASE_IMAGE" -t "$PG_STANDIN" "$ROOT/deploy/postgres-standin" \
        >"$LOGS/build-postgres.log" 2>&1 || {
        tail -30 "$LOGS/build-postgres.log"
        die "building the postgres stand-in failed (log: $LOGS/build-postgres.log)"
    }
    log "postgres stand-in built in $((SECONDS - t0)) s"
}

derive_compose() { # out server-image port metrics-port pg-port
    local py="$ROOT/.ci/venv/bin/python"
    [[ -x $py ]] || py=python3
    "$py" - "$ROOT/deploy/compose.yaml" "$@" "$PG_STANDIN" <<'PY'
import sys, yaml
src, out, server_image, port, mport, pgport, pg_image = sys.argv[1:8]
c = yaml.safe_load(open(src))
services = c["services"]
c["services"] = {name: services[name] for name in ("postgres", "chess-server")}
for s in c["services"].values():
    s.pop("ports", None)
    s["network_mode"] = "host"
pg = c["services"]["postgres"]
assert "command" not in pg, "the postgres service sets a command: map it here"
pg["image"] = pg_image
pg["environment"]["PGPORT"] = pgport
pg["command"] = ["postgres", "-c", "listen_addresses=127.0.0.1"]
srv = c["services"]["chess-server"]
assert "build" in srv, "the chess-server service has no build section"
srv.pop("build")
srv["image"] = server_image
env = srv["environment"]
url = env["CHESS_DATABASE_URL"]
assert "@postgres:5432/" in url, url
env["CHESS_DATABASE_URL"] = url.replace("@postgres:5432/", f"@127.0.0.1:{pgport}/")
env["CHESS_LISTEN"] = f"127.0.0.1:{port}"
env["CHESS_METRICS_LISTEN"] = f"127.0.0.1:{mport}"
used = {v.split(":")[0] for s in c["services"].values() for v in s.get("volumes", [])}
c["volumes"] = {k: v for k, v in (c.get("volumes") or {}).items() if k in used}
yaml.safe_dump(c, open(out, "w"), sort_keys=False)
PY
}

# GET /metrics of the compose server: the samples asked for, as NAME{LABELS} VALUE lines.
compose_metrics() { # port name...
    python3 - "$@" <<'PY'
import sys, urllib.request
port, names = sys.argv[1], sys.argv[2:]
text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
for line in text.splitlines():
    if not line.startswith("#") and line.split("{")[0].split(" ")[0] in names:
        print(line)
PY
}

compose_wait() { # what predicate-command...: up to 60 s
    local what=$1 i
    shift
    for ((i = 0; i < 600; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    compose logs --tail 20 >&2 || true
    die "compose: $what within 60 s"
}

serving_on() { [[ $(cgrpc -d '{"service": "chess.v1.ChessService"}' "127.0.0.1:$1" grpc.health.v1.Health/Check 2>/dev/null) == *'"SERVING"'* ]]; }
not_serving_on() { [[ $(cgrpc -d '{"service": "chess.v1.ChessService"}' "127.0.0.1:$1" grpc.health.v1.Health/Check 2>/dev/null) == *'"NOT_SERVING"'* ]]; }
metric_is() { compose_metrics "$1" "$2" | grep -qx "$2 $3"; }

# ------------------------------------------------- a real Prometheus on the compose server
# Debian's prometheus (2.42, the package `monitoring` installs promtool from), on the host, with
# the compose file's prometheus.yml (its one target rewritten to the server's loopback metrics
# port, 1 s intervals) and alerts.yaml: it must scrape the server, load every rule healthy,
# evaluate every query of the dashboard without an error, and put the database alerts pending
# while postgres is stopped (compose_checks stops it).
PROMETHEUS=/usr/bin/prometheus
PROM_PID=""

start_prometheus() { # metrics-port
    local mport=$1 dir="$STATE/prometheus" py="$ROOT/.ci/venv/bin/python"
    [[ -x $py ]] || py=python3
    [[ -x $PROMETHEUS ]] || die "no $PROMETHEUS (Debian's prometheus): install_packages installs it"
    rm -rf "$dir"
    mkdir -p "$dir/data"
    PROM_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cp "$ROOT/deploy/monitoring/alerts.yaml" "$dir/alerts.yaml"
    "$py" - "$ROOT/deploy/monitoring/prometheus.yml" "$dir/prometheus.yml" "127.0.0.1:$mport" <<'PY'
import sys, yaml
src, out, target = sys.argv[1:4]
c = yaml.safe_load(open(src))
c["global"]["scrape_interval"] = "1s"
c["global"]["evaluation_interval"] = "1s"
(job,) = [j for j in c["scrape_configs"] if j["job_name"] == "chess-server"]
assert job["static_configs"] == [{"targets": ["chess-server:9090"]}], job
job["static_configs"] = [{"targets": [target]}]
yaml.safe_dump(c, open(out, "w"), sort_keys=False)
PY
    "$PROMETHEUS" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$PROM_PORT" >"$LOGS/prometheus.log" 2>&1 </dev/null &
    PROM_PID=$!
    log "prometheus: $("$PROMETHEUS" --version 2>&1 | head -1 | cut -d' ' -f1-3) on 127.0.0.1:$PROM_PORT, scraping 127.0.0.1:$mport as job chess-server every 1 s (log: $LOGS/prometheus.log)"
}

stop_prometheus() {
    if [[ -n $PROM_PID ]]; then
        kill "$PROM_PID" 2>/dev/null || true
        wait "$PROM_PID" 2>/dev/null || true
        PROM_PID=""
    fi
}

# Runs a PromQL query; prints the number of series it returned (fails on an error).
prom_query() { # expr
    python3 - "$PROM_PORT" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
port, expr = sys.argv[1], sys.argv[2]
url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
try:
    answer = json.load(urllib.request.urlopen(url, timeout=5))
except urllib.error.HTTPError as e:
    answer = json.load(e)
if answer.get("status") != "success":
    sys.exit(f"{expr}: {answer.get('errorType')}: {answer.get('error')}")
print(len(answer["data"]["result"]))
PY
}

prom_has() { (($(prom_query "$1" 2>/dev/null || echo 0) > 0)); }
# True when EXPR (a count, `or vector(0)`) is 0.
prom_query_is_zero() {
    python3 - "$PROM_PORT" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
port, expr = sys.argv[1], sys.argv[2]
url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
result = json.load(urllib.request.urlopen(url, timeout=5))["data"]["result"]
sys.exit(0 if result and float(result[0]["value"][1]) == 0 else 1)
PY
}

# Every rule loaded and healthy; every dashboard query evaluates (Grafana's variables as a
# dashboard showing all jobs and instances would send them).
check_prometheus_kit() {
    python3 - "$PROM_PORT" "$ROOT/deploy/monitoring/grafana-dashboard.json" <<'PY' || die "the real Prometheus disagrees with the kit"
import json, sys, urllib.parse, urllib.request
port, dashboard = sys.argv[1], sys.argv[2]
def api(path, **params):
    url = f"http://127.0.0.1:{port}/api/v1/{path}?" + urllib.parse.urlencode(params)
    try:
        return json.load(urllib.request.urlopen(url, timeout=5))
    except urllib.error.HTTPError as e:
        return json.load(e)
rules = [r for g in api("rules")["data"]["groups"] for r in g["rules"]]
bad = [f"{r['name']}: {r.get('lastError')}" for r in rules if r.get("health") != "ok"]
if len(rules) < 10 or bad:
    sys.exit(f"rules: {len(rules)} loaded, not healthy: {bad}")
exprs = []
def walk(v):
    if isinstance(v, dict):
        for t in v.get("targets", []) if isinstance(v.get("targets"), list) else []:
            exprs.append(t["expr"])
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(json.load(open(dashboard)))
subst = {"$__rate_interval": "1m", "$__range": "5m", "$job": ".+", "$instance": ".+"}
empty, errors = [], []
for e in exprs:
    q = e
    for k, v in subst.items():
        q = q.replace(k, v)
    answer = api("query", query=q)
    if answer.get("status") != "success":
        errors.append(f"{e}: {answer.get('error')}")
    elif not answer["data"]["result"]:
        empty.append(e)
for e in errors:
    print(f"FAIL: {e}")
print(f"  {len(rules)} rules loaded, all healthy; {len(exprs)} dashboard queries evaluated without an error, "
      f"{len(exprs) - len(empty)} with data")
for e in empty:
    print(f"    no data (yet, or not on this store): {e[:150]}")
sys.exit(1 if errors else 0)
PY
}

compose_checks() {
    local image=$1 port mport pgport out id code t0 moves
    [[ -x $COMPOSE ]] || die "no $COMPOSE (Debian's docker-compose): install_packages installs it"
    build_postgres_standin
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$STATE/compose"
    DERIVED="$STATE/compose/compose.yaml"
    derive_compose "$DERIVED" "$image" "$port" "$mport" "$pgport" || die "could not derive a compose file from deploy/compose.yaml"
    compose config -q || die "docker-compose rejects the derived file $DERIVED"
    compose down -v >/dev/null 2>&1 || true
    log "compose: $COMPOSE -p $COMPOSE_PROJECT -f $DERIVED up -d chess-server (postgres first: depends_on service_healthy)"
    t0=$(now_ms)
    compose up -d --no-build chess-server >"$LOGS/compose-up.log" 2>&1 || {
        cat "$LOGS/compose-up.log"
        compose logs --tail 30 || true
        die "docker-compose up failed"
    }
    compose_wait "chess-server SERVING on 127.0.0.1:$port" serving_on "$port"
    start_prometheus "$mport"
    log "compose: chess-server SERVING $(($(now_ms) - t0)) ms after 'up' (postgres initialized and healthy first)"

    out=$(cgrpc -d '{"game_id": "compose-check"}' "127.0.0.1:$port" chess.v1.ChessService/NewGame) || die "NewGame on the compose server failed"
    [[ $(json 'd["game"]["gameId"]' <<<"$out") == compose-check ]] || die "NewGame answered $out"
    for mv in e4 e5; do
        cgrpc -d "{\"game_id\": \"compose-check\", \"move\": \"$mv\"}" "127.0.0.1:$port" chess.v1.ChessService/Play >/dev/null ||
            die "Play $mv on the compose server failed"
    done
    out=$(compose_metrics "$mport" chess_build_info chess_serving chess_store_available chess_games_created_total)
    log "compose: /metrics says: $(tr '\n' ';' <<<"$out")"
    grep -q '^chess_build_info{.*store="postgres".*} 1$' <<<"$out" || die "chess_build_info does not name the postgres store: $out"
    grep -qx 'chess_serving 1' <<<"$out" && grep -qx 'chess_store_available 1' <<<"$out" &&
        grep -qx 'chess_games_created_total 1' <<<"$out" || die "unexpected metrics: $out"
    compose_wait "prometheus scraping the server (up 1, a game created)" \
        prom_has 'up{job="chess-server"} == 1 and on (instance) chess_games_created_total{job="chess-server"} == 1'
    # A few scrapes, so that the rates over the dashboard's interval have two samples.
    sleep 3
    check_prometheus_kit

    # The database away: NOT_SERVING and chess_store_available 0 (what ChessDatabaseUnavailable
    # reads), then back by itself once postgres is.
    compose stop postgres >/dev/null 2>&1 || die "docker-compose stop postgres failed"
    compose_wait "NOT_SERVING while postgres is stopped" not_serving_on "$port"
    compose_wait "chess_store_available 0 while postgres is stopped" metric_is "$mport" chess_store_available 0
    log "compose: postgres stopped: health NOT_SERVING, chess_store_available 0"
    compose_wait "prometheus: ChessDatabaseUnavailable and ChessNotServing pending" \
        prom_has 'count(ALERTS{alertname=~"ChessDatabaseUnavailable|ChessNotServing", alertstate="pending"}) == 2'
    log "compose: prometheus (alerts.yaml): ChessDatabaseUnavailable and ChessNotServing pending (they fire after their for:)"
    compose start postgres >/dev/null 2>&1 || die "docker-compose start postgres failed"
    compose_wait "SERVING again once postgres is back" serving_on "$port"
    compose_wait "chess_store_available 1 again" metric_is "$mport" chess_store_available 1
    compose_wait "prometheus: no chess alert left once postgres is back" \
        prom_query_is_zero 'count(ALERTS{alertname=~"Chess.+"}) or vector(0)'
    log "compose: postgres started again: SERVING, chess_store_available 1"

    # A new server container on the same database has the game.
    compose restart chess-server >/dev/null 2>&1 || die "docker-compose restart chess-server failed"
    compose_wait "chess-server SERVING after its restart" serving_on "$port"
    moves=$(cgrpc -d '{"game_id": "compose-check"}' "127.0.0.1:$port" chess.v1.ChessService/GetGame |
        json '" ".join(d["game"].get("moves", []))')
    [[ $moves == "e2e4 e7e5" ]] || die "after docker-compose restart chess-server the game has '$moves', want e2e4 e7e5"
    log "compose: restart of chess-server: the game is in the database (e2e4 e7e5)"

    id=$(compose ps -q chess-server)
    compose stop chess-server >/dev/null 2>&1 || die "docker-compose stop chess-server failed"
    code=$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$id")
    [[ $code == 0 ]] || die "docker-compose stop chess-server: exit code $code, not 0"
    [[ $("$DOCKER" logs "$id" 2>&1) == *'store flushed; bye'* ]] ||
        die "the compose server exited 0 but never logged 'store flushed; bye' (see stop_gracefully)"
    log "compose: docker-compose stop chess-server: exit code 0, 'store flushed; bye'"
    compose down -v >/dev/null 2>&1 || die "docker-compose down -v failed"
    stop_prometheus
    RESULTS+=("compose (deploy/compose.yaml's chess-server + postgres, host network, postgres stand-in): up, NewGame/Play, metrics store=postgres, database stop/start -> NOT_SERVING/SERVING, restart keeps the game, stop exits 0")
    RESULTS+=("  a real Prometheus ($($PROMETHEUS --version 2>&1 | head -1 | cut -d' ' -f3)) with prometheus.yml and alerts.yaml on it: every rule healthy, every dashboard query evaluates, the database alerts pending while postgres was stopped")
}

# ------------------------------------------------------------------------- the full build (way 1)
full_build() {
    if ! "$DOCKER" image inspect "$RUST_IMAGE" >/dev/null 2>&1; then
        banner "SKIPPED: the full two-stage build (deploy/Dockerfile way 1, compiling in $RUST_IMAGE)." \
            "No Rust builder image $RUST_IMAGE is in this engine, and no image registry is reachable" \
            "from here. Load one (docker load) into the engine at $ENGINE to run it."
        FULL="SKIPPED (no $RUST_IMAGE in the engine)"
        return 0
    fi
    log "the full two-stage build: $RUST_IMAGE is here (legacy builder, --network host for crates.io)"
    DOCKER_BUILDKIT=0 "$DOCKER" build --force-rm --network host -f "$ROOT/deploy/Dockerfile" \
        --build-arg RUST_IMAGE="$RUST_IMAGE" --build-arg RUNTIME_IMAGE="$BASE_IMAGE" \
        -t "$FULL_IMAGE" "$ROOT" >"$LOGS/build-full.log" 2>&1 || {
        tail -30 "$LOGS/build-full.log"
        die "the full two-stage build failed (log: $LOGS/build-full.log)"
    }
    run_checks "$FULL_IMAGE" "full build"
    FULL="PASS"
}

# ------------------------------------------------------------------------------------------ main
main() {
    local t0=$SECONDS
    mkdir -p "$STATE" "$LOGS"
    [[ -x $BIN ]] || die "no release binary at $BIN: the test stage (cargo test --release) or cargo build --release builds it"
    [[ -x $GRPCURL ]] || die "no grpcurl at $GRPCURL: the tools stage installs it (CI_ONLY=tools bash .ci/run)"
    log "binary: $BIN ($(du -m "$BIN" | cut -f1) MB, built $(date -u -r "$BIN" +'%F %T') UTC)"
    install_packages
    start_engine
    ensure_base
    build_image
    RESULTS=()
    run_checks "$IMAGE" "runtime (CI)"
    compose_checks "$IMAGE"
    full_build
    echo
    banner "image stage: all checks passed in $((SECONDS - t0)) s" \
        "$IMAGE built from $BIN in $((BUILD_MS / 1000)).$((BUILD_MS % 1000 / 100)) s; base $BASE_IMAGE $(( $("$DOCKER" image inspect -f '{{.Size}}' "$BASE_IMAGE") / 1000000 )) MB" \
        "${RESULTS[@]}" \
        "full two-stage build: $FULL"
}

# One line: bash reads a script as it runs it, so an edit of this file while it runs cannot
# make it run anything after main.
main "$@"; exit $?
