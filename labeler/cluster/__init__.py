"""Labeling on Ray: judge actors, one crash-safe answer cache, per-unit judge work spread over a cluster.

Without ``--ray`` none of this is imported (Ray is the optional ``cluster`` extra). With it, every judge
query of a unit of work (one trajectory's queries, one QA entry's answers, a chunk of a rubric build) runs
on a judge actor, each actor holding one loaded judge; the dataset-level steps stay on the driver.

Modules, one job each:

* :mod:`labeler.cluster.options` — the ``--ray`` / ``--judge-actors`` / per-actor resource options (no Ray)
* :mod:`labeler.cluster.units`   — units of judge work run from a primed judge; the local runner (no Ray)
* :mod:`labeler.cluster.session` — start a local Ray with explicit resources, or join a cluster
* :mod:`labeler.cluster.actors`  — the judge actor, the cache actor, and the actor side of the cache
* :mod:`labeler.cluster.pool`    — the driver side: units over the actor pool, progress, restarts, report
* :mod:`labeler.cluster.workers` — what a judge actor runs for COREN, TRCA item checks and rubric builds
"""
