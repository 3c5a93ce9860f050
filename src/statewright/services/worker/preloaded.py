"""The last module the fork server preloads: what the others built stays shared with children.

Importing it collects once and freezes every object alive (``gc.freeze()``): a forked task
process's collections then never walk (and so never copy) the pages of the preloaded modules.
Only for the fork server's preload list (``fork_server.PRELOAD``); importing it elsewhere would
freeze that process's objects for good.
"""

from __future__ import annotations

import gc

gc.collect()
gc.freeze()
