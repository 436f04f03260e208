from __future__ import annotations

import pytest

from labeler.trca.build import TAG_HEAD, TAG_SHOTS, TAGS, BuildConfig, build_header, build_rubric
from labeler.trca.rubric import load_rubric, write_rubric
from models.trajectory import Trajectory, write_trajectories
from policy.worlds.adapters.twx import compose_state
from tests.support.trca_tags import F1, S1, TagJudge, episode
from tests.support.trca_toy import O0, TWX, FakeJudge, FakeScores, _step

"""The tiny world writes TextWorld's twx/1 state texts."""


"""The toy worlds write TextWorld's state texts (policy.worlds.adapters.twx.compose_state)."""


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


def test_grounded_build_checks_the_judges_tags_against_successes():
    s2 = ["open box", "close box", "take apple", "put apple in fridge"]
    f2 = ["open box", "close box", "push wall", "pull rope", "take apple", "put apple in box", "open box"]
    trajs = [episode("s1", S1), episode("f1", F1), episode("s2", s2), episode("f2", f2)]
    r = build_rubric(trajs, TagJudge(), BuildConfig(task_type="tiny")).rubric
    items = {it.id: it for it in r.items}
    # the judge says the apple goes in the box; both successes left it in the fridge
    assert items["put-where-it-belongs"].pairs == {"apple": ["fridge"]}
    assert items["put-elsewhere"].pairs == {"apple": ["fridge"]} and items["put-elsewhere"].pairs_mismatch
    assert items["take-you-take-the"].category == "execution"
    assert (
        "borne out" in items["take-you-take-the"].note and "success lift" in items["take-you-take-the"].note
    )
    # 'close box' is tagged done by the judge but always undone in successes: not an item
    assert not any(i.startswith("close-") for i in items)
    # "Nothing happens." after two verbs, found from the data (no world-specific string)
    generic = [it for it in r.items if it.id.startswith("generic-")]
    assert [g.category for g in generic] == ["invalidity"] and "Nothing happens" in generic[0].text
    # without grounding the judge's tags and places stand
    plain = {
        it.id: it for it in build_rubric(trajs, TagJudge(), BuildConfig("tiny", grounded=False)).rubric.items
    }
    assert plain["put-where-it-belongs"].pairs == {"apple": ["box"]}
    assert any(i.startswith("close-") for i in plain)
    assert not any(i.startswith("generic-") for i in plain)


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
