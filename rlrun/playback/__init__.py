"""What ``rlrun-eval`` does with a saved run: load it (:mod:`.loading`, the notebook API ``rlrun.load_run``), rebuild
one that is not trusted from its data only (:mod:`.received`), and play its episodes: evaluated, printed, shown in a
window or recorded to a video (:mod:`.video`).

Imports :mod:`rlrun.run` (evaluation, snapshots, stop signals) and the layers below it.
"""
