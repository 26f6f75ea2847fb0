"""What every adapter shares: a missing framework names the extra to install."""

from __future__ import annotations

import pytest

from veracity.integrations.common import require
from veracity.model.errors import ConfigError


def test_a_missing_framework_names_the_extra() -> None:
    with pytest.raises(ConfigError, match=r"pip install 'veracity\[llama-index\]'"):
        require("no_such_framework.core", "llama-index")
