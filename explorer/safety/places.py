"""Where Python and the app are installed, in one place: a run may read these places
(explorer.safety.confine), and what it sends back names none of them (explorer.trace.wire)."""

from __future__ import annotations

import os
import sys

PYTHON = frozenset({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.realpath(_HERE)  # the explorer package, as Landlock names it
# What holds the package (a checkout or site-packages), as a module's file name gives it and
# as the file system resolves it.
HOLDERS = frozenset({os.path.dirname(_HERE), os.path.dirname(PACKAGE)})
