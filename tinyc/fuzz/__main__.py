"""`python -m tinyc.fuzz --programs N --seed S`: see tinyc/fuzz/__init__.py."""

import sys

from tinyc.fuzz.campaign import main

sys.exit(main())
