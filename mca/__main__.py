"""python -m mca"""

from mca.cli import main

raise SystemExit(main())
