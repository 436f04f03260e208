from __future__ import annotations


def test_edge_policy_guard_picks_from_the_reply_scores():
    from edge.edge_policy import EdgePolicy
    from edge.policies import Guarded, Policy

    class StubClient:  # the reply fields EdgePolicy reads; the real daemon: policy/test_eval_cli.py
        def act(self, instruction, observation, candidates, memory=()):
            return {"index": 0, "scores": [0.9, 0.5], "model": "m", "timing": {"server_ms": 0.1}}

    plain, guarded = EdgePolicy(StubClient()), Guarded(EdgePolicy(StubClient()))
    assert isinstance(plain, Policy) and isinstance(guarded, Policy)
    assert [plain.act("i", "s", ["a", "b"]) for _ in range(3)] == [0, 0, 0]
    assert [guarded.act("i", "s", ["a", "b"]) for _ in range(3)] == [0, 1, 0]
    assert guarded.overrides == 1 and guarded.name == "edge-serve+guard"
    guarded.reset()
    assert guarded.act("i", "s", ["a", "b"]) == 0


def test_placement_strategy_over_the_daemon_ranks_places_with_one_more_request():
    from edge.edge_policy import EdgePolicy
    from edge.policies import Timed
    from policy.worlds.twx_placement import PlacementSearchPolicy

    class StubClient:
        def __init__(self):
            self.requests = []

        def act(self, instruction, observation, candidates, memory=()):
            self.requests.append(list(candidates))
            scores = [1.0 if c.endswith("shelf") else 0.0 for c in candidates]
            return {"index": 0, "scores": scores, "model": "m", "timing": {"server_ms": 0.1}}

    client = StubClient()
    inner = Timed(EdgePolicy(client))  # one timing per request
    policy = PlacementSearchPolicy(inner)
    assert policy.name == "edge-serve+search"
    assert policy.act("i", "s0", ["look around", "take cup"]) == 1
    assert policy.act("i", "s1", ["put cup in sink", "put cup in shelf", "open box"]) == 1
    # the second step asked for the admissible scores, then for one hypothetical put per place
    assert client.requests[-1] == ["put cup in sink", "put cup in shelf", "put cup in box"]
    assert len(inner.ms) == 3 and policy.searches == 0


def test_edge_policy_sends_only_the_pairs_the_bundle_reads_and_rereads_them_after_a_reload():
    from edge.edge_policy import EdgePolicy

    class StubClient:
        def __init__(self):
            self.model, self.horizon, self.sent, self.infos = "m1", 3, [], 0

        def info(self):
            self.infos += 1
            return {"model": self.model, "memory": self.horizon}

        def act(self, instruction, observation, candidates, memory=()):
            self.sent.append(list(memory))
            return {"index": 0, "scores": [0.0], "model": self.model, "timing": {"server_ms": 0.1}}

    client = StubClient()
    policy = EdgePolicy(client)
    episode = [(f"a{i}", f"o{i}") for i in range(10)]
    policy.scores("i", "s", ["x"], ())
    policy.scores("i", "s", ["x"], episode[:2])
    policy.scores("i", "s", ["x"], episode)
    assert client.sent == [[], episode[:2], episode[-3:]] and client.infos == 1
    client.model, client.horizon = "m2", 5  # reloaded to a bundle that reads more
    policy.scores("i", "s", ["x"], episode)
    assert client.sent[-2:] == [episode[-3:], episode[-5:]] and client.infos == 2
