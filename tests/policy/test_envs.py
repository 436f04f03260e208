"""policy.envs, the adapter API's former home: kept one release as a re-export of policy.worlds.adapters,
with a DeprecationWarning that says where to import from."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT


def test_the_old_import_still_works_and_says_where_the_api_moved():
    code = (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    from policy.envs import EnvAdapter, open_env, parse_env\n"
        "import policy.worlds.adapters as new\n"
        "assert EnvAdapter is new.EnvAdapter and open_env is new.open_env and parse_env is new.parse_env\n"
        "import policy.envs as old\n"
        "assert sorted(old.__all__) == sorted(new.__all__)\n"
        "print([str(w.message) for w in caught if w.category is DeprecationWarning])\n"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "policy.envs moved to policy.worlds.adapters" in p.stdout
