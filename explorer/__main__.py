"""`python -m explorer ...`: see explorer.cli."""

import sys

from explorer.cli import main

sys.exit(main())
