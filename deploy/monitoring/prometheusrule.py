#!/usr/bin/env python3
"""Writes the PrometheusRule of deploy/k8s/components/monitoring from deploy/monitoring/alerts.yaml,
so that the Prometheus Operator and a plain Prometheus load the same rule groups.

    python3 deploy/monitoring/prometheusrule.py           # (re)write prometheusrule.yaml
    python3 deploy/monitoring/prometheusrule.py --check   # fail if it differs (deploy/validate.sh)

--check compares the parsed groups, so formatting and comments do not count; a difference in any
rule (expression, for, labels, annotations) does. Needs PyYAML (in .ci/venv, which the tools
stage of .ci/run makes).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy/monitoring/alerts.yaml"
RULE = ROOT / "deploy/k8s/components/monitoring/prometheusrule.yaml"
HEADER = """\
# GENERATED from deploy/monitoring/alerts.yaml by deploy/monitoring/prometheusrule.py: edit
# alerts.yaml and run that script (deploy/validate.sh fails while the two differ).
"""
LABELS = {
    "app.kubernetes.io/name": "chess-server",
    "app.kubernetes.io/instance": "chess-server",
    "app.kubernetes.io/component": "rules-service",
    "app.kubernetes.io/part-of": "chess",
    "app.kubernetes.io/managed-by": "kustomize",
}


def groups_of_alerts() -> list:
    return yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"]


def manifest() -> dict:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "chess-server", "labels": LABELS},
        "spec": {"groups": groups_of_alerts()},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if prometheusrule.yaml's groups differ from alerts.yaml's")
    args = ap.parse_args()
    if args.check:
        have = yaml.safe_load(RULE.read_text(encoding="utf-8")) if RULE.exists() else None
        groups = ((have or {}).get("spec") or {}).get("groups")
        if groups != groups_of_alerts():
            print(f"{RULE.relative_to(ROOT)} does not carry the groups of {ALERTS.relative_to(ROOT)}: "
                  f"run python3 deploy/monitoring/prometheusrule.py", file=sys.stderr)
            return 1
        print(f"{RULE.relative_to(ROOT)}: the same rule groups as {ALERTS.relative_to(ROOT)}")
        return 0
    text = HEADER + yaml.safe_dump(manifest(), sort_keys=False, width=10**6, default_flow_style=False)
    RULE.write_text(text, encoding="utf-8")
    print(f"wrote {RULE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
