#!/usr/bin/env python3
"""Structural checks on the rendered chess-server manifests, beyond what the schema says.

kubernetes-validate proves every object is well-formed for a Kubernetes version. This proves the
objects fit together and keep the properties deploy/README.md promises: one replica (or, with
--mode postgres, a Deployment of stateless replicas whose only volumes are the TLS and token
Secrets, with the database URL from a Secret), native gRPC probes on the numeric plaintext health
port, the hardened securityContext, the env configuration, the TLS and token Secrets mounted
read-only where the configuration points, a NetworkPolicy admitting only the gRPC, health and
metrics ports, selectors that match, and so on.

    kubectl kustomize deploy/k8s/base | python3 deploy/check_manifests.py -
    kubectl kustomize deploy/k8s/overlays/example | python3 deploy/check_manifests.py --namespace chess -
    kubectl kustomize deploy/k8s/overlays/postgres | python3 deploy/check_manifests.py --mode postgres --namespace chess -
    python3 deploy/check_manifests.py --self-test rendered.yaml   # each check must catch its breakage

Needs PyYAML (installed with kubernetes-validate).
"""

from __future__ import annotations

import argparse
import copy
import sys

import yaml

PORT = 50051
HEALTH_PORT = 50052
METRICS_PORT = 9090
TLS_DIR = "/etc/chess/tls"
TOKENS_DIR = "/etc/chess/tokens"
UID = GID = 10001
DATA_DIR = "/var/lib/chess"
HEALTH_SERVICE = "chess.v1.ChessService"
ENV_KEYS = [
    "CHESS_LISTEN",
    "CHESS_DATA_DIR",
    "CHESS_DURABILITY",
    "CHESS_LOG_FORMAT",
    "RUST_LOG",
    "CHESS_PERFT_MAX_DEPTH",
    "CHESS_PERFT_MAX_CONCURRENT",
    "CHESS_CACHE_GAMES",
    "CHESS_METRICS_LISTEN",
    "CHESS_TLS_CERT",
    "CHESS_TLS_KEY",
    "CHESS_AUTH_TOKENS",
    "CHESS_HEALTH_LISTEN",
]
SELECTOR_LABELS = {"app.kubernetes.io/name": "chess-server", "app.kubernetes.io/instance": "chess-server"}
RECOMMENDED_LABELS = ["app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of",
                      "app.kubernetes.io/component", "app.kubernetes.io/managed-by"]
# --mode postgres: the sled settings give way to the database's; the URL comes from a Secret.
PG_ENV_KEYS = [k for k in ENV_KEYS if k not in ("CHESS_DATA_DIR", "CHESS_DURABILITY")] + [
    "CHESS_DATABASE_POOL_SIZE",
    "CHESS_DATABASE_TIMEOUT_MS",
]
PG_URL_ENV = "CHESS_DATABASE_URL"
PG_MIN_REPLICAS = 2
READINESS_TIMEOUT_DEFAULT_S = 1
SERVER_SHUTDOWN_S = 10  # what the server promises on SIGTERM
CLUSTER_SCOPED = {"Namespace"}


class Checker:
    def __init__(self, docs: list[dict], namespace: str | None, mode: str = "statefulset"):
        self.docs = docs
        self.namespace = namespace
        self.pg = mode == "postgres"
        self.failures: list[str] = []
        self.passed = 0

    def check(self, cond: bool, what: str) -> bool:
        if cond:
            self.passed += 1
        else:
            self.failures.append(what)
        return cond

    def of_kind(self, kind: str) -> list[dict]:
        return [d for d in self.docs if d.get("kind") == kind]

    def run(self) -> None:
        c = self.check
        for d in self.docs:
            name = f'{d.get("kind")}/{d.get("metadata", {}).get("name")}'
            labels = d.get("metadata", {}).get("labels") or {}
            if d.get("kind") not in CLUSTER_SCOPED:
                missing = [k for k in RECOMMENDED_LABELS if k not in labels]
                c(not missing, f"{name}: missing labels {missing}")
                if self.namespace is not None:
                    c(d["metadata"].get("namespace") == self.namespace,
                      f"{name}: namespace is {d['metadata'].get('namespace')!r}, want {self.namespace!r}")
        if self.namespace is not None:
            nss = [d for d in self.of_kind("Namespace") if d["metadata"]["name"] == self.namespace]
            if c(len(nss) == 1, f"Namespace {self.namespace!r} is not in the render"):
                c((nss[0]["metadata"].get("labels") or {}).get("pod-security.kubernetes.io/enforce") == "restricted",
                  "Namespace: Pod Security Standard 'restricted' is not enforced")

        if self.pg:
            deps = self.of_kind("Deployment")
            c(not self.of_kind("StatefulSet"), "--mode postgres: replicas are stateless, want no StatefulSet")
            if not c(len(deps) == 1, f"want exactly one Deployment, found {len(deps)}"):
                return
            spec = deps[0]["spec"]
            c(isinstance(spec.get("replicas"), int) and spec["replicas"] >= PG_MIN_REPLICAS,
              f"Deployment replicas must be at least {PG_MIN_REPLICAS} (the point of this overlay), is {spec.get('replicas')!r}")
        else:
            sts_all = self.of_kind("StatefulSet")
            if not c(len(sts_all) == 1, f"want exactly one StatefulSet, found {len(sts_all)}"):
                return
            spec = sts_all[0]["spec"]
            c(spec.get("replicas") == 1, f"StatefulSet replicas must be 1 (sled is single-writer), is {spec.get('replicas')!r}")
        pod_labels = spec["template"]["metadata"].get("labels") or {}
        sel = (spec.get("selector") or {}).get("matchLabels") or {}
        c(all(pod_labels.get(k) == v for k, v in SELECTOR_LABELS.items()), "pod template lacks the selector labels")
        c(sel and all(pod_labels.get(k) == v for k, v in sel.items()), "the workload's selector does not match its pods")

        pod = spec["template"]["spec"]
        grace = pod.get("terminationGracePeriodSeconds", 30)
        c(grace >= SERVER_SHUTDOWN_S + 10, f"terminationGracePeriodSeconds {grace} does not cover a {SERVER_SHUTDOWN_S} s shutdown with margin")
        c(pod.get("automountServiceAccountToken") is False, "the pod mounts a service account token it never uses")

        psc = pod.get("securityContext") or {}
        c(psc.get("runAsNonRoot") is True, "pod securityContext.runAsNonRoot is not true")
        c(psc.get("runAsUser") == UID and psc.get("runAsGroup") == GID, f"pod must run as {UID}:{GID}")
        c(psc.get("fsGroup") == GID,
          f"pod fsGroup must be {GID} so the Secrets (mode 0440) are readable{'' if self.pg else ' and the volume writable'}")
        c((psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault", "pod seccompProfile is not RuntimeDefault")

        containers = pod.get("containers") or []
        if not c(len(containers) == 1, f"want one container, found {len(containers)}"):
            return
        ctr = containers[0]
        ports = ctr.get("ports") or []
        c(any(p.get("containerPort") == PORT and p.get("name") == "grpc" for p in ports), f"container port {PORT} named grpc is missing")
        c(any(p.get("containerPort") == HEALTH_PORT and p.get("name") == "health" for p in ports),
          f"container port {HEALTH_PORT} named health is missing")
        c(any(p.get("containerPort") == METRICS_PORT and p.get("name") == "metrics" for p in ports),
          f"container port {METRICS_PORT} named metrics is missing")
        # Prometheus finds the pod by the usual scrape annotations.
        notes = spec["template"]["metadata"].get("annotations") or {}
        c(notes.get("prometheus.io/scrape") == "true"
          and notes.get("prometheus.io/port") == str(METRICS_PORT)
          and notes.get("prometheus.io/path") == "/metrics",
          f"pod template lacks the scrape annotations (prometheus.io/scrape \"true\", port \"{METRICS_PORT}\", path /metrics): {notes}")

        for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
            probe = ctr.get(kind)
            if not c(isinstance(probe, dict), f"{kind} is missing"):
                continue
            grpc = probe.get("grpc")
            if not c(isinstance(grpc, dict), f"{kind} is not a native grpc probe"):
                continue
            port = grpc.get("port")
            c(type(port) is int and port == HEALTH_PORT,
              f"{kind}.grpc.port must be the number {HEALTH_PORT} (the plaintext health port; probes cannot speak TLS), is {port!r}")
            if kind == "readinessProbe":
                c(grpc.get("service") == HEALTH_SERVICE, f"readinessProbe must check {HEALTH_SERVICE!r}, checks {grpc.get('service')!r}")
            else:
                c(grpc.get("service", "") == "", f"{kind} must check the overall server (service \"\"), checks {grpc.get('service')!r}")
        startup = ctr.get("startupProbe") or {}
        c(startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3) >= 60,
          "startupProbe allows less than 60 s for the store to open")

        res = ctr.get("resources") or {}
        for part in ("requests", "limits"):
            for r in ("cpu", "memory"):
                c(r in (res.get(part) or {}), f"resources.{part}.{r} is missing")

        csc = ctr.get("securityContext") or {}
        c(csc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation is not false")
        c(csc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem is not true")
        c((csc.get("capabilities") or {}).get("drop") == ["ALL"], "capabilities.drop is not [ALL]")
        c(not (csc.get("capabilities") or {}).get("add"), "capabilities are added")
        c(csc.get("privileged") in (None, False), "container is privileged")
        eff_nonroot = csc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        eff_uid = csc.get("runAsUser", psc.get("runAsUser"))
        c(eff_nonroot is True and eff_uid == UID, "container does not run as the non-root chess user")
        c((csc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault",
          "container seccompProfile is not RuntimeDefault")

        # Configuration: all of it from one generated ConfigMap, and consistent with the pod.
        c(ctr.get("command") == ["/usr/local/bin/chess-server"] and not ctr.get("args"),
          "container must set command (and no args) so the image's CMD flags do not override the ConfigMap")
        refs = [e["configMapRef"]["name"] for e in ctr.get("envFrom") or [] if "configMapRef" in e]
        cms = {d["metadata"]["name"]: d for d in self.of_kind("ConfigMap")}
        keys = PG_ENV_KEYS if self.pg else ENV_KEYS
        if c(len(refs) == 1 and refs[0] in cms, f"envFrom must reference one ConfigMap of the render, references {refs}"):
            data = cms[refs[0]].get("data") or {}
            missing = [k for k in keys if k not in data]
            c(not missing, f"ConfigMap lacks {missing}")
            extra = [k for k in data if k not in keys]
            c(not extra, f"ConfigMap has keys beyond the checked list{' (or that a database deployment should not set)' if self.pg else ''} (add a new one to ENV_KEYS): {extra}")
            if not self.pg:
                c(data.get("CHESS_DATA_DIR") == DATA_DIR, f"CHESS_DATA_DIR must be {DATA_DIR}")
                c(data.get("CHESS_DURABILITY") == "fsync", "CHESS_DURABILITY must be fsync")
            c(str(data.get("CHESS_LISTEN", "")).endswith(f":{PORT}"), f"CHESS_LISTEN must listen on port {PORT}")
            c(data.get("CHESS_LOG_FORMAT") == "json", "CHESS_LOG_FORMAT must be json")
            numbers = ["CHESS_PERFT_MAX_DEPTH", "CHESS_PERFT_MAX_CONCURRENT", "CHESS_CACHE_GAMES"]
            if self.pg:
                numbers += ["CHESS_DATABASE_POOL_SIZE", "CHESS_DATABASE_TIMEOUT_MS"]
            for k in numbers:
                c(str(data.get(k, "")).isdigit(), f"{k} must be a whole number, is {data.get(k)!r}")
            c(str(data.get("CHESS_HEALTH_LISTEN", "")).endswith(f":{HEALTH_PORT}"),
              f"CHESS_HEALTH_LISTEN must listen on port {HEALTH_PORT}")
            c(str(data.get("CHESS_METRICS_LISTEN", "")).endswith(f":{METRICS_PORT}"),
              f"CHESS_METRICS_LISTEN must listen on port {METRICS_PORT}")
            # The files the configuration names come from the Secrets, mounted read-only.
            mounts_by_path = {m["mountPath"]: m for m in ctr.get("volumeMounts") or []}
            vols_by_name = {v["name"]: v for v in pod.get("volumes") or []}
            for key, directory in (("CHESS_TLS_CERT", TLS_DIR), ("CHESS_TLS_KEY", TLS_DIR), ("CHESS_AUTH_TOKENS", TOKENS_DIR)):
                value = str(data.get(key, ""))
                mount = mounts_by_path.get(directory) or {}
                secret = (vols_by_name.get(mount.get("name")) or {}).get("secret") or {}
                c(value.startswith(directory + "/") and bool(secret.get("secretName")) and mount.get("readOnly") is True,
                  f"{key}={value!r} is not a file of a Secret mounted read-only at {directory}")
            if self.pg and str(data.get("CHESS_DATABASE_TIMEOUT_MS", "")).isdigit():
                ready = (ctr.get("readinessProbe") or {}).get("timeoutSeconds", READINESS_TIMEOUT_DEFAULT_S)
                c(int(data["CHESS_DATABASE_TIMEOUT_MS"]) < ready * 1000,
                  "CHESS_DATABASE_TIMEOUT_MS must be below the readiness probe's timeout, so calls fail as UNAVAILABLE in time")
        if self.pg:
            env = ctr.get("env") or []
            secret_ref = [e for e in env if e.get("name") == PG_URL_ENV
                          and "secretKeyRef" in (e.get("valueFrom") or {})]
            c(len(env) == 1 and len(secret_ref) == 1,
              f"inline env must be exactly {PG_URL_ENV} from a Secret (secretKeyRef), is {[e.get('name') for e in env]}")
        else:
            c(not ctr.get("env"), "env must come from the ConfigMap only (envFrom), not inline env")

        if self.pg:
            # Stateless: the TLS and token Secrets, mounted read-only, are the only volumes; no
            # data volume, no scratch volume, no claim (the games are in the database).
            vols = pod.get("volumes") or []
            mounts = ctr.get("volumeMounts") or []
            not_secret = [v.get("name") for v in vols if set(v) - {"name"} != {"secret"}]
            c(not not_secret, f"--mode postgres: volumes other than Secrets {not_secret} (the games are in the database)")
            c(sorted(m.get("mountPath") for m in mounts) == sorted([TLS_DIR, TOKENS_DIR]),
              f"--mode postgres: mounts must be exactly {TLS_DIR} and {TOKENS_DIR}, are {[m.get('mountPath') for m in mounts]}")
            c(all(m.get("readOnly") is True for m in mounts), "--mode postgres: every mount must be read-only")
            c(len(vols) == 2 and sorted(v.get("name") for v in vols) == sorted(m.get("name") for m in mounts),
              f"--mode postgres: want exactly two volumes, the Secrets the two mounts use, have {[v.get('name') for v in vols]}")
            c(not self.of_kind("PersistentVolumeClaim") and not spec.get("volumeClaimTemplates"),
              "--mode postgres: a replica must claim no volume (the games are in the database)")
        else:
            # Volumes: data on the claim template, /tmp on an emptyDir; nothing else writable.
            mounts = {m["mountPath"]: m["name"] for m in ctr.get("volumeMounts") or []}
            vct = [t["metadata"]["name"] for t in spec.get("volumeClaimTemplates") or []]
            c(len(vct) == 1, f"want one volumeClaimTemplate, found {vct}")
            c(mounts.get(DATA_DIR) in vct, f"{DATA_DIR} is not mounted from the volumeClaimTemplate")
            for t in spec.get("volumeClaimTemplates") or []:
                c(t["spec"].get("accessModes") == ["ReadWriteOnce"], "the data volume must be ReadWriteOnce (one writer)")
            vols = {v["name"]: v for v in pod.get("volumes") or []}
            c("emptyDir" in vols.get(mounts.get("/tmp"), {}), "/tmp is not an emptyDir")

        # Services: a ClusterIP with appProtocol grpc, and (StatefulSet) a headless governing one.
        services = self.of_kind("Service")
        if not self.pg:
            headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
            c(spec.get("serviceName") in [s["metadata"]["name"] for s in headless],
              f"serviceName {spec.get('serviceName')!r} is not a headless Service of the render")
        c(any(s["spec"].get("type", "ClusterIP") == "ClusterIP" and s["spec"].get("clusterIP") != "None" for s in services),
          "no ClusterIP Service")
        for s in services:
            n = s["metadata"]["name"]
            ssel = s["spec"].get("selector") or {}
            c(ssel and all(pod_labels.get(k) == v for k, v in ssel.items()), f"Service {n} selector does not match the pod")
            for p in s["spec"].get("ports") or []:
                c(p.get("appProtocol") == "grpc", f"Service {n} port {p.get('name')} lacks appProtocol: grpc")
                c(p.get("targetPort") in ("grpc", PORT), f"Service {n} port does not target the grpc container port")

        # NetworkPolicy: ingress to the pod on the gRPC, health and metrics ports only.
        policies = self.of_kind("NetworkPolicy")
        if c(len(policies) == 1, f"want one NetworkPolicy, found {len(policies)}"):
            np = policies[0]["spec"]
            nsel = (np.get("podSelector") or {}).get("matchLabels") or {}
            c(nsel and all(pod_labels.get(k) == v for k, v in nsel.items()), "NetworkPolicy podSelector does not match the pod")
            c("Ingress" in (np.get("policyTypes") or []), "NetworkPolicy does not govern Ingress")
            rules = np.get("ingress") or []
            admitted = set()
            for rule in rules:
                rule_ports = rule.get("ports") or []
                c(bool(rule_ports), "a NetworkPolicy ingress rule admits every port")
                admitted |= {p.get("port") for p in rule_ports}
            c(admitted == {PORT, HEALTH_PORT, METRICS_PORT},
              f"NetworkPolicy admits ports {sorted(map(str, admitted))}, want exactly {PORT}, {HEALTH_PORT}, {METRICS_PORT}")

        pdbs = self.of_kind("PodDisruptionBudget")
        if c(len(pdbs) == 1, f"want one PodDisruptionBudget, found {len(pdbs)}"):
            psel = (pdbs[0]["spec"].get("selector") or {}).get("matchLabels") or {}
            c(psel and all(pod_labels.get(k) == v for k, v in psel.items()), "PodDisruptionBudget selector does not match the pod")
            if self.pg:
                pspec = pdbs[0]["spec"]
                replicas = spec.get("replicas") or 0
                keeps = (pspec["minAvailable"] if isinstance(pspec.get("minAvailable"), int)
                         else replicas - pspec["maxUnavailable"] if isinstance(pspec.get("maxUnavailable"), int)
                         else None)
                c(keeps is not None and 1 <= keeps < replicas,
                  "PodDisruptionBudget must keep at least one replica serving and still let a drain evict one (integer minAvailable/maxUnavailable)")

        image = ctr.get("image", "")
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        c(bool(tag) and tag != "latest", f"image {image!r} must carry a pinned tag")


def load(path: str) -> list[dict]:
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    with stream:
        return [d for d in yaml.safe_load_all(stream) if d]


def mutations(mode: str = "statefulset"):
    """(description, function that breaks a copy of the docs) pairs for --self-test."""
    if mode == "postgres":
        return pg_mutations()

    def sts(docs):
        return next(d for d in docs if d["kind"] == "StatefulSet")

    def ctr(docs):
        return sts(docs)["spec"]["template"]["spec"]["containers"][0]

    def set_(getter, *path_and_value):
        *path, value = path_and_value

        def f(docs):
            node = getter(docs)
            for p in path[:-1]:
                node = node[p]
            if value is KeyError:
                node.pop(path[-1], None)
            else:
                node[path[-1]] = value
        return f

    return [
        ("replicas 2", set_(sts, "spec", "replicas", 2)),
        ("named probe port", set_(ctr, "livenessProbe", "grpc", "port", "grpc")),
        ("probe on the TLS port", set_(ctr, "readinessProbe", "grpc", "port", PORT)),
        ("no health port", lambda docs: ctr(docs)["ports"].pop(1)),
        ("no metrics port", lambda docs: ctr(docs)["ports"].pop(2)),
        ("no scrape annotation", lambda docs: sts(docs)["spec"]["template"]["metadata"]["annotations"].pop("prometheus.io/scrape")),
        ("metrics off", lambda docs: next(d for d in docs if d["kind"] == "ConfigMap")["data"].pop("CHESS_METRICS_LISTEN")),
        ("tokens Secret not mounted", lambda docs: ctr(docs)["volumeMounts"].pop()),
        ("TLS key outside the Secret", lambda docs: next(d for d in docs if d["kind"] == "ConfigMap")["data"].update(CHESS_TLS_KEY="/tmp/tls.key")),
        ("no NetworkPolicy", lambda docs: docs.remove(next(d for d in docs if d["kind"] == "NetworkPolicy"))),
        ("NetworkPolicy admits every port", lambda docs: next(d for d in docs if d["kind"] == "NetworkPolicy")["spec"]["ingress"][0].pop("ports")),
        ("NetworkPolicy admits another port", lambda docs: next(d for d in docs if d["kind"] == "NetworkPolicy")["spec"]["ingress"][0]["ports"].append({"port": 22})),
        ("httpGet readiness", set_(ctr, "readinessProbe", {"tcpSocket": {"port": PORT}})),
        ("readiness on overall server", set_(ctr, "readinessProbe", "grpc", "service", KeyError)),
        ("no startup probe", set_(ctr, "startupProbe", KeyError)),
        ("writable root fs", set_(ctr, "securityContext", "readOnlyRootFilesystem", False)),
        ("privilege escalation", set_(ctr, "securityContext", "allowPrivilegeEscalation", True)),
        ("capabilities kept", set_(ctr, "securityContext", "capabilities", {"drop": ["NET_RAW"]})),
        ("root user", set_(sts, "spec", "template", "spec", "securityContext", "runAsUser", 0)),
        ("no fsGroup", set_(sts, "spec", "template", "spec", "securityContext", "fsGroup", KeyError)),
        ("no seccomp", set_(sts, "spec", "template", "spec", "securityContext", "seccompProfile", KeyError)),
        ("short grace period", set_(sts, "spec", "template", "spec", "terminationGracePeriodSeconds", 5)),
        ("no limits", set_(ctr, "resources", "limits", KeyError)),
        ("image CMD flags win", set_(ctr, "command", KeyError)),
        ("inline env", set_(ctr, "env", [{"name": "CHESS_LISTEN", "value": "0.0.0.0:1"}])),
        ("ConfigMap key missing", lambda docs: next(d for d in docs if d["kind"] == "ConfigMap")["data"].pop("CHESS_CACHE_GAMES")),
        ("durability off", lambda docs: next(d for d in docs if d["kind"] == "ConfigMap")["data"].update(CHESS_DURABILITY="none")),
        ("data dir not on PVC", lambda docs: ctr(docs)["volumeMounts"].pop(0)),
        ("no appProtocol", lambda docs: next(d for d in docs if d["kind"] == "Service")["spec"]["ports"][0].pop("appProtocol")),
        ("no headless Service", lambda docs: docs.remove(next(d for d in docs if d["kind"] == "Service" and d["spec"].get("clusterIP") == "None"))),
        ("no PDB", lambda docs: docs.remove(next(d for d in docs if d["kind"] == "PodDisruptionBudget"))),
        ("PDB selects nothing", lambda docs: next(d for d in docs if d["kind"] == "PodDisruptionBudget")["spec"]["selector"]["matchLabels"].update({"app.kubernetes.io/name": "other"})),
        ("latest image", set_(ctr, "image", "chess-server:latest")),
        ("missing labels", lambda docs: next(d for d in docs if d["kind"] == "Service")["metadata"]["labels"].pop("app.kubernetes.io/part-of")),
    ]


def pg_mutations():
    """--mode postgres breakages: each must be caught."""

    def dep(docs):
        return next(d for d in docs if d["kind"] == "Deployment")

    def ctr(docs):
        return dep(docs)["spec"]["template"]["spec"]["containers"][0]

    def cm(docs):
        return next(d for d in docs if d["kind"] == "ConfigMap")["data"]

    return [
        ("one replica", lambda docs: dep(docs)["spec"].update(replicas=1)),
        ("a data volume", lambda docs: (dep(docs)["spec"]["template"]["spec"]["volumes"].append({"name": "data", "emptyDir": {}}),
                                        ctr(docs)["volumeMounts"].append({"name": "data", "mountPath": DATA_DIR}))),
        ("an unmounted extra volume", lambda docs: dep(docs)["spec"]["template"]["spec"]["volumes"].append(
            {"name": "extra", "secret": {"secretName": "other"}})),
        ("a PVC", lambda docs: docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                            "metadata": {"name": "data", "namespace": "chess", "labels": {}}})),
        ("tokens Secret not mounted", lambda docs: ctr(docs)["volumeMounts"].pop()),
        ("TLS Secret writable", lambda docs: ctr(docs)["volumeMounts"][0].update(readOnly=False)),
        ("TLS key outside the Secret", lambda docs: cm(docs).update(CHESS_TLS_KEY="/tmp/tls.key")),
        ("no health listener", lambda docs: cm(docs).pop("CHESS_HEALTH_LISTEN")),
        ("no auth tokens", lambda docs: cm(docs).pop("CHESS_AUTH_TOKENS")),
        ("no fsGroup", lambda docs: dep(docs)["spec"]["template"]["spec"]["securityContext"].pop("fsGroup")),
        ("no health port", lambda docs: ctr(docs)["ports"].pop(1)),
        ("no metrics port", lambda docs: ctr(docs)["ports"].pop(2)),
        ("scrape annotation on another port", lambda docs: dep(docs)["spec"]["template"]["metadata"]["annotations"].update({"prometheus.io/port": "50051"})),
        ("metrics off", lambda docs: cm(docs).pop("CHESS_METRICS_LISTEN")),
        ("probe on the TLS port", lambda docs: ctr(docs)["readinessProbe"]["grpc"].update(port=PORT)),
        ("liveness on the TLS port", lambda docs: ctr(docs)["livenessProbe"]["grpc"].update(port=PORT)),
        ("no NetworkPolicy", lambda docs: docs.remove(next(d for d in docs if d["kind"] == "NetworkPolicy"))),
        ("NetworkPolicy admits every port", lambda docs: next(d for d in docs if d["kind"] == "NetworkPolicy")["spec"]["ingress"][0].pop("ports")),
        ("NetworkPolicy admits another port", lambda docs: next(d for d in docs if d["kind"] == "NetworkPolicy")["spec"]["ingress"][0]["ports"].append({"port": 5432})),
        ("URL inline", lambda docs: ctr(docs).update(env=[{"name": PG_URL_ENV, "value": "postgres://u:p@db/chess"}])),
        ("URL in the ConfigMap", lambda docs: (ctr(docs).pop("env"), cm(docs).update({PG_URL_ENV: "postgres://u:p@db/chess"}))),
        ("sled data dir kept", lambda docs: cm(docs).update(CHESS_DATA_DIR=DATA_DIR)),
        ("no pool size", lambda docs: cm(docs).pop("CHESS_DATABASE_POOL_SIZE")),
        ("database timeout above readiness", lambda docs: cm(docs).update(CHESS_DATABASE_TIMEOUT_MS="5000")),
        ("readiness on overall server", lambda docs: ctr(docs)["readinessProbe"]["grpc"].pop("service")),
        ("named probe port", lambda docs: ctr(docs)["readinessProbe"]["grpc"].update(port="grpc")),
        ("no PDB", lambda docs: docs.remove(next(d for d in docs if d["kind"] == "PodDisruptionBudget"))),
        ("PDB blocks every drain", lambda docs: next(d for d in docs if d["kind"] == "PodDisruptionBudget")["spec"].update(maxUnavailable=0)),
        ("a StatefulSet", lambda docs: dep(docs).update(kind="StatefulSet")),
        ("writable root fs", lambda docs: ctr(docs)["securityContext"].update(readOnlyRootFilesystem=False)),
        ("latest image", lambda docs: ctr(docs).update(image="chess-server:latest")),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="rendered multi-document YAML, or - for stdin")
    ap.add_argument("--namespace", help="every namespaced object must be in this namespace, and the Namespace must be rendered")
    ap.add_argument("--self-test", action="store_true", help="check that each known breakage of the input is caught")
    ap.add_argument("--mode", choices=["statefulset", "postgres"], default="statefulset",
                    help="statefulset: the single-replica sled deployment (base); postgres: stateless replicas on PostgreSQL")
    args = ap.parse_args()
    docs = load(args.file)

    checker = Checker(docs, args.namespace, args.mode)
    checker.run()
    for f in checker.failures:
        print(f"FAIL: {f}")
    total = checker.passed + len(checker.failures)
    print(f"structural checks: {checker.passed} of {total} hold "
          f"({len(docs)} objects{', namespace ' + args.namespace if args.namespace else ''})")
    if checker.failures:
        return 1
    if args.self_test:
        missed = []
        for what, breaker in mutations(args.mode):
            broken = copy.deepcopy(docs)
            breaker(broken)
            m = Checker(broken, args.namespace, args.mode)
            m.run()
            if not m.failures:
                missed.append(what)
        for what in missed:
            print(f"FAIL: self-test: breakage not caught: {what}")
        total_mutations = len(mutations(args.mode))
        print(f"self-test: {total_mutations - len(missed)} of {total_mutations} breakages caught")
        if missed:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
