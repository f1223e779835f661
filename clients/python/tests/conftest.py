from __future__ import annotations

import sys
from pathlib import Path

# The tests import the package from the source tree, without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
