"""Prometheus metrics for edge-serve, rendered by hand in the text exposition format (no extra dependency).

:class:`Metrics` counts requests by op, errors by code and observes per-request latency in a histogram with
sub-millisecond buckets; per scoring worker it keeps gauges (busy, the requests of its batch) and a count of
batches, and the act requests waiting for an idle worker. :func:`start_metrics_server` serves
``/metrics`` from a stdlib HTTP server thread.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Seconds. Loopback requests take tens to hundreds of microseconds: the low buckets are the interesting ones.
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64)


class Histogram:
    def __init__(self, buckets: tuple[float, ...]):
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        for i, b in enumerate(self.buckets):
            if value <= b:
                self.counts[i] += 1
                break
        self.total += 1
        self.sum += value

    def render(self, name: str) -> list[str]:
        lines, cum = [], 0
        for b, c in zip(self.buckets, self.counts, strict=False):
            cum += c
            lines.append(f'{name}_bucket{{le="{b:g}"}} {cum}')
        lines.append(f'{name}_bucket{{le="+Inf"}} {self.total}')
        lines.append(f"{name}_sum {self.sum:.9g}")
        lines.append(f"{name}_count {self.total}")
        return lines


class Metrics:
    """Thread-safe counters and histograms; the serving threads write, the HTTP thread reads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[str, int] = defaultdict(int)
        self.errors: dict[str, int] = defaultdict(int)
        self.reloads: dict[str, int] = defaultdict(int)
        self.latency = Histogram(LATENCY_BUCKETS)
        self.batch = Histogram(BATCH_BUCKETS)
        self.dropped = 0
        self.model = ""
        self.worker_busy: list[int] = []
        self.worker_depth: list[int] = []
        self.worker_batches: list[int] = []
        self.waiting = 0

    def set_workers(self, n: int) -> None:
        with self._lock:
            self.worker_busy, self.worker_depth, self.worker_batches = [0] * n, [0] * n, [0] * n

    def worker_took(self, index: int, requests: int) -> None:
        """Worker ``index`` got a batch of ``requests`` act requests."""
        with self._lock:
            self.worker_busy[index] = 1
            self.worker_depth[index] = requests
            self.worker_batches[index] += 1

    def worker_done(self, index: int) -> None:
        with self._lock:
            self.worker_busy[index] = 0
            self.worker_depth[index] = 0

    def set_waiting(self, n: int) -> None:
        with self._lock:
            self.waiting = n

    def request(self, op: str, seconds: float) -> None:
        with self._lock:
            self.requests[op] += 1
            self.latency.observe(seconds)

    def error(self, code: str) -> None:
        with self._lock:
            self.errors[code] += 1

    def batch_size(self, n: int) -> None:
        with self._lock:
            self.batch.observe(n)

    def reload(self, result: str) -> None:
        with self._lock:
            self.reloads[result] += 1

    def drop(self) -> None:
        with self._lock:
            self.dropped += 1

    def set_model(self, sha256: str) -> None:
        with self._lock:
            self.model = sha256

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": dict(self.requests),
                "errors": dict(self.errors),
                "reloads": dict(self.reloads),
                "dropped": self.dropped,
                "latency_count": self.latency.total,
            }

    def render(self) -> str:
        with self._lock:
            out = [
                "# HELP edge_requests_total Requests answered, by op.",
                "# TYPE edge_requests_total counter",
            ]
            out += [f'edge_requests_total{{op="{k}"}} {v}' for k, v in sorted(self.requests.items())]
            out += [
                "# HELP edge_errors_total Error replies, by stable error code.",
                "# TYPE edge_errors_total counter",
            ]
            out += [f'edge_errors_total{{code="{k}"}} {v}' for k, v in sorted(self.errors.items())]
            out += [
                "# HELP edge_dropped_total Messages dropped without a reply (no routable peer).",
                "# TYPE edge_dropped_total counter",
                f"edge_dropped_total {self.dropped}",
            ]
            out += [
                "# HELP edge_reloads_total Bundle reloads, by result.",
                "# TYPE edge_reloads_total counter",
            ]
            out += [f'edge_reloads_total{{result="{k}"}} {v}' for k, v in sorted(self.reloads.items())]
            out += [
                "# HELP edge_request_latency_seconds Receive-to-reply time inside the daemon.",
                "# TYPE edge_request_latency_seconds histogram",
            ]
            out += self.latency.render("edge_request_latency_seconds")
            out += [
                "# HELP edge_batch_size Requests scored in one policy call.",
                "# TYPE edge_batch_size histogram",
            ]
            out += self.batch.render("edge_batch_size")
            out += self._render_workers()
            out += [
                "# HELP edge_model_info The served policy (sha256 of policy.onnx).",
                "# TYPE edge_model_info gauge",
                f'edge_model_info{{sha256="{self.model}"}} 1',
            ]
            return "\n".join(out) + "\n"

    def _render_workers(self) -> list[str]:
        out = []
        for name, kind, what, values in (
            ("edge_worker_busy", "gauge", "1 while the worker scores a batch.", self.worker_busy),
            (
                "edge_worker_queue_depth",
                "gauge",
                "Act requests in the worker's batch (0 when idle).",
                self.worker_depth,
            ),
            ("edge_worker_batches_total", "counter", "Batches the worker took.", self.worker_batches),
        ):
            out += [f"# HELP {name} {what}", f"# TYPE {name} {kind}"]
            out += [f'{name}{{worker="{i}"}} {v}' for i, v in enumerate(values)]
        return out + [
            "# HELP edge_waiting_requests Act requests waiting for an idle worker.",
            "# TYPE edge_waiting_requests gauge",
            f"edge_waiting_requests {self.waiting}",
        ]


def start_metrics_server(metrics: Metrics, host: str, port: int) -> ThreadingHTTPServer:
    """Serve ``GET /metrics`` on ``host:port`` (port 0 picks a free one) from a daemon thread."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "only /metrics is served here")
                return
            body = metrics.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the daemon logs JSON only
            return

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    server.timeout = 1.0
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.5}, name="metrics", daemon=True
    ).start()
    return server
