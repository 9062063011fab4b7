"""Hypothesis settings of the fuzz suite: ``ci`` (the default) runs 500 derandomized examples per loader, so a
run is reproducible and takes a few minutes; ``KAIROX_FUZZ_PROFILE=dev`` runs 50 random ones."""

import os

from hypothesis import HealthCheck, settings

_SLOW_IS_FINE = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
]
settings.register_profile(
    "ci",
    max_examples=500,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=_SLOW_IS_FINE,
    print_blob=True,
)
settings.register_profile("dev", max_examples=50, deadline=None, database=None, suppress_health_check=_SLOW_IS_FINE)
settings.load_profile(os.environ.get("KAIROX_FUZZ_PROFILE", "ci"))
