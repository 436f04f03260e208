from __future__ import annotations

import hashlib
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from labeler.coren import orchestrator as orch
from labeler.coren.pipeline import (
    CorenConfig,
    CorenInputError,
    CorenLabeler,
    labeled,
    split_by_trajectory,
    step_features,
)
from labeler.coren.prompts import load_prompts, load_templates
from labeler.label_writer import write_labeled
from models.trajectory import Step, Trajectory, read_trajectories

torch.set_num_threads(1)


class ScriptedJudge:
    """Test double: P(Yes) is high when the result says 'You take', letters favour 'take' options, backward
    checks pass, QA answers are fixed."""

    model_sha256 = "f" * 64
    n_ctx = 4096

    def __init__(self):
        self.stats = {"queries": 0, "cache_hits": 0}
        self.calls: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 1

    def score_many(self, queries, *, template, version, **kw):
        out = []
        templates = [template] * len(queries) if isinstance(template, str) else list(template)
        assert len(templates) == len(queries)
        for (prefix, choices), tid in zip(queries, templates, strict=True):
            self.stats["queries"] += 1
            self.calls.append(tid)
            n = len(choices)
            p = np.full(n, 1.0)
            if choices[0] == " No":
                tail = prefix.rsplit("Action:", 1)[-1]
                p = np.array([1.0, 4.0 if "You take" in tail else 0.5])
            elif choices[0] == " A":
                opts = prefix.rsplit("Possible actions:", 1)[-1].splitlines()
                for i, line in enumerate(o for o in opts if ". " in o):
                    if "take" in line and i < n:
                        p[i] = 5.0
            elif choices[0] == " Yes":
                p = np.array([3.0, 1.0])
            h = int(hashlib.sha256(prefix.encode()).hexdigest()[:4], 16) / 65536 * 0.01
            p = p + h
            out.append(SimpleNamespace(probs=(p / p.sum()).tolist()))
        return out

    def generate(self, prompt, *, grammar=None, max_tokens=64, stop=None, template="adhoc", version=1):
        self.stats["queries"] += 1
        return " plate, dishwasher\n"


class BagEncoder:
    """Test double: hashed bag-of-words vectors."""

    def encode(self, sentences, **kw):
        out = np.zeros((len(sentences), 64))
        for i, s in enumerate(sentences):
            for w in s.lower().replace(",", " ").split():
                out[i, int(hashlib.md5(w.encode()).hexdigest()[:6], 16) % 64] += 1.0
        return out + 1e-3


def _dataset():
    # candidate orders differ per step, so the letter-position calibration cannot cancel a real preference
    look, put, take = "look around", "put plate in dishwasher", "take plate"
    ok = Trajectory(
        id="ok",
        instruction="Put things away.",
        task_type="t",
        success=True,
        steps=[
            Step(
                "Room: kitchen with plate and dishwasher",
                take,
                [take, look, put],
                "Feedback: You take the plate.\nRoom: kitchen with dishwasher",
            ),
            Step(
                "Room: kitchen with dishwasher",
                put,
                [look, take, put],
                "Feedback: You put the plate in the dishwasher.\nRoom: kitchen",
            ),
        ],
    )
    bad = Trajectory(
        id="bad",
        instruction="Put things away.",
        task_type="t",
        success=False,
        steps=[
            Step(
                "Room: kitchen with plate and dishwasher",
                look,
                [put, look],
                "Room: kitchen with plate and dishwasher, looked",
            ),
            Step(
                "Room: kitchen with plate and dishwasher, looked",
                look,
                [put, look],
                "Room: kitchen with plate and dishwasher, looked twice",
            ),
        ],
    )
    return [ok, bad]


def test_pipeline_with_scripted_judge_labels_every_step(tmp_path):
    judge = ScriptedJudge()
    prompts = load_prompts(3)
    lab = CorenLabeler(judge, BagEncoder(), prompts, load_templates(), CorenConfig())
    trajs = _dataset()
    res = lab.label(trajs)
    assert res.channels.shape == (4, 3) and np.all(np.isfinite(res.channels))
    assert np.all(np.abs(res.channels) <= 2)
    # the 'take' step is rated highest by every prompt (calibration keeps its lead)
    assert res.channels[0, 0] == res.channels[:, 0].max() > res.channels[2, 0]
    cfg_m = CorenConfig(vote="majority")
    res_m = CorenLabeler(ScriptedJudge(), BagEncoder(), prompts, load_templates(), cfg_m).label(_dataset())
    assert res_m.channels[0, 0] == 2 and set(res_m.channels.ravel()) <= {-2, -1, 0, 1, 2}
    rep = lab.report
    assert rep.queries["cand"] == 4 * 3 and rep.queries["rate"] == 4 * 3 and rep.queries["back"] == 2 * 3
    assert rep.qa_entries >= 1 and rep.queries["qa"] >= 3
    assert len(rep.backward_pass_rate) == 3 and all(0.0 <= r <= 1.0 for r in rep.backward_pass_rate)
    # one template id per prompt: answers of different prompt texts never share cache entries
    assert set(judge.calls) == {p.template_id for p in prompts}

    feats = step_features(lab, res)
    batch = orch.make_batch(
        split_by_trajectory(feats, trajs),
        split_by_trajectory(res.channels, trajs),
        [t.success for t in trajs],
    )
    model = orch.train(batch, orch.OrchestratorConfig(input_dim=feats.shape[1], epochs=20)).model
    prov = {"judge_sha256": judge.model_sha256}
    out = tmp_path / "coren.jsonl"
    assert (
        write_labeled(out, "coren", labeled(res, orch.weights_for(model, feats), prov, keep_dists=True)) == 2
    )
    back = read_trajectories(out)
    assert [s.labels for t in back for s in t.steps] == [s.labels for t in trajs for s in t.steps]
    assert [t.provenance for t in back] == [t.provenance for t in trajs]  # the file holds what was labeled
    lab0 = trajs[0].steps[0].labels["coren"]
    assert {"contextual", "structural", "temporal", "ensemble", "dist_p0", "dist_p2"} <= set(lab0)
    assert math.isfinite(lab0["ensemble"]) and len(lab0["dist_p1"]) == 2  # [P(No), P(Yes)]
    assert lab0["contextual_soft"] > trajs[1].steps[0].labels["coren"]["contextual_soft"]
    assert trajs[1].provenance["coren"]["judge_sha256"] == "f" * 64


def test_pipeline_temporal_violation_when_backward_fails():
    class NoJudge(ScriptedJudge):
        def score_many(self, queries, **kw):
            out = super().score_many(queries, **kw)
            for (prefix, choices), r in zip(queries, out, strict=True):
                if choices[0] == " Yes":  # the plan of the success (all 'take plate') fails, the other passes
                    r.probs = [0.1, 0.9] if "Plan: take plate; take plate" in prefix else [0.9, 0.1]
            return out

    lab = CorenLabeler(NoJudge(), BagEncoder(), load_prompts(2), load_templates(), CorenConfig())
    res = lab.label(_dataset())
    # in the success, 'take plate' is every prompt's high-value action and the plan fails: all votes excluded
    assert lab.report.temporal_violations == 2 and lab.report.temporal_fallbacks == 1
    assert np.all(np.isfinite(res.channels))


def test_pipeline_rejects_steps_without_candidates():
    trajs = _dataset()
    trajs[1].steps[1].candidates = []
    lab = CorenLabeler(ScriptedJudge(), BagEncoder(), load_prompts(1), load_templates(), CorenConfig())
    with pytest.raises(CorenInputError, match="step 1 has no candidates.*candidates"):
        lab.label(trajs)


def test_long_texts_are_truncated_and_counted():
    trajs = _dataset()
    trajs[0].steps[0].observation = "Room: " + "very long room " * 2000
    trajs[1].instruction = "Put " + "everything " * 3000 + "away."
    judge = ScriptedJudge()
    judge.n_ctx = 1500
    lab = CorenLabeler(judge, BagEncoder(), load_prompts(2), load_templates(), CorenConfig(obs_tokens=48))
    plan = lab.plan(trajs)
    assert plan["truncations"]["instruction"] == 1  # cut to a quarter of the free context
    assert plan["truncations"]["observation_head"] >= 1  # the observation's head, by design
    assert plan["queries"]["cand"] == 2 * 4 and plan["total_queries"] > 0
