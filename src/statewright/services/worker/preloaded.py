"""The last module the fork server preloads: what the others built stays shared with children,
and the server outlives a SIGTERM sent to its process group.

- Importing it collects once and freezes every object alive (``gc.freeze()``): a forked task
  process's collections then never walk (and so never copy) the pages of the preloaded modules.
- It ignores SIGTERM. ``kill -TERM -<pgid>`` (systemd, a container stop) reaches the fork server
  too; dead, it could no longer report the exit status of the processes it forked, and a task
  process given its grace period to stop would count as crashed (multiprocessing reads exit
  code 255 when the server's status pipe closes). The server still ends with the processes that
  use it (its "alive" pipe), and SIGKILL still ends it. Its children inherit the ignored signal:
  task processes and DAG-callback processes set their own handling first thing; the local
  executor's supervisor ignores SIGTERM anyway.

Only for the fork server's preload list (``fork_server.PRELOAD``); importing it elsewhere would
freeze that process's objects for good and make it ignore SIGTERM.
"""

from __future__ import annotations

import gc
import signal

gc.collect()
gc.freeze()
signal.signal(signal.SIGTERM, signal.SIG_IGN)
