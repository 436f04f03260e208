"""The world a policy was trained in travels with it (dataset -> checkpoint -> bundle manifest), and
evaluation (in process or through edge-serve) refuses a policy trained on another state format."""

from __future__ import annotations

import json

import pytest

from models.bundle import BundleError, load_manifest
from models.state_layout import LEGACY_LAYOUT, Part, StateLayout
from models.trajectory import Trajectory
from policy.worlds.adapters import EnvError, parse_env
from policy.worlds.adapters.recorded import check_world, dataset_world, default_env, recorded_world
from tests.support.serving import build_tiny_bundle

OTHER = {"env": "scienceworld:boil", "params": "", "state_format": "scienceworld/1"}


def _with_world(bundle, world):
    path = bundle / "manifest.json"
    raw = json.loads(path.read_text())
    if world is None:
        raw.pop("world", None)
    else:
        raw["world"] = world
    path.write_text(json.dumps(raw))
    return bundle


def test_old_bundles_are_the_twx_v1_format(tmp_path):
    b = _with_world(build_tiny_bundle(tmp_path / "b"), None)
    m = load_manifest(b)
    assert m.world == {} and m.state_format == "twx/1" and m.state_layout == LEGACY_LAYOUT
    check_world(m.world, parse_env("twx:twc"))  # twx/2 has the parts of twx/1: allowed, with a note
    assert default_env(m.world) == ("twx:twc", None)


def test_recorded_world_reads_back_and_a_bad_layout_is_refused(tmp_path):
    layout = StateLayout((Part("feedback", "Said"), Part("pose", "Pose", world=True)))
    world = {**OTHER, "state_layout": layout.to_dict()}
    b = _with_world(build_tiny_bundle(tmp_path / "b"), world)
    m = load_manifest(b)
    assert m.state_format == "scienceworld/1" and m.state_layout == layout
    assert recorded_world(b) == world and default_env(world) == ("scienceworld:boil", None)
    _with_world(b, {**OTHER, "state_layout": {"parts": [{"label": "x"}]}})
    with pytest.raises(BundleError, match="malformed manifest"):
        load_manifest(b)


def test_check_world_names_both_formats():
    with pytest.raises(EnvError) as e:
        check_world(OTHER, parse_env("twx:twc"), what="bundle B")
    msg = str(e.value)
    assert "bundle B was trained in scienceworld:boil on state format 'scienceworld/1'" in msg
    assert "twx:twc composes 'twx/2'" in msg and "\n" not in msg


def test_dataset_world_and_mixed_formats():
    def traj(fmt: str | None, env: str = "twx:twc") -> Trajectory:
        meta = {"env": env, "params": "p=1"} | ({"state_format": fmt} if fmt else {})
        return Trajectory(id="t", instruction="i", task_type="twc", success=False, steps=[], meta=meta)

    w = dataset_world([traj("twx/1"), traj("twx/1")])
    assert w["state_format"] == "twx/1" and w["env"] == "twx:twc" and w["params"] == "p=1"
    assert w["state_layout"] == LEGACY_LAYOUT.to_dict()
    with pytest.raises(EnvError, match=r"mixes state formats \(none\), twx/1"):
        dataset_world([traj("twx/1"), traj(None)])  # a record without a format is a user's own log
    assert dataset_world([traj("twx/1"), traj("twx/1", "twx:cookingworld")])["envs"] == [
        "twx:cookingworld[p=1]",
        "twx:twc[p=1]",
    ]
    with pytest.raises(EnvError, match="mixes state formats scienceworld/1, twx/1"):
        dataset_world([traj("twx/1"), traj("scienceworld/1")])


def test_eval_in_process_and_through_edge_serve_refuse_a_bundle_of_another_format(tmp_path, cli):
    b = _with_world(build_tiny_bundle(tmp_path / "b"), OTHER)
    proc = cli("eval", str(b), "--env", "twx:twc", "--episodes", "1")
    assert proc.returncode == 1 and "on state format 'scienceworld/1'" in proc.stderr
    served = cli("eval", str(b), "--serve", "--env", "twx:twc", "--episodes", "1")  # before any daemon starts
    assert served.returncode == 1 and "twx:twc composes 'twx/2'" in served.stderr
