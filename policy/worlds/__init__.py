"""The worlds a policy acts in, and what joins them to the rest: collection, the contract's collection check,
the task strategies.

Packages:

* ``adapters`` — every world behind one interface (:class:`~policy.worlds.adapters.EnvAdapter`), named
  ``ADAPTER:TASK``; imports only ``models`` among the project's packages

Modules:

* ``collect`` — collection with scripted behaviours, into the trajectory format
* ``deployed`` — collection with a deployed bundle, through the robot's episode log writer
* ``collect_cli`` — ``edgejudge collect``
* ``collection_check`` — the adapter contract in full: the worlds' own checks and the collection check
* ``envs_cli`` — ``edgejudge envs`` and ``edgejudge envs check``
* ``episode_policy`` — an adapter's task strategies and the loop guard composed over a policy
* ``twx_placement`` — TextWorld's opt-in put-away strategy (``--strategy placement-search``)
"""
