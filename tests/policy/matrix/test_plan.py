"""What the matrix plans: worlds from presets or any adapter, and the rows of each learner and source."""

from __future__ import annotations

import pytest

from policy.matrix.plan import QUICK, parse_world, units, with_overrides


def test_world_names_and_the_headline_unit():
    w = parse_world("cw=twx:cookingworld[level=small]@30")
    assert (w.label, w.env, w.params, w.max_steps) == ("cw", "twx:cookingworld", "level=small", 30)
    assert parse_world("twc-easy").target == 0.9
    with pytest.raises(ValueError, match="bad world"):
        parse_world("twx twc")
    # any adapter without a label: named after its adapter, task and parameters
    own = parse_world("twx:twc[level=easy]@5")
    assert (own.label, own.env, own.params, own.max_steps) == (
        "twx-twc-level-easy",
        "twx:twc",
        "level=easy",
        5,
    )
    assert parse_world("mine:pick").label == "mine-pick" and parse_world("mine:pick").max_steps == 40
    # a world that names no parameters is keyed by the adapter's resolved defaults, so rows made under other
    # defaults (an older candidate cap) are not reused
    sw = parse_world("scienceworld:find-animal@60")
    assert sw.params is None and sw.key_params == "simplifications=easy,candidates=128"
    assert {r["params"] for u in units(sw, QUICK) for r in u.rows} == {sw.key_params}
    us = units(parse_world("twc-easy"), with_overrides(QUICK, sizes=(10, 20), seeds=(0, 1)))
    checks = [r for u in us for r in u.rows if r["runner"] == "in-process"]
    assert len(checks) == 1 and checks[0]["source"] == "trca" and checks[0]["train_episodes"] == 20
    sparse = next(u for u in us if u.source == "sparse" and u.algo == "iql")
    assert sparse.rows[0]["detour_penalty"] == 0.0 and all(r["runner"] == "edge-serve" for r in sparse.rows)
    # the imitation ceiling: BC on pure expert episodes, at its own sizes, served like every trained row
    expert = [u for u in us if u.source == "expert"]
    assert [(u.algo, u.episodes) for u in expert] == [("bc", 50), ("bc", 50)]  # two seeds
    assert expert[0].rows[0]["bc_filter"] == "all" and expert[0].rows[0]["noise"] == 0.0
    assert not [
        u for u in units(parse_world("twc-easy"), with_overrides(QUICK, algos=("iql",))) if u.algo == "bc"
    ]


def test_learners_train_on_the_sources_they_read():
    plan = with_overrides(
        QUICK,
        sizes=(20,),
        sources=("sparse", "trca-built", "coren"),
        algos=("iql", "bc", "bc-labeled", "awr", "credit"),
        coren_max_episodes=20,
    )
    us = units(parse_world("twc-easy"), plan)
    pairs = {(u.algo, u.source) for u in us if u.source != "expert"}
    assert pairs == {
        ("iql", "sparse"),
        ("iql", "trca-built"),
        ("iql", "coren"),
        ("bc", "sparse"),  # BC on the successes reads only the flag
        ("bc-labeled", "trca-built"),  # the label-kept steps and AWR's advantages are TRCA's
        ("awr", "trca-built"),
        ("credit", "trca-built"),  # so are the harmful steps credit pushes away
    }
    kept = next(u for u in us if u.algo == "bc-labeled")
    assert kept.rows[0]["bc_filter"] == "success-labeled" and kept.rows[0]["detour_penalty"] == 0.05
    credit = next(u for u in us if u.algo == "credit")
    assert "bc_filter" not in credit.rows[0] and credit.rows[0]["detour_penalty"] == 0.05
    iql = next(u for u in us if u.algo == "iql")
    assert iql.rows[0]["reward_scale"] == "return-span"


def test_an_encoder_is_part_of_a_rows_configuration_only_when_set():
    from policy.matrix.plan import QUICK, parse_world, train_config, with_overrides

    w = parse_world("twc-easy")
    assert "encoder" not in train_config(w, QUICK, "sparse", "bc", 30, 0)  # earlier rows keep their keys
    static = with_overrides(QUICK, encoder="static")
    assert train_config(w, static, "sparse", "bc", 30, 0)["encoder"] == "static"


def test_augmentation_is_part_of_every_trained_rows_configuration_only_when_set():
    from policy.matrix.plan import EXPERT, QUICK, parse_world, train_config, with_overrides

    w = parse_world("cookingworld-large")
    for source in ("sparse", EXPERT):
        assert "augment" not in train_config(w, QUICK, source, "bc", 30, 0)  # earlier rows keep their keys
        assert train_config(w, with_overrides(QUICK, augment=2), source, "bc", 30, 0)["augment"] == 2


def test_the_loop_continues_every_trained_policy_of_the_largest_size():
    from policy.matrix.plan import round_units

    w = parse_world("twc-easy")
    s = with_overrides(QUICK, sizes=(30, 120), seeds=(0,), sources=("sparse", "trca"), algos=("iql", "bc"))
    assert round_units(w, s) == []  # no rounds asked for
    s = with_overrides(s, rounds=2, round_episodes=50)
    rounds = round_units(w, s)
    assert [(ru.unit.algo, ru.unit.source, ru.round) for ru in rounds] == [
        ("iql", "sparse", 1), ("iql", "sparse", 2), ("iql", "trca", 1), ("iql", "trca", 2),
        ("bc", "sparse", 1), ("bc", "sparse", 2),
    ]  # fmt: skip
    first = rounds[0]
    assert all(ru.unit.episodes == 120 for ru in rounds) and first.name == "iql-sparse-n120-s0-round1"
    # a round's rows are its policy's edge-serve rows with the round's keys (no in-process check row)
    assert {r["runner"] for ru in rounds for r in ru.rows} == {"edge-serve"}
    assert [{k: r[k] for k in ("round", "round_episodes", "round_temperature")} for r in first.rows] == [
        {"round": 1, "round_episodes": 50, "round_temperature": 0.5}
    ] * len(s.clients)
    assert all("round_init" not in r for ru in rounds for r in ru.rows)  # keys of rows made without it
    assert all(r["round_init"] for ru in round_units(w, with_overrides(s, round_init=True)) for r in ru.rows)
    assert all("round_set" not in r for ru in rounds for r in ru.rows)
    tuned = round_units(w, with_overrides(s, round_set=("iql:x=1",)))
    iql = {tuple(r.get("round_set", ())) for ru in tuned for r in ru.rows if ru.unit.algo == "iql"}
    assert iql == {("x=1",)}
    assert all("round_set" not in r for ru in tuned for r in ru.rows if ru.unit.algo != "iql")
    # an extended rubric is a key of the loops on a judge-built rubric only: the others' rows stand
    built = with_overrides(s, sources=("sparse", "trca", "trca-built"))
    assert all("round_rubric" not in r for ru in round_units(w, built) for r in ru.rows)
    extended = round_units(w, with_overrides(built, round_rubric="extend"))
    keyed = {(ru.unit.algo, ru.unit.source) for ru in extended for r in ru.rows if "round_rubric" in r}
    assert keyed == {("iql", "trca-built")}
    assert {r["round_rubric"] for ru in extended for r in ru.rows if "round_rubric" in r} == {"extend"}


def test_a_loop_with_other_round_settings_gets_its_own_folder_and_default_runs_keep_theirs(tmp_path):
    from types import SimpleNamespace

    from policy.matrix.plan import loop_settings
    from policy.matrix.rounds import Rounds

    s = with_overrides(QUICK, rounds=3)
    assert loop_settings(s, "credit", "trca-built") == {}  # the defaults: earlier runs' folder names stand
    warm = with_overrides(s, round_init=True, round_temperature=1.0)
    assert loop_settings(warm, "credit", "trca") == {"round_temperature": 1.0, "round_init": True}
    # a recipe's own round settings name its loops' folders, not the other recipes'
    tuned = with_overrides(s, round_set=("credit:detours=false", "credit:negative=1", "iql:beta=3"))
    assert loop_settings(tuned, "credit", "trca") == {"round_set": ["detours=false", "negative=1"]}
    assert loop_settings(tuned, "bc", "sparse") == {}
    # an extended rubric names the folders of the loops on a judge-built rubric, not self-imitation's
    extend = with_overrides(s, round_rubric="extend")
    assert loop_settings(extend, "credit", "trca-built") == {"round_rubric": "extend"}
    assert loop_settings(extend, "credit", "trca") == loop_settings(extend, "bc", "sparse") == {}

    def folder(sizes):
        m = SimpleNamespace(s=sizes, data=lambda _w: SimpleNamespace(dir=tmp_path))
        u = SimpleNamespace(
            rows=({"world": "w", "algo": "credit", "client": "guard"},),
            name="credit-x",
            world="w",
            algo="credit",
            source="trca-built",
        )
        return Rounds(m).folder(u)

    assert folder(s) == folder(with_overrides(s, rounds=5))  # more rounds continue the same loop
    assert folder(warm) != folder(s) and folder(with_overrides(s, round_init=True)) != folder(s)
    assert folder(tuned) != folder(s) and folder(extend) != folder(s)


def test_the_matched_baselines_are_those_of_this_plans_loops_not_of_another_loop_in_the_same_file():
    from policy.matrix.plan import round_units
    from policy.matrix.rounds import matched_expert_rows

    w = parse_world("twc-easy")
    s = with_overrides(
        QUICK, sizes=(120,), seeds=(0,), sources=("trca-built",), algos=("credit", "bc"), rounds=1
    )
    (ru,) = [ru for ru in round_units(w, s) if ru.unit.algo == "credit"]
    mine = {"config": dict(ru.rows[0]), "status": "ok", "train_successes": 40}
    warm = {"config": {**ru.rows[0], "round_init": True}, "status": "ok", "train_successes": 50}
    got = matched_expert_rows(s, [mine, warm], [w])
    assert got and {r["source"] for r in got} == {"expert"} and {r["train_episodes"] for r in got} == {40}
