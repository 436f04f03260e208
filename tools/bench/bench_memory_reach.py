"""Do the words a decision needs reach the policy? What earlier responses said about the thing an expert's
action acts on, and how much of it the structured policy still reads when it decides.

A recipe read ten steps ago ("fry the chicken wing") is in no state text any more: only the episode memory
carries it, as the *facts* of the memory window (``models.inputs.state``: the distinct pieces of the last
``memory`` responses that the state no longer shows, the most recent ``facts`` of them). For every decision
of the test split's gold paths (a step with more than one candidate), this takes the pieces of *every*
earlier response that name one of the logged action's argument words (``models.actions.argument_words``:
"chicken", "wing", "stove") and are not in the current state, and counts how many of them are among the
items the policy reads with the training default :class:`models.inputs.state.StateEncoding`. Per verb: the
decisions with such pieces, and the share of those decisions where every such piece is read. Nothing here
knows a world: it reads the adapter's layout and the gold path's actions. No policy is trained.

    python -m tools.bench.bench_memory_reach --world 'twx:cookingworld[level=large]@80' \\
        --out tools/results/bench_memory_reach.json
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import click

from models.actions import argument_words, text_words, verb_of
from models.inputs.arrays import state_texts
from models.inputs.state import StateEncoding, pieces
from tools.bench.benchlib import publish


def reach(env, split: str, episodes: int, encoding: StateEncoding) -> dict:
    """Per verb: ``decisions``, ``needing`` (decisions with earlier pieces about the action's arguments that
    the state no longer shows), ``all_read`` (of those, every such piece among the policy's items),
    ``pieces`` and ``read`` (the pieces, and those read)."""
    layout = env.layout
    tally: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lengths = []
    for seed in env.episodes(split)[:episodes]:
        state = env.reset(seed, split, gold=True)
        gold = env.gold_path()
        lengths.append(len(gold))
        memory: list[tuple[str, str]] = []
        for action in gold:
            if len(state.candidates) > 1:
                t = tally[verb_of(action)]
                t["decisions"] += 1
                said = _earlier_pieces(layout, memory, set(argument_words(action)))
                read_now = state_texts(layout, encoding, state.observation, memory).items
                items = {text for _kind, text in read_now}
                shown = set(pieces(state.observation)) | set(state.observation.splitlines())
                needed = [p for p in said if p not in shown]
                if needed:
                    read = sum(p in items for p in needed)
                    t["needing"] += 1
                    t["all_read"] += read == len(needed)
                    t["pieces"] += len(needed)
                    t["read"] += read
            state = env.step(action)
            memory.append((action, state.observation))
    return {
        "gold_steps_mean": sum(lengths) / max(1, len(lengths)),
        "gold_steps_max": max(lengths, default=0),
        "verbs": {v: dict(t) for v, t in sorted(tally.items(), key=lambda kv: -kv[1]["decisions"])},
    }


def _earlier_pieces(layout, memory: list[tuple[str, str]], words: set[str]) -> list[str]:
    """The distinct pieces of the responses in ``memory`` that name one of ``words``, oldest first."""
    out: dict[str, None] = {}
    for response in layout.responses(memory):
        for p in pieces(response):
            if words & set(text_words(p)):
                out[p] = None
    return list(out)


def markdown(rows: list[dict]) -> str:
    lines = [
        "| world | gold steps (mean / max) | verb | decisions | needing earlier words | every word read "
        "| pieces read |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for verb, t in r["verbs"].items():
            if not t.get("needing"):
                continue
            lines.append(
                f"| {r['world']} | {r['gold_steps_mean']:.1f} / {r['gold_steps_max']} | {verb} "
                f"| {t['decisions']} | {t['needing']} | {t['all_read'] / t['needing']:.2f} "
                f"| {t['read']} of {t['pieces']} |"
            )
    return "\n".join(lines) + "\n"


@click.command()
@click.option(
    "--world",
    "worlds",
    multiple=True,
    default=("twx:cookingworld[level=large]@80",),
    show_default=True,
    help="ADAPTER:TASK[PARAMS]@MAX_STEPS (as edgejudge matrix --world); repeatable.",
)
@click.option("--episodes", default=50, show_default=True, help="Test-split gold paths per world.")
@click.option("--split", default="test", show_default=True)
@click.option("--out", "json_out", type=click.Path(path_type=Path), help="Write the results as JSON.")
@click.option("--md", "md_out", type=click.Path(path_type=Path), help="Write the table as markdown.")
def main(worlds: tuple[str, ...], episodes: int, split: str, json_out: Path | None, md_out: Path | None):
    from policy.matrix.plan import parse_world
    from policy.worlds.adapters.registry import open_env

    encoding = StateEncoding()
    rows = []
    for text in worlds:
        w = parse_world(text)
        with open_env(w.env, w.max_steps, w.params) as env:
            rows.append({"world": text, **reach(env, split, episodes, encoding)})
        click.echo(f"{text}: done", err=True)
    payload = {"encoding": encoding.to_dict(), "episodes": episodes, "split": split, "rows": rows}
    publish(payload, markdown(rows), json_out, md_out)


if __name__ == "__main__":
    main()
