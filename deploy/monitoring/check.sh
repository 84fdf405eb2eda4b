#!/usr/bin/env bash
# Offline checks of the operator's kit in deploy/monitoring/ and deploy/compose.yaml; the
# `monitoring` stage of .ci/run. Needs no server and no Docker engine:
#
#   1. promtool check rules alerts.yaml, and promtool test rules alerts_test.yaml (each alert
#      fires in one case and does not in another);
#   2. a self-test of those unit tests: each rule broken on purpose (its comparison turned
#      around, its expression made always true, its `for:` removed) must fail them;
#   3. promtool check config prometheus.yml (the compose file's Prometheus, with the rules);
#   4. docker-compose -f deploy/compose.yaml config -q, and that the files it mounts into
#      Prometheus and Grafana exist and fit (the provisioned dashboard path, the data source);
#   5. the dashboard's structure: valid JSON, unique panel ids, panels that do not overlap, every
#      query with a refId, on the dashboard's `datasource` variable.
# That every metric the dashboard and the rules query exists is checked against a running server
# by `cargo test --release` (tests/service/monitoring.rs); deploy/image_check.sh starts the compose
# file's chess-server and postgres services.
#
# Tools, installed with apt when missing (as root): promtool (Debian's `prometheus` package, its
# service kept from starting) and docker-compose (Debian's, 1.29). PyYAML comes from .ci/venv (the
# tools stage of .ci/run makes it) or the system's python3-yaml.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MON="$ROOT/deploy/monitoring"
VENV="${CHESS_TOOLS_VENV:-$ROOT/.ci/venv}"

log() { printf '[monitoring] %s\n' "$*"; }
die() {
    printf '[monitoring] ERROR: %s\n' "$*" >&2
    exit 1
}

POLICY_RC_D_OURS=0
cleanup() { if [[ $POLICY_RC_D_OURS == 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT

apt_install() { # package...
    [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || die "$* missing, and no root apt-get to install it"
    # The prometheus package's postinst would start a Prometheus service where no policy
    # forbids it: forbid it for the install (the standard policy-rc.d "101: not allowed").
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 0755 /usr/sbin/policy-rc.d
        POLICY_RC_D_OURS=1
    fi
    log "installing $* with apt-get"
    local -a apt=(apt-get -y -q -o DPkg::Lock::Timeout=600)
    if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "$@" >/tmp/chess-monitoring-apt.log 2>&1; then
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" update >>/tmp/chess-monitoring-apt.log 2>&1 || true
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "$@" >>/tmp/chess-monitoring-apt.log 2>&1 ||
            { tail -20 /tmp/chess-monitoring-apt.log; die "apt-get install $* failed"; }
    fi
    cleanup
    POLICY_RC_D_OURS=0
}

ensure_tools() {
    local -a need=()
    command -v promtool >/dev/null || need+=(prometheus)
    command -v docker-compose >/dev/null || need+=(docker-compose)
    ((${#need[@]} == 0)) || apt_install "${need[@]}"
    command -v promtool >/dev/null || die "no promtool after installing prometheus"
    command -v docker-compose >/dev/null || die "no docker-compose after installing it"
    PY="$VENV/bin/python"
    if ! "$PY" -c 'import yaml' 2>/dev/null; then
        PY=python3
        python3 -c 'import yaml' 2>/dev/null || apt_install python3-yaml
    fi
    log "promtool: $(promtool --version 2>&1 | head -1)"
    log "docker-compose: $(docker-compose version --short 2>&1)"
}

main() {
    ensure_tools
    cd "$MON"

    echo "== promtool check rules alerts.yaml"
    promtool check rules alerts.yaml
    echo "== promtool test rules alerts_test.yaml"
    promtool test rules alerts_test.yaml

    echo "== self-test: every rule broken on purpose fails its unit tests"
    "$PY" - <<'PY'
import copy, os, re, shutil, subprocess, sys, tempfile
import yaml

base = yaml.safe_load(open("alerts.yaml"))
work = tempfile.mkdtemp()
shutil.copy("alerts_test.yaml", work)

def passes(doc):
    with open(os.path.join(work, "alerts.yaml"), "w") as f:
        yaml.safe_dump(doc, f)
    return subprocess.run(["promtool", "test", "rules", "alerts_test.yaml"], cwd=work,
                          capture_output=True).returncode == 0

if not passes(base):
    sys.exit("the unit tests fail on the rules as they are")
flip = {"==": "!=", ">": "<="}
missed, tried = [], 0
for i, rule in enumerate(base["groups"][0]["rules"]):
    breakages = {
        "comparison turned around": re.sub(r"(==|>) ([0-9.]+)\s*$", lambda m: f"{flip[m.group(1)]} {m.group(2)}", rule["expr"].strip()),
        "always true": rule["expr"].strip() + " or vector(1)",
    }
    for what, expr in breakages.items():
        doc = copy.deepcopy(base)
        doc["groups"][0]["rules"][i]["expr"] = expr
        tried += 1
        if passes(doc):
            missed.append(f"{rule['alert']}: {what}")
    if "for" in rule:
        doc = copy.deepcopy(base)
        del doc["groups"][0]["rules"][i]["for"]
        tried += 1
        if passes(doc):
            missed.append(f"{rule['alert']}: no for")
shutil.rmtree(work)
for m in missed:
    print(f"FAIL: a broken rule passes the unit tests: {m}")
print(f"self-test: {tried - len(missed)} of {tried} breakages caught by alerts_test.yaml")
sys.exit(1 if missed else 0)
PY

    echo "== promtool check config prometheus.yml"
    promtool check config prometheus.yml

    echo "== docker-compose -f deploy/compose.yaml config -q"
    docker-compose -f "$ROOT/deploy/compose.yaml" config -q
    echo "-- valid"

    echo "== compose mounts, Grafana provisioning, the dashboard's structure"
    "$PY" - "$ROOT" <<'PY'
import json, os, sys
import yaml

root = sys.argv[1]
deploy = os.path.join(root, "deploy")
compose = yaml.safe_load(open(os.path.join(deploy, "compose.yaml")))
failures = []
def check(cond, what):
    if not cond:
        failures.append(what)

def mounts(service):
    out = {}
    for v in compose["services"][service].get("volumes", []):
        src, dst = v.split(":")[:2]
        out[dst] = src
    return out

# Every bind mount's source exists (relative to the compose file).
for name, svc in compose["services"].items():
    for dst, src in mounts(name).items():
        if src.startswith("."):
            check(os.path.exists(os.path.join(deploy, src)), f"{name}: mounts {src}, which does not exist")
# Prometheus: its config and the rules it names, side by side.
prom = mounts("prometheus")
cfg_dst = next(a.split("=", 1)[1] for a in compose["services"]["prometheus"]["command"] if a.startswith("--config.file="))
check(cfg_dst in prom, f"prometheus: --config.file {cfg_dst} is not mounted")
cfg = yaml.safe_load(open(os.path.join(deploy, prom[cfg_dst])))
for rf in cfg.get("rule_files", []):
    check(os.path.join(os.path.dirname(cfg_dst), rf) in prom, f"prometheus: rule file {rf} is not mounted beside its config")
jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
check("chess-server" in jobs, "prometheus: no job chess-server (the job the alert rules select)")
port = compose["services"]["chess-server"]["environment"]["CHESS_METRICS_LISTEN"].rsplit(":", 1)[1]
targets = [t for sc in jobs.get("chess-server", {}).get("static_configs", []) for t in sc["targets"]]
check(targets == [f"chess-server:{port}"], f"prometheus: scrapes {targets}, the server's metrics are on chess-server:{port}")
# Grafana: the data source is the compose file's Prometheus; the dashboard provider's path holds
# the dashboard the compose file mounts.
graf = mounts("grafana")
prov = graf.get("/etc/grafana/provisioning")
check(prov is not None, "grafana: no provisioning mounted at /etc/grafana/provisioning")
if prov:
    prov = os.path.join(deploy, prov)
    ds = yaml.safe_load(open(os.path.join(prov, "datasources", "prometheus.yaml")))["datasources"]
    check(any(d["type"] == "prometheus" and d["url"] == "http://prometheus:9090" and d.get("isDefault") for d in ds),
          "grafana: no default Prometheus data source at http://prometheus:9090")
    providers = yaml.safe_load(open(os.path.join(prov, "dashboards", "chess.yaml")))["providers"]
    paths = [p["options"]["path"] for p in providers]
    dashboards = [dst for dst, src in graf.items() if src.endswith("grafana-dashboard.json")]
    check(len(dashboards) == 1 and os.path.dirname(dashboards[0]) in paths,
          f"grafana: the dashboard is mounted at {dashboards}, the provider reads {paths}")
    home = compose["services"]["grafana"]["environment"].get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
    check(home in dashboards, f"grafana: the home dashboard {home} is not the one mounted")

# The dashboard.
dash = json.load(open(os.path.join(deploy, "monitoring", "grafana-dashboard.json")))
check(dash.get("uid") == "chess-service" and dash.get("title"), "dashboard: uid chess-service and a title")
variables = {v["name"]: v for v in dash["templating"]["list"]}
check(variables.get("datasource", {}).get("type") == "datasource", "dashboard: no datasource variable")
ids, cells = set(), set()
queries = 0
for p in dash["panels"]:
    check(p["id"] not in ids, f"dashboard: panel id {p['id']} repeats")
    ids.add(p["id"])
    g = p["gridPos"]
    check(g["x"] + g["w"] <= 24, f"dashboard: panel {p['title']!r} is wider than the grid")
    for x in range(g["x"], g["x"] + g["w"]):
        for y in range(g["y"], g["y"] + g["h"]):
            check((x, y) not in cells, f"dashboard: panel {p['title']!r} overlaps another at {x},{y}")
            cells.add((x, y))
    if p["type"] == "row":
        continue
    check(p.get("datasource", {}).get("uid") == "${datasource}", f"dashboard: panel {p['title']!r} does not use $datasource")
    check(bool(p.get("description")), f"dashboard: panel {p['title']!r} has no description")
    refs = [t.get("refId") for t in p.get("targets", [])]
    check(refs and len(set(refs)) == len(refs), f"dashboard: panel {p['title']!r} has no targets or repeats a refId")
    for t in p.get("targets", []):
        check(bool(t.get("expr")), f"dashboard: panel {p['title']!r} has a target without expr")
        queries += 1
for f in failures:
    print(f"FAIL: {f}")
print(f"compose mounts and provisioning checked; dashboard: {len(dash['panels'])} panels, {queries} queries")
sys.exit(1 if failures else 0)
PY
    echo "deploy/monitoring/check.sh: all checks passed"
}

main "$@"
