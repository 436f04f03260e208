"""``label trca`` end to end on a hand-made dataset (hand-computed labels), CLI bad input, builder logic.

The judge here is a test double (unit tests); tests/test_trca_real.py runs the real GGUF judge.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import pytest

from labeler.dataset import Step, Trajectory, read_trajectories, write_trajectories
from labeler.trca.build import TAG_HEAD, TAG_SHOTS, TAGS, BuildConfig, build_header, build_rubric
from labeler.trca.checks import CompiledRubric
from labeler.trca.pipeline import RubricSet, TRCAConfig, label_file, label_trajectory_rewards
from labeler.trca.rubric import load_rubric, parse_rubric, write_rubric
from policy.envs.twx import LAYOUT, STATE_FORMAT, compose_state

INSTR = "Put the apple in the fridge."
ROOM0 = "You see a closed fridge and an apple."
O0 = compose_state("", ROOM0, "Inventory: empty", [])

RUBRIC = """\
format = "edgejudge.rubrics"
format_version = 1
task_type = "toy"
version = 2

[[items]]
id = "take"
category = "execution"
text = "An object was taken"
action = '^take (?P<object>.+)$'
feedback = '^You take the {object}\\.$'

[[items]]
id = "put-right"
category = "execution"
text = "Put where it belongs"
action = '^put (?P<object>.+?) in (?P<place>.+)$'
[items.pairs]
apple = ["fridge"]

[[items]]
id = "revealed"
category = "evidence"
text = "Something new appears"
appears = ["pear", "apple"]

[[items]]
id = "not-understood"
category = "invalidity"
text = "Parser failure"
feedback = "not sure what you mean"

[[items]]
id = "noop"
category = "invalidity"
text = "Repeated action without effect"
repeat = true
unchanged = true
"""


TWX = {"state_layout": LAYOUT.to_dict(), "state_format": STATE_FORMAT}
"""The toy worlds write TextWorld's state texts (policy.envs.twx.compose_state)."""


def _step(obs, action, nxt, reward=0.0):
    return Step(
        observation=obs,
        action=action,
        candidates=[],
        next_observation=nxt,
        env_reward=reward,
        info={"progress": 0.0},
    )


def toy_dataset() -> list[Trajectory]:
    a1 = compose_state(
        "You take the apple.", "You see a closed fridge.", "Inventory: an apple", ["take apple"]
    )
    a2 = compose_state(
        "You open the fridge. The fridge contains a pear.",
        "You see an open fridge, that contains a pear.",
        "Inventory: an apple",
        ["take apple", "open fridge"],
    )
    a3 = compose_state(
        "You put the apple in the fridge.",
        "You see an open fridge, that contains a pear and an apple.",
        "Inventory: empty",
        ["take apple", "open fridge", "put apple in fridge"],
    )
    b1 = compose_state("I'm not sure what you mean.", ROOM0, "Inventory: empty", ["dance"])
    b2 = compose_state("I'm not sure what you mean.", ROOM0, "Inventory: empty", ["dance", "dance"])
    A = Trajectory(
        "A",
        INSTR,
        "toy",
        True,
        [
            _step(O0, "take apple", a1),
            _step(a1, "open fridge", a2),
            _step(a2, "put apple in fridge", a3, 1.0),
        ],
    )
    A.steps[0].labels = {"coren": {"contextual": 1.0}}
    A.provenance = {"coren": {"judge_sha256": "x"}}
    B = Trajectory("B", INSTR, "toy", False, [_step(O0, "dance", b1), _step(b1, "dance", b2)])
    C = Trajectory("C", INSTR, "toy", False, [_step(O0, "take apple", a1)])
    for t in (A, B, C):
        t.meta = dict(TWX)
    return [A, B, C]


@pytest.fixture
def files(tmp_path):
    data, rub = tmp_path / "toy.jsonl", tmp_path / "toy.toml"
    write_trajectories(data, toy_dataset())
    rub.write_text(RUBRIC)
    return data, rub


# Hand computation, lambda 0.8, gamma 0.5; M: execution 2, evidence 1, invalidity 2.
# A: t0 take (+1/2, first) r = 0.2*0.5 + 0.8*0.5 = 0.5; t1 pear appears (+1, first) r = 1.0;
#    t2 put apple in fridge (+1/2, first) r = 0.5.  G2 = 0.5 + 1 = 1.5, G1 = 1 + 0.75 = 1.75, G0 = 1.375
# B: t0 not understood: r^F = -0.5, r = -0.1; t1 not understood + repeat without effect: r^F = -1, r = -0.2.
#    G1 = -0.2, G0 = -0.1 - 0.1 = -0.2
# C: t0 take: r = 0.5, G0 = 0.5 (failure: no terminal reward)
EXPECT = {
    "A": [(0.5, 0.5, 0.5, 1.375), (1.0, 1.0, 1.0, 1.75), (0.5, 0.5, 0.5, 1.5)],
    "B": [(-0.5, 0.0, -0.1, -0.2), (-1.0, 0.0, -0.2, -0.2)],
    "C": [(0.5, 0.5, 0.5, 0.5)],
}


def test_label_trca_cli_hand_computed(files, tmp_path, cli):
    data, rub = files
    out = tmp_path / "out.jsonl.gz"
    proc = cli(
        "label",
        "trca",
        str(data),
        "--rubrics",
        str(rub),
        "--gamma",
        "0.5",
        "--out",
        str(out),
        "--no-progress",
        check=True,
    )
    assert "3 trajectories, 6 steps" in proc.stdout and "steps/s" in proc.stdout
    trajs = {t.id: t for t in read_trajectories(out)}
    for tid, rows in EXPECT.items():
        got = [
            (
                s.labels["trca"]["foundational"],
                s.labels["trca"]["breakthrough"],
                s.labels["trca"]["total"],
                s.labels["trca"]["return"],
            )
            for s in trajs[tid].steps
        ]
        assert got == [pytest.approx(r) for r in rows], tid
    # episode-relative: G0 = 1.375, -0.2, 0.5 in one group (same instruction)
    g0 = [1.375, -0.2, 0.5]
    mean = sum(g0) / 3
    std = math.sqrt(sum((g - mean) ** 2 for g in g0) / 3)
    z = {tid: (g - mean) / std for tid, g in zip("ABC", g0, strict=False)}
    for tid in "ABC":
        assert [s.labels["trca"]["adv_episode"] for s in trajs[tid].steps] == pytest.approx(
            [z[tid]] * len(trajs[tid].steps)
        )
    # step-relative: the three first steps share the context O0 (same G0s as above); all others are singletons
    assert trajs["A"].steps[0].labels["trca"]["adv_step"] == pytest.approx(z["A"])
    assert trajs["B"].steps[0].labels["trca"]["adv_step"] == pytest.approx(z["B"])
    assert trajs["C"].steps[0].labels["trca"]["adv_step"] == pytest.approx(z["C"])
    assert [s.labels["trca"]["adv_step"] for s in trajs["A"].steps[1:]] == [0.0, 0.0]
    for t in trajs.values():
        for s in t.steps:
            lab = s.labels["trca"]
            assert lab["advantage"] == pytest.approx(lab["adv_episode"] + lab["adv_step"])
    # COREN labels and provenance kept; TRCA provenance added
    assert trajs["A"].steps[0].labels["coren"] == {"contextual": 1.0}
    assert trajs["A"].provenance["coren"] == {"judge_sha256": "x"}
    prov = trajs["A"].provenance["trca"]
    assert prov["rubric_sha256"] == hashlib.sha256(rub.read_bytes()).hexdigest()
    assert prov["rubric_version"] == 2 and prov["lambda"] == 0.8 and prov["gamma"] == 0.5


def test_zero_variance_step_group(files, tmp_path):
    data, rub = files
    trajs = toy_dataset()
    trajs[1] = Trajectory("B", INSTR, "toy", False, [trajs[2].steps[0]])  # B == C: a zero-variance group
    write_trajectories(data, trajs)
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([rub]), TRCAConfig(gamma=0.5))
    got = {t.id: t.steps[0].labels["trca"] for t in read_trajectories(out)}
    assert got["B"]["return"] == got["C"]["return"] == 0.5
    assert got["A"]["adv_step"] > 0 and got["B"]["adv_step"] < 0  # A differs from B and C


def test_lambda_option_changes_only_the_mix(files, tmp_path):
    data, rub = files
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([rub]), TRCAConfig(lam=0.0, gamma=0.5))
    b = {t.id: t for t in read_trajectories(out)}["B"]
    assert [s.labels["trca"]["total"] for s in b.steps] == pytest.approx([-0.5, -1.0])


def test_dry_run_and_bad_input_write_nothing(files, tmp_path, cli):
    data, rub = files
    out = tmp_path / "out.jsonl"
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--dry-run")
    assert proc.returncode == 0 and "3 trajectories, 6 steps" in proc.stdout and not out.exists()
    # no rubric for the task type (no embedded 'toy' rubric): one-line error, no output
    proc = cli("label", "trca", str(data), "--out", str(out))
    assert proc.returncode != 0 and "no rubric for task type 'toy'" in proc.stderr and not out.exists()
    # a broken rubric: file:line error, no output
    bad = tmp_path / "bad.toml"
    bad.write_text(RUBRIC.replace('category = "evidence"', 'category = "evidince"'))
    proc = cli("label", "trca", str(data), "--rubrics", str(bad), "--out", str(out))
    assert (
        proc.returncode != 0 and f"{bad}:" in proc.stderr and "evidince" in proc.stderr and not out.exists()
    )
    # an invalid dataset line: file:line error, and an existing output is left untouched
    out.write_text("keep me")
    data.write_text(data.read_text() + '{"format": 1, "id": "Z"}\n')
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--out", str(out))
    assert proc.returncode != 0 and f"{data}:4:" in proc.stderr and out.read_text() == "keep me"
    # unknown options and out-of-range values are rejected loudly
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--out", str(out), "--lamda", "0.5")
    assert proc.returncode == 2 and "No such option" in proc.stderr
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--out", str(out), "--lambda", "1.5")
    assert proc.returncode == 2 and "1.5" in proc.stderr
    assert "--item-judge" in cli("label", "trca", "--help").stdout


# ---------------------------------------------------------------------------------------------- judge doubles


@dataclass
class FakeScores:
    logprobs: list[float]

    @property
    def probs(self):
        e = [math.exp(x) for x in self.logprobs]
        return [x / sum(e) for x in e]


class FakeJudge:
    """Tags by keywords of the response; fixed place preference; yes when the response mentions 'pear'."""

    model_sha256 = "f" * 64

    def __init__(self):
        self.queries = []

    def _one(self, prefix, choices):
        self.queries.append(prefix)
        if choices == [f" {t}" for t in TAGS]:
            resp = prefix.rsplit("Response:", 1)[1]
            want = (
                "failed"
                if "not sure" in resp or "can't" in resp or "not something" in resp
                else "done"
                if "take" in resp
                else "nothing"
            )
            # a bias towards 'done' for every input: calibration must remove it
            return FakeScores([(0.0 if t == want else -2.0) + (1.5 if t == "done" else 0.0) for t in TAGS])
        if prefix.endswith("belongs in the"):
            obj = prefix.rsplit("A ", 1)[1]
            best = {"apple": " fridge", "sock": " basket"}.get(obj.split()[0], " box")
            # "box" is preferred for everything by a bias of +1: calibration over objects must remove it
            return FakeScores([(0.0 if c == best else -1.0) + (1.0 if c == " box" else 0.0) for c in choices])
        if choices == [" yes", " no"]:
            response = prefix.split("Game response:")[1].split("\n")[0]
            return FakeScores([0.0, -1.0] if "pear" in response else [-1.0, 0.0])
        raise AssertionError(f"unexpected query {prefix[-80:]!r}")

    def score(self, prefix, choices, *, template, version):
        return self._one(prefix, list(choices))

    def score_many(self, queries, *, template, version, normalize="sum", progress=False):
        return [self._one(p, list(c)) for p, c in queries]


def _tidy_dataset() -> list[Trajectory]:
    instr = "Put the objects in their usual locations."
    rows = []
    for i, (obj, feedback_put) in enumerate([("apple", "fridge"), ("sock", "basket"), ("apple", "box")]):
        cands = [f"take {obj}", f"put {obj} in fridge", f"put {obj} in basket", f"put {obj} in box"]
        s1 = _step(
            O0,
            f"take {obj}",
            compose_state(f"You take the {obj}.", "Room.", f"Inventory: a {obj}", [f"take {obj}"]),
        )
        s2 = _step(
            s1.next_observation,
            f"put {obj} in {feedback_put}",
            compose_state(f"You put the {obj} in the {feedback_put}.", "Room.", "Inventory: empty", []),
        )
        s3 = _step(
            s2.next_observation,
            "dance",
            compose_state("I'm not sure what you mean.", "Room.", "Inventory: empty", ["dance"]),
        )
        for s in (s1, s2, s3):
            s.candidates = [*cands, "dance"]
        rows.append(Trajectory(f"t{i}", instr, "tidy", False, [s1, s2, s3], meta=dict(TWX)))
    return rows


def test_builder_with_judge_double_calibrates_and_writes_a_valid_file(tmp_path):
    judge = FakeJudge()  # the judge alone: without grounding every accepted candidate stays
    cfg = BuildConfig(task_type="tidy", grounded=False)
    report = build_rubric(_tidy_dataset(), judge, cfg, dataset_name="tidy.jsonl")
    r = report.rubric
    ids = {it.id: it for it in r.items}
    put = ids["put-where-it-belongs"]
    assert put.pairs == {"apple": ["fridge"], "sock": ["basket"]}  # the +1 bias for "box" was calibrated away
    take = next(it for it in r.items if it.id.startswith("take-"))
    assert take.category == "execution" and take.feedback == r"^You take the {object}\.$"
    failed = [it for it in r.items if it.category == "invalidity"]
    assert {"failed-not-understood", "failed-cannot", "failed-not-possible", "no-effect-repeat"} <= {
        it.id for it in failed
    }
    assert not any(it.id.startswith("put-you-put") for it in r.items)  # replaced by the placement table
    assert r.build["judge_sha256"] == judge.model_sha256 and r.build["judge_queries"] == report.queries > 0
    path = tmp_path / "tidy.toml"
    text = write_rubric(path, r, build_header(report))
    assert load_rubric(path).items == r.items and "Candidates the judge did not keep" in text
    # ground truth in info is never read: the same rubric when info is wiped
    trajs = _tidy_dataset()
    for t in trajs:
        for s in t.steps:
            s.info = {}
    assert build_rubric(trajs, FakeJudge(), cfg).rubric.items == r.items
    # grounded (no successes here: the judge's tags decide), failure phrases never seen are dropped
    grounded = build_rubric(_tidy_dataset(), FakeJudge(), BuildConfig(task_type="tidy"))
    gids = {it.id for it in grounded.rubric.items}
    assert "failed-not-understood" in gids and "failed-cannot" not in gids
    assert any("'cannot'" in r and "never seen in the data" in r for r in grounded.rejected)


def test_builder_rejects_unknown_task_type():
    with pytest.raises(ValueError, match="no trajectory of task type 'nope'"):
        build_rubric(_tidy_dataset(), FakeJudge(), BuildConfig(task_type="nope"))


def test_item_judge_llm_asks_only_for_judge_only_items():
    rub = parse_rubric(
        RUBRIC + '\n[[items]]\nid = "asked"\ncategory = "evidence"\ntext = "Saw a pear"\njudge = true\n',
        "x.toml",
    )
    cr = CompiledRubric(rub)
    a = toy_dataset()[0]
    judge = FakeJudge()
    rewards, _, q = label_trajectory_rewards(a, cr, TRCAConfig(item_judge="llm", lam=0.0), judge)
    assert q == 3 and len(judge.queries) == 3  # one question per step for the one judge-only item
    # evidence has M=2 now; step 1's response mentions the pear: "revealed" + "asked" = 2 * 1/2
    assert [r.foundational for r in rewards] == pytest.approx([0.5, 1.0, 0.5])
    rewards0, _, q0 = label_trajectory_rewards(a, cr, TRCAConfig(item_judge="none", lam=0.0), None)
    assert q0 == 0 and [r.foundational for r in rewards0] == pytest.approx([0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="needs a judge"):
        label_trajectory_rewards(a, cr, TRCAConfig(item_judge="llm"), None)


def test_summary_counts_item_hits(files):
    data, rub = files
    s = label_file(data, None, RubricSet([rub]), TRCAConfig())
    assert s.trajectories == 3 and s.steps == 6
    assert dict(s.item_hits["toy.toml"]) == {
        "take": 2,
        "revealed": 1,
        "put-right": 1,
        "not-understood": 2,
        "noop": 1,
    }
    assert json.dumps(s.rubrics)  # provenance is JSON


def test_extend_keeps_the_reviewed_rubric_and_adds_unknown_objects():
    from labeler.trca.build import extend_rubric

    built = build_rubric(_tidy_dataset(), FakeJudge(), BuildConfig(task_type="tidy")).rubric
    base = build_rubric(_tidy_dataset()[:1], FakeJudge(), BuildConfig(task_type="tidy")).rubric
    put = next(it for it in base.items if it.id == "put-where-it-belongs")
    put.pairs = {"apple": ["box"]}  # a reviewer's decision: must survive the extension
    base.items = [it for it in base.items if not it.id.startswith("failed-")]  # a reviewer removed these
    new, added = extend_rubric(base, built)
    assert added == ["sock"] and new.version == base.version + 1
    new_put = next(it for it in new.items if it.id == "put-where-it-belongs")
    assert new_put.pairs == {"apple": ["box"], "sock": ["basket"]}
    assert [it.id for it in new.items] == [it.id for it in base.items]
    assert next(it for it in new.items if it.id == "object-revealed").appears == ["apple", "sock"]
    assert new.build["extended_objects"] == 1
    same, none = extend_rubric(new, built)
    assert none == [] and same.version == new.version
    built.task_type = "other"
    with pytest.raises(ValueError, match="task type"):
        extend_rubric(base, built)


def test_a_star_rubric_applies_to_any_task_type(files, tmp_path):
    data, rub = files
    star = tmp_path / "any.toml"
    star.write_text(RUBRIC.replace('task_type = "toy"', 'task_type = "*"'))
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([star], use_embedded=False), TRCAConfig(gamma=0.5))
    got = {t.id: t for t in read_trajectories(out)}
    assert got["A"].provenance["trca"]["rubric_task_type"] == "*"
    assert [s.labels["trca"]["total"] for s in got["A"].steps] == pytest.approx([0.5, 1.0, 0.5])
    with pytest.raises(Exception, match="a second rubric for task type"):
        RubricSet([star, star])


def test_episode_group_instruction_or_task_type(files, tmp_path):
    data, rub = files
    trajs = toy_dataset()
    trajs[2].instruction = "Put the apple somewhere else."  # C alone with its instruction
    write_trajectories(data, trajs)
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([rub]), TRCAConfig(gamma=0.5))
    by_instr = {t.id: t.steps[0].labels["trca"]["adv_episode"] for t in read_trajectories(out)}
    assert (
        by_instr["C"] == 0.0 and by_instr["A"] == pytest.approx(1.0) and by_instr["B"] == pytest.approx(-1.0)
    )
    label_file(data, out, RubricSet([rub]), TRCAConfig(gamma=0.5, episode_group="task-type"))
    by_type = {t.id: t.steps[0].labels["trca"]["adv_episode"] for t in read_trajectories(out)}
    assert by_type["C"] != 0.0
    with pytest.raises(ValueError, match="episode_group"):
        TRCAConfig(episode_group="nope").validate()


class OrderSensitiveJudge(FakeJudge):
    """Tags 'take' responses by which example the prompt shows first: an order-sensitive small judge."""

    def __init__(self, tag_by_first_shot):
        super().__init__()
        self.tag_by_first_shot = tag_by_first_shot

    def _one(self, prefix, choices):
        if choices == [f" {t}" for t in TAGS] and "You take the" in prefix.rsplit("Response:", 1)[1]:
            self.queries.append(prefix)
            first = next(i for i, shot in enumerate(TAG_SHOTS) if prefix[len(TAG_HEAD) :].startswith(shot))
            want, margin = self.tag_by_first_shot.get(first, ("found", 0.1))
            return FakeScores([0.0 if t == want else -margin for t in TAGS])
        return super()._one(prefix, choices)


@pytest.mark.parametrize(
    "by_first, orders, expected",
    [
        ({0: ("done", 10.0)}, 4, "evidence"),  # orders start with shots 0, 4, 7, 1: done/found/found/found
        ({0: ("done", 10.0), 4: ("done", 10.0)}, 4, "execution"),  # 2 vs 2: done has the higher mean score
        ({0: ("nothing", 10.0), 4: ("nothing", 10.0), 7: ("failed", 0.1), 1: ("failed", 0.1)}, 4, None),
        ({0: ("done", 10.0)}, 1, "execution"),  # one order: its tag
    ],
)
def test_tags_are_a_majority_vote_over_example_orders(by_first, orders, expected):
    judge = OrderSensitiveJudge(by_first)
    cfg = BuildConfig(task_type="tidy", prompt_orders=orders)
    items = {it.id: it for it in build_rubric(_tidy_dataset(), judge, cfg).rubric.items}
    take = [it for i, it in items.items() if i.startswith("take-")]
    assert [it.category for it in take] == ([expected] if expected else [])
    with pytest.raises(ValueError, match="prompt_orders"):
        build_rubric(_tidy_dataset(), judge, BuildConfig(task_type="tidy", prompt_orders=9))


def test_build_places_only_when_extending(tmp_path, cli):
    judge = FakeJudge()
    r = build_rubric(_tidy_dataset(), judge, BuildConfig(task_type="tidy", tag_templates=False)).rubric
    assert all("belongs in the" in q for q in judge.queries)  # no tagging query at all
    assert {it.id for it in r.items} == {"put-where-it-belongs", "object-revealed", "no-effect-repeat"}
    # a reviewed base that already places every object of the data: written unchanged, the judge is not loaded
    base = tmp_path / "base.toml"
    full = build_rubric(_tidy_dataset(), FakeJudge(), BuildConfig(task_type="tidy"))
    write_rubric(base, full.rubric, "reviewed by hand")
    data, out = tmp_path / "tidy.jsonl", tmp_path / "out.toml"
    write_trajectories(data, _tidy_dataset())
    proc = cli(
        "rubrics",
        "build",
        "--dataset",
        str(data),
        "--task-type",
        "tidy",
        "--base",
        str(base),
        "--judge",
        str(tmp_path / "no-such-model.gguf"),
        "--out",
        str(out),
        check=True,
    )
    assert "unchanged" in proc.stdout and "no judge query" in proc.stdout
    assert load_rubric(out).items == full.rubric.items and out.read_text().startswith("# reviewed by hand")
    wrong = cli(
        "rubrics",
        "build",
        "--dataset",
        str(data),
        "--task-type",
        "twc",
        "--base",
        str(base),
        "--out",
        str(out),
    )
    assert wrong.returncode == 2 and "is for task type 'tidy'" in wrong.stderr
