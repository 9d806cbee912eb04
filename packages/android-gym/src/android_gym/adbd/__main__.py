"""``python -m android_gym.adbd``: serve the simulated phone to adb (same options as ``android-gym sim-adbd``)."""

import sys

from android_gym.adbd.cli import main

sys.exit(main())
