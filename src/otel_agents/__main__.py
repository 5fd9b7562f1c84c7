"""``python -m otel_agents``: the ``otel-agents`` command, for where the venv's scripts are not on ``PATH``."""

import sys

from otel_agents.cli import main

sys.exit(main())
