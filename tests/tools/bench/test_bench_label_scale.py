"""tools.bench.bench_label_scale: the speed-ups of each actor count over the first, from its runs."""

from __future__ import annotations

from tools.bench.bench_label_scale import _speedups


def test_speedups_on_label_time_judge_phases_and_cpu_critical_path():
    runs = {
        "ray_1_actors": {
            "steps_per_s": 2.0,
            "pool_seconds": 10.0,
            "driver_cpu_seconds": 2.0,
            "cpu_seconds_per_actor": [8.0],
        },
        "ray_2_actors": {
            "steps_per_s": 3.0,
            "pool_seconds": 6.0,
            "driver_cpu_seconds": 2.0,
            "cpu_seconds_per_actor": [3.0, 4.0],
        },
    }
    assert _speedups(runs, [1, 2]) == {
        "speedup_label": {"2_over_1_actors": 1.5},
        "speedup_judge_phases": {"2_over_1_actors": 1.667},
        "speedup_from_cpu_time": {"2_over_1_actors": 1.667},
    }
    assert _speedups(runs, [2]) == {
        "speedup_label": {},
        "speedup_judge_phases": {},
        "speedup_from_cpu_time": {},
    }
