from __future__ import annotations

from patchcarry.cli import main

raise SystemExit(main())
