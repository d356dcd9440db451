"""Python's garbage collector paused while an rlrun process starts: about a tenth of its start-up.

Start-up (Hydra, torch, SB3, the config, the checks, the model) creates millions of objects that live as
long as the process, and the collector, triggered every 700 new objects, walks them again and again
(three full collections while torch alone is imported). ``rlrun``'s command-line entry pauses it
(:func:`pause`, through :func:`rlrun.startup.bootstrap.pause_collector`); training, or a sweep launching its
jobs, resumes it (:func:`resume`) with the objects built so far frozen, so that later collections do not walk
them either. Cyclic garbage left by start-up stays until the process ends, when the frozen objects are handed back
to the collector (:func:`gc.unfreeze` at exit), so that Python's last collection frees them as it would have:
extension objects in cycles (ALE's envs) are then released, not reported leaked by their bindings at shutdown.

Private API: none (``gc.disable``, ``gc.freeze``, ``gc.enable``).
"""

from __future__ import annotations

import atexit
import gc

_paused = False


def pause() -> None:
    """No collections until :func:`resume`."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collections as usual from now on, over the objects created from now on; nothing unless paused here."""
    global _paused
    if _paused:
        gc.freeze()
        atexit.register(gc.unfreeze)  # the last collection, as the process ends, covers them again
        gc.enable()
        _paused = False
