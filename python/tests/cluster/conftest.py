"""The cluster tests' functions travel to worker processes by value (cloudpickle), since
the workers cannot import the test modules."""

import sys

import cloudpickle

from . import workers_log


cloudpickle.register_pickle_by_value(workers_log)


def pytest_collection_modifyitems(items):
    for item in items:
        module = sys.modules.get(item.module.__name__)
        if module is not None:
            try:
                cloudpickle.register_pickle_by_value(module)
            except ValueError:
                pass
