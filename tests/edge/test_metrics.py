from __future__ import annotations

from edge.metrics import Metrics


def test_metrics_text_format():
    m = Metrics()
    m.request("act", 0.0003)
    m.request("act", 0.002)
    m.error("bad_msgpack")
    m.batch_size(3)
    m.set_model("abc")
    text = m.render()
    assert 'edge_requests_total{op="act"} 2' in text
    assert 'edge_request_latency_seconds_bucket{le="0.00025"} 0' in text
    assert 'edge_request_latency_seconds_bucket{le="0.0005"} 1' in text
    assert 'edge_request_latency_seconds_bucket{le="+Inf"} 2' in text
    assert 'edge_errors_total{code="bad_msgpack"} 1' in text and 'edge_model_info{sha256="abc"} 1' in text


def test_worker_gauges_and_batches():
    m = Metrics()
    m.set_workers(2)
    m.worker_took(1, 3)
    m.set_waiting(4)
    text = m.render()
    assert 'edge_worker_busy{worker="0"} 0' in text and 'edge_worker_busy{worker="1"} 1' in text
    assert 'edge_worker_queue_depth{worker="1"} 3' in text and "edge_waiting_requests 4" in text
    m.worker_done(1)
    m.worker_took(1, 1)
    text = m.render()
    assert 'edge_worker_queue_depth{worker="1"} 1' in text
    assert 'edge_worker_batches_total{worker="0"} 0' in text
    assert 'edge_worker_batches_total{worker="1"} 2' in text
    assert "# TYPE edge_worker_busy gauge" in text and "# TYPE edge_worker_batches_total counter" in text
