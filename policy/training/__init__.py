"""Training: a labeled log becomes a checkpoint.

Packages:

* ``learners`` — one module per learner (IQL, CQL, BC, AWR, credit-weighted imitation)

Modules:

* ``train`` — dataset -> features -> one learner -> checkpoint
* ``train_cli`` — ``edgejudge train``
* ``buffer`` — the transition table
* ``rewards`` — reward sources
* ``loop_erasure`` — hindsight loop erasure
* ``step_credit`` — per-step credit from every episode's rewards: what to imitate, what to push away
* ``augment`` — entity-consistent renamed copies of episodes, the renamable names read from the log
* ``common`` — seeding, threads, checkpoints, the training loop
"""
