"""The fork server's last preload (``warm_up.JOB_MODULES``): freeze what it has imported.

Those objects live as long as the server and every worker forked from it. Frozen, a worker's garbage
collections neither walk them nor write to the pages that hold them, which fork would otherwise copy
into each worker: the ``gc.freeze()`` recipe of Python's documentation for fork without exec.
"""

import gc

gc.freeze()
