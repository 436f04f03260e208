"""A small valid trajectory: the dataset reader's and the data commands' tests build their files from it."""

from __future__ import annotations

from models.trajectory import Step, Trajectory


def make_traj(i: int = 0, n_steps: int = 2, success: bool = True) -> Trajectory:
    steps = [
        Step(
            observation=f"obs {i}.{t}",
            action="take apple",
            candidates=["take apple", "look around"],
            next_observation=f"obs {i}.{t + 1}",
            env_reward=float(success and t == n_steps - 1),
            info={"progress": 0.25},
        )
        for t in range(n_steps)
    ]
    return Trajectory(
        id=f"t{i}", instruction="tidy up", task_type="twc", success=success, steps=steps, meta={"seed": i}
    )
