#!/usr/bin/env python3
"""Structural checks of a render that includes deploy/k8s/components/monitoring.

kubernetes-validate knows no Prometheus Operator CRDs (ServiceMonitor, PrometheusRule), so these
are checked here, against the objects they must fit: the metrics Service selects the workload's
pods and targets their metrics container port; the ServiceMonitor selects that Service, scrapes
its port named "metrics" at /metrics, and names the job "chess-server" (what the alert rules
select); the PrometheusRule carries exactly the rule groups of deploy/monitoring/alerts.yaml, each
rule with a severity, a summary and a description; everything in the workload's namespace.

    kubectl kustomize DIR | python3 deploy/check_monitoring.py --alerts deploy/monitoring/alerts.yaml -
    python3 deploy/check_monitoring.py --self-test --alerts deploy/monitoring/alerts.yaml rendered.yaml

With --self-test, each known breakage of the input must be caught. Needs PyYAML.
"""

from __future__ import annotations

import argparse
import copy
import sys

import yaml

API = "monitoring.coreos.com/v1"
METRICS_PORT = 9090
JOB = "chess-server"
SEVERITIES = {"critical", "warning"}
RECOMMENDED_LABELS = ["app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of",
                      "app.kubernetes.io/managed-by"]


class Checker:
    def __init__(self, docs: list[dict], groups: list, namespace: str | None):
        self.docs = docs
        self.groups = groups
        self.namespace = namespace
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
        workloads = self.of_kind("StatefulSet") + self.of_kind("Deployment")
        if not c(len(workloads) == 1, f"want one chess-server workload, found {len(workloads)}"):
            return
        workload = workloads[0]
        ns = workload["metadata"].get("namespace")
        if self.namespace is not None:
            c(ns == self.namespace, f"the workload is in namespace {ns!r}, want {self.namespace!r}")
        pod = workload["spec"]["template"]
        pod_labels = pod["metadata"].get("labels") or {}
        (ctr,) = pod["spec"]["containers"]
        named = {p.get("name"): p.get("containerPort") for p in ctr.get("ports") or []}
        c(named.get("metrics") == METRICS_PORT, f"the container has no port named metrics on {METRICS_PORT}")

        def selects(selector: dict, labels: dict) -> bool:
            return bool(selector) and all(labels.get(k) == v for k, v in selector.items())

        # The metrics Service: the one Service with a port named "metrics".
        services = self.of_kind("Service")
        metrics_services = [s for s in services
                            if any(p.get("name") == "metrics" for p in s["spec"].get("ports") or [])]
        if not c(len(metrics_services) == 1, f"want one Service with a port named metrics, found {len(metrics_services)}"):
            return
        svc = metrics_services[0]
        svc_name = svc["metadata"]["name"]
        svc_labels = svc["metadata"].get("labels") or {}
        c(selects(svc["spec"].get("selector") or {}, pod_labels), f"Service {svc_name} does not select the chess-server pods")
        (port,) = [p for p in svc["spec"]["ports"] if p.get("name") == "metrics"]
        c(port.get("port") == METRICS_PORT, f"Service {svc_name} port metrics is {port.get('port')}, want {METRICS_PORT}")
        c(port.get("targetPort") in ("metrics", METRICS_PORT), f"Service {svc_name} does not target the container's metrics port")
        c(port.get("appProtocol") == "http", f"Service {svc_name} port metrics lacks appProtocol: http")
        cms = self.of_kind("ConfigMap")
        listen = [str((cm.get("data") or {}).get("CHESS_METRICS_LISTEN", "")) for cm in cms]
        c(any(v.endswith(f":{METRICS_PORT}") for v in listen), f"no ConfigMap sets CHESS_METRICS_LISTEN to port {METRICS_PORT}")

        # The ServiceMonitor.
        monitors = self.of_kind("ServiceMonitor")
        if c(len(monitors) == 1, f"want one ServiceMonitor, found {len(monitors)}"):
            sm = monitors[0]
            spec = sm.get("spec") or {}
            c(sm.get("apiVersion") == API, f"ServiceMonitor apiVersion is {sm.get('apiVersion')!r}, want {API}")
            c(sm["metadata"].get("namespace") == ns, f"ServiceMonitor is in namespace {sm['metadata'].get('namespace')!r}, the workload in {ns!r}")
            sel = (spec.get("selector") or {}).get("matchLabels") or {}
            c(selects(sel, svc_labels), f"the ServiceMonitor's selector {sel} does not select Service {svc_name}")
            for other in services:
                if other is not svc and selects(sel, other["metadata"].get("labels") or {}):
                    c(not any(p.get("name") == "metrics" for p in other["spec"].get("ports") or []),
                      f"the ServiceMonitor also scrapes Service {other['metadata']['name']}")
            nsel = spec.get("namespaceSelector")
            c(nsel is None or ns in (nsel.get("matchNames") or []) or nsel.get("any") is True,
              "the ServiceMonitor's namespaceSelector leaves out its own namespace")
            endpoints = spec.get("endpoints") or []
            if c(len(endpoints) == 1, f"want one ServiceMonitor endpoint, found {len(endpoints)}"):
                ep = endpoints[0]
                c(ep.get("port") == "metrics", f"the endpoint scrapes port {ep.get('port')!r}, not the Service's port named metrics")
                c(ep.get("path", "/metrics") == "/metrics", f"the endpoint scrapes path {ep.get('path')!r}, not /metrics")
                c(ep.get("scheme", "http") == "http", f"the endpoint scheme is {ep.get('scheme')!r}; /metrics is plain HTTP")
            job_label = spec.get("jobLabel")
            c(job_label is not None and svc_labels.get(job_label) == JOB,
              f"the ServiceMonitor's jobLabel {job_label!r} does not give job {JOB!r} (the job the alert rules select)")
            for what, labels in (("ServiceMonitor", sm["metadata"].get("labels") or {}), (f"Service {svc_name}", svc_labels)):
                missing = [k for k in RECOMMENDED_LABELS if k not in labels]
                c(not missing, f"{what}: missing labels {missing}")

        # The PrometheusRule: the groups of alerts.yaml, rule for rule.
        rules = self.of_kind("PrometheusRule")
        if c(len(rules) == 1, f"want one PrometheusRule, found {len(rules)}"):
            pr = rules[0]
            c(pr.get("apiVersion") == API, f"PrometheusRule apiVersion is {pr.get('apiVersion')!r}, want {API}")
            c(pr["metadata"].get("namespace") == ns, f"PrometheusRule is in namespace {pr['metadata'].get('namespace')!r}, the workload in {ns!r}")
            missing = [k for k in RECOMMENDED_LABELS if k not in (pr["metadata"].get("labels") or {})]
            c(not missing, f"PrometheusRule: missing labels {missing}")
            groups = (pr.get("spec") or {}).get("groups")
            c(groups == self.groups,
              "the PrometheusRule's groups differ from deploy/monitoring/alerts.yaml (run python3 deploy/monitoring/prometheusrule.py)")
            alerts = [r for g in groups or [] for r in g.get("rules") or []]
            c(len(alerts) >= 10, f"the PrometheusRule has {len(alerts)} rules")
            names = [r.get("alert") for r in alerts]
            c(len(set(names)) == len(names), f"alert names repeat: {names}")
            for r in alerts:
                n = r.get("alert", "?")
                c(isinstance(r.get("alert"), str) and isinstance(r.get("expr"), str), f"rule {n}: not an alert with an expr")
                c((r.get("labels") or {}).get("severity") in SEVERITIES, f"rule {n}: severity must be one of {sorted(SEVERITIES)}")
                notes = r.get("annotations") or {}
                c(bool(notes.get("summary")) and bool(notes.get("description")), f"rule {n}: wants a summary and a description")
                c(f'job="{JOB}"' in str(r.get("expr")), f'rule {n}: its expression does not select job="{JOB}"')


def load(path: str) -> list[dict]:
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    with stream:
        return [d for d in yaml.safe_load_all(stream) if d]


def mutations():
    """(description, function that breaks a copy of the docs) pairs for --self-test."""
    def one(kind):
        return lambda docs: next(d for d in docs if d["kind"] == kind)

    sm, pr = one("ServiceMonitor"), one("PrometheusRule")

    def svc(docs):
        return next(d for d in docs if d["kind"] == "Service"
                    and any(p.get("name") == "metrics" for p in d["spec"]["ports"]))

    def first_rule(docs):
        return pr(docs)["spec"]["groups"][0]["rules"][0]

    return [
        ("no ServiceMonitor", lambda docs: docs.remove(sm(docs))),
        ("no PrometheusRule", lambda docs: docs.remove(pr(docs))),
        ("no metrics Service", lambda docs: docs.remove(svc(docs))),
        ("ServiceMonitor in another namespace", lambda docs: sm(docs)["metadata"].update(namespace="elsewhere")),
        ("ServiceMonitor of another API", lambda docs: sm(docs).update(apiVersion="monitoring.coreos.com/v1alpha1")),
        ("ServiceMonitor selects nothing", lambda docs: sm(docs)["spec"]["selector"]["matchLabels"].update({"app.kubernetes.io/name": "other"})),
        ("endpoint on another port", lambda docs: sm(docs)["spec"]["endpoints"][0].update(port="grpc")),
        ("endpoint on another path", lambda docs: sm(docs)["spec"]["endpoints"][0].update(path="/")),
        ("endpoint over https", lambda docs: sm(docs)["spec"]["endpoints"][0].update(scheme="https")),
        ("no jobLabel", lambda docs: sm(docs)["spec"].pop("jobLabel")),
        ("another namespace selected", lambda docs: sm(docs)["spec"].update(namespaceSelector={"matchNames": ["monitoring"]})),
        ("Service selects other pods", lambda docs: svc(docs)["spec"]["selector"].update({"app.kubernetes.io/instance": "other"})),
        ("Service on another port", lambda docs: svc(docs)["spec"]["ports"][0].update(port=8080)),
        ("Service targets the gRPC port", lambda docs: svc(docs)["spec"]["ports"][0].update(targetPort="grpc")),
        ("metrics off", lambda docs: [(d.get("data") or {}).pop("CHESS_METRICS_LISTEN", None) for d in docs if d["kind"] == "ConfigMap"]),
        ("a rule drifted from alerts.yaml", lambda docs: first_rule(docs).update(expr=first_rule(docs)["expr"] + " or vector(1)")),
        ("a rule without severity", lambda docs: first_rule(docs)["labels"].pop("severity")),
        ("a rule without description", lambda docs: first_rule(docs)["annotations"].pop("description")),
        ("a rule dropped", lambda docs: pr(docs)["spec"]["groups"][0]["rules"].pop()),
        ("missing labels", lambda docs: sm(docs)["metadata"]["labels"].pop("app.kubernetes.io/part-of")),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="rendered multi-document YAML, or - for stdin")
    ap.add_argument("--alerts", required=True, help="deploy/monitoring/alerts.yaml: the groups the PrometheusRule must carry")
    ap.add_argument("--namespace", help="the namespace everything must be in")
    ap.add_argument("--self-test", action="store_true", help="check that each known breakage of the input is caught")
    args = ap.parse_args()
    docs = load(args.file)
    with open(args.alerts, encoding="utf-8") as f:
        groups = yaml.safe_load(f)["groups"]

    checker = Checker(docs, groups, args.namespace)
    checker.run()
    for f in checker.failures:
        print(f"FAIL: {f}")
    total = checker.passed + len(checker.failures)
    print(f"monitoring checks: {checker.passed} of {total} hold ({len(docs)} objects)")
    if checker.failures:
        return 1
    if args.self_test:
        missed = []
        for what, breaker in mutations():
            broken = copy.deepcopy(docs)
            breaker(broken)
            m = Checker(broken, groups, args.namespace)
            m.run()
            if not m.failures:
                missed.append(what)
        for what in missed:
            print(f"FAIL: self-test: breakage not caught: {what}")
        print(f"self-test: {len(mutations()) - len(missed)} of {len(mutations())} breakages caught")
        if missed:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
