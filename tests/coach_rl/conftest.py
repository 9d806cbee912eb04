"""coach-rl's tests: one torch thread each (tiny models on 2 cores spin-wait with more), whatever OMP_NUM_THREADS says."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
