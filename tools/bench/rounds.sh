#!/usr/bin/env bash
# docs/benchmarks/matrix.md, "The loop: rounds of deployed episodes": the section's commands, from the repository
# root with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

R="--rounds 3 --round-episodes 100 --round-temperature 0.5 --sizes 120 --seeds 0 --clients guard --test-episodes 50"
R="$R --steps 1000 --llm-episodes 0 --expert-sizes 0 --work-dir runs/rounds --out tools/results/bench_rounds"
R="$R --ceiling tools/results/bench_ceiling.json"
for w in twc-easy cookingworld-small twc-medium twc-hard; do
  # the recipe (credit on TRCA, rubric built from the file) and self-imitation (BC on every success so far)
  edgejudge matrix --world $w --sources sparse,trca-built --algos credit,bc $R
  # IQL on the success flag, the same rounds
  edgejudge matrix --world $w --sources sparse --algos iql $R
done
# a ScienceWorld family: the recipe and self-imitation (its ceiling: BC on 100 expert episodes)
S="--ceiling tools/results/bench_ceiling_sw.json"
edgejudge matrix --world scienceworld-find-animal --sources sparse,trca-built --algos credit,bc $R $S
# the report of every loop above
edgejudge matrix --world twc-easy --world cookingworld-small --world twc-medium --world twc-hard \
    --world scienceworld-find-animal --sources sparse,trca-built --algos credit,bc,iql $R $S --report-only
# CookingWorld small's loop with every learner on renamed copies (edgejudge train --augment 2)
A="${R/bench_rounds/bench_rounds_augment}"
edgejudge matrix --world cookingworld-small --sources sparse,trca-built --algos credit,bc \
    ${A/bench_ceiling/bench_ceiling_augment} --augment 2
# the loops with the warm start: each round's training starts from the last round's policy
W="${R/bench_rounds/bench_rounds_warm} --merge tools/results/bench_rounds.json"
for w in twc-easy cookingworld-small; do
  edgejudge matrix --world $w --sources sparse,trca-built --algos credit,bc $W --round-init
done
edgejudge matrix --world twc-easy --world cookingworld-small --sources sparse,trca-built --algos credit,bc \
    $W --round-init --report-only
# the recipe's loop pushing away from round 1 on only what the labels call harmful, not the loops of the
# policy's own search (train --set detours=false); self-imitation's rounds are the default loop's
N="${R/bench_rounds/bench_rounds_nodetours} --merge tools/results/bench_rounds.json"
N="$N --round-set credit:detours=false"
for w in twc-hard twc-medium cookingworld-small twc-easy; do
  edgejudge matrix --world $w --sources sparse,trca-built --algos credit,bc $N
done
edgejudge matrix --world twc-easy --world cookingworld-small --world twc-medium --world twc-hard \
    --sources sparse,trca-built --algos credit,bc $N --report-only
# seeds 1 and 2 of that loop on TWC easy and CookingWorld small (self-imitation's rounds with them)
S3="${N/bench_rounds_nodetours/bench_rounds_seeds} --merge tools/results/bench_rounds_nodetours.json"
for s in 1 2; do
  for w in cookingworld-small twc-easy; do
    edgejudge matrix --world $w --sources sparse,trca-built --algos credit,bc ${S3/--seeds 0/--seeds $s}
  done
done
edgejudge matrix --world twc-easy --world cookingworld-small --sources sparse,trca-built --algos credit,bc \
    ${S3/--seeds 0/--seeds 0,1,2} --report-only
# that loop with the rubric extended each round: the judge places the new log's objects the rubric does not
# place yet (edgejudge rubrics build --base)
E="${R/bench_rounds/bench_rounds_extend} --merge tools/results/bench_rounds.json"
E="$E --merge tools/results/bench_rounds_nodetours.json --round-set credit:detours=false --round-rubric extend"
for w in twc-hard twc-medium; do
  edgejudge matrix --world $w --sources sparse,trca-built --algos credit,bc $E
done
edgejudge matrix --world twc-hard --world twc-medium --sources sparse,trca-built --algos credit,bc $E --report-only
# the loop once on a world no setting was chosen on: CookingWorld large, with the settings above
H="${R/bench_rounds/bench_rounds_heldout} --round-set credit:detours=false"
edgejudge matrix --world cookingworld-large --sources sparse,trca-built --algos credit,bc $H
