#!/usr/bin/env python3
"""Parses a Prometheus text exposition from stdin with the real Prometheus Python client and
prints, as JSON, each family's type and its samples: {"name": {"type": ..., "samples": [[name, labels, value], ...]}}.

Exits 1 with the client's error when the text does not parse.
Usage: curl -s http://127.0.0.1:9464/metrics | python3 parse_metrics.py
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

try:
    families = {}
    for family in text_string_to_metric_families(sys.stdin.read()):
        families[family.name] = {
            "type": family.type,
            "samples": [[s.name, s.labels, s.value] for s in family.samples],
        }
except Exception as error:  # the client's own parse error, whatever its class
    print(f"does not parse: {error}", file=sys.stderr)
    sys.exit(1)
json.dump(families, sys.stdout, default=str)
